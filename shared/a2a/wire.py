"""Translation between the JSON of A2A 1.0 and 0.3 and the internal model.

Theory of operation: reading is shape-driven, not version-driven, so one
reader serves both versions and the servers that mix them. An object with
``kind`` is read as 0.3 (``task``, ``status-update``, ``artifact-update``,
``message``; parts ``text``/``data``/``file``); an object wrapped in one of
``task``, ``statusUpdate``, ``artifactUpdate`` or ``message`` is read as a
1.0 stream result (parts told apart by their ``text``, ``data``, ``url`` or
``raw`` key). States and roles are accepted in both spellings
(``TASK_STATE_INPUT_REQUIRED``, ``input-required``; ``ROLE_AGENT``,
``agent``). The reader is tolerant as real servers require: missing
``append``, ``lastChunk``, ``final``, parts, taskId or contextId are
absent, not errors; timestamps ending in ``Z`` or ``+00:00`` are written
one way (``Z``), so one status read twice compares equal; integral floats
(protobuf's Struct turns every number into a double) are read back as
integers; a lone UTF-16 surrogate (``"\\ud83d"`` without its pair, as an
agent that cuts a string between the two halves of an emoji sends it) is
read as U+FFFD, the replacement character, because no store, log or Slack
call can carry it and one would end the turn; an unknown part is dropped and
an unknown event is None. Writing
is version-driven: what Kourier sends is spelled for the version chosen
from the card.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, Literal, TypeGuard

from shared.core.model import (
    ACTOR_METADATA_KEY,
    Artifact,
    ArtifactUpdate,
    DataPart,
    FilePart,
    Message,
    OutgoingMessage,
    Part,
    Role,
    StatusUpdate,
    StreamEvent,
    Task,
    TaskState,
    TaskStatus,
    TextPart,
)

ProtocolVersion = Literal["1.0", "0.3"]


class Method(StrEnum):
    """The A2A methods Kourier calls, by their 1.0 names."""

    SEND_STREAMING = "SendStreamingMessage"
    GET_TASK = "GetTask"
    SUBSCRIBE = "SubscribeToTask"
    CANCEL = "CancelTask"
    LIST_TASKS = "ListTasks"

    def wire_name(self, version: ProtocolVersion) -> str:
        """The method's name on the wire of ``version`` (KeyError for ListTasks on 0.3)."""
        if version == "1.0":
            return self.value
        return _V03_METHOD_NAMES[self]


_V03_METHOD_NAMES = {
    Method.SEND_STREAMING: "message/stream",
    Method.GET_TASK: "tasks/get",
    Method.SUBSCRIBE: "tasks/resubscribe",
    Method.CANCEL: "tasks/cancel",
}
"""0.3 names; 0.3 has no ListTasks."""


REPLACEMENT_CHARACTER = "\ufffd"
"""What a lone surrogate is read as."""

_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE_ESCAPE_BYTES = re.compile(rb"\\u[dD][89a-fA-F]")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def loads(text: str | bytes) -> Any:
    """Parse JSON, reading integral floats (``3.0``) back as integers, lone surrogates as U+FFFD."""
    parsed = json.loads(text, parse_float=_number)
    escaped = (
        _SURROGATE_ESCAPE.search(text)
        if isinstance(text, str)
        else _SURROGATE_ESCAPE_BYTES.search(text)
    )
    return _without_lone_surrogates(parsed) if escaped else parsed


def _without_lone_surrogates(value: Any) -> Any:
    """``value`` with each lone surrogate in its strings and keys replaced (pairs are joined)."""
    if isinstance(value, str):
        return _LONE_SURROGATE.sub(REPLACEMENT_CHARACTER, value)
    if isinstance(value, list):
        return [_without_lone_surrogates(item) for item in value]
    if isinstance(value, dict):
        return {
            _without_lone_surrogates(key): _without_lone_surrogates(item)
            for key, item in value.items()
        }
    return value


def _number(text: str) -> float | int:
    value = float(text)
    return int(value) if value.is_integer() else value


# --- what Kourier sends ------------------------------------------------------


def send_params(message: OutgoingMessage, version: ProtocolVersion) -> dict[str, Any]:
    """Params of SendStreamingMessage (message/stream) for one outgoing message."""
    metadata: dict[str, Any] = dict(message.extension_metadata)
    if message.actor is not None:
        metadata[ACTOR_METADATA_KEY] = message.actor.as_metadata()
    wire: dict[str, Any] = {"messageId": message.message_id}
    if version == "1.0":
        wire |= {"role": "ROLE_USER", "parts": [{"text": message.text}]}
    else:
        wire |= {
            "kind": "message",
            "role": "user",
            "parts": [{"kind": "text", "text": message.text}],
        }
    if message.context_id:
        wire["contextId"] = message.context_id
    if message.task_id:
        wire["taskId"] = message.task_id
    if metadata:
        wire["metadata"] = metadata
    if message.extensions:
        wire["extensions"] = list(message.extensions)
    return {"message": wire}


# --- what agents send ----------------------------------------------------------

_V03_KINDS = {"task", "status-update", "artifact-update", "message"}
_V10_WRAPPERS = {
    "task": "task",
    "statusUpdate": "status-update",
    "artifactUpdate": "artifact-update",
    "message": "message",
}


def event_from_json(result: Any) -> StreamEvent | None:
    """One stream result (1.0 wrapper or 0.3 ``kind``) as a model event; None if unknown."""
    if not _is_mapping(result):
        return None
    kind = result.get("kind")
    if isinstance(kind, str) and kind in _V03_KINDS:
        return _event_of_kind(kind, result)
    for key, wrapped_kind in _V10_WRAPPERS.items():
        inner = result.get(key)
        if _is_mapping(inner):
            return _event_of_kind(wrapped_kind, inner)
    return None


def _event_of_kind(kind: str, obj: Mapping[str, Any]) -> StreamEvent | None:
    if kind == "task":
        return task_from_json(obj)
    if kind == "message":
        return message_from_json(obj)
    if kind == "status-update":
        return StatusUpdate(
            task_id=_str(obj.get("taskId")),
            context_id=_str(obj.get("contextId")),
            status=_status(obj.get("status")),
            final=_bool(obj.get("final")),
            metadata=_dict(obj.get("metadata")),
        )
    artifact = obj.get("artifact")
    if not _is_mapping(artifact):
        return None
    return ArtifactUpdate(
        task_id=_str(obj.get("taskId")),
        context_id=_str(obj.get("contextId")),
        artifact=_artifact(artifact),
        append=_bool(obj.get("append")) is True,
        last_chunk=_bool(obj.get("lastChunk")),
        metadata=_dict(obj.get("metadata")),
    )


def task_from_json(obj: Any) -> Task | None:
    """A Task (a GetTask or CancelTask result, or a stream's task); None if it is not one.

    A task without an ``id`` is read with the empty string as its id.
    """
    if not _is_mapping(obj):
        return None
    if not _is_mapping(obj.get("status")):
        return None
    return Task(
        id=_str(obj.get("id")) or "",
        context_id=_str(obj.get("contextId")),
        status=_status(obj.get("status")),
        artifacts=tuple(_artifact(a) for a in _list(obj.get("artifacts")) if _is_mapping(a)),
        history=tuple(
            m for m in (message_from_json(h) for h in _list(obj.get("history"))) if m is not None
        ),
        metadata=_dict(obj.get("metadata")),
    )


def list_page_from_json(result: Any) -> tuple[list[Task], str | None]:
    """The tasks of one ListTasks page and the token of the next page, if any."""
    if not isinstance(result, Mapping):
        return [], None
    tasks = [t for t in (task_from_json(item) for item in _list(result.get("tasks"))) if t]
    return tasks, _str(result.get("nextPageToken")) or None


def message_from_json(obj: Any) -> Message | None:
    """A Message in either spelling; None if ``obj`` is not an object."""
    if not _is_mapping(obj):
        return None
    return Message(
        role=_role(obj.get("role")),
        parts=tuple(p for p in (_part(item) for item in _list(obj.get("parts"))) if p is not None),
        message_id=_str(obj.get("messageId")),
        task_id=_str(obj.get("taskId")),
        context_id=_str(obj.get("contextId")),
        metadata=_dict(obj.get("metadata")),
        extensions=tuple(e for e in _list(obj.get("extensions")) if isinstance(e, str)),
    )


def state_from_json(value: Any) -> TaskState:
    """``TASK_STATE_INPUT_REQUIRED``, ``input-required`` or ``input_required`` as a TaskState."""
    if not isinstance(value, str):
        return TaskState.UNKNOWN
    name = value.strip().lower().removeprefix("task_state_").replace("_", "-")
    if name == "cancelled":
        name = "canceled"
    try:
        return TaskState(name)
    except ValueError:
        return TaskState.UNKNOWN


def _role(value: Any) -> Role:
    """``ROLE_AGENT``/``agent``, ``ROLE_USER``/``user``; anything else (none) is unspecified."""
    name = value.strip().lower().removeprefix("role_") if isinstance(value, str) else ""
    return Role(name) if name in (Role.USER, Role.AGENT) else Role.UNSPECIFIED


def _status(obj: Any) -> TaskStatus:
    status = _dict(obj)
    return TaskStatus(
        state=state_from_json(status.get("state")),
        message=message_from_json(status.get("message")),
        timestamp=_timestamp(status.get("timestamp")),
    )


def _timestamp(value: Any) -> str | None:
    """The same instant always written the same way, in UTC with ``Z``."""
    if not isinstance(value, str) or not value:
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return value
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


def _artifact(obj: Mapping[str, Any]) -> Artifact:
    return Artifact(
        artifact_id=_str(obj.get("artifactId")) or "",
        parts=tuple(p for p in (_part(item) for item in _list(obj.get("parts"))) if p is not None),
        name=_str(obj.get("name")),
        metadata=_dict(obj.get("metadata")),
    )


def _part(obj: Any) -> Part | None:
    if not _is_mapping(obj):
        return None
    metadata = _dict(obj.get("metadata"))
    kind = obj.get("kind")
    if kind == "text" or (kind is None and isinstance(obj.get("text"), str)):
        return TextPart(text=_str(obj.get("text")) or "", metadata=metadata)
    if kind == "data" or (kind is None and "data" in obj):
        return DataPart(data=obj.get("data"), metadata=metadata)
    if kind == "file" or (kind is None and any(k in obj for k in ("url", "raw", "file"))):
        return FilePart(metadata=metadata)
    return None


def _is_mapping(value: Any) -> TypeGuard[Mapping[str, Any]]:
    """Whether ``value`` is a Mapping (a dict, as JSON gives, without the ABC's slower check)."""
    return type(value) is dict or isinstance(value, Mapping)


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _bool(value: Any) -> bool | None:
    return value if isinstance(value, bool) else None


def _dict(value: Any) -> dict[str, Any]:
    return dict(value) if _is_mapping(value) else {}


def _list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list) else []
