"""The console's routes on the stand-in's server: the page, its files, its snapshots and their stream."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from local.console.underneath import AGENT_POLL_SECONDS, AgentRequests, StoreMirror
from local.console.view import Approvers, Focus, snapshot
from local.slack_standin.core import Standin

STATIC = Path(__file__).parent / "static"
COALESCE_SECONDS = 0.03
"""After a change, how long the stream waits for the changes that come with it."""
REFRESH_SECONDS = 10.0
"""A snapshot goes out at least this often, so what expires with time (a status line) goes."""


class Console:
    """The console's state beside the stand-in's: who watches, and what lies underneath."""

    def __init__(self, standin: Standin) -> None:
        self.standin = standin
        settings = standin.settings
        self.approvers = Approvers(settings.kourier_config)
        self.store = StoreMirror(standin.changes.bump)
        self.agent = AgentRequests(settings.agent_url, standin.changes.bump)
        self.watchers = 0
        self._tasks: list[asyncio.Task[None]] = []

    def start(self, http: httpx.AsyncClient) -> None:
        """Starts following the demo agent, where the settings name one (while a page is open)."""
        self._tasks.append(asyncio.create_task(self.agent.follow(http, self._agent_wake)))

    def watched(self) -> None:
        """A page opened: watch Firestore from now on (only once a page is open, as it costs)."""
        self.watchers += 1
        if not self.store.watching:
            self.store.start(asyncio.get_running_loop())

    async def stop(self) -> None:
        """Stops watching."""
        self.store.stop()
        for task in self._tasks:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    def snapshot(self, focus: Focus) -> dict[str, Any]:
        """What the page shows for ``focus``."""
        return snapshot(self.standin, focus, self.approvers, self.store, self.agent.received)

    async def _agent_wake(self) -> None:
        """Returns after the next change or second while a page is open (else waits for one)."""
        changes = self.standin.changes
        seen = changes.count
        while self.watchers == 0:
            await asyncio.sleep(AGENT_POLL_SECONDS)
        await changes.wait(seen, AGENT_POLL_SECONDS)


def _console(request: Request) -> Console:
    console: Console = request.app.state.console
    return console


def _focus(request: Request) -> Focus:
    query = request.query_params
    return Focus(
        viewer=query.get("user") or "U0ALICE",
        channel=query.get("channel") or None,
        thread_ts=query.get("thread") or None,
    )


async def page(request: Request) -> Response:
    """The console page."""
    return FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-cache"})


async def state(request: Request) -> JSONResponse:
    """One snapshot, as the event stream would send it now."""
    return JSONResponse(_console(request).snapshot(_focus(request)))


async def events(request: Request) -> StreamingResponse:
    """Server-sent events: a snapshot now, and another after every change."""
    console, focus = _console(request), _focus(request)

    async def stream() -> AsyncIterator[str]:
        changes = console.standin.changes
        console.watched()
        try:
            shown = -1
            while True:
                count = await changes.wait(shown, REFRESH_SECONDS)
                if count != shown:
                    await asyncio.sleep(COALESCE_SECONDS)
                shown = changes.count
                yield f"data: {json.dumps(console.snapshot(focus))}\n\n"
        finally:
            console.watchers -= 1

    headers = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
    return StreamingResponse(stream(), media_type="text/event-stream", headers=headers)


routes = [
    Route("/", page),
    Route("/_console/state", state),
    Route("/_console/events", events),
    Mount("/_console/static", StaticFiles(directory=STATIC), name="console-static"),
]
