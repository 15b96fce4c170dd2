"""A real HTTP server that records what the emulators deliver, for the tests.

Each test takes a path of its own with ``HttpRecorder.endpoint()``, so late
redeliveries meant for one test never count for another.
"""

from __future__ import annotations

import threading
import time
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Self

DELIVERY_TIMEOUT_SECONDS = 60.0


@dataclass(frozen=True)
class RecordedRequest:
    """One request the recorder received."""

    received_at: float  # time.time() when it arrived
    path: str
    headers: dict[str, str]  # names lower-cased
    body: bytes


@dataclass
class Endpoint:
    """One path on the recorder: answers with ``statuses`` in turn, then 200 for ever.

    With ``hold_until``, a request is answered only once that many were in
    flight at the same time (or after DELIVERY_TIMEOUT_SECONDS), and
    ``peak_in_flight`` says how many were at most.
    """

    url: str
    statuses: list[int]
    hold_until: int = 0
    received: list[RecordedRequest] = field(default_factory=list)
    arrived: threading.Condition = field(default_factory=threading.Condition)
    in_flight: int = 0
    peak_in_flight: int = 0

    def wait_for_requests(
        self, count: int, timeout: float = DELIVERY_TIMEOUT_SECONDS
    ) -> list[RecordedRequest]:
        """The first ``count`` requests, once they have arrived.

        Raises:
            AssertionError: Fewer arrived within ``timeout`` seconds.
        """
        with self.arrived:
            arrived_in_time = self.arrived.wait_for(lambda: len(self.received) >= count, timeout)
            assert arrived_in_time, (
                f"{len(self.received)} of {count} requests arrived at {self.url}"
            )
            return self.received[:count]


class HttpRecorder:
    """A real HTTP server whose paths are endpoints handed out to tests."""

    def __init__(self, port: int) -> None:
        self._endpoints: dict[str, Endpoint] = {}
        self._base_url = f"http://127.0.0.1:{port}"
        recorder = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                status = recorder.record(
                    RecordedRequest(
                        received_at=time.time(),
                        path=self.path,
                        headers={name.lower(): value for name, value in self.headers.items()},
                        body=body,
                    )
                )
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def endpoint(self, statuses: list[int] | None = None, hold_until: int = 0) -> Endpoint:
        """A new path of its own that answers ``statuses`` in turn, then 200 (see Endpoint)."""
        path = f"/{uuid.uuid4().hex}"
        endpoint = Endpoint(
            url=f"{self._base_url}{path}", statuses=list(statuses or []), hold_until=hold_until
        )
        self._endpoints[path] = endpoint
        return endpoint

    def record(self, request: RecordedRequest) -> int:
        """Files a request under its endpoint; returns the status to answer (404 for unknown paths)."""
        endpoint = self._endpoints.get(request.path.split("?")[0])
        if endpoint is None:
            return 404
        with endpoint.arrived:
            endpoint.received.append(request)
            endpoint.in_flight += 1
            endpoint.peak_in_flight = max(endpoint.peak_in_flight, endpoint.in_flight)
            endpoint.arrived.notify_all()
            endpoint.arrived.wait_for(
                lambda: endpoint.peak_in_flight >= endpoint.hold_until, DELIVERY_TIMEOUT_SECONDS
            )
            endpoint.in_flight -= 1
            return endpoint.statuses.pop(0) if endpoint.statuses else 200

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._server.shutdown()
        self._server.server_close()
