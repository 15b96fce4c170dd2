"""Fixtures: one stand-in process per session, and a tiny app that receives its callbacks.

The receiver is a real HTTP server standing in for the app's ingress: it
records every request exactly as it arrived (raw body and headers) and
answers with whatever the test sets in ``respond``.
"""

from __future__ import annotations

import json
import random
import socket
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs

import pytest
from slack_sdk import WebClient

from local.slack_standin import SlackStandin, StandinProcess

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

    def json(self) -> dict:
        """The body of an Events API request."""
        return json.loads(self.body)

    def payload(self) -> dict:
        """The ``payload`` of an interactivity request."""
        return json.loads(parse_qs(self.body.decode())["payload"][0])


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


@pytest.fixture(scope="session")
def receiver() -> Iterator[Receiver]:
    app = Receiver()
    yield app
    app.stop()


@pytest.fixture(scope="session")
def standin_session(receiver: Receiver, tmp_path_factory: pytest.TempPathFactory) -> Iterator[SlackStandin]:
    process = StandinProcess(
        port=free_port(),
        log_path=Path(tmp_path_factory.mktemp("standin")) / "standin.log",
        signing_secret=SIGNING_SECRET,
        bot_token=BOT_TOKEN,
        events_url=f"{receiver.url}/slack/events",
        interactivity_url=f"{receiver.url}/slack/interactivity",
    )
    with process as client:
        yield client


@pytest.fixture
def standin(standin_session: SlackStandin, receiver: Receiver) -> SlackStandin:
    """The stand-in, reset to its start state, with no requests received yet."""
    standin_session.reset()
    receiver.clear()
    return standin_session


@pytest.fixture
def slack(standin: SlackStandin) -> WebClient:
    """slack_sdk's real WebClient, pointed at the stand-in."""
    return WebClient(base_url=standin.api_url, token=BOT_TOKEN)
