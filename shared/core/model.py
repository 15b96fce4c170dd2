"""One internal model of A2A for both wire formats (1.0 and 0.3).

The A2A adapter translates every wire object into these frozen dataclasses,
so nothing above it knows which protocol version or dialect is on the wire.
Fields that agents in the wild omit are optional here (a status message may
lack parts, taskId or contextId; ``append``/``lastChunk``/``final`` may be
absent). States and roles use the short names of the agent contract.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class TaskState(StrEnum):
    """Task states, in the contract's short form."""

    SUBMITTED = "submitted"
    WORKING = "working"
    INPUT_REQUIRED = "input-required"
    AUTH_REQUIRED = "auth-required"
    COMPLETED = "completed"
    FAILED = "failed"
    REJECTED = "rejected"
    CANCELED = "canceled"
    UNKNOWN = "unknown"
    """Any state this model does not know; terminal, treated as failed."""

    @property
    def is_terminal(self) -> bool:
        """Whether the task has ended for good."""
        return self not in _RUNNING_OR_PAUSED

    @property
    def settles_stream(self) -> bool:
        """Whether a stream may end normally after a status in this state."""
        return self not in (TaskState.SUBMITTED, TaskState.WORKING)


_RUNNING_OR_PAUSED = frozenset(
    {TaskState.SUBMITTED, TaskState.WORKING, TaskState.INPUT_REQUIRED, TaskState.AUTH_REQUIRED}
)


class Role(StrEnum):
    """Who wrote a message."""

    USER = "user"
    AGENT = "agent"
    UNSPECIFIED = "unspecified"
    """No role, or one A2A does not define: never read as the agent's."""


@dataclass(frozen=True)
class TextPart:
    """Text, shown to the person when it is answer text."""

    text: str
    metadata: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class DataPart:
    """Structured data; shown only when it is a tool call or result."""

    data: Any
    metadata: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class FilePart:
    """A file; never shown."""

    metadata: Mapping[str, Any] = field(default_factory=dict)


Part = TextPart | DataPart | FilePart


@dataclass(frozen=True)
class Message:
    """One A2A message."""

    role: Role
    parts: tuple[Part, ...] = ()
    message_id: str | None = None
    task_id: str | None = None
    context_id: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)
    extensions: tuple[str, ...] = ()

    @property
    def text(self) -> str:
        """The text parts, joined."""
        return "".join(p.text for p in self.parts if isinstance(p, TextPart))


@dataclass(frozen=True)
class TaskStatus:
    """A task's state with its optional message and timestamp."""

    state: TaskState
    message: Message | None = None
    timestamp: str | None = None


@dataclass(frozen=True)
class Artifact:
    """One artifact of a task."""

    artifact_id: str
    parts: tuple[Part, ...] = ()
    name: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Task:
    """A full task: from a stream, GetTask, SubscribeToTask or ListTasks."""

    id: str
    context_id: str | None
    status: TaskStatus
    artifacts: tuple[Artifact, ...] = ()
    history: tuple[Message, ...] = ()
    metadata: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class StatusUpdate:
    """TaskStatusUpdateEvent."""

    task_id: str | None
    context_id: str | None
    status: TaskStatus
    final: bool | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ArtifactUpdate:
    """TaskArtifactUpdateEvent."""

    task_id: str | None
    context_id: str | None
    artifact: Artifact
    append: bool = False
    last_chunk: bool | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)


StreamEvent = Task | Message | StatusUpdate | ArtifactUpdate
"""What a stream (send or subscribe) yields, in arrival order."""


@dataclass(frozen=True)
class Actor:
    """The person (or Agent Kourier itself) a message is sent for."""

    id: str
    platform: str = "slack"
    name: str | None = None
    email: str | None = None

    def as_metadata(self) -> dict[str, str]:
        """The value of ``metadata["agentkourier.dev/actor"]``."""
        fields = {"id": self.id, "platform": self.platform, "name": self.name, "email": self.email}
        return {k: v for k, v in fields.items() if v}


@dataclass(frozen=True)
class OutgoingMessage:
    """What Agent Kourier sends: one user message with exactly one text part."""

    message_id: str
    text: str
    context_id: str | None = None
    task_id: str | None = None
    actor: Actor | None = None
    extension_metadata: Mapping[str, Any] = field(default_factory=dict)
    """Payloads keyed by extension URI (an answer to a HITL pause)."""

    @property
    def extensions(self) -> tuple[str, ...]:
        """The extensions this message names."""
        return tuple(self.extension_metadata)


ACTOR_METADATA_KEY = "agentkourier.dev/actor"
HITL_EXTENSION = "https://kagent.dev/extensions/hitl/v1"
