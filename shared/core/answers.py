"""What people decide and answer in a prompt, and the answer the agent gets.

Theory of operation (agent contract, "Structured questions and tool
approvals"). A prompt's progress is kept between clicks, in Firestore, as
an ``ApprovalLedger`` (a tool approval) or an ``AnswerSheet`` (questions,
or a text question). Each records what people did, who and when, and
refuses nothing silently: an action that changes nothing returns False (or
no decisions), and one a person must be told about raises ``RefusedClick``,
whose message is the sentence shown to that person alone.

- Every tool is decided exactly once: the first decision stands, so two
  approvers clicking at once cannot decide a tool twice. "Approve all" and
  "Reject all" decide the tools still open. Only the Binding's approvers may
  decide. At the timeout, or at once when the Binding allows no approvals,
  Agent Kourier denies the open tools itself, as ``agent-kourier``.
- Every question is answered once, by anyone in the thread: one choice by a
  click, several by picking and then submitting, free text in the modal or
  by a reply in the thread (the first free-text question still open).

When the progress is ``complete``, ``answer_message`` builds the one user
message the agent gets, with the payload exactly as the contract gives it,
after checking it once more (each question answered, each answer one of its
choices, each tool decided once). Its actor is whoever made the last
decision or answer, with id and platform only.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

from shared.core import notices
from shared.core.model import HITL_EXTENSION, Actor, OutgoingMessage
from shared.core.pauses import (
    AskUserRequest,
    Pause,
    Question,
    TextQuestion,
    ToolApprovalRequest,
    pause_from_dict,
    pause_to_dict,
)
from shared.errors import KourierError

KOURIER_ACTOR_ID = "agent-kourier"
"""The actor of a denial Agent Kourier makes itself."""


class Denial(StrEnum):
    """Why a tool was denied: the rejection_reason the agent gets, verbatim."""

    APPROVER = notices.DENIED_BY_APPROVER
    TIMEOUT = notices.DENIED_TIMEOUT
    NOT_ALLOWED = notices.DENIED_NOT_ALLOWED


class RefusedClick(KourierError):
    """A person's action that changes nothing; the message is shown to them alone."""


class IncompleteAnswer(KourierError):
    """An answer that is incomplete or not one the request allows: it is never sent."""


def kourier_actor(platform: str) -> Actor:
    """Agent Kourier itself, on the Binding's platform."""
    return Actor(id=KOURIER_ACTOR_ID, platform=platform)


@dataclass(frozen=True)
class Decision:
    """One tool approved or denied."""

    tool_id: str
    approved: bool
    denial: Denial | None
    """Why it was denied; None when approved."""
    actor: Actor
    at: datetime


@dataclass(frozen=True)
class Answer:
    """One question answered: the chosen choices' texts, or the one free text."""

    values: tuple[str, ...]
    actor: Actor
    at: datetime


class ApprovalLedger:
    """The decisions on one tool approval's tools, collected until all are made."""

    def __init__(self, pause: ToolApprovalRequest) -> None:
        self.pause = pause
        self._decisions: dict[str, Decision] = {}
        self._last_actor: Actor | None = None
        self._withdrawn_at: datetime | None = None

    @property
    def decisions(self) -> tuple[Decision | None, ...]:
        """Each tool's decision, in the request's order (None while open)."""
        return tuple(self._decisions.get(tool.id) for tool in self.pause.tools)

    @property
    def complete(self) -> bool:
        """Whether every tool is decided."""
        return all(decision is not None for decision in self.decisions)

    @property
    def withdrawn_at(self) -> datetime | None:
        """When the approval could no longer be answered (its agent changed), or None."""
        return self._withdrawn_at

    @property
    def closed(self) -> bool:
        """Whether the ledger takes no more decisions: complete, or withdrawn."""
        return self.complete or self._withdrawn_at is not None

    def withdraw(self, at: datetime) -> bool:
        """The approval can no longer be answered, decided or not; False if already withdrawn."""
        if self._withdrawn_at is not None:
            return False
        self._withdrawn_at = at
        return True

    @property
    def actor(self) -> Actor | None:
        """Who made the last decision: the answer is sent for them."""
        return self._last_actor

    def decide(
        self,
        tool: int | None,
        approved: bool,
        actor: Actor,
        at: datetime,
        approvers: Collection[str],
    ) -> list[Decision]:
        """A person approves or rejects one tool, or every open tool.

        Args:
            tool: The tool's position in ``pause.tools``; None for all open tools.
            approved: Approve, or reject.
            actor: The person.
            at: When.
            approvers: The Binding's approvers (person IDs).

        Returns:
            The decisions made, in the request's order; none when the tools
            were already decided.

        Raises:
            RefusedClick: The person is not one of the approvers.
            ValueError: ``tool`` is not a position in the request.
        """
        if actor.id not in approvers:
            raise RefusedClick(notices.NOT_AN_APPROVER)
        if self._withdrawn_at is not None:
            return []
        if tool is not None and not 0 <= tool < len(self.pause.tools):
            raise ValueError(f"the request has no tool {tool}")
        chosen = range(len(self.pause.tools)) if tool is None else [tool]
        denial = None if approved else Denial.APPROVER
        return self._record(list(chosen), approved, denial, _who(actor), at)

    def deny_undecided(self, denial: Denial, platform: str, at: datetime) -> list[Decision]:
        """Agent Kourier denies every open tool: at the timeout, or when the Binding allows none."""
        if denial is Denial.APPROVER:
            raise ValueError("a person's denial goes through decide")
        return self._record(
            list(range(len(self.pause.tools))), False, denial, kourier_actor(platform), at
        )

    def _record(
        self,
        positions: list[int],
        approved: bool,
        denial: Denial | None,
        actor: Actor,
        at: datetime,
    ) -> list[Decision]:
        made = []
        for position in positions:
            tool_id = self.pause.tools[position].id
            if tool_id not in self._decisions:
                self._decisions[tool_id] = Decision(tool_id, approved, denial, actor, at)
                made.append(self._decisions[tool_id])
        if made:
            self._last_actor = actor
        return made

    def to_dict(self) -> dict[str, Any]:
        """A JSON-able form for Firestore, read back by ``progress_from_dict``."""
        return {
            "pause": pause_to_dict(self.pause),
            "decisions": [_decision_to_dict(d) for d in self.decisions if d is not None],
            "last_actor": None if self._last_actor is None else _actor_to_dict(self._last_actor),
            "withdrawn_at": _when(self._withdrawn_at),
        }

    @classmethod
    def _from_dict(cls, pause: ToolApprovalRequest, stored: Mapping[str, Any]) -> ApprovalLedger:
        ledger = cls(pause)
        for entry in stored["decisions"]:
            decision = _decision_from_dict(entry)
            ledger._decisions[decision.tool_id] = decision
        ledger._last_actor = None if stored["last_actor"] is None else Actor(**stored["last_actor"])
        ledger._withdrawn_at = _read_when(stored.get("withdrawn_at"))
        return ledger


class AnswerSheet:
    """The answers to one question pause (structured, or a text question), until complete."""

    def __init__(self, pause: AskUserRequest | TextQuestion) -> None:
        self.pause = pause
        self._answers: dict[int, Answer] = {}
        self._picks: dict[int, tuple[int, ...]] = {}
        self._timed_out_at: datetime | None = None
        self._withdrawn_at: datetime | None = None
        self._last_actor: Actor | None = None

    @property
    def questions(self) -> tuple[Question, ...]:
        """The questions; a text question is one free-text question."""
        if isinstance(self.pause, TextQuestion):
            return (Question(self.pause.text),)
        return self.pause.questions

    def answer(self, question: int) -> Answer | None:
        """The answer to a question, or None while it is open."""
        return self._answers.get(question)

    def picked(self, question: int) -> tuple[int, ...]:
        """The choices picked so far in a multiple-choice question, not yet submitted."""
        return self._picks.get(question, ())

    @property
    def complete(self) -> bool:
        """Whether every question is answered."""
        return len(self._answers) == len(self.questions)

    @property
    def timed_out_at(self) -> datetime | None:
        """When no one had answered in time (the task is then cancelled), or None."""
        return self._timed_out_at

    @property
    def withdrawn_at(self) -> datetime | None:
        """When the questions could no longer be answered (their agent changed), or None."""
        return self._withdrawn_at

    @property
    def closed(self) -> bool:
        """Whether the sheet takes no more answers: complete, timed out or withdrawn."""
        return self.complete or self._timed_out_at is not None or self._withdrawn_at is not None

    @property
    def actor(self) -> Actor | None:
        """Who gave the last answer: the answer is sent for them."""
        return self._last_actor

    def choose(self, question: int, choice: int, actor: Actor, at: datetime) -> bool:
        """Someone clicks one choice of a single-choice question; False if already answered."""
        asked = self._question(question)
        if asked.free_text or asked.multiple or not 0 <= choice < len(asked.choices):
            raise ValueError(f"question {question} has no single choice {choice}")
        return self._set(question, (asked.choices[choice],), actor, at)

    def pick(self, question: int, choices: Sequence[int]) -> bool:
        """Someone changes the picks of a multiple-choice question; False if nothing changed."""
        asked = self._question(question)
        if not asked.multiple or not all(0 <= choice < len(asked.choices) for choice in choices):
            raise ValueError(f"question {question} has no choices {list(choices)}")
        picks = tuple(sorted(set(choices)))
        if self.closed or question in self._answers or picks == self.picked(question):
            return False
        self._picks[question] = picks
        return True

    def submit(self, question: int, actor: Actor, at: datetime) -> bool:
        """Someone submits the choices picked in a multiple-choice question.

        Raises:
            RefusedClick: Nothing is picked.
        """
        asked = self._question(question)
        if not asked.multiple:
            raise ValueError(f"question {question} is not a multiple-choice question")
        if self.closed or question in self._answers:
            return False
        if not self.picked(question):
            raise RefusedClick(notices.PICK_A_CHOICE)
        return self._set(
            question, tuple(asked.choices[i] for i in self.picked(question)), actor, at
        )

    def write(self, texts: Mapping[int, str], actor: Actor, at: datetime) -> bool:
        """Someone submits free-text answers (the modal); answered questions keep their answer.

        Raises:
            RefusedClick: An answer is blank.
        """
        for question, text in texts.items():
            if not self._question(question).free_text:
                raise ValueError(f"question {question} is not a free-text question")
            if not text.strip():
                raise RefusedClick(notices.ANSWER_BLANK)
        changed = [
            self._set(question, (text,), actor, at) for question, text in sorted(texts.items())
        ]
        return any(changed)

    def reply(self, text: str, actor: Actor, at: datetime) -> bool:
        """A thread reply answers the first open free-text question; False if none is open."""
        if self.closed or not text.strip():
            return False
        for index, question in enumerate(self.questions):
            if question.free_text and index not in self._answers:
                return self._set(index, (text,), actor, at)
        return False

    def time_out(self, at: datetime) -> bool:
        """No one answered in time; False if the sheet was already closed."""
        if self.closed:
            return False
        self._timed_out_at = at
        return True

    def withdraw(self, at: datetime) -> bool:
        """The questions can no longer be answered, answered or not; False if they were already
        withdrawn or timed out."""
        if self._withdrawn_at is not None or self._timed_out_at is not None:
            return False
        self._withdrawn_at = at
        return True

    def _question(self, index: int) -> Question:
        if not 0 <= index < len(self.questions):
            raise ValueError(f"there is no question {index}")
        return self.questions[index]

    def _set(self, question: int, values: tuple[str, ...], actor: Actor, at: datetime) -> bool:
        if self.closed or question in self._answers:
            return False
        self._answers[question] = Answer(values, _who(actor), at)
        self._picks.pop(question, None)
        self._last_actor = _who(actor)
        return True

    def to_dict(self) -> dict[str, Any]:
        """A JSON-able form for Firestore, read back by ``progress_from_dict``."""
        return {
            "pause": pause_to_dict(self.pause),
            "answers": [
                {
                    "question": q,
                    "values": list(a.values),
                    "actor": _actor_to_dict(a.actor),
                    "at": a.at.isoformat(),
                }
                for q, a in sorted(self._answers.items())
            ],
            "picks": [{"question": q, "choices": list(c)} for q, c in sorted(self._picks.items())],
            "timed_out_at": _when(self._timed_out_at),
            "withdrawn_at": _when(self._withdrawn_at),
            "last_actor": None if self._last_actor is None else _actor_to_dict(self._last_actor),
        }

    @classmethod
    def _from_dict(
        cls, pause: AskUserRequest | TextQuestion, stored: Mapping[str, Any]
    ) -> AnswerSheet:
        sheet = cls(pause)
        for entry in stored["answers"]:
            at = datetime.fromisoformat(entry["at"])
            sheet._answers[entry["question"]] = Answer(
                tuple(entry["values"]), Actor(**entry["actor"]), at
            )
        sheet._picks = {entry["question"]: tuple(entry["choices"]) for entry in stored["picks"]}
        sheet._timed_out_at = _read_when(stored["timed_out_at"])
        sheet._withdrawn_at = _read_when(stored.get("withdrawn_at"))
        sheet._last_actor = None if stored["last_actor"] is None else Actor(**stored["last_actor"])
        return sheet


Progress = ApprovalLedger | AnswerSheet


def _when(at: datetime | None) -> str | None:
    return None if at is None else at.isoformat()


def _read_when(stored: str | None) -> datetime | None:
    return None if stored is None else datetime.fromisoformat(stored)


def progress_for(pause: Pause) -> Progress:
    """A new, empty progress for a pause just posted."""
    return ApprovalLedger(pause) if isinstance(pause, ToolApprovalRequest) else AnswerSheet(pause)


def progress_from_dict(stored: Mapping[str, Any]) -> Progress:
    """The progress ``to_dict`` wrote."""
    pause = pause_from_dict(stored["pause"])
    if isinstance(pause, ToolApprovalRequest):
        return ApprovalLedger._from_dict(pause, stored)
    return AnswerSheet._from_dict(pause, stored)


# --- the answer -----------------------------------------------------------------


def tool_approval_response(ledger: ApprovalLedger) -> dict[str, Any]:
    """The ``tool_approval_response`` payload: one approval per tool, by id, in the request's order.

    Raises:
        IncompleteAnswer: A tool is not decided exactly once.
    """
    decisions = ledger.decisions
    if any(decision is None for decision in decisions):
        raise IncompleteAnswer("each tool must be decided")
    approvals: list[dict[str, Any]] = []
    for decision in decisions:
        assert decision is not None
        if decision.approved != (decision.denial is None):
            raise IncompleteAnswer(f"tool {decision.tool_id}: a denial needs its reason")
        entry: dict[str, Any] = {"id": decision.tool_id, "approved": decision.approved}
        if decision.denial is not None:
            entry["rejection_reason"] = decision.denial.value
        approvals.append(entry)
    return {"type": "tool_approval_response", "approvals": approvals}


def ask_user_response(sheet: AnswerSheet) -> dict[str, Any]:
    """The ``ask_user_response`` payload: the echoed id and one answer per question, in order.

    Raises:
        IncompleteAnswer: A question is unanswered, or an answer is not one of its choices.
    """
    if not isinstance(sheet.pause, AskUserRequest):
        raise TypeError("a text question is answered by text_answer")
    answers = [{"answer": list(values)} for values in _checked_answers(sheet)]
    return {"type": "ask_user_response", "id": sheet.pause.answer_id, "answers": answers}


def answer_message(progress: Progress, message_id: str) -> OutgoingMessage:
    """The message that answers the paused task, once ``progress`` is complete.

    Args:
        progress: A complete ledger or sheet.
        message_id: The answer's own messageId (keep it when the answer is sent again).

    Raises:
        IncompleteAnswer: The answer is not complete or not valid; nothing may be sent.
    """
    actor = progress.actor
    if actor is None:
        raise IncompleteAnswer("no one has answered")
    task = progress.pause.task
    metadata: dict[str, Any] = {}
    if isinstance(progress, ApprovalLedger):
        payload = tool_approval_response(progress)
        denied = any(not approval["approved"] for approval in payload["approvals"])
        text = "rejected" if denied else "approved"
        metadata = {HITL_EXTENSION: payload}
    elif isinstance(progress.pause, TextQuestion):
        [values] = _checked_answers(progress)
        text = values[0]
    else:
        payload = ask_user_response(progress)
        text = ";".join(",".join(entry["answer"]) for entry in payload["answers"])
        metadata = {HITL_EXTENSION: payload}
    return OutgoingMessage(
        message_id=message_id,
        text=text,
        context_id=task.context_id,
        task_id=task.task_id,
        actor=actor,
        extension_metadata=metadata,
    )


def decided_since(before: Progress | None, after: Progress) -> tuple[Decision, ...]:
    """The tool decisions ``after`` holds that ``before`` did not: what a change decided.

    Each is audited once, in the same write that records it.
    """
    if not isinstance(after, ApprovalLedger):
        return ()
    earlier = before.decisions if isinstance(before, ApprovalLedger) else ()
    return tuple(
        decision
        for index, decision in enumerate(after.decisions)
        if decision is not None and (index >= len(earlier) or earlier[index] is None)
    )


def audit_record(request: ToolApprovalRequest, decision: Decision) -> dict[str, Any]:
    """The audit record of one decision: who, which tool with which arguments, what, why, when.

    The arguments are those the approver saw, with secrets redacted.
    """
    tool = next(tool for tool in request.tools if tool.id == decision.tool_id)
    return {
        "task_id": request.task.task_id,
        "context_id": request.task.context_id,
        "pause": request.name,
        "subagent": None if request.nested is None else request.nested.name,
        "tool_id": tool.id,
        "call_id": tool.call_id,
        "tool": tool.name,
        "args": tool.shown_args,
        "approved": decision.approved,
        "reason": None if decision.denial is None else decision.denial.value,
        "actor": _actor_to_dict(decision.actor),
        "at": decision.at.isoformat(),
    }


def _checked_answers(sheet: AnswerSheet) -> list[tuple[str, ...]]:
    checked = []
    for index, question in enumerate(sheet.questions):
        answer = sheet.answer(index)
        if answer is None or not answer.values:
            raise IncompleteAnswer(f"question {index} is not answered")
        values = answer.values
        if question.free_text:
            if len(values) != 1 or not values[0].strip():
                raise IncompleteAnswer(f"question {index} needs one text")
        elif any(value not in question.choices for value in values):
            raise IncompleteAnswer(f"question {index}: an answer that is not one of its choices")
        elif not question.multiple and len(values) != 1:
            raise IncompleteAnswer(f"question {index} takes one choice")
        elif len(set(values)) != len(values):
            raise IncompleteAnswer(f"question {index}: a choice given twice")
        checked.append(values)
    return checked


def _who(actor: Actor) -> Actor:
    """An answer or decision carries the person's id and platform, never name or email."""
    return Actor(id=actor.id, platform=actor.platform)


def _actor_to_dict(actor: Actor) -> dict[str, str]:
    return {"id": actor.id, "platform": actor.platform}


def _decision_to_dict(decision: Decision) -> dict[str, Any]:
    return {
        "tool_id": decision.tool_id,
        "approved": decision.approved,
        "denial": None if decision.denial is None else decision.denial.name,
        "actor": _actor_to_dict(decision.actor),
        "at": decision.at.isoformat(),
    }


def _decision_from_dict(stored: Mapping[str, Any]) -> Decision:
    denial = None if stored["denial"] is None else Denial[stored["denial"]]
    at = datetime.fromisoformat(stored["at"])
    return Decision(stored["tool_id"], stored["approved"], denial, Actor(**stored["actor"]), at)
