"""A scripted A2A 1.0 agent that pauses with kagent's human-in-the-loop extension, on both dialects.

Theory of operation: one raw HTTP/1.1 server (chunked SSE, one connection
per request, like ``tests.a2a.agents``) serves the same agent at several
endpoints, one per AgentBackend of the tests' config: ``/a2a`` (a2a dialect,
the card lists the extension), ``/a2a-unlisted`` (a2a, the card lists none)
and ``/kagent/agents/kourier/hitl`` (what kagent-v1 makes of the URL
``/kagent``). A test registers a ``Conversation`` under a token, a word it
then writes in Slack: the send whose text holds that word starts the
conversation's task, and each later send to that task (an answer) plays the
next ``Stage``. A stage streams the task as it stands, then its pieces (tool
calls, results, text) as artifact chunks, and ends the task completed or
paused (in input-required, or the stage's state) with its status message. A stage may
instead refuse the send with a JSON-RPC error, or answer it with one
Message and leave the task as it was. GetTask, SubscribeToTask, CancelTask
and ListTasks answer from the task as it stands. Every request is recorded
(path, method, params, headers) on its conversation, so a test asserts
exactly what the agent received.

Once ``forward`` names a peer's URL, ``/adk-peer`` and
``/kagent-peer/agents/default/scripted`` pass every request, byte for byte,
to the real google-adk and kagent-adk peers, and record it in ``forwarded``,
so the peers' own pauses are seen through the same recording server.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import httpx

from shared.a2a.discovery import CARD_PATH
from shared.core.model import HITL_EXTENSION
from tests import raw_http
from tests.raw_http import Exchange

HITL_TEXT = "Human input is required before the agent can continue."
"""The text part kagent sends beside its payload, for a client without the extension."""

ENDPOINTS = {"/a2a": True, "/a2a-unlisted": False, "/kagent/agents/kourier/hitl": True}
"""Each endpoint of the scripted agent, and whether its card lists the extension."""
ADK_PEER = "/adk-peer"
"""Forwarded to the google-adk peer (an a2a AgentBackend's url)."""
KAGENT_PEER = "/kagent-peer"
"""Forwarded to the kagent-adk peer (a kagent-v1 AgentBackend's url, agent default/scripted)."""
PEER_PREFIXES = {ADK_PEER: ADK_PEER, KAGENT_PEER: KAGENT_PEER + "/agents/default/scripted"}
"""Each peer's AgentBackend url, and the endpoint Kourier calls for it."""

WORKING = "TASK_STATE_WORKING"
COMPLETED = "TASK_STATE_COMPLETED"
CANCELED = "TASK_STATE_CANCELED"


# --- what a test scripts --------------------------------------------------------


@dataclass(frozen=True)
class Call:
    """The agent calls a tool (ADK's function_call part in an artifact chunk)."""

    call_id: str
    name: str
    args: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Result:
    """A tool returns (ADK's function_response part in an artifact chunk)."""

    call_id: str
    name: str
    response: dict[str, Any] = field(default_factory=lambda: {"ok": True})


@dataclass(frozen=True)
class Say:
    """A chunk of the answer's text."""

    text: str


Piece = Call | Result | Say


@dataclass(frozen=True)
class Stage:
    """What the agent does with one send: the turn's first, then each answer's."""

    pieces: tuple[Piece, ...] = ()
    pause: dict[str, Any] | None = None
    """The status message of a paused end (``hitl_pause``, ``text_pause``); None completes."""
    pause_state: str = "TASK_STATE_INPUT_REQUIRED"
    """The state the task pauses in."""
    refuse: int | None = None
    """Answer the send with this JSON-RPC error code, and do nothing else."""
    message_reply: str | None = None
    """Answer the send with one Message of this text, and leave the task as it was."""


def hitl_pause(payload: Any, *, names_extension: bool = True) -> dict[str, Any]:
    """A pause as kagent sends it: a text part, and the payload under the URI in metadata."""
    message: dict[str, Any] = {
        "role": "ROLE_AGENT",
        "parts": [{"text": HITL_TEXT}],
        "metadata": {HITL_EXTENSION: payload},
    }
    if names_extension:
        message["extensions"] = [HITL_EXTENSION]
    return message


def text_pause(*texts: str) -> dict[str, Any]:
    """A pause in plain text, with no extension: a text question on a2a."""
    return {"role": "ROLE_AGENT", "parts": [{"text": text} for text in texts]}


def data_pause(data: dict[str, Any]) -> dict[str, Any]:
    """A pause holding a data part and no extension (a framework's own format)."""
    return {"role": "ROLE_AGENT", "parts": [{"data": data}]}


# --- what the agent received ------------------------------------------------------


@dataclass(frozen=True)
class Received:
    """One JSON-RPC request the agent received."""

    path: str
    method: str
    params: dict[str, Any]
    headers: dict[str, str]
    """Header names in lower case."""

    @property
    def message(self) -> dict[str, Any]:
        """The message of a send."""
        return dict(self.params.get("message") or {})


@dataclass
class Conversation:
    """One scripted task: its stages, its state, and every request about it."""

    token: str
    stages: list[Stage]
    task_id: str | None = None
    context_id: str | None = None
    received: list[Received] = field(default_factory=list)
    sends_played: int = 0
    state: str = WORKING
    stamp: str = ""
    status_message: dict[str, Any] | None = None
    parts: list[dict[str, Any]] = field(default_factory=list)
    history: list[dict[str, Any]] = field(default_factory=list)

    def calls(self, *methods: str) -> list[Received]:
        """The requests of these methods (1.0 or 0.3 names), oldest first."""
        return [r for r in self.received if r.method in methods]

    def sends(self) -> list[Received]:
        """Every streaming send: the turn's, then each answer."""
        return self.calls("SendStreamingMessage", "message/stream")

    def answers(self) -> list[Received]:
        """The sends that answer the paused task."""
        return [s for s in self.sends() if s.message.get("taskId")]

    def cancels(self) -> list[Received]:
        """The CancelTask requests."""
        return self.calls("CancelTask", "tasks/cancel")

    def snapshot(self) -> dict[str, Any]:
        """The task as GetTask shows it (1.0 JSON)."""
        status: dict[str, Any] = {"state": self.state, "timestamp": self.stamp}
        if self.status_message is not None:
            status["message"] = self.status_message
        task: dict[str, Any] = {
            "id": self.task_id,
            "contextId": self.context_id,
            "status": status,
            "history": list(self.history),
        }
        if self.parts:
            task["artifacts"] = [
                {"artifactId": "answer", "name": "answer", "parts": list(self.parts)}
            ]
        return task


class HitlAgent:
    """The agent's conversations, by token and by task."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.name = "hitl-scripted"
        """The name its cards give (another name: another agent, to Kourier)."""
        self._lock = threading.Lock()
        self._numbers = itertools.count(1)
        self._by_token: dict[str, Conversation] = {}
        self._by_task: dict[str, Conversation] = {}
        self._peers: dict[str, str] = {}
        self.forwarded: list[Received] = []
        """Requests forwarded to the real peers, oldest first."""
        self.strays: list[Received] = []
        """Requests about no conversation (answered -32001), oldest first."""
        self.card_fetches: list[Received] = []
        """The card requests (method ``GET``), oldest first."""

    def url(self, path: str) -> str:
        """The agent's URL under ``path`` (an AgentBackend's url)."""
        return f"http://127.0.0.1:{self.port}{path}"

    def expect(self, token: str, *stages: Stage) -> Conversation:
        """The next send whose text holds the word ``token`` starts a task that plays ``stages``."""
        conversation = Conversation(token, list(stages))
        with self._lock:
            if token in self._by_token:
                raise ValueError(f"token {token!r} is already a conversation's")
            self._by_token[token] = conversation
        return conversation

    def forward(self, peer: str, url: str) -> None:
        """From now on, pass what comes to ``peer`` (``ADK_PEER``, ``KAGENT_PEER``) to ``url``."""
        with self._lock:
            self._peers[PEER_PREFIXES[peer]] = url.rstrip("/")

    def forwarded_to(self, peer: str) -> list[Received]:
        """The requests forwarded to ``peer`` (``ADK_PEER``, ``KAGENT_PEER``), oldest first."""
        with self._lock:
            return [r for r in self.forwarded if r.path.startswith(PEER_PREFIXES[peer])]

    # Requests ------------------------------------------------------------------

    def handle(self, exchange: Exchange) -> None:
        """Answer one request."""
        peer = next((p for p in self._peers if exchange.path.startswith(p)), None)
        if peer is not None:
            self._forward(exchange, peer)
            return
        endpoint = next(
            (e for e in ENDPOINTS if exchange.path in (e, e + "/", e + CARD_PATH)), None
        )
        if endpoint is None:
            exchange.status(404)
            return
        if exchange.verb == "GET":
            with self._lock:
                self.card_fetches.append(Received(exchange.path, "GET", {}, exchange.headers))
            exchange.json(_card(self.name, self.url(endpoint), ENDPOINTS[endpoint]))
            return
        body = exchange.body if isinstance(exchange.body, dict) else {}
        method = str(body.get("method"))
        params = body.get("params") if isinstance(body.get("params"), dict) else {}
        received = Received(exchange.path, method, params, exchange.headers)
        conversation = self._conversation_of(method, params)
        if conversation is None:
            with self._lock:
                self.strays.append(received)
            exchange.json(_error(-32001, "task not found"))
            return
        with self._lock:
            conversation.received.append(received)
        if method in ("SendStreamingMessage", "message/stream"):
            self._send(exchange, conversation, received.message)
        elif method in ("GetTask", "tasks/get"):
            exchange.json(_result(conversation.snapshot()))
        elif method in ("CancelTask", "tasks/cancel"):
            self._set_status(conversation, CANCELED, None)
            exchange.json(_result(conversation.snapshot()))
        elif method in ("SubscribeToTask", "tasks/resubscribe"):
            exchange.start_stream()
            exchange.event(_result({"task": conversation.snapshot()}))
            exchange.end()
        elif method == "ListTasks":
            exchange.json(_result({"tasks": [conversation.snapshot()], "nextPageToken": ""}))
        else:
            exchange.json(_error(-32601, "method not found"))

    def _conversation_of(self, method: str, params: dict[str, Any]) -> Conversation | None:
        with self._lock:
            if method in ("SendStreamingMessage", "message/stream"):
                message = params.get("message") or {}
                if message.get("taskId"):
                    return self._by_task.get(str(message["taskId"]))
                text = "".join(str(p.get("text", "")) for p in message.get("parts", []))
                return next((self._by_token[w] for w in text.split() if w in self._by_token), None)
            if method == "ListTasks":
                context = params.get("contextId")
                return next((c for c in self._by_task.values() if c.context_id == context), None)
            return self._by_task.get(str(params.get("id")))

    def _send(
        self, exchange: Exchange, conversation: Conversation, message: dict[str, Any]
    ) -> None:
        with self._lock:
            if conversation.sends_played >= len(conversation.stages):
                stage = Stage(refuse=-32603)  # not scripted: the test sees it in ``received``
            else:
                stage = conversation.stages[conversation.sends_played]
            conversation.sends_played += 1
            if stage.refuse is None and conversation.task_id is None:
                number = next(self._numbers)
                conversation.task_id = f"task-{number}"
                conversation.context_id = str(message.get("contextId") or f"ctx-{number}")
                self._by_task[conversation.task_id] = conversation
        if stage.refuse is not None:
            exchange.json(_error(stage.refuse, "scripted refusal"))
            return
        if stage.message_reply is not None:
            reply = {
                "messageId": f"{conversation.task_id}-reply-{conversation.sends_played}",
                "role": "ROLE_AGENT",
                "parts": [{"text": stage.message_reply}],
            }
            exchange.start_stream()
            exchange.event(_result({"message": reply}))
            exchange.end()
            return
        conversation.history.append(message)
        self._set_status(conversation, WORKING, None)
        exchange.start_stream()
        exchange.event(_result({"task": conversation.snapshot()}))
        for piece in stage.pieces:
            exchange.event(_result({"artifactUpdate": self._artifact(conversation, _part(piece))}))
        if stage.pause is None:
            exchange.event(
                _result({"statusUpdate": self._set_status(conversation, COMPLETED, None)})
            )
        else:
            pause = {
                "messageId": f"{conversation.task_id}-pause-{conversation.sends_played}",
                **stage.pause,
                "taskId": conversation.task_id,
                "contextId": conversation.context_id,
            }
            conversation.history.append(pause)
            exchange.event(
                _result({"statusUpdate": self._set_status(conversation, stage.pause_state, pause)})
            )
        exchange.end()

    def _set_status(
        self, conversation: Conversation, state: str, message: dict[str, Any] | None
    ) -> dict[str, Any]:
        conversation.state, conversation.stamp = state, _stamp()
        conversation.status_message = message
        return {
            "taskId": conversation.task_id,
            "contextId": conversation.context_id,
            "status": conversation.snapshot()["status"],
        }

    def _artifact(self, conversation: Conversation, part: dict[str, Any]) -> dict[str, Any]:
        append = bool(conversation.parts)
        conversation.parts.append(part)
        return {
            "taskId": conversation.task_id,
            "contextId": conversation.context_id,
            "artifact": {"artifactId": "answer", "name": "answer", "parts": [part]},
            "append": append,
        }

    def _forward(self, exchange: Exchange, prefix: str) -> None:
        """Pass the request to the real peer at ``prefix`` and stream its answer back."""
        target = self._peers[prefix] + (exchange.path.removeprefix(prefix) or "/")
        body = exchange.body if isinstance(exchange.body, dict) else {}
        params = body.get("params") if isinstance(body.get("params"), dict) else {}
        with self._lock:
            self.forwarded.append(
                Received(exchange.path, str(body.get("method")), params, exchange.headers)
            )
        dropped = ("host", "content-length", "accept-encoding")
        headers = {k: v for k, v in exchange.headers.items() if k not in dropped}
        content = json.dumps(exchange.body).encode() if exchange.body is not None else None
        with (
            httpx.Client(timeout=httpx.Timeout(60.0)) as client,
            client.stream(exchange.verb, target, headers=headers, content=content) as response,
        ):
            exchange.start_stream(
                response.status_code,
                {"Content-Type": response.headers.get("content-type", "")},
            )
            for chunk in response.iter_raw():
                exchange.chunk(chunk)
            exchange.end()


def _card(name: str, url: str, lists_extension: bool) -> dict[str, Any]:
    capabilities: dict[str, Any] = {"streaming": True}
    if lists_extension:
        capabilities["extensions"] = [{"uri": HITL_EXTENSION, "required": False}]
    return {
        "name": name,
        "description": "Pauses for questions and tool approvals as each test scripts.",
        "version": "1",
        "supportedInterfaces": [
            {"url": url, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
        ],
        "capabilities": capabilities,
        "defaultInputModes": ["text"],
        "defaultOutputModes": ["text"],
        "skills": [],
    }


def _part(piece: Piece) -> dict[str, Any]:
    if isinstance(piece, Say):
        return {"text": piece.text}
    if isinstance(piece, Call):
        data = {"id": piece.call_id, "name": piece.name, "args": piece.args}
        return {"data": data, "metadata": {"adk_type": "function_call"}}
    data = {"id": piece.call_id, "name": piece.name, "response": piece.response}
    return {"data": data, "metadata": {"adk_type": "function_response"}}


def _stamp() -> str:
    now = time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + f".{int(now * 1000) % 1000:03d}Z"


def _result(obj: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": "1", "result": obj}


def _error(code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": "1", "error": {"code": code, "message": message}}


# --- HTTP -----------------------------------------------------------------------


@contextmanager
def running_agent(port: int) -> Iterator[HitlAgent]:
    """The agent on 127.0.0.1:``port`` for the duration of the block."""
    agent = HitlAgent(port)
    with raw_http.serving(port, lambda handler, body: agent.handle(Exchange(handler, body))):
        yield agent
