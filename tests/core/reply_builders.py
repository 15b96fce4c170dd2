"""Short builders for the events an agent sends, as the A2A adapter hands them over."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from shared.core.model import (
    Artifact,
    ArtifactUpdate,
    DataPart,
    Message,
    Part,
    Role,
    StatusUpdate,
    StreamEvent,
    Task,
    TaskState,
    TaskStatus,
    TextPart,
)
from shared.core.reply import ReplyAssembler, ReplyChange, TextAppended, TextReplaced
from shared.core.tool_steps import StepFinished, StepStarted

TASK_ID = "task-1"
CONTEXT_ID = "context-1"


def text(value: str) -> TextPart:
    """A text part."""
    return TextPart(value)


def call(
    call_id: str | None, name: str = "search", args: Any = None, key: str = "adk_type"
) -> DataPart:
    """A tool call part, marked with ``key``."""
    data: dict[str, Any] = {"name": name, "args": {"q": call_id} if args is None else args}
    if call_id is not None:
        data["id"] = call_id
    return DataPart(data, {key: "function_call"})


def result(
    call_id: str | None, name: str = "search", response: Any = None, key: str = "adk_type"
) -> DataPart:
    """A tool result part, marked with ``key``."""
    data: dict[str, Any] = {
        "name": name,
        "response": {"answer": call_id} if response is None else response,
    }
    if call_id is not None:
        data["id"] = call_id
    return DataPart(data, {key: "function_response"})


def chunk(
    artifact_id: str, *parts: Part, append: bool = False, last_chunk: bool | None = None
) -> ArtifactUpdate:
    """An artifact chunk from the stream."""
    return ArtifactUpdate(
        TASK_ID, CONTEXT_ID, Artifact(artifact_id, parts), append=append, last_chunk=last_chunk
    )


def agent_message(*parts: Part, message_id: str | None = "m-1") -> Message:
    """A message the agent wrote."""
    return Message(Role.AGENT, parts, message_id=message_id)


def user_message(value: str = "hello", message_id: str = "u-1") -> Message:
    """A message the user wrote."""
    return Message(Role.USER, (TextPart(value),), message_id=message_id)


def status(
    *parts: Part,
    message_id: str | None = "m-1",
    state: TaskState = TaskState.WORKING,
    role: Role = Role.AGENT,
) -> StatusUpdate:
    """A status update from the stream carrying a message with ``parts``."""
    message = Message(role, parts, message_id=message_id)
    return StatusUpdate(TASK_ID, CONTEXT_ID, TaskStatus(state, message))


def snapshot(
    *artifacts: Artifact,
    history: Iterable[Message] = (),
    state: TaskState = TaskState.WORKING,
    status_message: Message | None = None,
) -> Task:
    """A task snapshot (GetTask, SubscribeToTask or a replayed send)."""
    return Task(
        TASK_ID, CONTEXT_ID, TaskStatus(state, status_message), tuple(artifacts), tuple(history)
    )


def artifact(artifact_id: str, *parts: Part) -> Artifact:
    """An artifact as a snapshot holds it."""
    return Artifact(artifact_id, parts)


def feed_all(assembler: ReplyAssembler, events: Iterable[StreamEvent]) -> list[ReplyChange]:
    """Feed every event; return all the changes, in order."""
    return [change for event in events for change in assembler.feed(event)]


def answer_after(*events: StreamEvent) -> str:
    """The answer text after feeding ``events`` to a reply to a new turn."""
    assembler = ReplyAssembler()
    feed_all(assembler, events)
    return assembler.answer_text


def steps_of(changes: Iterable[ReplyChange]) -> list[StepStarted | StepFinished]:
    """The step events among ``changes``."""
    return [change for change in changes if isinstance(change, StepStarted | StepFinished)]


def texts_of(changes: Iterable[ReplyChange]) -> list[TextAppended | TextReplaced]:
    """The text changes among ``changes``."""
    return [change for change in changes if isinstance(change, TextAppended | TextReplaced)]
