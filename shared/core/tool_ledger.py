"""Which tool parts are new: the agent contract's repeat rules for each place.

Theory of operation. Tool parts are read in two sources: artifacts (stream
chunks and task snapshots) and messages (the agent's working status messages,
and its history messages since the user's last one). Each source has its own
idea of a repeat. An append chunk's parts are all new. A replace chunk or a
snapshot holds an artifact's parts again, so for each artifact the ledger
counts, per fingerprint, the parts it has delivered, and a part is new only
past that count. A message part is its messageId and index, or, when the
message has no messageId, what the message says and the index. Across the
two sources a part that says the same is one part: the number delivered of a
fingerprint is the larger of the two sources' counts, so a part new in its
source is delivered only when it raises that number. Snapshots are history
and the stream is news: a snapshot's result is dropped when the stream has
already delivered a result of that call from the same source, and of a
snapshot's several new results of one call only the last is delivered. A
part dropped by these rules is still counted, so it is never considered
again. The state is digests and counts, bounded by the number of parts.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from enum import StrEnum
from typing import Any

from shared.core.digest import digest
from shared.core.model import (
    Artifact,
    ArtifactUpdate,
    DataPart,
    FilePart,
    Message,
    Role,
    StatusUpdate,
    Task,
    TaskState,
    TaskStatus,
    TextPart,
)
from shared.core.tool_parts import ToolPart, ToolPartKind, read_tool_part, tool_parts


class Source(StrEnum):
    """Where a tool part was read."""

    ARTIFACTS = "artifacts"
    MESSAGES = "messages"


class ToolPartLedger:
    """Remembers the tool parts delivered for one reply and says which are new."""

    def __init__(self) -> None:
        self._artifact_counts: dict[str, dict[str, int]] = {}
        """Artifact ID to fingerprint to the number of such parts counted from it."""
        self._message_parts: set[str] = set()
        """Digests of the message parts counted (message key and index)."""
        self._message_counts: dict[str, int] = {}
        """Fingerprint to the number of such parts counted from messages."""
        self._streamed_results: set[str] = set()
        """Digests of (source, call ID) for results the stream delivered."""

    def read_chunk(self, update: ArtifactUpdate) -> list[ToolPart]:
        """The new tool parts of an artifact chunk from the stream."""
        delivered = self._count_artifact(update.artifact, append=update.append)
        self._note_streamed(Source.ARTIFACTS, delivered)
        return delivered

    def read_status(self, update: StatusUpdate) -> list[ToolPart]:
        """The new tool parts of a status update from the stream."""
        message = _readable_status_message(update.status)
        delivered = self._count_message(message) if message else []
        self._note_streamed(Source.MESSAGES, delivered)
        return delivered

    def read_snapshot(self, task: Task) -> list[ToolPart]:
        """The new tool parts of a task snapshot (GetTask, SubscribeToTask, a replayed send)."""
        status_message = _readable_status_message(task.status)
        messages = [
            *_agent_history_since_user(task.history),
            *([status_message] if status_message else []),
        ]
        found = [
            (Source.MESSAGES, part) for message in messages for part in self._count_message(message)
        ]
        found += [
            (Source.ARTIFACTS, part)
            for artifact in task.artifacts
            for part in self._count_artifact(artifact, append=False)
        ]
        news = [
            (source, part) for source, part in found if not self._stream_has_result(source, part)
        ]
        last_result = {
            part.call_id: index for index, (_, part) in enumerate(news) if _is_result_with_id(part)
        }
        return [
            part
            for index, (_, part) in enumerate(news)
            if not _is_result_with_id(part) or last_result[part.call_id] == index
        ]

    def count_as_delivered(self, task: Task) -> None:
        """Count every tool part of ``task``, in every place, as already delivered."""
        for artifact in task.artifacts:
            self._count_artifact(artifact, append=False)
        for message in [*task.history, *([task.status.message] if task.status.message else [])]:
            self._count_message(message)

    def _count_artifact(self, artifact: Artifact, *, append: bool) -> list[ToolPart]:
        counts = self._artifact_counts.setdefault(artifact.artifact_id, {})
        said: dict[str, int] = {}
        delivered = []
        for part in tool_parts(artifact.parts):
            fingerprint = part.fingerprint
            said[fingerprint] = said.get(fingerprint, 0) + 1
            if append or said[fingerprint] > counts.get(fingerprint, 0):
                from_artifacts = self._artifact_total(fingerprint)
                counts[fingerprint] = counts.get(fingerprint, 0) + 1
                if from_artifacts + 1 > self._message_counts.get(fingerprint, 0):
                    delivered.append(part)
        return delivered

    def _count_message(self, message: Message) -> list[ToolPart]:
        key = f"id:{message.message_id}" if message.message_id else _what_it_says(message)
        delivered = []
        for index, part in enumerate(message.parts):
            tool_part = read_tool_part(part)
            if tool_part is None:
                continue
            place = digest([key, index])
            if place in self._message_parts:
                continue
            self._message_parts.add(place)
            fingerprint = tool_part.fingerprint
            from_messages = self._message_counts.get(fingerprint, 0)
            self._message_counts[fingerprint] = from_messages + 1
            if from_messages + 1 > self._artifact_total(fingerprint):
                delivered.append(tool_part)
        return delivered

    def _artifact_total(self, fingerprint: str) -> int:
        return sum(counts.get(fingerprint, 0) for counts in self._artifact_counts.values())

    def _note_streamed(self, source: Source, delivered: Iterable[ToolPart]) -> None:
        for part in delivered:
            if _is_result_with_id(part):
                self._streamed_results.add(digest([source.value, part.call_id]))

    def _stream_has_result(self, source: Source, part: ToolPart) -> bool:
        return (
            _is_result_with_id(part)
            and digest([source.value, part.call_id]) in self._streamed_results
        )

    def to_state(self) -> dict[str, Any]:
        """A JSON-able form, read back by ``from_state``."""
        return {
            "artifact_counts": [
                [key, dict(counts)] for key, counts in self._artifact_counts.items()
            ],
            "message_parts": sorted(self._message_parts),
            "message_counts": dict(self._message_counts),
            "streamed_results": sorted(self._streamed_results),
        }

    @classmethod
    def from_state(cls, state: Mapping[str, Any]) -> ToolPartLedger:
        """The ledger ``to_state`` wrote."""
        ledger = cls()
        ledger._artifact_counts = {key: dict(counts) for key, counts in state["artifact_counts"]}
        ledger._message_parts = set(state["message_parts"])
        ledger._message_counts = dict(state["message_counts"])
        ledger._streamed_results = set(state["streamed_results"])
        return ledger


def _readable_status_message(status: TaskStatus) -> Message | None:
    """The status message, when it is the agent's own and the task is working."""
    message = status.message
    if status.state is TaskState.WORKING and message is not None and message.role is Role.AGENT:
        return message
    return None


def _agent_history_since_user(history: tuple[Message, ...]) -> list[Message]:
    """The agent's messages after the user's last one (all of them when the user has none)."""
    user_indexes = [index for index, message in enumerate(history) if message.role is Role.USER]
    since = user_indexes[-1] + 1 if user_indexes else 0
    return [message for message in history[since:] if message.role is Role.AGENT]


def _what_it_says(message: Message) -> str:
    """The key of a message without a messageId: a digest of its role and parts."""
    said: list[Any] = [message.role.value]
    for part in message.parts:
        if isinstance(part, TextPart):
            said.append({"text": part.text})
        elif isinstance(part, DataPart):
            said.append({"data": part.data, "metadata": part.metadata})
        elif isinstance(part, FilePart):
            said.append({"file": part.metadata})
    return "says:" + digest(said)


def _is_result_with_id(part: ToolPart) -> bool:
    return part.kind is ToolPartKind.RESULT and part.call_id is not None
