"""A scripted A2A 1.0 agent that keeps real tasks and misbehaves on purpose.

Theory of operation: where the A2A client tests' ``ScriptedAgent`` answers
each request from a script, this agent keeps tasks, as a real agent does. A
send that it takes starts a task: a thread plays the test's ``Script`` (text
chunks and tool calls, a pause apart) into the task's event log and ends it
completed. Every stream, the send's or a SubscribeToTask, is a view onto that
log, so a stream that drops loses the connection and nothing of the task;
GetTask and ListTasks answer from the task as it stands. The faults are the
script's: sends refused with HTTP 500 or -32004, a send taken and dropped
before its first event, the send's stream dropped after an event, or held
after one until the test releases it (while the task runs on), the card
held, no SubscribeToTask. Every request is recorded with the time it
arrived, and a send that arrives while a task of its context still runs is
recorded as an overlap. The server speaks raw HTTP/1.1 (chunked SSE, one
connection per request) like ``tests.a2a.agents``.

The same agent answers in A2A 0.3 under ``/v03/``: its card there is a 0.3
card, it takes the 0.3 method names, and every result it writes is spelled
as 0.3 (``kind``, lower-case states and roles) by ``as_v03``. Tasks are kept
in 1.0 JSON either way, and requests are recorded under their 1.0 method
names with the version they came in.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from shared.a2a.discovery import CARD_PATH
from tests import raw_http

COMPLETED = "TASK_STATE_COMPLETED"
WORKING = "TASK_STATE_WORKING"
SUBMITTED = "TASK_STATE_SUBMITTED"
CANCELED = "TASK_STATE_CANCELED"
FAILED = "TASK_STATE_FAILED"
REJECTED = "TASK_STATE_REJECTED"
AUTH_REQUIRED = "TASK_STATE_AUTH_REQUIRED"
ENDED = (COMPLETED, CANCELED, FAILED, REJECTED)


@dataclass(frozen=True)
class Text:
    """A chunk of the answer's text."""

    text: str


@dataclass(frozen=True)
class ToolCall:
    """A tool call and, ``seconds`` later, its result, as ADK tags them."""

    call_id: str
    name: str
    seconds: float = 0.0


@dataclass(frozen=True)
class ToolResult:
    """A tool result whose call the agent never sends (as ADK tags it)."""

    call_id: str
    name: str


Piece = Text | ToolCall | ToolResult


def canonical_answer(pieces: list[Piece]) -> str:
    """The answer a person should read once: the text chunks joined."""
    return "".join(piece.text for piece in pieces if isinstance(piece, Text))


def tool_names(pieces: list[Piece]) -> list[str]:
    """The steps a person should see once each, in order."""
    return [piece.name for piece in pieces if isinstance(piece, ToolCall | ToolResult)]


DEFAULT_PIECES: list[Piece] = [
    Text("Checking the runbook. "),
    ToolCall("call-1", "read_runbook"),
    Text("The disk is full on db-2; "),
    Text("rotate the logs and restart the service."),
]


@dataclass
class Script:
    """How the agent answers, set by each test before it writes in Slack."""

    pieces: list[Piece] = field(default_factory=lambda: list(DEFAULT_PIECES))
    gap: float = 0.05
    """Seconds between two events of a task."""
    failed_sends: int = 0
    """The first sends of each messageId answered HTTP 500 before any event, and not taken."""
    busy_for: float = 0.0
    """Sends of a messageId answered -32004 until this many seconds after its first send."""
    taken_then_dropped: bool = False
    """The first send of each messageId is taken, then its connection drops before any event."""
    drop_send_after: int | None = None
    """The send's stream drops after this many events (the task runs on)."""
    hold_send_after: int | None = None
    """The send's stream stops after this many events until ``released`` is set (the task runs on)."""
    hold_card: bool = False
    """Card requests wait until ``released`` is set."""
    failed_cards: int = 0
    """The next card requests answered HTTP 500 (counted down as they come)."""
    can_subscribe: bool = True
    """Whether SubscribeToTask is implemented (else JSON-RPC -32601)."""
    close_send_after: int | None = None
    """The send's stream ends normally after this many events (the task runs on)."""
    foreign: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    """Results the send's stream carries before its event of this index (at its end, for an
    index past the last), besides the task's own: another task's events, Messages. The task
    does not keep them."""
    opens_with_text: bool = False
    """A task's stream opens with its first text chunk (an artifact update naming the task),
    with no Task or status update before it, as some agents stream."""
    first_answer: list[dict[str, Any]] | None = None
    """The first send of each messageId is answered with these results alone, and not taken."""
    stays_in: list[str] = field(default_factory=list)
    """The states the first tasks stay in after their pieces, one per task in order, instead of
    completing: paused (auth-required), or working and silent for ever. Later tasks complete."""
    endless_list: bool = False
    """ListTasks pages never end (each page empty, with a next page token)."""
    cancelable: bool = False
    """Whether CancelTask cancels a running task (else every cancel is refused with -32002)."""
    status_text: str | None = None
    """The text of the status message of the state a task ends or stays in (role agent)."""
    new_context: bool = False
    """Every task starts a new context, whatever the message names (a lost conversation)."""
    omit_context: bool = False
    """Tasks, events and GetTask name no contextId."""
    message_reply: str | None = None
    """A send is answered with one Message of this text (role agent) and no task."""
    tasks_forgotten: bool = False
    """GetTask and SubscribeToTask answer -32001: the agent no longer has the task."""
    reached: threading.Event = field(default_factory=threading.Event)
    """Set when a held request is being held."""
    released: threading.Event = field(default_factory=threading.Event)


V03_PATH = "/v03/"
"""Where the agent speaks A2A 0.3."""

_V03_METHODS = {
    "message/stream": "SendStreamingMessage",
    "tasks/get": "GetTask",
    "tasks/resubscribe": "SubscribeToTask",
    "tasks/cancel": "CancelTask",
}


@dataclass
class Received:
    """One JSON-RPC request the agent received (its method by the 1.0 name)."""

    method: str
    params: dict[str, Any]
    at: float
    version: str = "1.0"

    @property
    def message(self) -> dict[str, Any]:
        """The message of a send."""
        return dict(self.params.get("message") or {})


@dataclass
class AgentTask:
    """A task the agent runs: its log of stream results, and what GetTask shows."""

    id: str
    context_id: str
    user_message: dict[str, Any]
    state: str = SUBMITTED
    stamp: str = field(default_factory=lambda: _stamp())
    log: list[dict[str, Any]] = field(default_factory=list)
    parts: list[dict[str, Any]] = field(default_factory=list)
    started_at: float = field(default_factory=time.time)
    ended_at: float | None = None
    changed: threading.Condition = field(default_factory=threading.Condition)
    omit_context: bool = False
    status_message: dict[str, Any] | None = None

    @property
    def ended(self) -> bool:
        """Whether the task has ended for good."""
        return self.ended_at is not None

    @property
    def settled(self) -> bool:
        """Whether the task has ended or paused: its streams end."""
        return self.state not in (SUBMITTED, WORKING)

    def snapshot(self) -> dict[str, Any]:
        """The task as GetTask, ListTasks and SubscribeToTask show it (1.0 JSON)."""
        status: dict[str, Any] = {"state": self.state, "timestamp": self.stamp}
        if self.status_message is not None:
            status["message"] = self.status_message
        task: dict[str, Any] = {
            "id": self.id,
            "status": status,
            "history": [self.user_message],
        }
        if not self.omit_context:
            task["contextId"] = self.context_id
        if self.parts:
            task["artifacts"] = [
                {"artifactId": "answer", "name": "answer", "parts": list(self.parts)}
            ]
        return task


class FaultyAgent:
    """The agent: its card, its tasks, what it received, and the current ``script``."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.script = Script()
        self.received: list[Received] = []
        self.tasks: dict[str, AgentTask] = {}
        self.name = "faulty"
        """The name its card gives (another name: another agent, to Kourier)."""
        self.overlaps: list[tuple[str, str]] = []
        """(messageId of a send, id of a task of its context that was still running)."""
        self._lock = threading.Lock()
        self._first_send_at: dict[str, float] = {}
        self._sends_seen: dict[str, int] = {}
        self._stopping = threading.Event()
        self._numbers = itertools.count(1)

    @property
    def url(self) -> str:
        """The agent's endpoint."""
        return f"http://127.0.0.1:{self.port}/"

    def card(self, version: str = "1.0") -> dict[str, Any]:
        """A well-formed card of A2A ``version`` (1.0 or 0.3)."""
        if version == "0.3":
            return {
                "name": self.name,
                "description": "misbehaves on purpose, in A2A 0.3",
                "version": "1",
                "url": self.url.rstrip("/") + V03_PATH,
                "protocolVersion": "0.3.0",
                "preferredTransport": "JSONRPC",
                "capabilities": {"streaming": True},
                "defaultInputModes": ["text"],
                "defaultOutputModes": ["text"],
                "skills": [],
            }
        return {
            "name": self.name,
            "description": "misbehaves on purpose",
            "version": "1",
            "supportedInterfaces": [
                {"url": self.url, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
            ],
            "capabilities": {"streaming": True},
            "defaultInputModes": ["text"],
            "defaultOutputModes": ["text"],
            "skills": [],
        }

    def use(self, script: Script) -> Script:
        """Answer from now on as ``script`` says; returns it."""
        self.script = script
        return script

    def forget(self) -> None:
        """Forget what was received (the tasks stay, as on a real agent)."""
        with self._lock:
            self.received.clear()
            self.overlaps.clear()

    # What the tests read -------------------------------------------------------

    def calls(self, method: str) -> list[Received]:
        """The requests of one JSON-RPC method, oldest first."""
        with self._lock:
            return [r for r in self.received if r.method == method]

    def sends(self, message_id: str | None = None) -> list[Received]:
        """The sends received (of ``message_id``, if given), oldest first."""
        sends = self.calls("SendStreamingMessage")
        return [s for s in sends if message_id in (None, s.message.get("messageId"))]

    def tasks_of(self, message_id: str) -> list[AgentTask]:
        """The tasks started for a messageId."""
        with self._lock:
            return [t for t in self.tasks.values() if t.user_message.get("messageId") == message_id]

    def stop(self) -> None:
        """Release everything held: the server is going away."""
        self._stopping.set()
        self.script.released.set()

    # Serving ---------------------------------------------------------------------

    def handle(self, exchange: Exchange) -> None:
        """Answer one HTTP request."""
        if exchange.verb == "GET":
            if not exchange.path.endswith(CARD_PATH):
                exchange.status(404)
                return
            script = self.script
            if script.hold_card:
                script.reached.set()
                script.released.wait()
            with self._lock:
                failed, script.failed_cards = (
                    script.failed_cards > 0,
                    max(0, script.failed_cards - 1),
                )
            if failed:
                exchange.status(500, body=b"scripted card failure")
                return
            exchange.json(self.card(exchange.version))
            return
        body = exchange.body if isinstance(exchange.body, dict) else {}
        method, params = str(body.get("method")), dict(body.get("params") or {})
        if exchange.version == "0.3":
            method = _V03_METHODS.get(method, method)
        with self._lock:
            self.received.append(Received(method, params, time.time(), exchange.version))
        answer = {
            "SendStreamingMessage": self._send,
            "SubscribeToTask": self._subscribe,
            "GetTask": self._get_task,
            "ListTasks": self._list_tasks,
            "CancelTask": self._cancel_task,
        }.get(method)
        if answer is None:
            exchange.json(_error(-32601, "method not found"))
            return
        answer(exchange, params)

    def _send(self, exchange: Exchange, params: dict[str, Any]) -> None:
        script = self.script
        message = dict(params.get("message") or {})
        message_id = str(message.get("messageId"))
        with self._lock:
            first_at = self._first_send_at.setdefault(message_id, time.time())
            seen = self._sends_seen[message_id] = self._sends_seen.get(message_id, 0) + 1
        if seen <= script.failed_sends:
            exchange.status(500, body=b"scripted failure")
            return
        if time.time() - first_at < script.busy_for:
            exchange.json(_error(-32004, "busy"))
            return
        if script.message_reply is not None:
            with self._lock:
                context_id = str(message.get("contextId") or f"ctx-{next(self._numbers)}")
            reply = {
                "role": "ROLE_AGENT",
                "messageId": f"reply-{message_id}",
                "contextId": context_id,
                "parts": [{"text": script.message_reply}],
            }
            if exchange.start_stream() and exchange.event(_result({"message": reply})):
                exchange.end()
            return
        if script.first_answer is not None and seen == 1:
            if exchange.start_stream() and all(
                map(exchange.event, map(_result, script.first_answer))
            ):
                exchange.end()
            return
        task = self._start_task(message, script)
        if script.taken_then_dropped and seen == 1:
            exchange.drop()
            return
        if not exchange.start_stream():
            return
        index = 0
        for index, event in enumerate(self._events(task, 0)):
            if not all(map(exchange.event, map(_result, script.foreign.get(index, [])))):
                return
            if script.close_send_after == index:
                exchange.end()
                return
            if script.drop_send_after == index:
                exchange.drop()
                return
            if script.hold_send_after == index:
                script.reached.set()
                script.released.wait()
            if not exchange.event(event):
                return
        past = [frame for at, frames in script.foreign.items() if at > index for frame in frames]
        if not all(map(exchange.event, map(_result, past))):
            return
        if script.hold_send_after == len(task.log):
            script.reached.set()
            script.released.wait()
        if script.drop_send_after == len(task.log):
            exchange.drop()
            return
        exchange.end()

    def _subscribe(self, exchange: Exchange, params: dict[str, Any]) -> None:
        if self.script.tasks_forgotten:
            exchange.json(_error(-32001, "task not found"))
            return
        if not self.script.can_subscribe:
            exchange.json(_error(-32601, "SubscribeToTask is not implemented"))
            return
        task = self.tasks.get(str(params.get("id")))
        if task is None:
            exchange.json(_error(-32001, "task not found"))
            return
        with task.changed:
            if task.ended:
                exchange.json(_error(-32004, "the task has ended"))
                return
            snapshot, start = task.snapshot(), len(task.log)
        if not exchange.start_stream() or not exchange.event(_result({"task": snapshot})):
            return
        for event in self._events(task, start):
            if not exchange.event(event):
                return
        exchange.end()

    def _get_task(self, exchange: Exchange, params: dict[str, Any]) -> None:
        task = self.tasks.get(str(params.get("id")))
        if task is None or self.script.tasks_forgotten:
            exchange.json(_error(-32001, "task not found"))
            return
        with task.changed:
            exchange.json(_result(task.snapshot()))

    def _list_tasks(self, exchange: Exchange, params: dict[str, Any]) -> None:
        if self.script.endless_list:
            page = int(params.get("pageToken") or 0)
            exchange.json(_result({"tasks": [], "nextPageToken": str(page + 1)}))
            return
        context_id = params.get("contextId")
        with self._lock:
            tasks = [t for t in self.tasks.values() if t.context_id == context_id]
        exchange.json(_result({"tasks": [t.snapshot() for t in tasks], "nextPageToken": ""}))

    def _cancel_task(self, exchange: Exchange, params: dict[str, Any]) -> None:
        task = self.tasks.get(str(params.get("id")))
        if task is None or not self.script.cancelable or task.ended:
            exchange.json(_error(-32002, "not cancelable"))
            return
        self._status(task, CANCELED)
        with task.changed:
            exchange.json(_result(task.snapshot()))

    # Tasks -------------------------------------------------------------------------

    def _start_task(self, message: dict[str, Any], script: Script) -> AgentTask:
        with self._lock:
            number = next(self._numbers)
            named = None if script.new_context else message.get("contextId")
            context_id = str(named or f"ctx-{number}")
            running = [t for t in self.tasks.values() if t.context_id == context_id and not t.ended]
            self.overlaps += [(str(message.get("messageId")), t.id) for t in running]
            task = AgentTask(
                f"task-{number}", context_id, message, omit_context=script.omit_context
            )
            self.tasks[task.id] = task
            stays_in = script.stays_in.pop(0) if script.stays_in else COMPLETED
        if not script.opens_with_text:
            self._record(task, {"task": task.snapshot()})
        threading.Thread(target=self._play, args=(task, script, stays_in), daemon=True).start()
        return task

    def _play(self, task: AgentTask, script: Script, ends_in: str = COMPLETED) -> None:
        """Run the task: its events, ``script.gap`` apart, then ``ends_in`` (completed)."""
        self._pause(script.gap)
        if not script.opens_with_text:
            self._status(task, WORKING)
        for piece in script.pieces:
            self._pause(script.gap)
            if isinstance(piece, Text):
                self._artifact(task, {"text": piece.text})
                continue
            if isinstance(piece, ToolResult):
                result = {"id": piece.call_id, "name": piece.name, "response": {"ok": True}}
                self._artifact(task, _tool_part("function_response", result))
                continue
            self._artifact(
                task,
                _tool_part("function_call", {"id": piece.call_id, "name": piece.name, "args": {}}),
            )
            self._pause(piece.seconds)
            result = {"id": piece.call_id, "name": piece.name, "response": {"ok": True}}
            self._artifact(task, _tool_part("function_response", result))
        self._pause(script.gap)
        if not task.ended:  # not cancelled meanwhile
            self._status(task, ends_in, script.status_text)

    def _pause(self, seconds: float) -> None:
        self._stopping.wait(seconds)

    def _status(self, task: AgentTask, state: str, text: str | None = None) -> None:
        with task.changed:
            task.state, task.stamp = state, _stamp()
            status: dict[str, Any] = {"state": state, "timestamp": task.stamp}
            if text is not None:
                task.status_message = status["message"] = {
                    "role": "ROLE_AGENT",
                    "messageId": f"{task.id}-status",
                    "parts": [{"text": text}],
                }
            update: dict[str, Any] = {"taskId": task.id, "status": status}
            if not task.omit_context:
                update["contextId"] = task.context_id
            self._record(task, {"statusUpdate": update})
            if state in ENDED:
                task.ended_at = time.time()

    def _artifact(self, task: AgentTask, part: dict[str, Any]) -> None:
        with task.changed:
            append = bool(task.parts)
            task.parts.append(part)
        artifact = {"artifactId": "answer", "name": "answer", "parts": [part]}
        update: dict[str, Any] = {"taskId": task.id, "artifact": artifact, "append": append}
        if not task.omit_context:
            update["contextId"] = task.context_id
        self._record(task, {"artifactUpdate": update})

    def _record(self, task: AgentTask, result: dict[str, Any]) -> None:
        with task.changed:
            task.log.append(_result(result))
            task.changed.notify_all()

    def _events(self, task: AgentTask, start: int) -> Iterator[dict[str, Any]]:
        """The task's events from index ``start``, as they happen, until it has ended or paused."""
        index = start
        while True:
            with task.changed:
                while index >= len(task.log) and not task.settled and not self._stopping.is_set():
                    task.changed.wait(0.5)
                if index >= len(task.log):
                    return
                event = task.log[index]
            index += 1
            yield event


def _stamp() -> str:
    """A status timestamp (ISO 8601, UTC, milliseconds)."""
    now = time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + f".{int(now * 1000) % 1000:03d}Z"


def other_task(
    state: str, text: str, task_id: str = "task-other", context_id: str = "ctx-other"
) -> dict[str, Any]:
    """A full Task of another task than the send's, with ``text`` in an artifact (1.0 JSON)."""
    return {
        "task": {
            "id": task_id,
            "contextId": context_id,
            "status": {"state": state, "timestamp": _stamp()},
            "artifacts": [{"artifactId": "other", "parts": [{"text": text}]}],
        }
    }


def other_status(
    state: str, task_id: str = "task-other", context_id: str = "ctx-other"
) -> dict[str, Any]:
    """A status update of another task than the send's (1.0 JSON)."""
    status = {"state": state, "timestamp": _stamp()}
    return {"statusUpdate": {"taskId": task_id, "contextId": context_id, "status": status}}


def message(
    role: str, text: str, task_id: str | None = None, context_id: str | None = None
) -> dict[str, Any]:
    """A Message result (1.0 JSON; ``role`` ROLE_AGENT or ROLE_USER)."""
    wire: dict[str, Any] = {"role": role, "parts": [{"text": text}], "messageId": f"m-{text[:8]}"}
    if task_id:
        wire["taskId"] = task_id
    if context_id:
        wire["contextId"] = context_id
    return {"message": wire}


def as_v03(result: Any) -> Any:
    """A 1.0 result (a stream result, or GetTask's task) spelled as A2A 0.3."""
    if not isinstance(result, dict):
        return result
    for wrapper, kind in (
        ("task", "task"),
        ("statusUpdate", "status-update"),
        ("artifactUpdate", "artifact-update"),
        ("message", "message"),
    ):
        if isinstance(result.get(wrapper), dict) and len(result) == 1:
            return _v03_object(kind, result[wrapper])
    if "status" in result and "id" in result:
        return _v03_object("task", result)
    return result


def _v03_object(kind: str, obj: dict[str, Any]) -> dict[str, Any]:
    converted: dict[str, Any] = {"kind": kind, **obj}
    if "status" in obj:
        converted["status"] = _v03_status(obj["status"])
    if kind == "status-update":
        state = converted["status"]["state"]
        converted["final"] = state not in ("submitted", "working")
    if "artifact" in obj:
        converted["artifact"] = _v03_artifact(obj["artifact"])
    if "artifacts" in obj:
        converted["artifacts"] = [_v03_artifact(a) for a in obj["artifacts"]]
    if "history" in obj:
        converted["history"] = [_v03_object("message", m) for m in obj["history"]]
    if kind == "message":
        if "role" in obj:
            converted["role"] = str(obj["role"]).lower().removeprefix("role_")
        converted["parts"] = [_v03_part(p) for p in obj.get("parts", [])]
    return converted


def _v03_status(status: dict[str, Any]) -> dict[str, Any]:
    converted = {**status}
    converted["state"] = str(status["state"]).lower().removeprefix("task_state_").replace("_", "-")
    if isinstance(status.get("message"), dict):
        converted["message"] = _v03_object("message", status["message"])
    return converted


def _v03_artifact(artifact: dict[str, Any]) -> dict[str, Any]:
    return {**artifact, "parts": [_v03_part(p) for p in artifact.get("parts", [])]}


def _v03_part(part: dict[str, Any]) -> dict[str, Any]:
    if "kind" in part:
        return part
    kind = "text" if "text" in part else "data" if "data" in part else "file"
    return {"kind": kind, **part}


def _tool_part(kind: str, data: dict[str, Any]) -> dict[str, Any]:
    return {"data": data, "metadata": {"adk_type": kind}}


def _result(obj: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": "1", "result": obj}


def _error(code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": "1", "error": {"code": code, "message": message}}


class Exchange(raw_http.Exchange):
    """One request, answered in the A2A version of the path it came to."""

    def __init__(self, handler: BaseHTTPRequestHandler, body: Any) -> None:
        super().__init__(handler, body)
        self.version = "0.3" if self.path.startswith(V03_PATH) else "1.0"

    def json(self, obj: Any, code: int = 200, headers: dict[str, str] | None = None) -> bool:
        """Answer with a JSON body (a JSON-RPC result spelled for the request's version)."""
        return super().json(self._spelled(obj), code, headers)

    def event(self, frame: Any) -> bool:
        """Send one SSE event (spelled for the request's version); False when the client has gone."""
        return super().event(self._spelled(frame))

    def _spelled(self, obj: Any) -> Any:
        if self.version == "0.3" and isinstance(obj, dict) and "result" in obj:
            return {**obj, "result": as_v03(obj["result"])}
        return obj


@contextmanager
def running_agent(port: int) -> Iterator[FaultyAgent]:
    """A faulty agent on 127.0.0.1:``port`` for the duration of the block."""
    agent = FaultyAgent(port)
    with raw_http.serving(port, lambda handler, body: agent.handle(Exchange(handler, body))):
        try:
            yield agent
        finally:
            agent.stop()
