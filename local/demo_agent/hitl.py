"""kagent's human-in-the-loop extension, spoken the way kagent 1.0 speaks it.

Theory of operation: this follows kagent's own code (``kagent.core.a2a``
``_hitl.py`` and ``kagent.adk`` ``_hitl.py``). The card lists the extension
as optional. A pause is an input-required status message, role agent, that
names the extension in ``extensions`` and holds the request under the URI
in ``metadata``, with one text part beside it (the hint, or kagent's default
sentence), but only when the request asked for the extension with the
``A2A-Extensions`` header; otherwise kagent sends that text part alone. A
tool approval lists each tool with an opaque ``id`` (kagent uses the ID of
ADK's confirmation call), the ``call_id`` of the tool call it gates, the
tool's name and arguments. Questions are kagent's ``ask_user`` tool: the
request's id is that confirmation's ID, with no hint. An answer must name
the extension and carry the matching response: every tool decided once by
its id and no other, or the request's id with the answers; anything else is
refused, as kagent refuses it. ADK answers a rejected tool with
``REJECTED_RESULT``.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from a2a.types.a2a_pb2 import AgentExtension, Message, Part, Role
from google.protobuf import struct_pb2
from google.protobuf.json_format import ParseDict

HITL_EXTENSION = "https://kagent.dev/extensions/hitl/v1"
DEFAULT_HINT = "Human input is required before the agent can continue."
"""The text part kagent sends beside a pause, or alone to a client that did not ask."""
REJECTED_RESULT = {"error": "This tool call is rejected."}
"""What ADK's tool call returns when its confirmation is rejected."""


class AnswerMismatch(ValueError):
    """An answer that does not fit the paused request (kagent refuses it)."""


@dataclass(frozen=True)
class GatedTool:
    """A tool call waiting for approval."""

    call_id: str
    name: str
    args: dict[str, Any]


@dataclass(frozen=True)
class ToolDecision:
    """What the answer decided for one tool."""

    tool: GatedTool
    approved: bool
    rejection_reason: str | None


def card_extension() -> AgentExtension:
    """The card's ``capabilities.extensions`` entry, as kagent writes it."""
    return AgentExtension(
        uri=HITL_EXTENSION,
        description="Human in the loop for tool approval, ask user, and nested subagents",
        required=False,
    )


def new_id() -> str:
    """An ID as ADK gives its function calls."""
    return f"adk-{uuid.uuid4()}"


def approval_request(tools: list[GatedTool], hint: str | None) -> dict[str, Any]:
    """A ``tool_approval_request`` for ``tools``, each under a new opaque id."""
    request: dict[str, Any] = {
        "type": "tool_approval_request",
        "tools": [
            {"id": new_id(), "call_id": tool.call_id, "name": tool.name, "args": tool.args}
            for tool in tools
        ],
    }
    if hint is not None:
        request["hint"] = hint
    return request


def ask_user_request(questions: list[dict[str, Any]]) -> dict[str, Any]:
    """An ``ask_user_request``: kagent's ask_user tool, paused for its answers."""
    return {"type": "ask_user_request", "id": new_id(), "questions": questions}


def pause_message(
    request: dict[str, Any], text: str, task_id: str, context_id: str, activated: bool
) -> Message:
    """The status message of a pause; the payload only when the client asked for it."""
    message = Message(
        message_id=str(uuid.uuid4()),
        role=Role.ROLE_AGENT,
        task_id=task_id,
        context_id=context_id,
    )
    if not activated:
        message.parts.append(Part(text=DEFAULT_HINT))
        return message
    message.metadata.CopyFrom(ParseDict({HITL_EXTENSION: request}, struct_pb2.Struct()))
    message.extensions.append(HITL_EXTENSION)
    message.parts.append(Part(text=text))
    return message


def response_in(message: dict[str, Any]) -> dict[str, Any] | None:
    """The extension's payload in a message (JSON), if the message names the extension."""
    if HITL_EXTENSION not in (message.get("extensions") or []):
        return None
    payload = (message.get("metadata") or {}).get(HITL_EXTENSION)
    return payload if isinstance(payload, dict) and isinstance(payload.get("type"), str) else None


def decisions(request: dict[str, Any], response: dict[str, Any] | None) -> list[ToolDecision]:
    """Each tool of ``request`` with its decision, in the request's order.

    Raises:
        AnswerMismatch: The response is not a tool_approval_response that
            decides every tool once, by its id, and nothing else.
    """
    if response is None or response.get("type") != "tool_approval_response":
        raise AnswerMismatch("Tool approval request requires a tool approval response")
    approvals = response.get("approvals")
    if not isinstance(approvals, list) or not approvals:
        raise AnswerMismatch("Tool approval response has no approvals")
    by_id = {str(entry.get("id")): entry for entry in approvals if isinstance(entry, dict)}
    if len(by_id) != len(approvals):
        raise AnswerMismatch("Tool approval response contains duplicate ids")
    decided = []
    for tool in request["tools"]:
        entry = by_id.pop(tool["id"], None)
        if entry is None or not isinstance(entry.get("approved"), bool):
            raise AnswerMismatch(f"Tool approval response is missing id: {tool['id']}")
        gated = GatedTool(tool["call_id"], tool["name"], tool["args"])
        reason = entry.get("rejection_reason")
        decided.append(ToolDecision(gated, entry["approved"], reason if reason else None))
    if by_id:
        raise AnswerMismatch(f"Tool approval response contains unknown ids: {sorted(by_id)}")
    return decided


def answers(request: dict[str, Any], response: dict[str, Any] | None) -> list[list[str]]:
    """The answers to each question of ``request``, in order.

    Raises:
        AnswerMismatch: The response is not an ask_user_response with the
            request's id and some answers.
    """
    if (
        response is None
        or response.get("type") != "ask_user_response"
        or response.get("id") != request["id"]
    ):
        raise AnswerMismatch("ask_user response has invalid correlation")
    given = response.get("answers")
    if not isinstance(given, list) or not given:
        raise AnswerMismatch("ask_user response contains no answers")
    return [
        [str(choice) for choice in entry.get("answer", [])] if isinstance(entry, dict) else []
        for entry in given
    ]


def check_answer(request: dict[str, Any], message: dict[str, Any]) -> None:
    """Refuses an answer (a message as JSON) that does not fit ``request``.

    Raises:
        AnswerMismatch: It does not (kagent then fails the send with -32603).
    """
    if request.get("type") == "tool_approval_request":
        decisions(request, response_in(message))
    else:
        answers(request, response_in(message))
