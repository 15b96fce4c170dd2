"""The question and approval lifecycle: every change of a question, decided without I/O.

Theory of operation (agent contract, "Structured questions and tool
approvals"). When a turn's task pauses for a person, the turn stores an
``OpenQuestion`` under the pause's key: its progress (``ApprovalLedger`` or
``AnswerSheet``, see ``shared.core.answers``), where its prompt is, and which
turn and session generation it belongs to. A question is

- ``open`` while people act on it: a click or a modal (``act``) or a
  thread reply (``reply``) changes its progress; an action that changes
  nothing is not written, and one a person must be told about is ``Refused``;
- ``answering`` once its progress is complete: its answer is to be sent,
  once, by whichever comes first of the answer's task and the question's
  timer (``time_out`` of an approval denies what is undecided and answers
  too; ``deny_all`` does so at once when the Binding allows no approvals);
- ``closed`` once it ended: timed out (a question), replaced by the next
  pause, its turn ended, however it ended (``close``), or the agent that
  asked changed, so it can no longer be answered (``withdraw``).

Each change below takes the question as stored and what the caller knows,
changes it in place, and returns it to be written, or None when nothing is
to be written. The shell writes it under a precondition on the document's
update time (with the audit record of every tool decision it makes, in the
same commit) and, when another writer got there first, reads it again and
decides again, so each function decides from the question it is given and
nothing else. What the turn does around a question (``asked`` at a pause,
``after_timer``, ``after_takeover``, ``after_answer_task``) is decided here
too; the shell only carries it out.

Where each change is made (no module outside ``shared.core`` assigns to a
question, ``tests/core/test_state_changes.py`` checks it):

- ``asked`` makes a new question, which ``TurnPauses`` (``shared.turn_pauses``)
  stores once ``waits_at`` gave it the session's generation of its wait, with
  a write of its turn under the carrier's claim (``TurnQuestions.put``);
- ``act`` (a click, a modal) and ``reply`` (a thread reply): the ingress,
  ``shared.questions.handle_interaction`` and ``answer_by_reply``;
- ``time_out``, ``deny_all`` and ``withdraw``: the turn's
  ``shared.questions.TurnQuestions``; ``shown_at``: where its prompt was
  posted (``shared.questions.update_prompt``, then ``TurnQuestions.show``,
  which ends the prompt of a question ``ended_before_shown``);
- ``close``: ``shared.questions.QuestionStore.close`` and ``close_all`` (the
  turn's end in ``TurnEnding``, a pause replaced in ``TurnPauses``, a turn
  whose Binding is gone or that kept failing in ``shared.engine``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any, TypeGuard

from shared.core.answers import (
    ApprovalLedger,
    Denial,
    Progress,
    RefusedClick,
    progress_for,
    progress_from_dict,
)
from shared.core.model import Actor
from shared.core.pauses import Pause, ToolApprovalRequest
from shared.core.session import Session


class QuestionStatus(StrEnum):
    """Where a question is in its life."""

    OPEN = "open"
    ANSWERING = "answering"
    CLOSED = "closed"


@dataclass
class OpenQuestion:
    """A pause shown in a thread, and what people have done with it so far."""

    key: str
    session_id: str
    turn_id: str
    binding: str
    channel: str
    thread_ts: str
    fingerprint: str
    progress: dict[str, Any]
    generation: int
    prompt_ts: str | None = None
    status: QuestionStatus = QuestionStatus.OPEN
    answers_sent: int = 0
    replies: list[str] = field(default_factory=list)
    """The chat messages (by key) taken as answers, so that none is taken twice."""

    @property
    def current(self) -> Progress:
        """The progress, as the pure core reads it."""
        return progress_from_dict(self.progress)

    @property
    def answer_message_id(self) -> str:
        """The messageId of the answer being sent: an answer has its own."""
        return f"answer-{self.key}-{self.answers_sent}"

    def _progressed(self, progress: Progress) -> OpenQuestion:
        """Keep ``progress``; a complete one is to be answered."""
        self.progress = progress.to_dict()
        if progress.complete:
            self.status = QuestionStatus.ANSWERING
        return self


# What people do ---------------------------------------------------------------------


@dataclass(frozen=True)
class Refused:
    """A person's action that changed nothing; ``reason`` is shown to them alone."""

    reason: str


@dataclass(frozen=True)
class AlreadyTaken:
    """A chat message already taken as an answer (Slack delivers a mention twice)."""


def takes_actions(question: OpenQuestion | None, session: Session | None) -> bool:
    """Whether people may still act on ``question``: open, and its session waits on it.

    Every question of a turn closes when the turn ends, however it ends; a
    session whose active turn moved on no longer waits on it either.
    """
    return (
        question is not None
        and question.status == QuestionStatus.OPEN
        and session is not None
        and session.active_turn == question.turn_id
        and session.open_question == question.key
    )


def act(
    current: OpenQuestion, change: Callable[[Progress], bool], prompt_ts: str | None
) -> OpenQuestion | Refused | None:
    """A click or a modal on the prompt: ``change`` applies it to the progress.

    ``change`` returns whether the progress changed; it raises
    ``RefusedClick`` (a non-approver deciding a tool, a tool decided already)
    or ``ValueError`` (an action this prompt does not have). The click came
    from the prompt itself, so its ``prompt_ts`` is kept when none is stored.
    """
    if current.status != QuestionStatus.OPEN:
        return None
    progress = current.current
    try:
        changed = change(progress)
    except RefusedClick as refused:
        return Refused(str(refused))
    except ValueError:
        return None
    if not changed:
        return None
    current.prompt_ts = current.prompt_ts or prompt_ts
    return current._progressed(progress)


def reply(
    current: OpenQuestion, text: str, actor: Actor, message: str, at: datetime
) -> OpenQuestion | AlreadyTaken | None:
    """A thread reply answers the text question (or the first open free-text one).

    None: the reply is no answer (the question is not open, is an approval,
    or has no free-text question left), so it is a turn of its own.
    """
    if message in current.replies:
        return AlreadyTaken()
    progress = current.current
    if current.status != QuestionStatus.OPEN or isinstance(progress, ApprovalLedger):
        return None
    if not progress.reply(text, actor, at):
        return None
    current.replies = [*current.replies, message]
    return current._progressed(progress)


# What the turn does -----------------------------------------------------------------


def time_out(current: OpenQuestion, platform: str, at: datetime) -> OpenQuestion | None:
    """No one answered in time: an approval's undecided tools are denied and it is
    answered; a question is closed. None: it was answered (or ended) first."""
    if current.status != QuestionStatus.OPEN:
        return None
    progress = current.current
    if isinstance(progress, ApprovalLedger):
        progress.deny_undecided(Denial.TIMEOUT, platform, at)
        current.status = QuestionStatus.ANSWERING
    else:
        progress.time_out(at)
        current.status = QuestionStatus.CLOSED
    current.progress = progress.to_dict()
    return current


def deny_all(current: OpenQuestion, platform: str, at: datetime) -> OpenQuestion | None:
    """The Binding allows no tool approvals: every undecided tool is denied, and answered."""
    ledger = current.current
    if current.status != QuestionStatus.OPEN or not isinstance(ledger, ApprovalLedger):
        return None
    ledger.deny_undecided(Denial.NOT_ALLOWED, platform, at)
    current.progress, current.status = ledger.to_dict(), QuestionStatus.ANSWERING
    return current


def close(current: OpenQuestion) -> OpenQuestion | None:
    """The question ended: a click on its prompt then changes nothing."""
    if current.status == QuestionStatus.CLOSED:
        return None
    current.status = QuestionStatus.CLOSED
    return current


def withdraw(current: OpenQuestion, at: datetime) -> OpenQuestion | None:
    """The agent that asked has changed: the question closes as no longer answerable (its
    prompt says so), answered or not. None: it was closed already, or had timed out."""
    progress = current.current
    if current.status == QuestionStatus.CLOSED or not progress.withdraw(at):
        return None
    current.progress, current.status = progress.to_dict(), QuestionStatus.CLOSED
    return current


def waits_at(current: OpenQuestion, generation: int) -> OpenQuestion:
    """The turn waits on the question under the session's new ``generation``: its timer and
    the task of its answer carry it, so a stale one finds the session moved on."""
    current.generation = generation
    return current


def shown_at(ts: str | None) -> Callable[[OpenQuestion], OpenQuestion | None]:
    """Remember where the prompt was posted (``ts``), if it is not known already."""

    def record(current: OpenQuestion) -> OpenQuestion | None:
        if current.prompt_ts == ts:
            return None
        current.prompt_ts = ts
        return current

    return record


def ended_before_shown(recorded: OpenQuestion | None) -> TypeGuard[OpenQuestion]:
    """Whether ``recorded`` (what ``shown_at`` wrote: None, nothing) was closed before its
    prompt was known: whoever closed it (a person's stop, while the prompt was being posted)
    could not end the prompt, so the function that posted it shows it ended."""
    return recorded is not None and recorded.status == QuestionStatus.CLOSED


# Around a question: what the turn does next -----------------------------------------


@dataclass(frozen=True)
class Place:
    """Where a turn's questions are asked: its session, turn, Binding and thread."""

    session_id: str
    turn_id: str
    binding: str
    channel: str
    thread_ts: str


@dataclass(frozen=True)
class Allowed:
    """What the Binding lets the agent ask, and how long each waits (None: not allowed)."""

    questions: timedelta | None
    approvals: timedelta | None


@dataclass(frozen=True)
class RefusePause:
    """The pause cannot be shown: the task is cancelled, the thread told it was unusable."""

    reason: str


@dataclass(frozen=True)
class QuestionsNotAllowed:
    """The Binding allows no questions: the task is cancelled; ``close`` ends the question stored."""

    close: OpenQuestion | None


@dataclass(frozen=True)
class SendAnswer:
    """The pause's question was answered and its answer never sent: send it now.

    A carrier stored the question and died before it recorded the pause; a
    person answered meanwhile, and the answer's own task found the turn
    taken. The function carrying the turn on reads the same pause again.
    """

    question: OpenQuestion


@dataclass(frozen=True)
class Ask:
    """Store ``question`` and show its prompt.

    ``close``: the question just answered, when the agent asks something new.
    ``retried``: the agent asks again a question already answered (the answer
    was not taken): the thread is told, and the question is open again.
    ``deny``: the Binding allows no approvals, so every tool is denied at once
    and the answer sent; otherwise the turn waits ``wait`` for people.
    """

    question: OpenQuestion
    close: OpenQuestion | None
    retried: bool
    deny: bool
    wait: timedelta


def asked(
    pause: Pause,
    existing: OpenQuestion | None,
    answering: OpenQuestion | None,
    allowed: Allowed,
    place: Place,
    prompt_fits: bool,
) -> RefusePause | QuestionsNotAllowed | SendAnswer | Ask:
    """The task paused with ``pause``: what to ask, or why not.

    Args:
        pause: The pause read from the task.
        existing: The question stored under the pause's key, if any.
        answering: The question whose answer this turn just sent, if any.
        allowed: What the Binding allows.
        place: Where the question is asked.
        prompt_fits: Whether a new prompt for the pause fits in one message.
    """
    if existing is not None and existing.fingerprint != pause.fingerprint:
        return RefusePause("a different question under a name already used")
    approval = isinstance(pause, ToolApprovalRequest)
    if not approval and allowed.questions is None:
        return QuestionsNotAllowed(existing)
    if (
        existing is not None
        and existing.status == QuestionStatus.ANSWERING
        and existing.turn_id == place.turn_id
        and (answering is None or answering.key != existing.key)
    ):
        return SendAnswer(existing)  # answered, and this turn never sent the answer
    replaced = answering if answering is not None and answering.key != pause.key else None
    question = existing
    if existing is None or existing.status != QuestionStatus.OPEN:
        if not prompt_fits:
            return RefusePause("the prompt does not fit in one Slack message")
        question = OpenQuestion(
            key=pause.key,
            session_id=place.session_id,
            turn_id=place.turn_id,
            binding=place.binding,
            channel=place.channel,
            thread_ts=place.thread_ts,
            fingerprint=pause.fingerprint,
            progress=progress_for(pause).to_dict(),
            generation=0,
            prompt_ts=existing.prompt_ts if existing else None,
            answers_sent=existing.answers_sent + 1 if existing else 0,
        )
    assert question is not None
    wait = allowed.approvals if approval else allowed.questions
    return Ask(
        question,
        close=replaced,
        retried=existing is not None and existing is not question,
        deny=wait is None,
        wait=wait or timedelta(0),
    )


class Next(StrEnum):
    """What a turn paused on a question does next."""

    SEND_ANSWER = "send_answer"
    """The question is answered: send its answer to the task."""
    READ_TASK = "read_task"
    """Read the task again, as after a send of unknown outcome: a pause still
    there is shown again (and its timer set); an ended task ends the turn."""
    TIME_OUT = "time_out"
    """No one answered in time: cancel the task, tell the thread, end the turn."""
    NOTHING = "nothing"
    """Someone else sends the answer, or the question is not this turn's."""


def after_timer(timed_out: OpenQuestion | None, stored: OpenQuestion | None, turn_id: str) -> Next:
    """The question's timer fired; ``timed_out`` is what ``time_out`` wrote (None: nothing).

    An answer completed just before the timer fired (``stored`` is
    ``answering``) is sent by the timer: the timer took the session first,
    so the answer's own task finds the session moved on.
    """
    if timed_out is None:
        answered = (
            stored is not None
            and stored.status == QuestionStatus.ANSWERING
            and stored.turn_id == turn_id
        )
        return Next.SEND_ANSWER if answered else Next.NOTHING
    return Next.SEND_ANSWER if timed_out.status == QuestionStatus.ANSWERING else Next.TIME_OUT


def after_takeover(question: OpenQuestion | None, turn_id: str) -> Next:
    """A paused turn taken over (the timer or answer that claimed it died).

    The question's state says what was under way: an answer taken and not
    yet sent is sent; for a question still open the task is read again; one
    that ended without its turn ending timed out.
    """
    if question is not None and question.turn_id == turn_id:
        if question.status == QuestionStatus.ANSWERING:
            return Next.SEND_ANSWER
        if question.status == QuestionStatus.OPEN:
            return Next.READ_TASK
    return Next.TIME_OUT


def after_answer_task(question: OpenQuestion | None, turn_id: str) -> Next:
    """The answer's task came: send the answer, unless it is not this turn's to send."""
    if (
        question is not None
        and question.status == QuestionStatus.ANSWERING
        and question.turn_id == turn_id
    ):
        return Next.SEND_ANSWER
    return Next.NOTHING
