"""Raw HTTP/1.1 for the scripted agents, which misbehave where no SDK server would.

Theory of operation: ``serving`` runs an ``http.server`` on 127.0.0.1 in a
thread and hands every request, its JSON body parsed (the raw text where it
is not JSON), to the agent's ``answer``. The agent answers through an
``Exchange``: a status, a JSON body, or a chunked body (an SSE stream) chunk
by chunk that may pause, end, drop the connection without ending the body,
or never end. Every request is one connection (``Connection: close``), so a
drop never poisons a pooled connection. A client may give up on a slow
answer at any time: every write says whether it reached the socket (False
once the client has gone), and the server does not report the broken pipe.
The scripted agents of ``tests.a2a.agents``, ``tests.faults.agent`` and
``tests.hitl_e2e.agent`` all speak through it.
"""

from __future__ import annotations

import json
import socket
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Answer = Callable[[BaseHTTPRequestHandler, Any], None]
"""Answers one request: its handler and its body (parsed JSON, text, or None)."""


class Exchange:
    """One request and the raw means to answer it."""

    def __init__(self, handler: BaseHTTPRequestHandler, body: Any) -> None:
        self._handler = handler
        self.verb = handler.command
        self.path = handler.path
        self.headers = {k.lower(): v for k, v in handler.headers.items()}
        self.body = body

    def status(self, code: int, headers: dict[str, str] | None = None, body: bytes = b"") -> bool:
        """Answer with a status, headers and a body; False when the client has gone."""
        handler = self._handler
        try:
            handler.send_response(code)
            for name, value in (headers or {}).items():
                handler.send_header(name, value)
            handler.send_header("Content-Length", str(len(body)))
            handler.send_header("Connection", "close")
            handler.end_headers()
            handler.wfile.write(body)
            handler.wfile.flush()
        except OSError:
            return False
        return True

    def json(self, obj: Any, code: int = 200, headers: dict[str, str] | None = None) -> bool:
        """Answer with a JSON body; False when the client has gone."""
        return self.status(
            code, {"Content-Type": "application/json", **(headers or {})}, json.dumps(obj).encode()
        )

    def start_stream(self, code: int = 200, headers: dict[str, str] | None = None) -> bool:
        """Send the headers of a chunked body, an SSE stream unless ``headers`` say otherwise."""
        handler = self._handler
        try:
            handler.send_response(code)
            for name, value in {"Content-Type": "text/event-stream", **(headers or {})}.items():
                handler.send_header(name, value)
            handler.send_header("Transfer-Encoding", "chunked")
            handler.send_header("Connection", "close")
            handler.end_headers()
            handler.wfile.flush()
        except OSError:
            return False
        return True

    def event(self, frame: Any) -> bool:
        """Send one SSE event holding ``frame`` as JSON; False when the client has gone."""
        return self.chunk(f"data: {json.dumps(frame)}\n\n".encode())

    def comment(self) -> bool:
        """Send an SSE keep-alive comment (no event); False when the client has gone."""
        return self.chunk(b": ping\n\n")

    def chunk(self, data: bytes) -> bool:
        """Send one chunk of the body (nothing for no data); False when the client has gone."""
        if not data:
            return True
        try:
            self._handler.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            self._handler.wfile.flush()
        except OSError:
            return False
        return True

    def end(self) -> None:
        """End the chunked body properly."""
        try:
            self._handler.wfile.write(b"0\r\n\r\n")
            self._handler.wfile.flush()
        except OSError:
            pass

    def drop(self) -> None:
        """Close the connection without an answer, or without ending the chunked body."""
        try:
            self._handler.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def do_GET(self) -> None:
        self.close_connection = True
        self.server.answer(self, None)

    def do_POST(self) -> None:
        self.close_connection = True
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode(errors="replace")
        self.server.answer(self, body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    answer: Answer

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that gave up on a slow or hung answer is expected here, not an error."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


@contextmanager
def serving(port: int, answer: Answer, name: str = "scripted-agent") -> Iterator[None]:
    """Requests to 127.0.0.1:``port`` answered by ``answer`` in threads, for the block."""
    server = _Server(("127.0.0.1", port), _Handler)
    server.answer = answer
    thread = threading.Thread(
        target=server.serve_forever,
        kwargs={"poll_interval": 0.05},
        name=f"{name}-{port}",
        daemon=True,
    )
    thread.start()
    try:
        yield
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
