"""The demo A2A agent: the default agent of the local stack and a peer for tests.

Theory of operation: the agent is an a2a-sdk 1.3.0 server that speaks A2A 1.0
and, through the SDK's compatibility mode, 0.3 on one JSON-RPC endpoint. The
SDK does the protocol work (task store, GetTask, SubscribeToTask, CancelTask,
ListTasks); this module adds an executor that answers each user message with
a task whose single artifact is streamed in appended chunks, a short pause
apart. Between the chunks it makes one tool call, ``count_words``, written the
way ADK's newer converter writes tool parts: data parts tagged
``adk_type: function_call`` / ``function_response`` in the artifact stream.
The answer quotes the message (without Kourier's "[Slack: ...]" first line)
and names its turn within the context, counted per contextId in memory, so a
follow-up is visibly a continuation. "long N" in the text makes the tool run
for N seconds, with a working status update every few seconds as a heartbeat.
An ASGI middleware records every request (method, params, headers) so tests
can read what the agent received at ``GET /_demo/received``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import uuid
from collections import defaultdict
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import uvicorn
from a2a.helpers import new_task_from_user_message, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types.a2a_pb2 import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    Part,
    TaskState,
)
from google.protobuf import struct_pb2
from google.protobuf.json_format import ParseDict
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

DEFAULT_PORT = 9101
DEFAULT_CHUNK_DELAY_SECONDS = 0.3
HEARTBEAT_SECONDS = 2.0
RECEIVED_PATH = "/_demo/received"
TOOL_NAME = "count_words"

_ACTOR_PREFIX = re.compile(r"^\[[^\]\n]*\]$")
_LONG_RUN = re.compile(r"\blong\s+(\d+)\b", re.IGNORECASE)

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
AsgiApp = Callable[[Scope, Receive, Send], Awaitable[None]]


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


def long_run_seconds(text: str) -> int:
    """How long the user asked the tool to run with "long N" (0 if not asked)."""
    match = _LONG_RUN.search(text)
    return int(match.group(1)) if match else 0


def _tool_part(kind: str, data: dict[str, Any]) -> Part:
    """A data part tagged the way ADK's A2A converter tags tool calls and results."""
    return Part(
        data=ParseDict(data, struct_pb2.Value()),
        metadata=ParseDict({"adk_type": kind}, struct_pb2.Struct()),
    )


def _quote(text: str) -> str:
    """The text as a Markdown block quote, or a note that there was none."""
    lines = text.strip().splitlines() or ["(nothing)"]
    return "\n".join(f"> {line}" for line in lines)


class DemoAgentExecutor(AgentExecutor):
    """Answers every user message with a streamed artifact and one tool call."""

    def __init__(self, chunk_delay: float, heartbeat_seconds: float = HEARTBEAT_SECONDS) -> None:
        """Creates the executor.

        Args:
            chunk_delay: Pause between two streamed events, in seconds.
            heartbeat_seconds: Interval of the working status updates sent
                while a "long N" tool call runs.
        """
        self._chunk_delay = chunk_delay
        self._heartbeat_seconds = heartbeat_seconds
        self._turns_by_context: defaultdict[str, int] = defaultdict(int)

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        """Streams the answer to the user message of ``context`` and completes the task."""
        assert context.message is not None  # The SDK calls execute only for a send.
        task = context.current_task
        if task is None:
            task = new_task_from_user_message(context.message)
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        await updater.start_work()

        self._turns_by_context[task.context_id] += 1
        turn = self._turns_by_context[task.context_id]
        written = strip_actor_prefix(context.get_user_input()).strip()
        word_count = len(written.split())
        run_seconds = long_run_seconds(written)
        call_id = f"call-{uuid.uuid4().hex[:12]}"
        artifact_id = f"answer-{uuid.uuid4().hex[:12]}"

        async def emit(parts: list[Part], *, first: bool = False, last: bool = False) -> None:
            await updater.add_artifact(
                parts,
                artifact_id=artifact_id,
                name="answer",
                append=not first,
                last_chunk=last,
            )
            await asyncio.sleep(self._chunk_delay)

        await emit([new_text_part(f"This is turn {turn} in this conversation.")], first=True)
        await emit([new_text_part(" You wrote:\n\n")])
        await emit([new_text_part(_quote(written))])
        await emit([new_text_part("\n\nLet me count its words with a tool.")])
        tool_call = {"id": call_id, "name": TOOL_NAME, "args": {"text": written}}
        await emit([_tool_part("function_call", tool_call)])
        await self._run_tool(updater, run_seconds)
        tool_result = {"id": call_id, "name": TOOL_NAME, "response": {"words": word_count}}
        await emit([_tool_part("function_response", tool_result)])
        words = "word" if word_count == 1 else "words"
        await emit([new_text_part(f"\n\nYour message has {word_count} {words}.")])
        await emit([new_text_part(" That is all for this turn.")], last=True)
        await updater.complete()

    async def _run_tool(self, updater: TaskUpdater, run_seconds: int) -> None:
        """Waits out the tool's run time, with a working status update as heartbeat."""
        elapsed = 0.0
        while elapsed < run_seconds:
            step = min(self._heartbeat_seconds, run_seconds - elapsed)
            await asyncio.sleep(step)
            elapsed += step
            note = f"{TOOL_NAME} still running: {elapsed:.0f} s of {run_seconds} s"
            await updater.update_status(
                TaskState.TASK_STATE_WORKING,
                message=updater.new_agent_message([new_text_part(note)]),
            )

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        """Marks the task canceled; the SDK then stops the running ``execute``."""
        assert context.task_id is not None and context.context_id is not None
        await TaskUpdater(event_queue, context.task_id, context.context_id).cancel()


class RequestRecorder:
    """ASGI middleware that records every HTTP request the agent receives.

    A request body is read in full, recorded, and replayed to the wrapped
    application; later ``receive`` calls (a client disconnect during a
    stream) go to the server as usual.
    """

    def __init__(self, app: AsgiApp, received: list[dict[str, Any]]) -> None:
        """Wraps ``app``, appending the record of each request to ``received``."""
        self.app = app
        self.received = received

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
        self.received.append(_describe_request(scope, body))
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
    """The demo agent's card, advertising JSON-RPC for A2A 1.0 and 0.3 at ``base_url``."""
    return AgentCard(
        name="Kourier demo agent",
        description=(
            "Quotes what you wrote, says which turn of the conversation it is, "
            "and counts the words with a tool. Say 'long N' to make it work for N seconds."
        ),
        version="1.0.0",
        supported_interfaces=[
            AgentInterface(url=base_url, protocol_binding="JSONRPC", protocol_version="1.0"),
            AgentInterface(url=base_url, protocol_binding="JSONRPC", protocol_version="0.3"),
        ],
        capabilities=AgentCapabilities(streaming=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain", "application/json"],
        skills=[
            AgentSkill(
                id="echo-and-count",
                name="Echo and count",
                description="Quotes the message and counts its words with the count_words tool.",
                tags=["demo"],
                examples=["Hello there", "long 30 please"],
            )
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
        heartbeat_seconds: Interval of heartbeats during a "long N" run.

    Returns:
        The application, with the card at /.well-known/agent-card.json, the
        JSON-RPC endpoint at /, and the request record at /_demo/received.
    """
    card = build_agent_card(f"http://127.0.0.1:{port}/")
    handler = DefaultRequestHandler(
        agent_executor=DemoAgentExecutor(chunk_delay, heartbeat_seconds),
        task_store=InMemoryTaskStore(),
        agent_card=card,
    )
    received: list[dict[str, Any]] = []

    async def serve_received(request: Request) -> Response:
        if request.method == "DELETE":
            received.clear()
            return Response(status_code=204)
        return JSONResponse(received)

    routes = [
        *create_agent_card_routes(card),
        *create_jsonrpc_routes(handler, "/", enable_v0_3_compat=True),
        Route(RECEIVED_PATH, serve_received, methods=["GET", "DELETE"]),
    ]
    return Starlette(routes=routes, middleware=[Middleware(RequestRecorder, received=received)])


def main() -> None:
    """Runs the demo agent: ``python -m local.demo_agent --port 9101``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=DEFAULT_PORT)
    parser.add_argument(
        "--chunk-delay",
        type=float,
        default=DEFAULT_CHUNK_DELAY_SECONDS,
        help="seconds between two streamed events (default %(default)s)",
    )
    args = parser.parse_args()
    uvicorn.run(build_app(args.port, args.chunk_delay), host="127.0.0.1", port=args.port)


if __name__ == "__main__":
    main()
