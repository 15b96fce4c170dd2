"""One send to the demo agent, and the means a behaviour has to answer it.

Theory of operation: a behaviour streams its answer as one artifact of
appended text chunks (``say``; ``replace`` takes text back by replacing
the artifact), shows tool steps as data parts tagged the way ADK's newer
converter tags them (``adk_type: function_call`` / ``function_response``,
in the artifact stream), and works a while with ``work``, which sends a
working status update every few seconds as a heartbeat. It ends the send
with ``complete``, ``fail`` or ``pause``: a pause leaves the task in
input-required and keeps a ``Resume`` for the task, which the next send to
that task (the answer) runs with a fresh ``DemoTurn``. Each event is
followed by a short pause, so the answer visibly streams.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from a2a.helpers import new_text_part
from a2a.server.tasks import TaskUpdater
from a2a.types.a2a_pb2 import Part, TaskState
from google.protobuf import struct_pb2
from google.protobuf.json_format import ParseDict

from local.demo_agent import hitl

ACTOR_KEY = "agentkourier.dev/actor"


@dataclass(frozen=True)
class Answer:
    """A send to a paused task: what the person answered, as received."""

    text: str
    """The text the person wrote."""
    message: dict[str, Any]
    """The message as JSON (1.0 field names)."""
    request: dict[str, Any] | None
    """The human-in-the-loop request it answers (None: a plain-text question)."""

    @property
    def response(self) -> dict[str, Any] | None:
        """The extension's payload in the answer, if it names the extension."""
        return hitl.response_in(self.message)

    @property
    def actor(self) -> str:
        """Who answered, by their chat ID, as the metadata says."""
        actor = (self.message.get("metadata") or {}).get(ACTOR_KEY) or {}
        return str(actor.get("id") or "someone")


Resume = Callable[["DemoTurn", Answer], Awaitable[None]]
"""What a paused behaviour does with the answer."""


@dataclass(frozen=True)
class Paused:
    """A task waiting in input-required: the request it showed, and how it goes on."""

    request: dict[str, Any] | None
    """The human-in-the-loop request, or None for a plain-text question."""
    resume: Resume


@dataclass(frozen=True)
class Pace:
    """How fast the agent streams."""

    chunk_delay: float
    """Pause after each streamed event, in seconds."""
    heartbeat_seconds: float
    """Interval of the working status updates while a tool runs."""


class DemoTurn:
    """Answers one send: text, tool steps, work, and how the task ends."""

    def __init__(
        self,
        updater: TaskUpdater,
        *,
        written: str,
        message_id: str,
        number: int,
        argument: int | None,
        hitl_activated: bool,
        pace: Pace,
        received: list[dict[str, Any]],
        pauses: dict[str, Paused],
    ) -> None:
        """Creates the turn.

        Args:
            updater: The task's updater (its events go to the send's stream).
            written: What the person wrote, without Kourier's actor line.
            message_id: The send's messageId.
            number: Which turn of its conversation this send is.
            argument: The number written after the behaviour's keyword, if any.
            hitl_activated: Whether the send asked for the HITL extension.
            pace: How fast to stream.
            received: Every request the agent received (to see a hand-over).
            pauses: Where a pause keeps its ``Paused``, by task ID.
        """
        self.written = written
        self.message_id = message_id
        self.number = number
        self.argument = argument
        self.hitl_activated = hitl_activated
        self._updater = updater
        self._pace = pace
        self._received = received
        self._pauses = pauses
        self._artifact_id = f"answer-{uuid.uuid4().hex[:12]}"
        self._started = False

    @property
    def task_id(self) -> str:
        """The task this send works on."""
        return str(self._updater.task_id)

    async def say(self, text: str, *, last: bool = False) -> None:
        """Appends ``text`` to the answer."""
        await self._emit([new_text_part(text)], last=last)

    async def replace(self, text: str) -> None:
        """Replaces the whole answer with ``text`` ("" takes it all back)."""
        await self._updater.add_artifact(
            [new_text_part(text)], artifact_id=self._artifact_id, name="answer", append=False
        )
        self._started = True
        await asyncio.sleep(self._pace.chunk_delay)

    async def call(self, name: str, args: dict[str, Any]) -> str:
        """Shows a tool call; returns its call ID."""
        call_id = f"call-{uuid.uuid4().hex[:12]}"
        await self._emit([_tool_part("function_call", {"id": call_id, "name": name, "args": args})])
        return call_id

    async def result(self, call_id: str, name: str, response: dict[str, Any]) -> None:
        """Shows what the tool call ``call_id`` returned."""
        data = {"id": call_id, "name": name, "response": response}
        await self._emit([_tool_part("function_response", data)])

    async def work(self, seconds: float, tool: str) -> None:
        """Works ``seconds`` on ``tool``, with heartbeats; says when Kourier hands the stream over.

        Agent Kourier follows a stream for a limited time per function, then
        hands it over to its stream_follow function, which subscribes to the
        task again: the answer says so when that subscription arrives.
        """
        subscribed = self._subscriptions()
        elapsed = 0.0
        while elapsed < seconds:
            step = min(self._pace.heartbeat_seconds, seconds - elapsed)
            await asyncio.sleep(step)
            elapsed += step
            note = f"{tool} still running: {elapsed:.0f} s of {seconds:.0f} s"
            await self._updater.update_status(
                TaskState.TASK_STATE_WORKING,
                message=self._updater.new_agent_message([new_text_part(note)]),
            )
            if self._subscriptions() > subscribed:
                subscribed = self._subscriptions()
                await self.say(
                    f"\n\n(At {elapsed:.0f} s of {tool}, Agent Kourier handed this answer over: "
                    "its stream_follow function subscribed to the task again and carries on.)"
                )

    async def complete(self) -> None:
        """Ends the task as completed."""
        await self._updater.complete()

    async def fail(self, text: str, metadata: dict[str, Any]) -> None:
        """Ends the task as failed, with a status message saying why."""
        message = self._updater.new_agent_message([new_text_part(text)])
        message.metadata.CopyFrom(ParseDict(metadata, struct_pb2.Struct()))
        await self._updater.failed(message)

    async def ask(self, text: str, resume: Resume) -> None:
        """Pauses with a plain-text question (no extension); ``resume`` gets the reply."""
        self._pauses[self.task_id] = Paused(None, resume)
        await self._updater.requires_input(self._updater.new_agent_message([new_text_part(text)]))

    async def ask_hitl(self, request: dict[str, Any], text: str, resume: Resume) -> None:
        """Pauses with a human-in-the-loop ``request``; ``resume`` gets the answer."""
        self._pauses[self.task_id] = Paused(request, resume)
        updater = self._updater
        message = hitl.pause_message(
            request, text, self.task_id, str(updater.context_id), self.hitl_activated
        )
        await updater.requires_input(message)

    async def _emit(self, parts: list[Part], *, last: bool = False) -> None:
        await self._updater.add_artifact(
            parts,
            artifact_id=self._artifact_id,
            name="answer",
            append=self._started,
            last_chunk=last,
        )
        self._started = True
        await asyncio.sleep(self._pace.chunk_delay)

    def _subscriptions(self) -> int:
        return sum(
            1
            for request in self._received
            if request.get("method") in ("SubscribeToTask", "tasks/resubscribe")
            and (request.get("params") or {}).get("id") == self.task_id
        )


def _tool_part(kind: str, data: dict[str, Any]) -> Part:
    """A data part tagged the way ADK's A2A converter tags tool calls and results."""
    return Part(
        data=ParseDict(data, struct_pb2.Value()),
        metadata=ParseDict({"adk_type": kind}, struct_pb2.Struct()),
    )
