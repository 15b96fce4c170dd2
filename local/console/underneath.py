"""What lies under a thread, beside the stand-in's own state: Firestore's turns, the agent's requests.

Theory of operation: both sources are mirrored in memory and bump the
stand-in's change count when they change, so the console's event stream
pushes them like any other change. ``StoreMirror`` listens to the turns and
sessions collections on the Firestore emulator (``on_snapshot``: the
emulator pushes every write), on a thread of Google's client, and hands
each change to the event loop. ``AgentRequests`` reads the demo agent's
record of requests (``GET /_demo/received?since=N``, only what is new)
while a console page is open, after every change and at least once a
second, since nothing tells the stand-in when the agent is called.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Callable
from datetime import datetime
from typing import Any

import httpx

from shared.store import SESSIONS, TURNS

log = logging.getLogger("console")

AGENT_POLL_SECONDS = 1.0
Document = dict[str, Any]


def _plain(value: Any) -> Any:
    """A Firestore value as JSON can carry it."""
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, dict):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    if isinstance(value, bytes):
        return f"<{len(value)} bytes>"
    return value


class StoreMirror:
    """Kourier's turns and sessions as the Firestore emulator holds them, kept current."""

    def __init__(self, changed: Callable[[], None]) -> None:
        self.turns: dict[str, Document] = {}
        self.sessions: dict[str, Document] = {}
        self._changed = changed
        self._watches: list[Any] = []

    @property
    def watching(self) -> bool:
        """Whether a Firestore emulator is watched (FIRESTORE_EMULATOR_HOST is set)."""
        return bool(self._watches)

    def start(self, loop: asyncio.AbstractEventLoop) -> None:
        """Starts listening, if the environment names a Firestore emulator."""
        if not os.environ.get("FIRESTORE_EMULATOR_HOST"):
            return
        from google.cloud import firestore

        client = firestore.Client(project=os.environ.get("GOOGLE_CLOUD_PROJECT", "demo-kourier"))
        for collection, mirror in ((TURNS, self.turns), (SESSIONS, self.sessions)):
            self._watches.append(
                client.collection(collection).on_snapshot(self._listener(mirror, loop))
            )

    def stop(self) -> None:
        """Stops listening."""
        for watch in self._watches:
            with contextlib.suppress(Exception):
                watch.unsubscribe()
        self._watches.clear()

    def of_thread(self, channel: str, thread_ts: str) -> tuple[list[Document], list[Document]]:
        """The thread's turns, oldest first, and its sessions (one per binding)."""

        def mine(document: Document) -> bool:
            return document.get("channel") == channel and document.get("thread_ts") == thread_ts

        turns = sorted(filter(mine, list(self.turns.values())), key=lambda t: str(t.get("ts")))
        return turns, list(filter(mine, list(self.sessions.values())))

    def _listener(
        self, mirror: dict[str, Document], loop: asyncio.AbstractEventLoop
    ) -> Callable[..., None]:
        def on_snapshot(documents: list[Any], changes: Any, read_time: Any) -> None:
            fresh = {doc.id: {"id": doc.id, **_plain(doc.to_dict() or {})} for doc in documents}
            mirror.clear()
            mirror.update(fresh)
            loop.call_soon_threadsafe(self._changed)

        return on_snapshot


class AgentRequests:
    """The requests the demo agent received, read while a console page is open."""

    def __init__(self, agent_url: str | None, changed: Callable[[], None]) -> None:
        self.url = None if not agent_url else agent_url.rstrip("/") + "/_demo/received"
        self.received: list[Document] = []
        self._changed = changed

    async def follow(self, http: httpx.AsyncClient, wake: Callable[[], Any]) -> None:
        """Reads new requests each time ``wake`` returns (it waits for a change or a second)."""
        if self.url is None:
            return
        while True:
            await wake()
            try:
                answer = await http.get(self.url, params={"since": len(self.received)}, timeout=5)
                new = answer.json() if answer.status_code == 200 else []
            except (httpx.HTTPError, ValueError):
                continue
            if isinstance(new, list) and new:
                self.received.extend(item for item in new if isinstance(item, dict))
                self._changed()
