"""Helpers of the stand-in tests: a tiny app that receives callbacks, and sample blocks.

The receiver is a real HTTP server standing in for the app's ingress: it
records every request exactly as it arrived (raw body and headers) and
answers with whatever the test sets in ``respond``.
"""

from __future__ import annotations

import json
import random
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs

SIGNING_SECRET = "test-signing-secret"
BOT_TOKEN = "xoxb-test-token"
CHANNEL = "C0123456789"
PORT_RANGE = (21000, 21999)


def free_port() -> int:
    """A port of this suite's range that nothing listens on."""
    for port in random.sample(range(PORT_RANGE[0], PORT_RANGE[1] + 1), 200):
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError("no free port in the test range")


@dataclass
class Received:
    """One request the app received."""

    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> dict[str, Any]:
        """The body of an Events API request."""
        body: dict[str, Any] = json.loads(self.body)
        return body

    def payload(self) -> dict[str, Any]:
        """The ``payload`` of an interactivity request."""
        payload: dict[str, Any] = json.loads(parse_qs(self.body.decode())["payload"][0])
        return payload


Answer = tuple[int, bytes]


class Receiver:
    """A minimal app endpoint: records requests, answers as told."""

    def __init__(self) -> None:
        self.requests: list[Received] = []
        self.respond: Callable[[Received], Answer] = lambda request: (200, b"")
        self._lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                request = Received(self.path, dict(self.headers.items()), self.rfile.read(length))
                with receiver._lock:
                    receiver.requests.append(request)
                status, body = receiver.respond(request)
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", free_port()), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_port}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def clear(self) -> None:
        """Forgets requests and answers 200 with an empty body again."""
        with self._lock:
            self.requests.clear()
        self.respond = lambda request: (200, b"")

    def stop(self) -> None:
        """Stops serving."""
        self._server.shutdown()
        self._server.server_close()


APPROVAL_BLOCKS: list[dict[str, Any]] = [
    {"type": "section", "text": {"type": "mrkdwn", "text": "Run `kubectl delete pod`?"}},
    {
        "type": "actions",
        "block_id": "approval",
        "elements": [
            {
                "type": "button",
                "action_id": "approve",
                "value": "q1",
                "text": {"type": "plain_text", "text": "Approve"},
            },
            {
                "type": "button",
                "action_id": "deny",
                "value": "q1",
                "text": {"type": "plain_text", "text": "Deny"},
            },
        ],
    },
]

MODAL: dict[str, Any] = {
    "type": "modal",
    "callback_id": "deny_reason",
    "private_metadata": "q1",
    "title": {"type": "plain_text", "text": "Why deny?"},
    "submit": {"type": "plain_text", "text": "Send"},
    "blocks": [
        {
            "type": "input",
            "block_id": "reason",
            "label": {"type": "plain_text", "text": "Reason"},
            "element": {"type": "plain_text_input", "action_id": "reason_text"},
        },
        {
            "type": "input",
            "block_id": "scope",
            "optional": True,
            "label": {"type": "plain_text", "text": "Scope"},
            "element": {
                "type": "static_select",
                "action_id": "scope_choice",
                "options": [
                    {"text": {"type": "plain_text", "text": "Once"}, "value": "once"},
                    {"text": {"type": "plain_text", "text": "Always"}, "value": "always"},
                ],
            },
        },
    ],
}
