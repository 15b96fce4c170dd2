"""Questions and tool approvals in Slack: the prompt's blocks, its modal, and reading clicks back.

Theory of operation. A prompt is rendered from its progress (an
``ApprovalLedger`` or an ``AnswerSheet``), so the same function gives the
message first posted (chat.postMessage) and every later form of it
(chat.update): what is still open has buttons, what is decided says who
decided what, and a timeout says the outcome. No block_id is set on a
message, so Slack gives every update new ones and drops the old state.

- A tool approval: a header (the hint, cut to fit, or the default
  heading), then for each tool its name and redacted arguments as a code
  block with buttons ``Approve`` and ``Reject``, and ``Approve all`` /
  ``Reject all`` when there are several tools.
- Questions: for each question its text, then a button per choice
  (single choice), checkboxes, or a multi-select past ten choices, and a
  ``Submit`` button (multiple choice). Free-text questions share one
  button that opens a modal (``answer_modal``) with an input per open
  free-text question; a note says a thread reply answers too.
- A text question: the agent's text as Markdown, and a note that a reply
  in the thread answers it.

A prompt that cannot fit in one message is ``Unusable`` rather than cut:
at most ``MAX_BLOCKS`` blocks and ``TEXT_BUDGET`` characters of text, with
``BLOCK_OVERHEAD`` counted for each block (Slack rejects messages past about
12,000 characters of block text with ``msg_blocks_too_long``; bolt-js
issues 2509 and 2867). The check also makes room for every block and
line a later form adds (who decided what, the timeout, the picks shown
again in a multiple-choice question), so an update always fits when the
first post did.

Every interactive element carries all a click needs in its action_id,
``hitl:<key>:<verb>[:<n>[:<m>]]``, where ``key`` names the pause (the
server keeps its state under it) and the numbers are positions: a tool
(``approve:<t>``, ``reject:<t>``, ``approve_all``, ``reject_all``), a choice
of a question (``choose:<q>:<c>``), a question's picks (``pick:<q>``,
option values are choice positions) or submission (``submit:<q>``), the
modal's button (``write``) and, in the modal (callback_id ``hitl:<key>:write``),
each input (``text:<q>``, in block ``q<q>``). ``parse_interaction`` reads
a block_actions or view_submission payload back, and ``apply_interaction``
records it in the progress.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from shared.core import notices
from shared.core.answers import AnswerSheet, ApprovalLedger, Decision, Denial, Progress
from shared.core.cleaning import one_line, slack_length
from shared.core.model import Actor
from shared.core.pauses import ApprovalTool, AskUserRequest, Question, TextQuestion, Unusable
from shared.slack.markdown import escape_mrkdwn, to_slack_markdown

MAX_BLOCKS = 50
"""Slack's limit of blocks in one message."""
TEXT_BUDGET = 12_000
"""Characters of block text one message may hold, block overheads included."""
BLOCK_OVERHEAD = 50
"""Characters counted for each block's container."""
OUTCOME_RESERVE = 250
"""Characters kept for each outcome line a later form adds (who decided what)."""
MAX_HEADER_TEXT = 150
"""Slack's limit for a header block's text: the hint is cut to it."""
MAX_SHOWN_ANSWER = 150
"""How much of a free-text answer the prompt repeats."""
MAX_BUTTONS = 25
"""Slack's limit of elements in one actions block."""
MAX_CHECKBOXES = 10
"""Slack's limit of checkboxes in one element; past it, a multi-select."""
MAX_INPUT_CHARS = 3000
"""Slack's limit for a plain_text_input: the longest free-text answer."""
ACTION_PREFIX = "hitl"


@dataclass(frozen=True)
class Prompt:
    """A message to post or update: its blocks and the notification's fallback text."""

    blocks: list[dict[str, Any]]
    text: str


# --- what a click means -----------------------------------------------------------


@dataclass(frozen=True)
class ToolDecided:
    """A person clicked Approve or Reject (``tool`` None: Approve all or Reject all)."""

    key: str
    user: str
    tool: int | None
    approved: bool


@dataclass(frozen=True)
class ChoiceChosen:
    """A person clicked a choice of a single-choice question."""

    key: str
    user: str
    question: int
    choice: int


@dataclass(frozen=True)
class ChoicesPicked:
    """A person changed the checkboxes or multi-select of a multiple-choice question."""

    key: str
    user: str
    question: int
    choices: tuple[int, ...]


@dataclass(frozen=True)
class ChoicesSubmitted:
    """A person clicked Submit under a multiple-choice question."""

    key: str
    user: str
    question: int


@dataclass(frozen=True)
class AnswerFormOpened:
    """A person clicked Answer: open ``answer_modal`` with this trigger_id at once (3 seconds)."""

    key: str
    user: str
    trigger_id: str


@dataclass(frozen=True)
class TextsWritten:
    """A person submitted the modal: free-text answers by question position."""

    key: str
    user: str
    texts: Mapping[int, str]


Interaction = (
    ToolDecided | ChoiceChosen | ChoicesPicked | ChoicesSubmitted | AnswerFormOpened | TextsWritten
)


@dataclass(frozen=True)
class Applied:
    """What an interaction did to a prompt's progress."""

    changed: bool
    """Whether the prompt must be updated (and saved)."""
    decisions: tuple[Decision, ...] = field(default=())
    """The tool decisions made, for the audit log."""


# --- rendering -------------------------------------------------------------------


def render_prompt(progress: Progress) -> Prompt | Unusable:
    """The prompt as it stands: the first post, or the form after decisions, answers or a timeout.

    Returns:
        The prompt, or ``Unusable`` when it cannot fit in one message.
    """
    if isinstance(progress, ApprovalLedger):
        blocks = _approval_blocks(progress)
        extra_blocks, extra_text = 0, OUTCOME_RESERVE * sum(d is None for d in progress.decisions)
        text = progress.pause.heading
    elif isinstance(progress.pause, TextQuestion):
        blocks = _text_question_blocks(progress, progress.pause)
        extra_blocks, extra_text = 0, (0 if progress.closed else OUTCOME_RESERVE)
        text = progress.pause.text
    else:
        blocks = _question_blocks(progress, progress.pause)
        still_open = (
            []
            if progress.closed
            else [i for i in range(len(progress.questions)) if progress.answer(i) is None]
        )
        closing = 0 if progress.closed else 1
        extra_blocks = sum(progress.questions[i].free_text for i in still_open) + closing
        extra_text = OUTCOME_RESERVE * closing
        extra_text += sum(_question_reserve(progress, i) for i in still_open)
        text = progress.pause.heading
    problem = _unfit(blocks, extra_blocks, extra_text)
    if problem is not None:
        return Unusable(problem)
    return Prompt(blocks, escape_mrkdwn(_cut(one_line(text), MAX_HEADER_TEXT)))


def render_stopped(progress: Progress, who: str) -> Prompt | Unusable:
    """The prompt as it stood when ``who`` (a user ID) stopped the turn: nothing left to click."""
    prompt = render_prompt(progress)
    if isinstance(prompt, Unusable):
        return prompt
    how_to_answer = (notices.REPLY_ALSO_ANSWERS, notices.REPLY_TO_ANSWER)
    blocks = [
        {key: value for key, value in block.items() if key != "accessory"}
        for block in prompt.blocks
        if block["type"] not in ("actions", "input")
        and not (block["type"] == "context" and block["elements"][-1].get("text") in how_to_answer)
    ]
    stopped = notices.SHOWN_STOPPED.format(who=f"<@{escape_mrkdwn(who)}>")
    return Prompt([*blocks, _context(_mrkdwn(stopped))], prompt.text)


def notice_message(text: str, who: str | None = None) -> dict[str, Any]:
    """A notice of Kourier's own, as chat.postMessage fields.

    It is a context block, marked, that no agent text can be: an agent's
    answer is Markdown, never a block (so "Approved by …" in an answer does
    not look like Kourier's). The fallback ``text`` is the notice itself.
    With ``who`` (a user ID), the notice's ``{who}`` mentions that person.
    """
    mark = _mrkdwn(f"*{notices.KOURIER_MARK}*")
    if who is None:
        return {"text": escape_mrkdwn(text), "blocks": [_context(mark, _plain(text))]}
    shown = escape_mrkdwn(text).replace("{who}", f"<@{escape_mrkdwn(who)}>")
    return {"text": shown, "blocks": [_context(mark, _mrkdwn(shown))]}


def answer_modal(sheet: AnswerSheet) -> dict[str, Any] | None:
    """The views.open view with one input per open free-text question; None when none is open."""
    open_questions = _open_free_text(sheet)
    if not open_questions:
        return None
    key = sheet.pause.key
    blocks: list[dict[str, Any]] = []
    for index in open_questions:
        question = sheet.questions[index]
        blocks.append(_section(question.text))
        blocks.append(
            {
                "type": "input",
                "block_id": f"q{index}",
                "label": _plain(notices.ANSWER_FORM_LABEL),
                "element": {
                    "type": "plain_text_input",
                    "action_id": _action_id(key, "text", index),
                    "multiline": True,
                    "max_length": MAX_INPUT_CHARS,
                },
            }
        )
    return {
        "type": "modal",
        "callback_id": _action_id(key, "write"),
        "title": _plain(notices.ANSWER_FORM_TITLE),
        "submit": _plain(notices.ANSWER_FORM_SEND),
        "close": _plain(notices.ANSWER_FORM_CANCEL),
        "blocks": blocks,
    }


def modal_errors(texts: Mapping[int, str], sentence: str) -> dict[str, Any]:
    """The view_submission answer that keeps the modal open, ``sentence`` under each blank input."""
    return {
        "response_action": "errors",
        "errors": {f"q{index}": sentence for index, text in texts.items() if not text.strip()},
    }


def _approval_blocks(ledger: ApprovalLedger) -> list[dict[str, Any]]:
    request = ledger.pause
    key = request.key
    blocks = [_header(request.heading)]
    if request.nested is not None:
        blocks.append(_context(_plain(notices.ASKED_BY_SUBAGENT.format(name=request.nested.name))))
    for index, (tool, decision) in enumerate(zip(request.tools, ledger.decisions, strict=True)):
        blocks.append(_tool_block(tool))
        if decision is None and ledger.withdrawn_at is None:
            approve = _button(notices.APPROVE, _action_id(key, "approve", index), "primary")
            reject = _button(notices.REJECT, _action_id(key, "reject", index), "danger")
            blocks.append(_actions([approve, reject]))
        elif decision is not None:
            blocks.append(_context(_mrkdwn(_decision_line(decision))))
    if len(request.tools) > 1 and not ledger.closed:
        approve_all = _button(notices.APPROVE_ALL, _action_id(key, "approve_all"), "primary")
        reject_all = _button(notices.REJECT_ALL, _action_id(key, "reject_all"), "danger")
        blocks.append(_actions([approve_all, reject_all]))
    if ledger.withdrawn_at is not None:
        blocks.append(_context(_plain(notices.SHOWN_NO_LONGER_ANSWERABLE)))
    return blocks


def _question_blocks(sheet: AnswerSheet, request: AskUserRequest) -> list[dict[str, Any]]:
    key = request.key
    blocks = [_header(request.heading)]
    if request.nested is not None:
        blocks.append(_context(_plain(notices.ASKED_BY_SUBAGENT.format(name=request.nested.name))))
    for index, question in enumerate(request.questions):
        answer = sheet.answer(index)
        open_question = answer is None and not sheet.closed
        section = _section(question.text)
        if open_question and question.multiple:
            section["accessory"] = _picker(key, index, question, sheet.picked(index))
        blocks.append(section)
        if answer is not None:
            shown = _cut(", ".join(answer.values), MAX_SHOWN_ANSWER)
            blocks.append(
                _context(
                    _mrkdwn(notices.ANSWERED_BY.format(who=_mention(answer.actor))), _plain(shown)
                )
            )
        elif open_question and question.multiple:
            blocks.append(
                _actions([_button(notices.SUBMIT, _action_id(key, "submit", index), "primary")])
            )
        elif open_question and not question.free_text:
            buttons = [
                _button(choice, _action_id(key, "choose", index, position))
                for position, choice in enumerate(question.choices)
            ]
            blocks += [
                _actions(buttons[i : i + MAX_BUTTONS]) for i in range(0, len(buttons), MAX_BUTTONS)
            ]
    if _open_free_text(sheet):
        blocks.append(
            _actions([_button(notices.WRITE_ANSWER, _action_id(key, "write"), "primary")])
        )
        blocks.append(_context(_plain(notices.REPLY_ALSO_ANSWERS)))
    if sheet.timed_out_at is not None:
        blocks.append(_context(_plain(notices.SHOWN_QUESTION_TIMED_OUT)))
    if sheet.withdrawn_at is not None:
        blocks.append(_context(_plain(notices.SHOWN_NO_LONGER_ANSWERABLE)))
    return blocks


def _open_free_text(sheet: AnswerSheet) -> list[int]:
    """The positions of the free-text questions still open."""
    if sheet.closed:
        return []
    return [
        i
        for i, question in enumerate(sheet.questions)
        if question.free_text and sheet.answer(i) is None
    ]


def _text_question_blocks(sheet: AnswerSheet, question: TextQuestion) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = [{"type": "markdown", "text": to_slack_markdown(question.text)}]
    answer = sheet.answer(0)
    if answer is not None:
        blocks.append(_context(_mrkdwn(notices.ANSWERED_BY.format(who=_mention(answer.actor)))))
    elif sheet.timed_out_at is not None:
        blocks.append(_context(_plain(notices.SHOWN_QUESTION_TIMED_OUT)))
    elif sheet.withdrawn_at is not None:
        blocks.append(_context(_plain(notices.SHOWN_NO_LONGER_ANSWERABLE)))
    else:
        blocks.append(_context(_plain(notices.REPLY_TO_ANSWER)))
    return blocks


def _picker(key: str, index: int, question: Question, picked: tuple[int, ...]) -> dict[str, Any]:
    options = [
        {"text": _plain(choice), "value": str(position)}
        for position, choice in enumerate(question.choices)
    ]
    element: dict[str, Any] = {"action_id": _action_id(key, "pick", index), "options": options}
    if len(options) <= MAX_CHECKBOXES:
        element["type"] = "checkboxes"
    else:
        element |= {"type": "multi_static_select", "placeholder": _plain(notices.PICK_PLACEHOLDER)}
    if picked:
        element["initial_options"] = [options[position] for position in picked]
    return element


def _tool_block(tool: ApprovalTool) -> dict[str, Any]:
    name = {"type": "text", "text": tool.name, "style": {"bold": True, "code": True}}
    return {
        "type": "rich_text",
        "elements": [
            {"type": "rich_text_section", "elements": [name]},
            {
                "type": "rich_text_preformatted",
                "elements": [{"type": "text", "text": tool.shown_args}],
            },
        ],
    }


def _decision_line(decision: Decision) -> str:
    if decision.denial is Denial.TIMEOUT:
        return notices.SHOWN_DENIED_TIMEOUT
    if decision.denial is Denial.NOT_ALLOWED:
        return notices.SHOWN_DENIED_NOT_ALLOWED
    line = notices.APPROVED_BY if decision.approved else notices.REJECTED_BY
    return line.format(who=_mention(decision.actor))


def _question_reserve(sheet: AnswerSheet, index: int) -> int:
    """The most text an open question's later forms may add: its outcome, or its picks again."""
    question = sheet.questions[index]
    if not question.multiple:
        return OUTCOME_RESERVE
    lengths = [slack_length(choice) for choice in question.choices]
    picked = sheet.picked(index)
    unpicked = sum(length for position, length in enumerate(lengths) if position not in picked)
    picker = sum(lengths) + sum(lengths[position] for position in picked)
    return max(unpicked, OUTCOME_RESERVE - picker, 0)


def _unfit(blocks: list[dict[str, Any]], extra_blocks: int, extra_text: int) -> str | None:
    count = len(blocks) + extra_blocks
    if count > MAX_BLOCKS:
        return f"the prompt needs {count} blocks; a message holds {MAX_BLOCKS}"
    size = _text_size(blocks) + extra_text + BLOCK_OVERHEAD * count
    if size > TEXT_BUDGET:
        return f"the prompt needs {size} characters of text; a message holds {TEXT_BUDGET}"
    return None


def _text_size(value: Any) -> int:
    if isinstance(value, Mapping):
        return sum(
            slack_length(item) if key == "text" and isinstance(item, str) else _text_size(item)
            for key, item in value.items()
        )
    if isinstance(value, list):
        return sum(_text_size(item) for item in value)
    return 0


def _cut(text: str, limit: int) -> str:
    if slack_length(text) <= limit:
        return text
    cut = text[: limit - 1]
    while slack_length(cut) > limit - 1:
        cut = cut[:-1]
    return cut.rstrip() + "…"


def _mention(actor: Actor) -> str:
    return f"<@{escape_mrkdwn(actor.id)}>"


def _plain(text: str) -> dict[str, Any]:
    return {"type": "plain_text", "text": text, "emoji": False}


def _mrkdwn(text: str) -> dict[str, Any]:
    return {"type": "mrkdwn", "text": text}


def _header(text: str) -> dict[str, Any]:
    return {"type": "header", "text": _plain(_cut(text, MAX_HEADER_TEXT))}


def _section(text: str) -> dict[str, Any]:
    return {"type": "section", "text": _plain(text)}


def _context(*elements: dict[str, Any]) -> dict[str, Any]:
    return {"type": "context", "elements": list(elements)}


def _actions(elements: list[dict[str, Any]]) -> dict[str, Any]:
    return {"type": "actions", "elements": elements}


def _button(label: str, action_id: str, style: str | None = None) -> dict[str, Any]:
    button: dict[str, Any] = {"type": "button", "text": _plain(label), "action_id": action_id}
    if style is not None:
        button["style"] = style
    return button


def _action_id(key: str, verb: str, *positions: int) -> str:
    return ":".join([ACTION_PREFIX, key, verb, *(str(position) for position in positions)])


# --- reading clicks back ---------------------------------------------------------


def parse_interaction(payload: Mapping[str, Any]) -> Interaction | None:
    """A block_actions or view_submission payload as an interaction with a prompt, or None."""
    user = payload.get("user")
    user_id = user.get("id") if isinstance(user, Mapping) else None
    if not isinstance(user_id, str) or not user_id:
        return None
    if payload.get("type") == "block_actions":
        actions = payload.get("actions")
        if (
            not isinstance(actions, list)
            or len(actions) != 1
            or not isinstance(actions[0], Mapping)
        ):
            return None
        return _click(actions[0], user_id, payload.get("trigger_id"))
    if payload.get("type") == "view_submission":
        view = payload.get("view")
        return _submission(view, user_id) if isinstance(view, Mapping) else None
    return None


def apply_interaction(
    progress: Progress, interaction: Interaction, at: datetime, approvers: Collection[str]
) -> Applied:
    """Record a person's interaction in the progress of the prompt it names.

    Args:
        progress: The progress stored under ``interaction.key``.
        interaction: What ``parse_interaction`` read.
        at: When.
        approvers: The Binding's approvers (Slack user IDs).

    Returns:
        Whether the prompt changed, and the tool decisions made.

    Raises:
        RefusedClick: The person must be told, alone, that nothing changed.
        ValueError: The interaction does not fit this prompt.
    """
    if interaction.key != progress.pause.key:
        raise ValueError("the interaction is for another prompt")
    actor = Actor(id=interaction.user, platform="slack")
    if isinstance(progress, ApprovalLedger):
        if not isinstance(interaction, ToolDecided):
            raise ValueError("a tool approval takes only decisions")  # noqa: TRY004 - a bad click
        decisions = progress.decide(interaction.tool, interaction.approved, actor, at, approvers)
        return Applied(bool(decisions), tuple(decisions))
    if isinstance(interaction, ChoiceChosen):
        return Applied(progress.choose(interaction.question, interaction.choice, actor, at))
    if isinstance(interaction, ChoicesPicked):
        return Applied(progress.pick(interaction.question, interaction.choices))
    if isinstance(interaction, ChoicesSubmitted):
        return Applied(progress.submit(interaction.question, actor, at))
    if isinstance(interaction, TextsWritten):
        return Applied(progress.write(interaction.texts, actor, at))
    if isinstance(interaction, AnswerFormOpened):
        return Applied(False)
    raise ValueError("questions take no tool decisions")


def _click(action: Mapping[str, Any], user: str, trigger_id: Any) -> Interaction | None:
    parsed = _parse_action_id(action.get("action_id"))
    if parsed is None:
        return None
    key, verb, numbers = parsed
    if verb in ("approve", "reject") and len(numbers) == 1:
        return ToolDecided(key, user, numbers[0], verb == "approve")
    if verb in ("approve_all", "reject_all") and not numbers:
        return ToolDecided(key, user, None, verb == "approve_all")
    if verb == "choose" and len(numbers) == 2:
        return ChoiceChosen(key, user, numbers[0], numbers[1])
    if verb == "pick" and len(numbers) == 1:
        chosen = action.get("selected_options")
        options = chosen if isinstance(chosen, list) else []
        values = [
            option.get("value") if isinstance(option, Mapping) else None for option in options
        ]
        picks = [int(v) for v in values if isinstance(v, str) and v.isascii() and v.isdigit()]
        if len(picks) != len(values):
            return None
        return ChoicesPicked(key, user, numbers[0], tuple(picks))
    if verb == "submit" and len(numbers) == 1:
        return ChoicesSubmitted(key, user, numbers[0])
    if verb == "write" and not numbers and isinstance(trigger_id, str) and trigger_id:
        return AnswerFormOpened(key, user, trigger_id)
    return None


def _submission(view: Mapping[str, Any], user: str) -> TextsWritten | None:
    parsed = _parse_action_id(view.get("callback_id"))
    if parsed is None or parsed[1:] != ("write", ()):
        return None
    key = parsed[0]
    state = view.get("state")
    values = state.get("values") if isinstance(state, Mapping) else None
    if not isinstance(values, Mapping):
        return None
    texts: dict[int, str] = {}
    for block in values.values():
        for action_id, entry in block.items() if isinstance(block, Mapping) else ():
            input_id = _parse_action_id(action_id)
            if (
                input_id is None
                or input_id[0] != key
                or input_id[1] != "text"
                or len(input_id[2]) != 1
            ):
                return None
            value = entry.get("value") if isinstance(entry, Mapping) else None
            texts[input_id[2][0]] = value if isinstance(value, str) else ""
    return TextsWritten(key, user, texts)


def _parse_action_id(action_id: Any) -> tuple[str, str, tuple[int, ...]] | None:
    if not isinstance(action_id, str):
        return None
    parts = action_id.split(":")
    if len(parts) < 3 or parts[0] != ACTION_PREFIX or not parts[1]:
        return None
    if not all(part.isascii() and part.isdigit() for part in parts[3:]):
        return None
    return parts[1], parts[2], tuple(int(part) for part in parts[3:])
