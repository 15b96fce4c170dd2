"""Simulated A2A agents: tasks that play generated scripts on virtual time, over httpx.

Theory of operation. An ``AgentWorld`` keeps tasks as a real agent does
(the design of ``tests/faults/agent.py``, with a2a-sdk's task store
semantics): a send that the agent takes creates a task for its messageId
(or finds it, if the agent de-duplicates), and the task plays its *script*
whether or not anyone listens. Every stream, the send's or a
SubscribeToTask, is a view on the task's log, so a dropped stream loses the
connection, not the task; GetTask, CancelTask and ListTasks answer from the
task as it stands. Scripts come from ``local.sim.scripts``, keyed by
messageId, so they do not move when the scheduler does.

The agent speaks HTTP through ``SimAgentTransport``, an ``httpx`` transport:
the shell's real ``AgentClient`` and ``Transport`` run unchanged above it,
on A2A 1.0 or 0.3 JSON. Each SSE frame is read at a scheduling point of the
world: the read parks the invocation until the frame's virtual time, and
while it waits, the invocation's due reply timers run (the production timer
thread can only act while the engine is blocked in such a read). A stream
is cut as the production watchdog cuts it: at the caller's hand-over
deadline (``httpx.ReadError``, which the transport ends quietly) or after the
idle limit without an event (``httpx.ReadTimeout``).

Everything an outsider could observe is recorded for the oracle: each
request (method, messageId, contextId, taskId), the tasks created per
messageId, and every event each stream or GetTask actually delivered.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Generator, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx

from local.sim.scripts import AgentProfile, ScriptGenerator, Step
from local.sim.world import World, us

CANARY = "CANARY-7f3a"
"""Every error message an agent writes holds this; it must never reach Slack."""

HITL = "https://kagent.dev/extensions/hitl/v1"
CARD_PATH = "/.well-known/agent-card.json"
EPOCH = datetime(2026, 12, 1, tzinfo=UTC)


def stamp(at_us: int) -> str:
    """A status timestamp at virtual time ``at_us``."""
    return (EPOCH + timedelta(microseconds=at_us)).isoformat().replace("+00:00", "Z")


# The task store ----------------------------------------------------------------------


@dataclass
class AgentTask:
    """One task: its script, the events it has emitted, and its state as a store keeps it."""

    id: str
    context_id: str
    message_id: str
    user_message: dict[str, Any]
    steps: list[Step]
    start_us: int
    log: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    """Events emitted so far: (virtual time, internal event)."""
    played: int = 0
    """How many steps are in ``log``."""
    history: list[dict[str, Any]] = field(default_factory=list)
    artifacts: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    state: str = "submitted"
    status_message: dict[str, Any] | None = None
    status_at: int = 0
    ended_at: int | None = None
    """When the task reached a terminal state or paused (then None again when resumed)."""

    def advance(self, now_us: int) -> None:
        """Emit every step due by ``now_us``."""
        while (
            self.played < len(self.steps)
            and self.start_us + self.steps[self.played].at_us <= now_us
        ):
            step = self.steps[self.played]
            self.played += 1
            self.emit(self.start_us + step.at_us, step.event)

    def emit(self, at_us: int, event: dict[str, Any]) -> None:
        """Apply one event to the stored task and add it to the log."""
        kind = event["kind"]
        if kind == "artifact":
            parts = [dict(p) for p in event["parts"]]
            key = event["artifact_id"]
            if event["append"] and key in self.artifacts:
                self.artifacts[key].extend(parts)
            else:
                self.artifacts[key] = parts
        elif kind == "status":
            if self.status_message is not None:
                self.history.append(self.status_message)
            self.state = event["state"]
            self.status_message = event.get("message")
            self.status_at = at_us
            if self.state in TERMINAL or self.state in PAUSED:
                self.ended_at = at_us
        self.log.append((at_us, event))

    def next_time(self) -> int | None:
        """When the next step is due, if the script has one."""
        if self.played >= len(self.steps):
            return None
        return self.start_us + self.steps[self.played].at_us

    def snapshot(self, with_history: bool = True) -> dict[str, Any]:
        """The task as GetTask shows it (internal form)."""
        status: dict[str, Any] = {"state": self.state, "timestamp": stamp(self.status_at)}
        if self.status_message is not None:
            status["message"] = self.status_message
        task: dict[str, Any] = {
            "kind": "task",
            "id": self.id,
            "contextId": self.context_id,
            "status": status,
            "artifacts": [
                {"artifactId": key, "parts": list(parts)} for key, parts in self.artifacts.items()
            ],
        }
        if with_history:
            task["history"] = [self.user_message, *self.history]
        return task

    def cancel(self, at_us: int) -> None:
        """CancelTask: the script stops; the task is canceled."""
        self.steps = self.steps[: self.played]
        if self.state not in TERMINAL:
            self.emit(at_us, {"kind": "status", "state": "canceled", "final": True})


TERMINAL = ("completed", "failed", "rejected", "canceled")
PAUSED = ("input-required", "auth-required")


# What the oracle reads ------------------------------------------------------------------


@dataclass
class Request:
    """One JSON-RPC request as the agent received it."""

    at_us: int
    method: str
    message_id: str | None = None
    context_id: str | None = None
    task_id: str | None = None
    text: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    answered: str = ""
    """What the agent did: "stream", "result", "busy", "error", "dropped"…"""


@dataclass
class Delivery:
    """Events one stream, GetTask or CancelTask handed out, in order, for one messageId's reply."""

    request: Request
    task_id: str | None
    events: list[tuple[int, int, str, dict[str, Any]]] = field(default_factory=list)
    """(time, place (``World.record``), the invocation that read it, the event in internal form)."""

    def add(self, world: World, event: dict[str, Any]) -> None:
        """Record that the current invocation read ``event`` now."""
        invocation = world.current
        name = invocation.name if invocation else ""
        self.events.append((world.now_us, world.record(), name, event))


class AgentWorld:
    """The agents of one seed: their tasks and what they received and delivered."""

    def __init__(self, world: World, profile: AgentProfile) -> None:
        self.world = world
        self.profile = profile
        self.scripts = ScriptGenerator(world.seed, profile)
        self.tasks: dict[str, AgentTask] = {}
        self.by_message: dict[str, list[AgentTask]] = {}
        self.requests: list[Request] = []
        self.deliveries: list[Delivery] = []
        self.message_replies: dict[str, list[dict[str, Any]]] = {}
        """messageId to the Message replies given to it (no task)."""
        self._contexts = 0
        self._busy_until: dict[str, int] = {}
        self._gone_contexts: set[str] = set()
        self.forgotten: set[str] = set()
        """Tasks the agent lost (a restart without a task store): -32001 from then on."""

    # The methods ---------------------------------------------------------------------

    def card(self, endpoint: str) -> dict[str, Any]:
        """The agent card (1.0 or 0.3 shape)."""
        extensions = [{"uri": HITL, "required": False}] if self.profile.lists_hitl else []
        card: dict[str, Any] = {
            "name": "sim",
            "description": "a simulated agent",
            "version": "1",
            "capabilities": {"streaming": True, "extensions": extensions},
            "defaultInputModes": ["text"],
            "defaultOutputModes": ["text"],
            "skills": [],
        }
        if self.profile.version == "1.0":
            card["supportedInterfaces"] = [
                {"url": endpoint, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
            ]
        else:
            card |= {"url": endpoint, "preferredTransport": "JSONRPC", "protocolVersion": "0.3.0"}
        return card

    def send(self, request: Request, message: dict[str, Any]) -> Any:
        """SendStreamingMessage: a task view to stream, a Message, or an error."""
        world = self.world
        message_id = request.message_id or ""
        if request.task_id:
            task = self.tasks.get(request.task_id)
            if task is None:
                return _rpc_error(-32001, "task not found")
            task.advance(world.now_us)
            if task.state not in PAUSED:
                return _rpc_error(-32603, "the task is not waiting for input")
            script = self.scripts.after_answer(message_id, task.id)
            task.history.append(message)
            task.steps = task.steps[: task.played] + [
                Step(world.now_us - task.start_us + step.at_us, step.event) for step in script.steps
            ]
            task.ended_at = None
            return TaskView(task, len(task.log), replay_task=False)
        busy_until = self._busy_until.get(message_id)
        script = self.scripts.for_message(message_id)
        if busy_until is None and script.busy_seconds:
            busy_until = world.now_us + us(script.busy_seconds)
            self._busy_until[message_id] = busy_until
        if busy_until is not None and world.now_us < busy_until:
            return _rpc_error(-32004, "the agent is busy")
        if request.context_id and request.context_id in self._gone_contexts:
            request.context_id = None  # a context the agent forgot starts anew
        existing = self.by_message.get(message_id)
        if existing and self.profile.dedup:
            task = existing[-1]
            task.advance(world.now_us)
            return TaskView(task, 0, replay_task=True)
        if script.message_reply is not None:
            reply = dict(script.message_reply)
            reply["contextId"] = request.context_id or self._new_context()
            self.message_replies.setdefault(message_id, []).append(reply)
            return reply
        context_id = request.context_id or self._new_context()
        if script.new_context:
            context_id = self._new_context()
        task = AgentTask(
            id=f"task-{len(self.tasks) + 1}",
            context_id=context_id,
            message_id=message_id,
            user_message=message,
            steps=list(script.steps),
            start_us=world.now_us,
            status_at=world.now_us,
        )
        self.tasks[task.id] = task
        self.by_message.setdefault(message_id, []).append(task)
        task.emit(world.now_us, {"kind": "task"})
        return TaskView(task, 0, replay_task=True)

    def get(self, task_id: str, history: bool = True) -> dict[str, Any] | None:
        """GetTask (None: -32001)."""
        task = self.tasks.get(task_id)
        if task is None or task.context_id in self._gone_contexts:
            return None
        task.advance(self.world.now_us)
        return task.snapshot(with_history=history)

    def forget_context(self, context_id: str) -> None:
        """The agent loses a conversation: its tasks answer -32001 from now on."""
        self._gone_contexts.add(context_id)

    def _new_context(self) -> str:
        self._contexts += 1
        return f"ctx-{self._contexts}"


@dataclass
class TaskView:
    """A stream on a task's log from ``start``: what a send or a subscribe streams."""

    task: AgentTask
    start: int
    replay_task: bool
    """The first frame is the task itself (a send, a subscribe), then its live events."""


def _rpc_error(code: int, message: str) -> dict[str, Any]:
    return {"error": {"code": code, "message": f"{message} ({CANARY})"}}


# The wire ----------------------------------------------------------------------------------


class Wire:
    """The internal events in A2A 1.0 or 0.3 JSON."""

    def __init__(self, version: str) -> None:
        self.v1 = version == "1.0"

    def state(self, state: str) -> str:
        return "TASK_STATE_" + state.upper().replace("-", "_") if self.v1 else state

    def role(self, role: str) -> str:
        return "ROLE_" + role.upper() if self.v1 else role

    def part(self, part: dict[str, Any]) -> dict[str, Any]:
        if self.v1:
            return part
        if "text" in part:
            return {"kind": "text", **part}
        return {"kind": "data", **part}

    def message(self, message: dict[str, Any]) -> dict[str, Any]:
        out = {k: v for k, v in message.items() if k not in ("role", "parts", "kind")}
        out["role"] = self.role(message.get("role", "agent"))
        out["parts"] = [self.part(p) for p in message.get("parts", [])]
        if not self.v1:
            out["kind"] = "message"
        return out

    def task(self, task: dict[str, Any]) -> dict[str, Any]:
        status = dict(task["status"])
        status["state"] = self.state(status["state"])
        if "message" in status:
            status["message"] = self.message(status["message"])
        out: dict[str, Any] = {
            "id": task["id"],
            "contextId": task["contextId"],
            "status": status,
            "artifacts": [
                {"artifactId": a["artifactId"], "parts": [self.part(p) for p in a["parts"]]}
                for a in task["artifacts"]
            ],
        }
        if "history" in task:
            out["history"] = [self.message(m) for m in task["history"]]
        if not self.v1:
            out["kind"] = "task"
        return out

    def event(self, task: AgentTask, event: dict[str, Any], at_us: int) -> dict[str, Any]:
        """A stream result for one internal event of ``task``."""
        kind = event["kind"]
        task_id = event.get("task_id", task.id)
        context_id = event.get("context_id", task.context_id)
        if kind == "task":
            return self.wrap("task", self.task(task.snapshot()))
        if kind == "status":
            status: dict[str, Any] = {
                "state": self.state(event["state"]),
                "timestamp": stamp(at_us),
            }
            if event.get("message") is not None:
                status["message"] = self.message(event["message"])
            body: dict[str, Any] = {"status": status}
            if not self.v1:
                body["final"] = bool(event.get("final"))
            return self.wrap("status-update", _ids(body, task_id, context_id))
        if kind == "artifact":
            artifact = {
                "artifactId": event["artifact_id"],
                "parts": [self.part(p) for p in event["parts"]],
            }
            body = {"artifact": artifact, "append": event["append"]}
            if event.get("last_chunk"):
                body["lastChunk"] = True
            return self.wrap("artifact-update", _ids(body, task_id, context_id))
        message = dict(event["message"])
        if message.get("taskId") == "named":
            message["taskId"] = task.id
        message.setdefault("contextId", task.context_id)
        return self.wrap("message", self.message(message))

    def wrap(self, kind: str, body: dict[str, Any]) -> dict[str, Any]:
        if not self.v1:
            return {"kind": kind, **body} if kind != "task" else body
        key = {
            "task": "task",
            "status-update": "statusUpdate",
            "artifact-update": "artifactUpdate",
            "message": "message",
        }[kind]
        return {key: body}


def _ids(body: dict[str, Any], task_id: str | None, context_id: str | None) -> dict[str, Any]:
    if task_id:
        body["taskId"] = task_id
    if context_id:
        body["contextId"] = context_id
    return body


# HTTP ------------------------------------------------------------------------------------


@dataclass
class Answer:
    """What the agent answers one HTTP request, before it is spelled as HTTP."""

    status: int = 200
    body: Any = None
    """The JSON document of a plain answer (None: no body)."""
    frames: Iterator[dict[str, Any]] | None = None
    """A stream's JSON-RPC frames, each read at a scheduling point of the world."""


def _error_answer(rpc_id: Any, code: int, message: str) -> Answer:
    return Answer(body={"jsonrpc": "2.0", "id": rpc_id, **_rpc_error(code, message)})


class AgentServer:
    """The agents' endpoint: every read is a scheduling point of the world.

    It answers in decoded JSON (``Answer``): ``SimAgentTransport`` spells the
    answers as HTTP and SSE for the shell's real transport; the fast lane
    hands them to the transport's classification as they are.
    """

    def __init__(self, agents: AgentWorld, hand_over_at: Callable[[], int | None]) -> None:
        """Serve ``agents``.

        Args:
            agents: The agents.
            hand_over_at: The current invocation's deadline in virtual
                microseconds (the shell's ``until``), where the production
                watchdog shuts the stream's socket.
        """
        self.agents = agents
        self.world = agents.world
        self.wire = Wire(agents.profile.version)
        self.hand_over_at = hand_over_at
        self._net = agents.world.stream("agent/net")
        self.run_timers: Callable[[int], int | None] = lambda limit: None
        """Runs the current invocation's reply timers due by now; returns the next due time."""

    def answer(
        self, http_method: str, url: str, frame: Any, read_timeout: Callable[[], float | None]
    ) -> Answer:
        """The answer to one request (``frame``: the JSON-RPC request of a POST).

        ``read_timeout`` says, when a stream waits, how long it may go without
        an event (the caller may set it after the headers, as httpcore reads it).

        Raises:
            httpx.TransportError: The connection was lost before an answer.
        """
        world = self.world
        rng = self._net
        world.block(us(0.002 + rng.random() * 0.02))
        if http_method == "GET":
            if world.chance("agent.card_fails", 0.005):
                return Answer(503)
            return Answer(body=self.agents.card(url.removesuffix(CARD_PATH)))
        method = frame["method"]
        rpc_id = frame["id"]
        params = frame.get("params") or {}
        record = self._record(method, params)
        if method in ("SendStreamingMessage", "message/stream"):
            return self._send(rpc_id, record, params.get("message") or {}, read_timeout)
        if method in ("GetTask", "tasks/get"):
            return self._get(rpc_id, record)
        if method in ("SubscribeToTask", "tasks/resubscribe"):
            return self._subscribe(rpc_id, record, read_timeout)
        if method in ("CancelTask", "tasks/cancel"):
            return self._cancel(rpc_id, record)
        if method == "ListTasks":
            return self._list(rpc_id, record, params)
        record.answered = "unknown method"
        return _error_answer(rpc_id, -32601, "method not found")

    def _record(self, method: str, params: dict[str, Any]) -> Request:
        message = params.get("message") or {}
        text = "".join(p.get("text", "") for p in message.get("parts", []) if isinstance(p, dict))
        record = Request(
            at_us=self.world.now_us,
            method=method,
            message_id=message.get("messageId"),
            context_id=message.get("contextId") or params.get("contextId"),
            task_id=message.get("taskId") or params.get("id"),
            text=text if message else None,
            metadata=dict(message.get("metadata") or {}),
        )
        self.agents.requests.append(record)
        self.world.log("a2a", method, record.message_id, record.context_id, record.task_id)
        return record

    def _send(
        self,
        rpc_id: Any,
        record: Request,
        message: dict[str, Any],
        read_timeout: Callable[[], float | None],
    ) -> Answer:
        world = self.world
        entity = record.message_id or ""
        if world.chance("agent.send_5xx", 0.01, entity):
            record.answered = "5xx"
            return Answer(503)
        if world.chance("agent.send_401", 0.002, entity):
            record.answered = "401"  # its credentials were rotated under Kourier
            return Answer(401)
        answer = self.agents.send(record, _internal_message(message))
        if isinstance(answer, dict) and "error" in answer:
            record.answered = f"error {answer['error']['code']}"
            return Answer(body={"jsonrpc": "2.0", "id": rpc_id, **answer})
        if world.chance("agent.send_taken_dropped", 0.01, entity):
            record.answered = "dropped"
            raise httpx.RemoteProtocolError("the server closed the connection")
        if isinstance(answer, dict):  # a Message reply
            record.answered = "message"
            delivery = Delivery(record, None)
            delivery.add(world, {"kind": "message", "message": answer})
            self.agents.deliveries.append(delivery)
            frame = {
                "jsonrpc": "2.0",
                "id": rpc_id,
                "result": self.wire.wrap("message", self.wire.message(answer)),
            }
            return Answer(frames=iter([frame]))
        record.answered = "stream"
        return Answer(frames=self._frames(rpc_id, record, answer, read_timeout))

    def _subscribe(
        self, rpc_id: Any, record: Request, read_timeout: Callable[[], float | None]
    ) -> Answer:
        agents = self.agents
        if not agents.profile.can_subscribe:
            record.answered = "error -32601"
            return _error_answer(rpc_id, -32601, "no subscribe")
        task = agents.tasks.get(record.task_id or "")
        if task is None or task.context_id in agents._gone_contexts or self._forgets(task.id):
            record.answered = "error -32001"
            return _error_answer(rpc_id, -32001, "task not found")
        task.advance(self.world.now_us)
        if task.state in TERMINAL:
            record.answered = "error -32004"
            return _error_answer(rpc_id, -32004, "task ended")
        record.answered = "stream"
        view = TaskView(task, len(task.log), replay_task=True)
        return Answer(frames=self._frames(rpc_id, record, view, read_timeout))

    def _forgets(self, task_id: str) -> bool:
        """Whether the agent has lost the task (it may lose one at any follow-up call)."""
        if task_id in self.agents.forgotten:
            return True
        if self.world.chance("agent.forgets_task", 0.002, task_id):
            self.agents.forgotten.add(task_id)
            return True
        return False

    def _get(self, rpc_id: Any, record: Request) -> Answer:
        snapshot = self.agents.get(record.task_id or "")
        if snapshot is None or self._forgets(record.task_id or ""):
            record.answered = "error -32001"
            return _error_answer(rpc_id, -32001, "task not found")
        if self.world.chance("agent.get_5xx", 0.005, record.task_id or ""):
            record.answered = "5xx"
            return Answer(503)
        record.answered = "result"
        delivery = Delivery(record, record.task_id)
        delivery.add(self.world, snapshot)
        self.agents.deliveries.append(delivery)
        return Answer(body={"jsonrpc": "2.0", "id": rpc_id, "result": self.wire.task(snapshot)})

    def _cancel(self, rpc_id: Any, record: Request) -> Answer:
        task = self.agents.tasks.get(record.task_id or "")
        if task is None:
            record.answered = "error -32001"
            return _error_answer(rpc_id, -32001, "task not found")
        task.advance(self.world.now_us)
        if task.state in TERMINAL:
            record.answered = "error -32002"
            return _error_answer(rpc_id, -32002, "not cancelable")
        task.cancel(self.world.now_us)
        record.answered = "result"
        snapshot = task.snapshot()
        delivery = Delivery(record, record.task_id)  # the task as it answers: a read too
        delivery.add(self.world, snapshot)
        self.agents.deliveries.append(delivery)
        return Answer(body={"jsonrpc": "2.0", "id": rpc_id, "result": self.wire.task(snapshot)})

    def _list(self, rpc_id: Any, record: Request, params: dict[str, Any]) -> Answer:
        agents = self.agents
        context_id = params.get("contextId")
        found = [t for t in agents.tasks.values() if t.context_id == context_id]
        size = int(params.get("pageSize") or 50)
        start = int(params.get("pageToken") or 0)
        page = found[start : start + size]
        for task in page:
            task.advance(self.world.now_us)
        tasks = [
            {
                k: v
                for k, v in t.snapshot(with_history=agents.profile.list_history).items()
                if k != "artifacts"
            }
            | {"artifacts": []}
            for t in page
        ]
        token = str(start + size) if start + size < len(found) else ""
        record.answered = "result"
        result = {"tasks": [self.wire.task(t) for t in tasks], "nextPageToken": token}
        return Answer(body={"jsonrpc": "2.0", "id": rpc_id, "result": result})

    # Streams -------------------------------------------------------------------------------

    def _frames(
        self,
        rpc_id: Any,
        record: Request,
        view: TaskView,
        read_timeout: Callable[[], float | None],
    ) -> Iterator[dict[str, Any]]:
        """The frames of a view, each read at a scheduling point."""
        world, task = self.world, view.task
        delivery = Delivery(record, task.id)
        self.agents.deliveries.append(delivery)
        entity = f"{record.message_id or record.task_id}"
        drop_after = None
        if world.chance("agent.stream_drops", 0.03, entity):
            drop_after = world.stream("agent/drop", entity).randrange(0, 6)
        index = view.start
        sent = 0
        last_us = world.now_us
        if view.replay_task:
            task.advance(world.now_us)
            snapshot = task.snapshot()
            delivery.add(world, snapshot)
            yield _frame(rpc_id, self.wire.wrap("task", self.wire.task(snapshot)))
            index = len(task.log)
            sent += 1
        while True:
            task.advance(world.now_us)
            if index < len(task.log):
                at_us, event = task.log[index]
                index += 1
                if event["kind"] == "task":
                    continue
                if drop_after is not None and sent >= drop_after:
                    world.log("a2a.drop", task.id, sent)
                    raise httpx.ReadError("connection reset by peer")
                delivery.add(world, event)
                yield _frame(rpc_id, self.wire.event(task, event, at_us))
                sent += 1
                last_us = world.now_us
                if event["kind"] == "status" and (
                    event.get("final") or event["state"] in TERMINAL or event["state"] in PAUSED
                ):
                    return
                continue
            # Wait for the next event, the deadline, the idle limit, or a reply timer.
            idle = read_timeout()
            idle_at = last_us + us(idle) if idle else None
            cut_at = self.hand_over_at()
            wake = [t for t in (task.next_time(), idle_at, cut_at) if t is not None]
            if not wake:
                return  # nothing more will come (a paused or ended task whose end was seen)
            target = min(wake)
            timer_at = self.run_timers(target)
            if timer_at is not None and timer_at < target:
                world.block(max(0, timer_at - world.now_us))
                continue
            world.block(max(0, target - world.now_us))
            if cut_at is not None and world.now_us >= cut_at:
                raise httpx.ReadError("the watchdog shut the socket")
            if (
                idle_at is not None
                and world.now_us >= idle_at
                and (task.next_time() or idle_at + 1) > world.now_us
            ):
                task.advance(world.now_us)
                if index >= len(task.log):
                    raise httpx.ReadTimeout("no event within the read timeout")


class DecodedLink:
    """The fast lane: ``AgentServer``'s answers handed to the shell's transport as decoded JSON.

    The shell's ``Transport`` classifies them by the same rules as an HTTP
    answer; only the spelling (httpx, SSE, JSON text) is skipped. A lost
    connection is the server's ``httpx.TransportError``, as on the wire lane.
    """

    def __init__(self, server: AgentServer) -> None:
        self.server = server

    @contextmanager
    def send(
        self,
        http_method: str,
        url: str,
        payload: Mapping[str, Any] | None,
        headers: Mapping[str, str],
        timeout: float,
    ) -> Iterator[_DecodedReply]:
        reply = _DecodedReply(f"{http_method} {url}", timeout)
        answer = self.server.answer(http_method, url, payload, reply.read_timeout)
        reply.status = answer.status
        reply.body = answer.body
        reply.stream = answer.frames
        if answer.frames is not None:
            reply.headers = {"content-type": "text/event-stream"}
        elif answer.body is not None:
            reply.headers = {"content-type": "application/json"}
        try:
            yield reply
        finally:
            if answer.frames is not None:
                close = getattr(answer.frames, "close", None)
                if close is not None:
                    close()


class _DecodedReply:
    """One decoded answer, read as the transport reads an HTTP one."""

    def __init__(self, where: str, timeout: float) -> None:
        self.where = where
        self.status = 200
        self.headers: Mapping[str, str] = {}
        self.cut: str | None = None
        self.body: Any = None
        self.stream: Iterator[dict[str, Any]] | None = None
        self._read_timeout: float | None = timeout

    def read_timeout(self) -> float | None:
        """How long the stream may wait for an event now (as httpcore reads it)."""
        return self._read_timeout

    @property
    def is_event_stream(self) -> bool:
        return self.stream is not None

    def document(self, what: str, max_bytes: int, seconds: float, clock: Any) -> Any:
        if self.body is None:
            raise ValueError(f"{what}: no body")
        return self.body

    def frames(
        self, method: str, max_bytes: int, idle: float, until: float | None, clock: Any
    ) -> Generator[Any]:
        self._read_timeout = idle
        assert self.stream is not None
        yield from self.stream


class SimAgentTransport(httpx.BaseTransport):
    """The agents' HTTP: ``AgentServer``'s answers spelled as JSON and SSE, over httpx."""

    def __init__(self, server: AgentServer) -> None:
        self.server = server

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        frame = json.loads(request.content) if request.method == "POST" else None

        def read_timeout() -> float | None:
            timeouts = request.extensions.get("timeout")
            read = timeouts.get("read") if isinstance(timeouts, dict) else None
            return float(read) if read else None

        try:
            answer = self.server.answer(request.method, str(request.url), frame, read_timeout)
        except httpx.TransportError as error:
            error.request = request
            raise
        if answer.frames is not None:
            return httpx.Response(
                answer.status,
                headers={"content-type": "text/event-stream"},
                stream=_SSEStream(request, answer.frames),
                request=request,
            )
        if answer.body is None:
            return httpx.Response(answer.status, request=request)
        return httpx.Response(answer.status, json=answer.body, request=request)


def _internal_message(message: dict[str, Any]) -> dict[str, Any]:
    """A received user message in the store's internal form."""
    parts = []
    for part in message.get("parts", []):
        if isinstance(part, dict) and "text" in part:
            parts.append({"text": part["text"]})
    out = {"role": "user", "parts": parts, "messageId": message.get("messageId")}
    for key in ("contextId", "taskId", "metadata", "extensions"):
        if key in message:
            out[key] = message[key]
    return out


def _frame(rpc_id: Any, result: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rpc_id, "result": result}


class _SSEStream(httpx.SyncByteStream):
    """Frames as SSE bytes, encoded as they are read."""

    def __init__(self, request: httpx.Request, frames: Iterator[dict[str, Any]]) -> None:
        self._request = request
        self._frames = frames

    def __iter__(self) -> Iterator[bytes]:
        try:
            for frame in self._frames:
                yield b"data: " + json.dumps(frame).encode() + b"\n\n"
        except httpx.TransportError as error:
            error.request = self._request
            raise

    def close(self) -> None:
        close = getattr(self._frames, "close", None)
        if close is not None:
            close()
