"""Pauses as agents send them, and the people who answer them."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from shared.core.answers import AnswerSheet, ApprovalLedger
from shared.core.model import (
    HITL_EXTENSION,
    Actor,
    DataPart,
    Message,
    Part,
    Role,
    TaskState,
    TaskStatus,
    TextPart,
)
from shared.core.pauses import (
    AskUserRequest,
    Dialect,
    TextQuestion,
    ToolApprovalRequest,
    Unusable,
    read_pause,
)

TASK_ID = "task-1"
CONTEXT_ID = "ctx-1"
SESSION = "sre-C0123456789-1700000000.000100"
"""The session the builders read pauses in."""
MESSAGE_ID = "msg-1"
TIMESTAMP = "2026-11-30T05:04:26.055338Z"
AT = datetime(2026, 11, 30, 5, 10, tzinfo=UTC)
ADA = Actor(id="U0ADA", platform="slack", name="Ada Lovelace", email="ada@example.com")
BOB = Actor(id="U0BOB", platform="slack")
APPROVERS = ("U0ADA", "U0BOB")


def tool(
    tool_id: str = "t1", name: str = "delete_file", args: Any = None, **extra: Any
) -> dict[str, Any]:
    """One tool of a tool_approval_request."""
    return {
        "id": tool_id,
        "name": name,
        "args": {"path": "/tmp/x"} if args is None else args,
        **extra,
    }


def approval(*tools: dict[str, Any], **extra: Any) -> dict[str, Any]:
    """A tool_approval_request payload."""
    return {"type": "tool_approval_request", "tools": list(tools) or [tool()], **extra}


def question(
    text: str = "Which region?", choices: list[str] | None = None, multiple: bool = False
) -> dict[str, Any]:
    """One question of an ask_user_request."""
    return {
        "question": text,
        "choices": choices if choices is not None else [],
        "multiple": multiple,
    }


def ask(*questions: dict[str, Any], request_id: str = "ask-1", **extra: Any) -> dict[str, Any]:
    """An ask_user_request payload."""
    return {
        "type": "ask_user_request",
        "id": request_id,
        "questions": list(questions) or [question()],
        **extra,
    }


def paused(
    payload: Any = None,
    *,
    names_extension: bool = True,
    parts: tuple[Part, ...] = (TextPart("Human input is required before the agent can continue."),),
    message_id: str | None = MESSAGE_ID,
    timestamp: str | None = TIMESTAMP,
) -> TaskStatus:
    """An input-required status whose message carries ``payload`` (when given) beside ``parts``."""
    metadata = {} if payload is None else {HITL_EXTENSION: payload}
    extensions = (HITL_EXTENSION,) if names_extension and payload is not None else ()
    message = Message(Role.AGENT, parts, message_id, TASK_ID, CONTEXT_ID, metadata, extensions)
    return TaskStatus(TaskState.INPUT_REQUIRED, message, timestamp)


def read(status: TaskStatus, dialect: Dialect = "a2a", task_id: str | None = TASK_ID):
    """The pause of a task in ``status``."""
    return read_pause(dialect, task_id, CONTEXT_ID, status, session=SESSION)


def read_approval(payload: dict[str, Any]) -> ToolApprovalRequest:
    """A payload that must read as a tool approval."""
    pause = read(paused(payload))
    assert isinstance(pause, ToolApprovalRequest), pause
    return pause


def read_ask(payload: dict[str, Any]) -> AskUserRequest:
    """A payload that must read as questions."""
    pause = read(paused(payload))
    assert isinstance(pause, AskUserRequest), pause
    return pause


def read_text(text: str) -> TextQuestion:
    """A plain-text pause that must read as a text question."""
    pause = read(paused(parts=(TextPart(text),)))
    assert isinstance(pause, TextQuestion), pause
    return pause


def unusable(payload: Any, dialect: Dialect = "a2a") -> bool:
    """Whether a payload makes the pause unusable."""
    return isinstance(read(paused(payload), dialect), Unusable)


def ledger(payload: dict[str, Any]) -> ApprovalLedger:
    """An empty ledger for a tool approval payload."""
    return ApprovalLedger(read_approval(payload))


def sheet(payload: dict[str, Any]) -> AnswerSheet:
    """An empty answer sheet for an ask_user payload."""
    return AnswerSheet(read_ask(payload))


def data_part(data: Any, kind: str = "function_call") -> DataPart:
    """A tool call part as ADK writes it."""
    return DataPart(data, {"adk_type": kind})
