"""Which parts are tool calls and tool results, and what they say.

A2A defines no tool call, so the conventions of the frameworks that write one
are read: a data part is a call or a result when its metadata holds exactly
one of ``TOOL_PART_KEYS`` with the value ``function_call`` or
``function_response``, and its data is an object with a non-empty string
``name``. Every other part stays unread.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from shared.core.digest import digest, plain
from shared.core.model import DataPart, Part, Task

TOOL_PART_KEYS = ("adk_type", "kagent_type", "kagent.dev/a2a/part-type")
"""Google ADK's A2A converter, kagent 0.9.x, kagent 1.0."""


class ToolPartKind(StrEnum):
    """A tool call or a tool result."""

    CALL = "function_call"
    RESULT = "function_response"


@dataclass(frozen=True)
class ToolPart:
    """A tool call or result part, as the agent wrote it."""

    kind: ToolPartKind
    data: Mapping[str, Any]
    """The part's data: an object with a non-empty string ``name``."""

    @property
    def name(self) -> str:
        """The tool's name."""
        return str(self.data["name"])

    @property
    def call_id(self) -> str | None:
        """The call's ID, which its result repeats; None when the agent gave none."""
        call_id = self.data.get("id")
        return call_id if isinstance(call_id, str) and call_id else None

    @property
    def args(self) -> Any:
        """A call's arguments."""
        return self.data.get("args")

    @property
    def response(self) -> Any:
        """What a result says the tool returned."""
        return self.data.get("response")

    @property
    def failed(self) -> bool:
        """Whether a result's response holds a non-empty ``error`` or ``isError: true``."""
        response = self.response
        if not isinstance(response, Mapping):
            return False
        return bool(response.get("error")) or response.get("isError") is True

    @property
    def fingerprint(self) -> str:
        """The same for two parts that say the same."""
        return digest([self.kind.value, self.data])

    def to_dict(self) -> dict[str, Any]:
        """A JSON-able form, read back by ``from_dict``."""
        return {"kind": self.kind.value, "data": plain(self.data)}

    @classmethod
    def from_dict(cls, stored: Mapping[str, Any]) -> ToolPart:
        """The part ``to_dict`` wrote."""
        return cls(ToolPartKind(stored["kind"]), stored["data"])


def read_tool_part(part: Part) -> ToolPart | None:
    """``part`` as a tool call or result, or None when it is neither."""
    if not isinstance(part, DataPart):
        return None
    marks = [key for key in TOOL_PART_KEYS if key in part.metadata]
    if len(marks) != 1:
        return None
    kind = part.metadata[marks[0]]
    if kind not in (ToolPartKind.CALL.value, ToolPartKind.RESULT.value):
        return None
    data = part.data
    if not isinstance(data, Mapping) or not isinstance(data.get("name"), str) or not data["name"]:
        return None
    return ToolPart(ToolPartKind(kind), data)


def tool_parts(parts: tuple[Part, ...]) -> list[ToolPart]:
    """The tool calls and results among ``parts``, in order."""
    return [tool_part for part in parts if (tool_part := read_tool_part(part)) is not None]


def tool_parts_of_task(task: Task) -> list[ToolPart]:
    """Every tool call and result anywhere in ``task``: history, status message, artifacts."""
    messages = [*task.history, *([task.status.message] if task.status.message else [])]
    found = [tool_part for message in messages for tool_part in tool_parts(message.parts)]
    return found + [
        tool_part for artifact in task.artifacts for tool_part in tool_parts(artifact.parts)
    ]
