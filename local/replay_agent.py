"""An A2A agent that answers with a recorded stream: for replay tests and the benchmark.

Theory of operation: ``ReplayAgent`` is a raw ``http.server`` on 127.0.0.1
with one endpoint per protocol version (``/a2a-1.0`` and ``/a2a-0.3``, each
with its own card), so one process serves recordings of both versions and
each function's card cache keeps the right one. Every streaming send is
answered with the frames of the recording last given to ``play``, as SSE,
``frame_interval`` apart, with the request's JSON-RPC id; GetTask answers
with the task those frames leave in the agent's store, built by a2a-sdk's
TaskManager rules (a status update moves the previous status message into
history; an artifact update with ``append`` adds parts, any other replaces
the artifact). Each ``play`` gives the recording fresh task and context IDs,
so a recording replayed twice is two tasks. The agent notes when it sent
each frame (``sent``), for the benchmark's delay from chunk to Slack.
"""

from __future__ import annotations

import copy
import json
import os
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Literal, Self

from local.stack import Stack, StackPorts, running_stack

Version = Literal["1.0", "0.3"]
HOLD_SECONDS = 600.0
"""The longest a held stream waits for ``release``."""
CARD_PATH = "/.well-known/agent-card.json"
_KINDS_1_0 = {
    "task": "task",
    "statusUpdate": "status-update",
    "artifactUpdate": "artifact-update",
    "message": "message",
}


@dataclass(frozen=True)
class Recording:
    """The frames of one recorded stream (JSON-RPC responses, in order)."""

    name: str
    version: Version
    frames: tuple[dict[str, Any], ...]

    @classmethod
    def load(cls, path: Path) -> Recording:
        """A capture of tests/data/a2a_streams (one JSON-RPC response per line)."""
        frames = tuple(json.loads(line) for line in path.read_text().splitlines() if line.strip())
        version: Version = "0.3" if "kind" in frames[0]["result"] else "1.0"
        return cls(path.stem, version, frames)

    def events(self) -> Iterator[tuple[str, dict[str, Any]]]:
        """Each frame's kind (task, status-update, artifact-update, message) and object."""
        for frame in self.frames:
            result = frame["result"]
            if self.version == "0.3":
                yield result["kind"], result
            else:
                [(key, inner)] = result.items()
                yield _KINDS_1_0[key], inner

    def final_task(self) -> dict[str, Any]:
        """The task as the agent's store holds it once the stream ended."""
        task: dict[str, Any] | None = None
        for kind, event in self.events():
            if kind == "task":
                task = copy.deepcopy(event)
                continue
            if kind == "message":
                continue
            if task is None:
                task = self._new_task(event)
            if kind == "status-update":
                if task["status"].get("message"):
                    task.setdefault("history", []).append(task["status"]["message"])
                task["status"] = copy.deepcopy(event["status"])
                task["metadata"] = {**task.get("metadata", {}), **event.get("metadata", {})}
            else:
                _apply_artifact(task.setdefault("artifacts", []), event)
        assert task is not None, f"{self.name} names no task"
        return task

    def answer(self) -> str:
        """The answer a person must see: the final task's artifact text."""
        texts = [
            "".join(part["text"] for part in artifact["parts"] if "text" in part)
            for artifact in self.final_task().get("artifacts", [])
        ]
        shown = [text for text in texts if text]
        assert len(shown) == 1, f"{self.name}: expected one artifact with text, got {len(shown)}"
        return shown[0]

    def tool_calls(self) -> list[tuple[str, str]]:
        """(call ID, tool name) of every distinct tool call the stream carries."""
        calls: dict[str, str] = {}
        for _, event in self.events():
            for part in _parts_of(event):
                kinds = {
                    value for key, value in part.get("metadata", {}).items() if key.endswith("type")
                }
                if "function_call" in kinds:
                    calls.setdefault(part["data"]["id"], part["data"]["name"])
        return list(calls.items())

    def _new_task(self, event: dict[str, Any]) -> dict[str, Any]:
        state = "submitted" if self.version == "0.3" else "TASK_STATE_SUBMITTED"
        task = {"id": event["taskId"], "contextId": event["contextId"], "status": {"state": state}}
        return {"kind": "task", **task} if self.version == "0.3" else task

    def with_new_ids(self) -> Recording:
        """The same recording for a new task in a new context."""
        text = "\n".join(json.dumps(frame) for frame in self.frames)
        for _, event in self.events():
            for key in ("id", "taskId", "contextId"):
                if isinstance(event.get(key), str) and (key != "id" or "status" in event):
                    text = text.replace(f'"{event[key]}"', f'"{uuid.uuid4()}"')
        return Recording(
            self.name, self.version, tuple(json.loads(line) for line in text.split("\n"))
        )


def _apply_artifact(artifacts: list[dict[str, Any]], event: dict[str, Any]) -> None:
    artifact = copy.deepcopy(event["artifact"])
    index = next(
        (i for i, a in enumerate(artifacts) if a["artifactId"] == artifact["artifactId"]), None
    )
    if not event.get("append"):
        if index is None:
            artifacts.append(artifact)
        else:
            artifacts[index] = artifact
    elif index is not None:
        artifacts[index]["parts"] = artifacts[index].get("parts", []) + artifact.get("parts", [])


def _parts_of(event: dict[str, Any]) -> list[dict[str, Any]]:
    message = event.get("status", {}).get("message") or {}
    return list(message.get("parts", [])) + list(event.get("artifact", {}).get("parts", []))


def card(endpoint: str, version: Version) -> dict[str, Any]:
    """A card for ``endpoint`` that offers streaming JSON-RPC in ``version``."""
    common = {
        "name": "replay",
        "description": "Answers with a recorded stream.",
        "version": "1",
        "capabilities": {"streaming": True},
        "defaultInputModes": ["text"],
        "defaultOutputModes": ["text"],
        "skills": [],
    }
    if version == "0.3":
        return {
            **common,
            "url": endpoint,
            "protocolVersion": "0.3.0",
            "preferredTransport": "JSONRPC",
        }
    interface = {"url": endpoint, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
    return {**common, "supportedInterfaces": [interface]}


@dataclass
class SentFrame:
    """One frame the agent sent, and when (epoch seconds, after it was flushed)."""

    at: float
    frame: dict[str, Any]


@dataclass
class ReplayAgent:
    """Serves the recording last given to ``play`` on both versions' endpoints.

    ``hold(n)`` stops every stream after its first ``n`` frames until
    ``release()``, so a test can see how many turns stream at once;
    ``peak_streams`` is the most streams that were open together since the
    last ``play``.
    """

    port: int
    frame_interval: float = 0.02
    received: list[dict[str, Any]] = field(default_factory=list)
    sent: list[SentFrame] = field(default_factory=list)
    streams: int = 0
    peak_streams: int = 0
    _recording: Recording | None = None
    _server: ThreadingHTTPServer | None = None
    _hold_after: int | None = None
    _released: threading.Event = field(default_factory=threading.Event)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def hold(self, frames: int) -> None:
        """From now on, each stream pauses after ``frames`` frames until ``release``."""
        self._released.clear()
        self._hold_after = frames

    def release(self) -> None:
        """Let held streams go on, and streams no longer pause."""
        self._hold_after = None
        self._released.set()

    def url(self, version: Version) -> str:
        """The endpoint of one protocol version."""
        return f"http://127.0.0.1:{self.port}/a2a-{version}"

    def play(self, recording: Recording) -> Recording:
        """Answer the next sends with ``recording``, under fresh IDs; returns what will be sent."""
        self._recording = recording.with_new_ids()
        self.sent.clear()
        with self._lock:
            self.peak_streams = self.streams
        return self._recording

    def __enter__(self) -> Self:
        agent = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                agent._answer_get(self)

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
                agent._answer_post(self, body)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self._server.daemon_threads = True
        threading.Thread(
            target=self._server.serve_forever, name="replay-agent", daemon=True
        ).start()
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.shutdown()
        self._server.server_close()

    def _answer_get(self, handler: BaseHTTPRequestHandler) -> None:
        for version in ("1.0", "0.3"):
            if handler.path == f"/a2a-{version}{CARD_PATH}":
                _send_json(handler, card(self.url(version), version))
                return
        _send_json(handler, {"error": "not found"}, status=404)

    def _answer_post(self, handler: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
        method, request_id = body.get("method"), body.get("id")
        self.received.append(
            {
                "at": time.time(),
                "path": handler.path,
                "method": method,
                "params": body.get("params"),
            }
        )
        recording = self._recording
        if recording is None or method not in (
            "SendStreamingMessage",
            "message/stream",
            "GetTask",
            "tasks/get",
        ):
            error = {"code": -32601, "message": f"{method} is not replayed"}
            _send_json(handler, {"jsonrpc": "2.0", "id": request_id, "error": error})
        elif method in ("GetTask", "tasks/get"):
            _send_json(
                handler, {"jsonrpc": "2.0", "id": request_id, "result": recording.final_task()}
            )
        else:
            self._stream(handler, recording, request_id)

    def _stream(
        self, handler: BaseHTTPRequestHandler, recording: Recording, request_id: Any
    ) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", "text/event-stream")
        handler.send_header("Transfer-Encoding", "chunked")
        handler.send_header("Connection", "close")
        handler.end_headers()
        with self._lock:
            self.streams += 1
            self.peak_streams = max(self.peak_streams, self.streams)
        try:
            for index, frame in enumerate(recording.frames):
                if index == self._hold_after:
                    self._released.wait(HOLD_SECONDS)
                time.sleep(self.frame_interval)
                data = f"data: {json.dumps({**frame, 'id': request_id})}\n\n".encode()
                handler.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                handler.wfile.flush()
                self.sent.append(SentFrame(time.time(), frame))
            handler.wfile.write(b"0\r\n\r\n")
            handler.wfile.flush()
        finally:
            with self._lock:
                self.streams -= 1
        handler.close_connection = True


def _send_json(handler: BaseHTTPRequestHandler, obj: Any, status: int = 200) -> None:
    body = json.dumps(obj).encode()
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(body)))
    handler.send_header("Connection", "close")
    handler.end_headers()
    handler.wfile.write(body)
    handler.close_connection = True


REPLAY_CHANNELS: dict[Version, str] = {"1.0": "C0REPLAY10", "0.3": "C0REPLAY03"}
"""The Slack channel bound to each version's endpoint in ``replay_config``."""


def replay_config(agent: ReplayAgent) -> str:
    """A Kourier config binding one channel to each of the agent's endpoints."""
    backends = "".join(
        f"  - name: replay-{version.replace('.', '-')}\n    url: {agent.url(version)}\n    dialect: a2a\n"
        for version in REPLAY_CHANNELS
    )
    bindings = "".join(
        f"  - name: replay-{version.replace('.', '-')}\n    platform: slack\n    channels: [{channel}]\n"
        f"    agentBackend: replay-{version.replace('.', '-')}\n    identity: {{userId: kourier}}\n"
        for version, channel in REPLAY_CHANNELS.items()
    )
    return f"agentBackends:\n{backends}bindings:\n{bindings}"


@contextmanager
def running_replay_stack(
    ports: StackPorts, state_dir: Path, frame_interval: float = 0.02
) -> Iterator[tuple[Stack, ReplayAgent]]:
    """The whole local stack with a replay agent (on ``ports.agent``) bound by ``replay_config``."""
    with ReplayAgent(ports.agent, frame_interval) as agent:
        config = state_dir / "replay.yaml"
        config.write_text(replay_config(agent))
        environ = {key: value for key, value in os.environ.items() if key != "SLACK_API_URL"}
        environ["KOURIER_CONFIG"] = str(config)
        with running_stack(ports, state_dir, environ=environ) as stack:
            yield stack, agent
