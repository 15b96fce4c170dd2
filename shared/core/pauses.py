"""Reading a task's pause in input-required: a question, a tool approval, or unusable.

Theory of operation (agent contract, "Task states" and "Structured questions
and tool approvals"). On kagent-v1 the pause is kagent's human-in-the-loop
payload, in the status message's metadata under ``HITL_EXTENSION``. On a2a
the same payload is read when the message also names the extension in its
``extensions``; otherwise the pause is a text question: a status message,
on a task with an ID, whose parts are all text and whose joined text is not
blank once trimmed. Whether the card lists the extension does not matter
here: a pause that names it is read either way.

A payload is read strictly, and anything it breaks makes the whole pause
``Unusable`` (the task is then cancelled and the thread told): 1 to 20
tools, each with a unique id; an id and 1 to 20 questions of at most 100
choices; the nested rules; and the cleaning rules of ``shared.core.cleaning``
for every name, key, string and number shown. Each item must also fit
whole in the one Slack element that shows it (``MAX_ITEM_TEXT``,
``MAX_CHOICE_TEXT``); whether the whole prompt fits in one message is
``shared.slack.prompts``' question.

A pause has a ``name``: a text question is named by its task and messageId,
or status timestamp when it has none; a structured pause by its task and
its request id (questions) or tool IDs (approvals), the way the contract
tells one pause from another. The same name with the same ``fingerprint``
is the same pause, not to be posted again; the same name with another
fingerprint is a different question under a used name, which cannot be
shown. ``key`` is a short digest of the name that the prompt's Slack action
IDs carry; it digests the session too, since agents choose task IDs and two
threads' pauses may share a name.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from shared.core import notices
from shared.core.cleaning import (
    name_problem,
    one_line,
    shown_json,
    slack_length,
    string_problem,
    value_problem,
)
from shared.core.digest import digest
from shared.core.model import HITL_EXTENSION, Message, TaskState, TaskStatus, TextPart
from shared.core.redaction import hidden_non_credential, redact

Dialect = Literal["a2a", "kagent-v1"]

MAX_TOOLS = 20
MAX_QUESTIONS = 20
MAX_CHOICES = 100
MAX_ITEM_TEXT = 3000
"""Slack's limit for one section's text: a tool's name and shown arguments, or a question."""
MAX_CHOICE_TEXT = 75
"""Slack's limit for a button's or an option's text: one choice."""
ADK_HINT_START = "Please approve or reject the tool call"
"""How the instruction ADK writes for a client (and kagent sends as the hint) starts."""


@dataclass(frozen=True)
class PausedTask:
    """The task that paused: the answer goes to this task and context."""

    task_id: str
    context_id: str | None
    session: str = ""
    """The session (thread and Binding) the pause was read in: its key is that session's."""


@dataclass(frozen=True)
class ApprovalTool:
    """One tool call an approver decides on."""

    id: str
    """What the decision names."""
    name: str
    args: Any
    """The arguments as sent (any JSON value)."""
    call_id: str | None = None
    """Kept with the request, never shown."""

    @property
    def shown_args(self) -> str:
        """The arguments as the approver sees them: redacted, as indented JSON."""
        return shown_json(redact(self.args))


@dataclass(frozen=True)
class SubAgent:
    """The sub-agent that raised a nested pause."""

    name: str
    task_id: str
    context_id: str | None


@dataclass(frozen=True)
class Question:
    """One question of an ask_user request; no choices asks for free text."""

    text: str
    choices: tuple[str, ...] = ()
    multiple: bool = False

    @property
    def free_text(self) -> bool:
        """Whether the answer is typed rather than chosen."""
        return not self.choices


@dataclass(frozen=True)
class ToolApprovalRequest:
    """A ``tool_approval_request`` pause."""

    task: PausedTask
    tools: tuple[ApprovalTool, ...]
    """The tools to decide, in the request's order: the nested tools when nested."""
    hint: str | None
    """The agent's heading on one line, or None (absent, blank, or ADK's instruction)."""
    nested: SubAgent | None
    fingerprint: str

    @property
    def name(self) -> str:
        """Names this pause: its task and its tools' IDs."""
        return json.dumps(
            [self.task.task_id, "tool_approval_request", [tool.id for tool in self.tools]]
        )

    @property
    def key(self) -> str:
        """A short digest of ``name`` in its session, carried by the prompt's action IDs."""
        return _key(self.task.session, self.name)

    @property
    def heading(self) -> str:
        """The prompt's heading."""
        return self.hint or notices.NEEDS_APPROVAL


@dataclass(frozen=True)
class AskUserRequest:
    """An ``ask_user_request`` pause."""

    task: PausedTask
    id: str
    answer_id: str
    """The id the answer echoes: ``id``, or the nested ask_user tool's id."""
    questions: tuple[Question, ...]
    hint: str | None
    nested: SubAgent | None
    fingerprint: str

    @property
    def name(self) -> str:
        """Names this pause: its task and its request id."""
        return json.dumps([self.task.task_id, "ask_user_request", self.id])

    @property
    def key(self) -> str:
        """A short digest of ``name`` in its session, carried by the prompt's action IDs."""
        return _key(self.task.session, self.name)

    @property
    def heading(self) -> str:
        """The prompt's heading."""
        return self.hint or notices.NEEDS_INPUT


@dataclass(frozen=True)
class TextQuestion:
    """A question in plain text (a2a only), answered by the next reply in the thread."""

    task: PausedTask
    text: str
    message_id: str | None
    timestamp: str | None

    @property
    def name(self) -> str:
        """Names this pause: its task and messageId, or status timestamp without one."""
        if self.message_id:
            return json.dumps([self.task.task_id, "message", self.message_id])
        return json.dumps([self.task.task_id, "at", self.timestamp])

    @property
    def key(self) -> str:
        """A short digest of ``name`` in its session, carried by the prompt's action IDs."""
        return _key(self.task.session, self.name)

    @property
    def fingerprint(self) -> str:
        """The same for the same text."""
        return digest(self.text)


@dataclass(frozen=True)
class Unusable:
    """A pause that cannot be shown: the task is cancelled and the thread told."""

    reason: str
    """Why, for the logs only; never shown in the thread."""


Pause = ToolApprovalRequest | AskUserRequest | TextQuestion


def read_pause(
    dialect: Dialect,
    task_id: str | None,
    context_id: str | None,
    status: TaskStatus,
    *,
    session: str,
) -> Pause | Unusable:
    """The question or approval a task asks for by pausing in input-required.

    Args:
        dialect: The AgentBackend's dialect.
        task_id: The paused task's ID (None or empty when the agent named none).
        context_id: The paused task's context, where the answer goes.
        status: The task's input-required status.
        session: The session it paused in (its key is unique to it).

    Returns:
        The pause, or ``Unusable`` with the reason for the logs.

    Raises:
        ValueError: ``status`` is not input-required.
    """
    if status.state is not TaskState.INPUT_REQUIRED:
        raise ValueError(f"not a pause: the task is {status.state.value}")
    if not task_id:
        return Unusable("the paused task has no ID")
    message = status.message
    if message is None:
        return Unusable("the pause has no status message")
    task = PausedTask(task_id, context_id or None, session)
    has_payload = HITL_EXTENSION in message.metadata
    try:
        if dialect == "kagent-v1":
            if not has_payload:
                return Unusable("no human-in-the-loop payload in the status message's metadata")
            return _payload(task, message.metadata[HITL_EXTENSION])
        if has_payload and HITL_EXTENSION in message.extensions:
            return _payload(task, message.metadata[HITL_EXTENSION])
        return _text_question(task, message, status.timestamp)
    except _Broken as broken:
        return Unusable(str(broken))


def pause_to_dict(pause: Pause) -> dict[str, Any]:
    """A JSON-able form for Firestore, read back by ``pause_from_dict``.

    Arguments are kept redacted (as the approver sees them; no secret is
    stored), as JSON text, since Firestore takes neither arrays inside arrays
    nor empty keys, which arguments may hold.
    """
    task = {
        "task_id": pause.task.task_id,
        "context_id": pause.task.context_id,
        "session": pause.task.session,
    }
    if isinstance(pause, TextQuestion):
        return {
            "type": "text",
            "task": task,
            "text": pause.text,
            "message_id": pause.message_id,
            "timestamp": pause.timestamp,
        }
    nested = None if pause.nested is None else vars(pause.nested).copy()
    common = {"task": task, "hint": pause.hint, "nested": nested, "fingerprint": pause.fingerprint}
    if isinstance(pause, ToolApprovalRequest):
        tools = [
            {
                "id": t.id,
                "name": t.name,
                "args_json": json.dumps(redact(t.args)),
                "call_id": t.call_id,
            }
            for t in pause.tools
        ]
        return {"type": "tool_approval_request", "tools": tools, **common}
    questions = [
        {"text": q.text, "choices": list(q.choices), "multiple": q.multiple}
        for q in pause.questions
    ]
    return {
        "type": "ask_user_request",
        "id": pause.id,
        "answer_id": pause.answer_id,
        "questions": questions,
        **common,
    }


def pause_from_dict(stored: Mapping[str, Any]) -> Pause:
    """The pause ``pause_to_dict`` wrote."""
    task = PausedTask(**stored["task"])
    if stored["type"] == "text":
        return TextQuestion(task, stored["text"], stored["message_id"], stored["timestamp"])
    nested = None if stored["nested"] is None else SubAgent(**stored["nested"])
    if stored["type"] == "tool_approval_request":
        tools = tuple(
            ApprovalTool(t["id"], t["name"], json.loads(t["args_json"]), t["call_id"])
            for t in stored["tools"]
        )
        return ToolApprovalRequest(task, tools, stored["hint"], nested, stored["fingerprint"])
    questions = tuple(
        Question(q["text"], tuple(q["choices"]), q["multiple"]) for q in stored["questions"]
    )
    return AskUserRequest(
        task,
        stored["id"],
        stored["answer_id"],
        questions,
        stored["hint"],
        nested,
        stored["fingerprint"],
    )


# --- reading ------------------------------------------------------------------


class _Broken(Exception):
    """A rule the pause breaks; its message is the reason for the logs."""


def _key(session: str, name: str) -> str:
    """Agents choose task ids, so two sessions' pauses may share a name; never a key."""
    return hashlib.sha256(f"{session}\n{name}".encode()).hexdigest()[:24]


def _text_question(task: PausedTask, message: Message, timestamp: str | None) -> TextQuestion:
    if not all(isinstance(part, TextPart) for part in message.parts):
        raise _Broken("a part that is not text, and no human-in-the-loop payload the dialect reads")
    if not message.text.strip():
        raise _Broken("the text of the pause is blank")
    if not message.message_id and not timestamp:
        raise _Broken("no messageId and no status timestamp to name the question")
    return TextQuestion(task, message.text, message.message_id or None, timestamp)


def _payload(task: PausedTask, payload: Any) -> ToolApprovalRequest | AskUserRequest:
    payload = _object(payload, "the payload")
    kind = payload.get("type")
    if kind == "tool_approval_request":
        return _approval(task, payload)
    if kind == "ask_user_request":
        return _questions(task, payload)
    raise _Broken("the payload's type is neither tool_approval_request nor ask_user_request")


def _approval(task: PausedTask, payload: Mapping[str, Any]) -> ToolApprovalRequest:
    outer = _list(payload.get("tools"), "tools", 1, MAX_TOOLS)
    nested = payload.get("nested")
    if nested is None:
        tools = _tools(outer, "tools")
        subagent = None
    else:
        if len(outer) != 1:
            raise _Broken("a nested approval needs exactly one outer tool")
        _id(_object(outer[0], "tools[0]"), "tools[0]")
        nested = _object(nested, "nested")
        subagent = _subagent(nested)
        tools = _tools(_list(nested.get("tools"), "nested.tools", 1, MAX_TOOLS), "nested.tools")
    return ToolApprovalRequest(task, tools, _hint(payload), subagent, digest(payload))


def _tools(items: list[Any], where: str) -> tuple[ApprovalTool, ...]:
    tools = tuple(
        _tool(_object(item, f"{where}[{i}]"), f"{where}[{i}]") for i, item in enumerate(items)
    )
    if len({tool.id for tool in tools}) != len(tools):
        raise _Broken(f"{where}: two tools with the same id")
    return tools


def _tool(obj: Mapping[str, Any], where: str) -> ApprovalTool:
    tool_id = _id(obj, where)
    name = obj.get("name")
    if not isinstance(name, str):
        raise _Broken(f"{where}: no name")
    problem = name_problem(name)
    if problem is not None:
        raise _Broken(f"{where}: a name with {problem}")
    args = {} if obj.get("args") is None else obj["args"]
    problem = value_problem(args, f"{where}.args")
    if problem is not None:
        raise _Broken(problem)
    if hidden_non_credential(args):
        # The approver would approve blind: a secret-looking key may hide a payload.
        raise _Broken(f"{where}.args: a value hidden as a secret does not look like a credential")
    call_id = obj.get("call_id")
    if call_id is not None and not isinstance(call_id, str):
        raise _Broken(f"{where}: a call_id that is not a string")
    tool = ApprovalTool(tool_id, name, args, call_id or None)
    if slack_length(tool.name) + slack_length(tool.shown_args) > MAX_ITEM_TEXT:
        raise _Broken(f"{where}: its name and arguments are too long to show whole")
    return tool


def _questions(task: PausedTask, payload: Mapping[str, Any]) -> AskUserRequest:
    request_id = _id(payload, "the request")
    items = _list(payload.get("questions"), "questions", 1, MAX_QUESTIONS)
    questions = tuple(
        _question(_object(item, f"questions[{i}]"), f"questions[{i}]")
        for i, item in enumerate(items)
    )
    nested = payload.get("nested")
    subagent = None
    answer_id = request_id
    if nested is not None:
        nested = _object(nested, "nested")
        subagent = _subagent(nested)
        nested_tools = _list(nested.get("tools"), "nested.tools", 1, 1)
        ask_user = _object(nested_tools[0], "nested.tools[0]")
        if ask_user.get("name") != "ask_user":
            raise _Broken("a nested question needs its one nested tool named ask_user")
        answer_id = _id(ask_user, "nested.tools[0]")
    return AskUserRequest(
        task, request_id, answer_id, questions, _hint(payload), subagent, digest(payload)
    )


def _question(obj: Mapping[str, Any], where: str) -> Question:
    text = obj.get("question")
    if not isinstance(text, str) or not text.strip():
        raise _Broken(f"{where}: no question text")
    _shown_whole(text, f"{where}.question", MAX_ITEM_TEXT)
    raw_choices = [] if obj.get("choices") is None else obj["choices"]
    choices = _list(raw_choices, f"{where}.choices", 0, MAX_CHOICES)
    for index, choice in enumerate(choices):
        if not isinstance(choice, str) or not choice.strip():
            raise _Broken(f"{where}.choices[{index}]: not a choice's text")
        _shown_whole(choice, f"{where}.choices[{index}]", MAX_CHOICE_TEXT)
    multiple = obj.get("multiple")
    if multiple is not None and not isinstance(multiple, bool):
        raise _Broken(f"{where}: multiple is not true or false")
    return Question(text, tuple(choices), bool(multiple) and bool(choices))


def _subagent(nested: Mapping[str, Any]) -> SubAgent:
    name = nested.get("subagent_name")
    if not isinstance(name, str):
        raise _Broken("nested: no subagent_name")
    problem = name_problem(name)
    if problem is not None:
        raise _Broken(f"nested: a subagent_name with {problem}")
    task_id = nested.get("task_id")
    if not isinstance(task_id, str) or not task_id:
        raise _Broken("nested: no task_id")
    context_id = nested.get("context_id")
    if context_id is not None and not isinstance(context_id, str):
        raise _Broken("nested: a context_id that is not a string")
    return SubAgent(name, task_id, context_id or None)


def _hint(payload: Mapping[str, Any]) -> str | None:
    hint = payload.get("hint")
    if hint is None:
        return None
    if not isinstance(hint, str):
        raise _Broken("a hint that is not a string")
    if hint.lstrip().startswith(ADK_HINT_START) and "ToolConfirmation" in hint:
        return None
    return one_line(hint) or None


def _shown_whole(text: str, where: str, limit: int) -> None:
    problem = string_problem(text)
    if problem is not None:
        raise _Broken(f"{where}: {problem}")
    if slack_length(text) > limit:
        raise _Broken(f"{where}: too long to show whole")


def _id(obj: Mapping[str, Any], where: str) -> str:
    value = obj.get("id")
    if not isinstance(value, str) or not value:
        raise _Broken(f"{where}: no id")
    return value


def _object(value: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise _Broken(f"{where}: not an object")
    return value


def _list(value: Any, where: str, least: int, most: int) -> list[Any]:
    if not isinstance(value, list | tuple):
        raise _Broken(f"{where}: not a list")
    if not least <= len(value) <= most:
        raise _Broken(f"{where}: {len(value)} entries, not {least} to {most}")
    return list(value)
