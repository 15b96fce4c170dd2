"""The demo agent's server: the a2a-sdk application, its card, its executor, its front door.

Theory of operation: an a2a-sdk 1.3.0 server that speaks A2A 1.0 and,
through the SDK's compatibility mode, 0.3 on one JSON-RPC endpoint. The SDK
does the protocol work (task store, GetTask, SubscribeToTask, CancelTask,
ListTasks). The executor answers a new turn with the behaviour its text
asks for (``behaviours.BEHAVIOURS``) and a send to a paused task with the
pause's ``Resume``. An ASGI middleware in front of the SDK records every
request (method, params, headers), so tests and the console can read what
the agent received at ``GET /_demo/received`` (``?since=N``: from the N+1st
on), and answers a send with a JSON-RPC error before the SDK sees it where
the agent refuses it: an answer that does not fit its question (-32603, as
kagent refuses one), or a behaviour's refusal (busy).
"""

from __future__ import annotations

import argparse
import json
import re
from collections import defaultdict
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import uvicorn
from a2a.helpers import new_task_from_user_message
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types.a2a_pb2 import AgentCapabilities, AgentCard, AgentInterface, AgentSkill
from google.protobuf.json_format import MessageToDict
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from local.demo_agent import hitl
from local.demo_agent.behaviours import BEHAVIOURS, behaviour_for
from local.demo_agent.turn import Answer, DemoTurn, Pace, Paused

DEFAULT_PORT = 9101
DEFAULT_CHUNK_DELAY_SECONDS = 0.3
HEARTBEAT_SECONDS = 2.0
RECEIVED_PATH = "/_demo/received"
SEND_METHODS = ("SendStreamingMessage", "message/stream", "SendMessage", "message/send")
INTERNAL_ERROR = -32603

_ACTOR_PREFIX = re.compile(r"^\[[^\]\n]*\]$")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
AsgiApp = Callable[[Scope, Receive, Send], Awaitable[None]]
Refusal = tuple[int, str]


def strip_actor_prefix(text: str) -> str:
    """The text a person wrote, without the "[Slack: Name (U123) <email>]" line.

    Args:
        text: The text of the user message as received.

    Returns:
        The text after the first line when that line is an actor prefix,
        otherwise the text unchanged.
    """
    first_line, _, rest = text.partition("\n")
    return rest if _ACTOR_PREFIX.match(first_line.strip()) else text


def _text_of(message: dict[str, Any]) -> str:
    """The text parts of a message as JSON (1.0 or 0.3), joined."""
    parts = message.get("parts") or []
    return "".join(str(p.get("text", "")) for p in parts if isinstance(p, dict))


class DemoAgentExecutor(AgentExecutor):
    """Answers each send with the behaviour its text asks for, or resumes a paused task."""

    def __init__(
        self,
        chunk_delay: float,
        heartbeat_seconds: float = HEARTBEAT_SECONDS,
        received: list[dict[str, Any]] | None = None,
    ) -> None:
        """Creates the executor.

        Args:
            chunk_delay: Pause between two streamed events, in seconds.
            heartbeat_seconds: Interval of the working status updates sent
                while a tool runs.
            received: The record of every request (a behaviour reads it).
        """
        self._pace = Pace(chunk_delay, heartbeat_seconds)
        self._received = received if received is not None else []
        self._turns_by_context: defaultdict[str, int] = defaultdict(int)
        self._pauses: dict[str, Paused] = {}

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        """Runs the behaviour the user message asks for, or the answered pause's resume."""
        assert context.message is not None  # The SDK calls execute only for a send.
        task = context.current_task
        if task is None:
            task = new_task_from_user_message(context.message)
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        await updater.start_work()

        written = strip_actor_prefix(context.get_user_input()).strip()
        paused = self._pauses.pop(task.id, None)
        if paused is None:
            self._turns_by_context[task.context_id] += 1
        behaviour, argument = behaviour_for(written)
        turn = DemoTurn(
            updater,
            written=written,
            message_id=context.message.message_id,
            number=self._turns_by_context[task.context_id],
            argument=argument,
            hitl_activated=hitl.HITL_EXTENSION in context.requested_extensions,
            pace=self._pace,
            received=self._received,
            pauses=self._pauses,
        )
        if paused is None:
            await behaviour.run(turn)
        else:
            message = MessageToDict(context.message)
            await paused.resume(turn, Answer(written, message, paused.request))

    def refusal(self, request: dict[str, Any]) -> Refusal | None:
        """The JSON-RPC error a send gets instead of an answer, if any.

        Args:
            request: The request as recorded (method, params).
        """
        if request.get("method") not in SEND_METHODS:
            return None
        message = (request.get("params") or {}).get("message") or {}
        paused = self._pauses.get(str(message.get("taskId") or ""))
        if paused is not None:
            if paused.request is None:
                return None
            try:
                hitl.check_answer(paused.request, message)
            except hitl.AnswerMismatch as error:
                return INTERNAL_ERROR, str(error)
            return None
        behaviour, argument = behaviour_for(strip_actor_prefix(_text_of(message)))
        if behaviour.refuse is None:
            return None
        code = behaviour.refuse(str(message.get("messageId") or ""), argument)
        return None if code is None else (code, "The agent is busy; try again later.")

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        """Marks the task canceled; the SDK then stops the running ``execute``."""
        assert context.task_id is not None and context.context_id is not None
        self._pauses.pop(context.task_id, None)
        await TaskUpdater(event_queue, context.task_id, context.context_id).cancel()


class FrontDoor:
    """ASGI middleware: records every HTTP request, and refuses a send the agent refuses.

    A request body is read in full, recorded, and replayed to the wrapped
    application; later ``receive`` calls (a client disconnect during a
    stream) go to the server as usual.
    """

    def __init__(
        self,
        app: AsgiApp,
        received: list[dict[str, Any]],
        refusal: Callable[[dict[str, Any]], Refusal | None],
    ) -> None:
        """Wraps ``app``, appending the record of each request to ``received``."""
        self.app = app
        self.received = received
        self.refusal = refusal

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Records an HTTP request, except those to the recorder's own path."""
        if scope["type"] != "http" or scope["path"] == RECEIVED_PATH:
            await self.app(scope, receive, send)
            return
        body = b""
        more_body = True
        while more_body:
            message = await receive()
            body += message.get("body", b"")
            more_body = message.get("more_body", False)
        record = _describe_request(scope, body)
        self.received.append(record)
        refused = self.refusal(record)
        if refused is not None:
            code, reason = refused
            error = {
                "jsonrpc": "2.0",
                "id": record["id"],
                "error": {"code": code, "message": reason},
            }
            await JSONResponse(error)(scope, receive, send)
            return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}

        await self.app(scope, replay, send)


def _describe_request(scope: Scope, body: bytes) -> dict[str, Any]:
    """The record of one request: path, JSON-RPC method and params, headers."""
    headers: dict[str, str] = {}
    for raw_name, raw_value in scope["headers"]:
        name, value = raw_name.decode("latin-1").lower(), raw_value.decode("latin-1")
        headers[name] = f"{headers[name]}, {value}" if name in headers else value
    rpc: Any = None
    if body:
        try:
            rpc = json.loads(body)
        except ValueError:
            rpc = None
    rpc_fields = rpc if isinstance(rpc, dict) else {}
    return {
        "http_method": scope["method"],
        "path": scope["path"],
        "method": rpc_fields.get("method"),
        "id": rpc_fields.get("id"),
        "params": rpc_fields.get("params"),
        "headers": headers,
    }


def build_agent_card(base_url: str) -> AgentCard:
    """The demo agent's card: JSON-RPC for A2A 1.0 and 0.3 at ``base_url``, kagent's HITL."""
    return AgentCard(
        name="Kourier demo agent",
        description=(
            "Quotes what you wrote, says which turn of the conversation it is, and counts "
            "the words with a tool. Say hello to see what else it can show you."
        ),
        version="2.0.0",
        supported_interfaces=[
            AgentInterface(url=base_url, protocol_binding="JSONRPC", protocol_version="1.0"),
            AgentInterface(url=base_url, protocol_binding="JSONRPC", protocol_version="0.3"),
        ],
        capabilities=AgentCapabilities(streaming=True, extensions=[hitl.card_extension()]),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain", "application/json"],
        skills=[
            AgentSkill(
                id="echo-and-count",
                name="Echo and count",
                description="Quotes the message and counts its words with the count_words tool.",
                tags=["demo"],
                examples=["Hello there"],
            ),
            *(
                AgentSkill(
                    id=behaviour.keywords[0],
                    name=behaviour.keywords[0],
                    description=behaviour.shows,
                    tags=["demo"],
                    examples=[behaviour.example],
                )
                for behaviour in BEHAVIOURS
            ),
        ],
    )


def build_app(
    port: int = DEFAULT_PORT,
    chunk_delay: float = DEFAULT_CHUNK_DELAY_SECONDS,
    heartbeat_seconds: float = HEARTBEAT_SECONDS,
) -> Starlette:
    """The demo agent as an ASGI application that serves on 127.0.0.1:``port``.

    Args:
        port: The port the card advertises.
        chunk_delay: Pause between two streamed events, in seconds.
        heartbeat_seconds: Interval of heartbeats while a tool runs.

    Returns:
        The application, with the card at /.well-known/agent-card.json, the
        JSON-RPC endpoint at /, and the request record at /_demo/received.
    """
    card = build_agent_card(f"http://127.0.0.1:{port}/")
    received: list[dict[str, Any]] = []
    executor = DemoAgentExecutor(chunk_delay, heartbeat_seconds, received)
    handler = DefaultRequestHandler(
        agent_executor=executor, task_store=InMemoryTaskStore(), agent_card=card
    )

    async def serve_received(request: Request) -> Response:
        if request.method == "DELETE":
            received.clear()
            return Response(status_code=204)
        since = request.query_params.get("since", "0")
        return JSONResponse(received[int(since) if since.isdigit() else 0 :])

    routes = [
        *create_agent_card_routes(card),
        *create_jsonrpc_routes(handler, "/", enable_v0_3_compat=True),
        Route(RECEIVED_PATH, serve_received, methods=["GET", "DELETE"]),
    ]
    front_door = Middleware(FrontDoor, received=received, refusal=executor.refusal)
    return Starlette(routes=routes, middleware=[front_door])


def main() -> None:
    """Runs the demo agent: ``python -m local.demo_agent --port 9101``."""
    parser = argparse.ArgumentParser(description="The Kourier demo agent (A2A 1.0 and 0.3).")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT)
    parser.add_argument(
        "--chunk-delay",
        type=float,
        default=DEFAULT_CHUNK_DELAY_SECONDS,
        help="seconds between two streamed events (default %(default)s)",
    )
    args = parser.parse_args()
    uvicorn.run(build_app(args.port, args.chunk_delay), host="127.0.0.1", port=args.port)
