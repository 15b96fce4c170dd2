"""Agents for the A2A client tests: a scripted raw-HTTP agent and real servers in threads.

Theory of operation: ``ScriptedAgent`` is an ``http.server`` on 127.0.0.1
that serves a card (a plain dict the test may change) and answers every
POST with the test's ``script``, which writes raw HTTP through an
``Exchange``: a status, a JSON body, or an SSE stream chunk by chunk that
may pause, send keep-alive comments, end, drop the connection without
ending the chunked body, or hang until the agent stops. Every exchange is
one connection (``Connection: close``), so a drop never poisons a pooled
connection. ``serve_asgi`` runs a real ASGI app (the a2a-sdk demo agent) in
a uvicorn thread. Ports come from this suite's range, 23000-23999.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

import uvicorn

from shared.a2a.discovery import CARD_PATH
from tests import raw_http

PORTS = range(23000, 24000)
_next_port = PORTS.start
_port_lock = threading.Lock()


def free_port() -> int:
    """A port of this suite's range that nothing listens on, cycling through the range."""
    global _next_port
    with _port_lock:
        for _ in PORTS:
            port = _next_port
            _next_port = port + 1 if port + 1 < PORTS.stop else PORTS.start
            with socket.socket() as probe:
                try:
                    probe.bind(("127.0.0.1", port))
                except OSError:
                    continue
                return port
    raise RuntimeError(f"no free port in {PORTS}")


def card_json(url: str, **changes: Any) -> dict[str, Any]:
    """A well-formed A2A 1.0 card for ``url``, with top-level ``changes``."""
    card: dict[str, Any] = {
        "name": "scripted",
        "description": "misbehaves on purpose",
        "version": "1",
        "supportedInterfaces": [
            {"url": url, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
        ],
        "capabilities": {"streaming": True},
        "defaultInputModes": ["text"],
        "defaultOutputModes": ["text"],
        "skills": [],
    }
    card.update(changes)
    return card


@dataclass
class Received:
    """One request the scripted agent received."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any


class Exchange(raw_http.Exchange):
    """One request to the scripted agent and the raw means to answer it."""

    def __init__(self, handler: BaseHTTPRequestHandler, agent: ScriptedAgent, body: Any) -> None:
        super().__init__(handler, body)
        self.agent = agent

    @property
    def rpc_method(self) -> str | None:
        """The JSON-RPC method called."""
        return self.body.get("method") if isinstance(self.body, dict) else None

    @property
    def params(self) -> dict[str, Any]:
        """The JSON-RPC params."""
        return self.body.get("params", {}) if isinstance(self.body, dict) else {}

    def wait(self, seconds: float) -> None:
        """Pause, but no longer than the agent runs."""
        self.agent.stopping.wait(seconds)

    def hang(self) -> None:
        """Send nothing more until the agent stops."""
        self.agent.stopping.wait()

    def sse(self, frames: list[Any], headers: dict[str, str] | None = None) -> None:
        """A whole stream: headers, one event per frame, end."""
        self.start_stream(headers=headers)
        for frame in frames:
            self.event(frame)
        self.end()


Script = Callable[[Exchange], None]


@dataclass
class ScriptedAgent:
    """A raw HTTP agent whose card and answers each test scripts."""

    port: int
    card: Any = None
    """The JSON served at the card path (a 1.0 card for this agent by default)."""
    card_script: Script | None = None
    """When set, answers card requests instead of ``card``."""
    script: Script | None = None
    """Answers every POST."""
    received: list[Received] = field(default_factory=list)
    stopping: threading.Event = field(default_factory=threading.Event)

    @property
    def url(self) -> str:
        """The agent's base URL (its endpoint), with a trailing slash."""
        return f"http://127.0.0.1:{self.port}/"

    def posts(self) -> list[Received]:
        """The POST requests received."""
        return [r for r in self.received if r.method == "POST"]

    def card_fetches(self) -> int:
        """How many times the card was asked for."""
        return sum(1 for r in self.received if r.method == "GET" and r.path.endswith(CARD_PATH))

    def handle(self, handler: BaseHTTPRequestHandler, body: Any) -> None:
        """Record the request and answer it as scripted."""
        self.received.append(
            Received(
                handler.command,
                handler.path,
                {k.lower(): v for k, v in handler.headers.items()},
                body,
            )
        )
        exchange = Exchange(handler, self, body)
        if handler.command == "GET" and handler.path.endswith(CARD_PATH):
            if self.card_script is not None:
                self.card_script(exchange)
            else:
                exchange.json(self.card)
        elif handler.command == "POST" and self.script is not None:
            self.script(exchange)
        else:
            exchange.status(404)


@contextmanager
def scripted_agent() -> Iterator[ScriptedAgent]:
    """A scripted agent running in a thread for the duration of the block."""
    port = free_port()
    agent = ScriptedAgent(port)
    agent.card = card_json(agent.url)
    with raw_http.serving(port, agent.handle):
        try:
            yield agent
        finally:
            agent.stopping.set()


@contextmanager
def serve_asgi(app: Any, port: int) -> Iterator[str]:
    """Serve an ASGI app with uvicorn in a thread; yields its base URL with a trailing slash."""
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, name=f"asgi-{port}", daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError(f"uvicorn did not start on port {port}")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}/"
    finally:
        server.should_exit = True
        thread.join(timeout=30)


# --- JSON-RPC frames of A2A 1.0 -------------------------------------------------


def result(obj: Any) -> dict[str, Any]:
    """A JSON-RPC response with ``obj`` as result."""
    return {"jsonrpc": "2.0", "id": "1", "result": obj}


def error(code: int, message: str = "scripted failure") -> dict[str, Any]:
    """A JSON-RPC error response."""
    return {"jsonrpc": "2.0", "id": "1", "error": {"code": code, "message": message}}


def task(
    task_id: str = "t1", context_id: str = "c1", state: str = "TASK_STATE_SUBMITTED", **more: Any
) -> dict[str, Any]:
    """A 1.0 Task object."""
    return {"id": task_id, "contextId": context_id, "status": {"state": state}, **more}


def status_update(
    state: str, task_id: str = "t1", context_id: str = "c1", **status: Any
) -> dict[str, Any]:
    """A 1.0 stream result holding a status update."""
    return {
        "statusUpdate": {
            "taskId": task_id,
            "contextId": context_id,
            "status": {"state": state, **status},
        }
    }


def artifact_update(
    text: str, artifact_id: str = "a1", append: bool | None = None
) -> dict[str, Any]:
    """A 1.0 stream result holding an artifact chunk of text."""
    update: dict[str, Any] = {
        "taskId": "t1",
        "contextId": "c1",
        "artifact": {"artifactId": artifact_id, "parts": [{"text": text}]},
    }
    if append is not None:
        update["append"] = append
    return {"artifactUpdate": update}
