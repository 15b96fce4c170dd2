"""Questions and tool approvals between the thread and a paused task.

Theory of operation: every change of a question is decided by the pure
``shared.core.questions`` (open, answering, closed); this module stores
questions and carries those decisions out over the ports. When a task
pauses, the turn engine posts the prompt and stores an ``OpenQuestion``
under the pause's key (a digest of its name), in one commit with a write of
the turn under the carrier's claim (``TurnQuestions.put``): a carrier that a
person's stop took the turn from stores none, so every question stored is
one the end of its turn finds and closes. The session keeps its turn
active meanwhile, so replies queue behind it.

People act through the ingress: a click or a modal is parsed by
``shared.slack.prompts`` and applied to the stored progress with a write
guarded by the document's update time (two approvers clicking at once
cannot both decide a tool); the same commit keeps every tool decision it
makes in ``kourier_audit``. A click from someone who may not decide gets an
ephemeral refusal and changes nothing, and so does a click on a question
that is closed or that its session no longer waits on (every question of
a turn closes when the turn ends, however it ends). When the progress is
complete the question becomes ``answering`` (once: the same precondition)
and a Cloud Task asks ``stream_follow`` to send the answer; the question's timer
(``timeout``) and that task carry the same generation, so whichever comes
first wins and the other finds the session moved on. The winner sends the
answer: a timer that finds the question already ``answering`` sends it
rather than time it out. Only then is the prompt updated in place, best
effort: Slack does not retry a click, so a Slack failure must not lose a
decision that was made, or its answer.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Protocol, TypeVar

import structlog
from slack_sdk.errors import SlackApiError

from shared.bootstrap import Deps
from shared.core import notices
from shared.core import questions as lifecycle
from shared.core.answers import (
    AnswerSheet,
    ApprovalLedger,
    Decision,
    Progress,
    audit_record,
    decided_since,
)
from shared.core.model import Actor
from shared.core.pauses import Unusable
from shared.core.questions import OpenQuestion, QuestionStatus, Refused
from shared.errors import PreconditionFailed, StoreUnavailable, Superseded
from shared.ports import Chat, Clock, Documents, Put, TaskQueue, Update, Write
from shared.slack.prompts import (
    AnswerFormOpened,
    answer_modal,
    apply_interaction,
    modal_errors,
    parse_interaction,
    render_prompt,
    render_stopped,
)

QUESTIONS = "kourier_questions"
AUDIT = "kourier_audit"

QUESTIONS_KEPT = timedelta(days=30)
"""A question is kept this long after its last change (Firestore's TTL deletes it after)."""

PROMPT_ATTEMPTS = 3
"""How often a prompt is posted or updated before it is given up (the answer is not)."""
PROMPT_RETRY_SECONDS = 0.3
"""The wait before the second attempt (twice that before the third): inside Slack's 3 s."""

log = structlog.get_logger()

Verdict = TypeVar("Verdict")
"""What a change of a question decides: the question to write, or a verdict that writes nothing."""


class QuestionStore:
    """Firestore: open questions and the audit log of decisions."""

    def __init__(self, documents: Documents, clock: Clock) -> None:
        self._documents = documents
        self._clock = clock

    def get(self, key: str) -> OpenQuestion | None:
        """The question stored under ``key``; None if there is none, or it was cleared."""
        snapshot = self._documents.get(QUESTIONS, key)
        if snapshot is None or _cleared(snapshot.data, self._clock.now()):
            return None
        return _question(snapshot.data)

    def write(self, question: OpenQuestion) -> Put:
        """The write that stores (or replaces) ``question``, for the commit that holds it."""
        return Put(QUESTIONS, question.key, self._stored(question))

    def change(
        self, key: str, decide: Callable[[OpenQuestion], Verdict | None], attempts: int = 20
    ) -> Verdict | None:
        """Apply ``decide`` (one of ``shared.core.questions``' changes) under a precondition.

        ``decide`` returns the question to write, or None (nothing changes),
        or a verdict that writes nothing (a refusal), which is returned as
        is. The tool decisions a change makes are kept in ``kourier_audit``
        in the same commit: a decision is never recorded unaudited, nor
        audited unrecorded. They are logged once committed.
        """
        for _ in range(attempts):
            snapshot = self._documents.get(QUESTIONS, key)
            if snapshot is None:
                return None
            before = _question(snapshot.data).current
            wanted = decide(_question(snapshot.data))
            if not isinstance(wanted, OpenQuestion):
                return wanted
            decided = decided_since(before, wanted.current)
            records = _audit_records(wanted, decided)
            fields = self._stored(wanted)
            try:
                self._documents.commit(
                    [
                        Update(QUESTIONS, key, fields, if_updated_at=snapshot.update_time),
                        *(Put(AUDIT, doc_id, record) for doc_id, record in records),
                    ]
                )
            except PreconditionFailed:
                continue
            for _, record in records:
                log.info("approval_decided", **{k: v for k, v in record.items() if k != "at"})
            return wanted
        raise StoreUnavailable(f"question {key} kept changing under us")

    def close(self, key: str) -> OpenQuestion | None:
        """Close a question: a click on its prompt then changes nothing. None if it was closed."""
        return self.change(key, lifecycle.close)

    def _stored(self, question: OpenQuestion) -> dict[str, Any]:
        """The document of a question: its arguments are redacted (``pause_to_dict``); it expires."""
        at = self._clock.now()
        return {**_fields(question), "updated_at": at, "expire_at": at + QUESTIONS_KEPT}

    def close_all(self, turn_id: str) -> list[OpenQuestion]:
        """Close every question of a turn that has ended, however it ended: those this closed."""
        closed = []
        for found in self._documents.query(QUESTIONS, "turn_id", "==", turn_id):
            if found.get("status") != QuestionStatus.CLOSED:
                question = self.close(str(found["key"]))
                closed += [question] if question is not None else []
        return closed


class TurnWrite(Protocol):
    """A write of the turn's document under its carrier's claim (``TurnClaim.write_turn``)."""

    def __call__(self, along: Sequence[Write] = (), **fields: Any) -> object: ...


class TurnQuestions:
    """The questions of one turn in its thread: each change as the core decides, then its prompt.

    A change is one of ``shared.core.questions``' functions applied by
    ``QuestionStore.change`` (under the document's precondition); the prompt
    is updated only after it, best effort (``update_prompt``). A question is
    stored only with a write of its turn, under the carrier's claim (``put``).
    """

    def __init__(
        self,
        store: QuestionStore,
        chat: Chat,
        clock: Clock,
        platform: str,
        write_turn: TurnWrite,
        stopped_by: Callable[[], str | None],
    ) -> None:
        self._store = store
        self._chat = chat
        self._clock = clock
        self._platform = platform
        self._write_turn = write_turn
        self._stopped_by = stopped_by
        """Who stopped the turn, as stored now (None: no one)."""

    def get(self, key: str | None) -> OpenQuestion | None:
        """The question stored under ``key`` (None: no key, none stored, or cleared)."""
        return self._store.get(key) if key else None

    def put(self, question: OpenQuestion, **turn: Any) -> None:
        """Store (or replace) a question, in one commit with the turn's fields ``turn``
        written under the carrier's claim.

        Raises:
            Superseded: The turn is no longer this function's (a person's stop took it):
                no question is stored, since the taker closed the turn's questions
                already or is closing them. One stored before the taker's claim is
                written is among those it closes.
        """
        self._write_turn(along=[self._store.write(question)], **turn)

    def close_all(self, turn_id: str) -> None:
        """Close every question of a turn that has ended, however it ended."""
        self._store.close_all(turn_id)

    def close(self, question: OpenQuestion | None) -> None:
        """Close ``question``, if there is one."""
        if question is not None:
            self._store.close(question.key)

    def show(self, question: OpenQuestion) -> None:
        """Post or update the question's prompt (best effort), and remember where it is.

        Raises:
            Superseded: The question was closed before its prompt was remembered:
                a person's stop took the turn while the prompt was posted. The
                prompt is ended first, as the stop's ``stopped`` ends those it
                knows (nothing is left to click), and the turn is the stop's.
        """
        update_prompt(self._chat, self._clock, question)
        recorded = self._store.change(question.key, lifecycle.shown_at(question.prompt_ts))
        if lifecycle.ended_before_shown(recorded):
            update_prompt(self._chat, self._clock, recorded, stopped_by=self._stopped_by())
            raise Superseded(f"question {question.key} was closed as its prompt was posted")

    def deny_all(self, question: OpenQuestion) -> OpenQuestion:
        """Store an approval the Binding allows no approvals for, every tool denied; show it."""
        self.put(question)
        platform, at = self._platform, self._clock.now()
        denied = self._store.change(
            question.key, lambda current: lifecycle.deny_all(current, platform, at)
        )
        self.show(denied or question)
        return denied or question

    def time_out(self, key: str) -> tuple[OpenQuestion | None, OpenQuestion | None]:
        """No one answered in time: the question timed out (None: it was answered or ended
        first), and the question as it is stored now.

        The change is made under the same precondition as a click, so a
        decision made at the last moment is either part of the answer or
        refused, never overwritten after it was shown and audited.
        """
        platform, at = self._platform, self._clock.now()
        timed_out = self._store.change(
            key, lambda current: lifecycle.time_out(current, platform, at)
        )
        if timed_out is not None:
            update_prompt(self._chat, self._clock, timed_out)
        return timed_out, timed_out or self._store.get(key)

    def withdraw(self, question: OpenQuestion) -> OpenQuestion | None:
        """The agent that asked is gone: the question closes unanswered (None: it had ended)."""
        at = self._clock.now()
        withdrawn = self._store.change(question.key, lambda q: lifecycle.withdraw(q, at))
        if withdrawn is not None:
            update_prompt(self._chat, self._clock, withdrawn)
        return withdrawn

    def stopped(self, turn_id: str, who: str) -> None:
        """The turn was stopped by ``who``: its questions close, and their prompts say so."""
        for question in self._store.close_all(turn_id):
            if question.prompt_ts is not None:
                update_prompt(self._chat, self._clock, question, stopped_by=who)


def _audit_records(
    question: OpenQuestion, decisions: tuple[Decision, ...]
) -> list[tuple[str, dict[str, Any]]]:
    """Each tool decision's audit record (who, which tool with which arguments, why, when)."""
    progress = question.current
    if not isinstance(progress, ApprovalLedger):
        return []
    records = []
    for decision in decisions:
        record = {
            **audit_record(progress.pause, decision),
            "session_id": question.session_id,
            "turn_id": question.turn_id,
            "binding": question.binding,
            "question": question.key,
        }
        entry = f"{question.key}-{decision.tool_id}-{decision.at.timestamp()}"
        records.append((hashlib.sha256(entry.encode()).hexdigest()[:32], record))
    return records


def _show_prompt(chat: Chat, question: OpenQuestion, stopped_by: str | None) -> None:
    """Post the prompt, or update it in place to show its progress."""
    progress = question.current
    prompt = render_prompt(progress) if stopped_by is None else render_stopped(progress, stopped_by)
    if isinstance(prompt, Unusable):  # a later form always fits when the first did
        raise RuntimeError(f"prompt {question.key} no longer fits: {prompt.reason}")  # noqa: TRY004
    client = chat
    if question.prompt_ts is None:
        answer = client.chat_postMessage(
            channel=question.channel,
            thread_ts=question.thread_ts,
            text=prompt.text,
            blocks=prompt.blocks,
        )
        lifecycle.shown_at(str(answer["ts"]))(question)
    else:
        client.chat_update(
            channel=question.channel, ts=question.prompt_ts, text=prompt.text, blocks=prompt.blocks
        )


def update_prompt(
    chat: Chat, clock: Clock, question: OpenQuestion, stopped_by: str | None = None
) -> None:
    """Show the question as it stands in its prompt (posting it if it has none): best effort.

    It comes after what matters is committed (the decision and its audit
    record, the answer enqueued), so a Slack failure here loses nothing:
    the call is tried a few times, then given up with a warning. With
    ``stopped_by`` (a user ID), the prompt shows that person stopped the
    turn, and nothing is left to click.
    """
    for attempt in range(1, PROMPT_ATTEMPTS + 1):
        try:
            _show_prompt(chat, question, stopped_by)
            return
        except SlackApiError as error:
            log.warning(
                "prompt_not_shown",
                question=question.key,
                attempt=attempt,
                error=error.response.get("error"),
            )
            if attempt < PROMPT_ATTEMPTS:
                clock.sleep(PROMPT_RETRY_SECONDS * attempt)


def request_answer(tasks: TaskQueue, question: OpenQuestion) -> None:
    """Ask ``stream_follow`` to send the answer of a complete question.

    A name Cloud Tasks refuses was used by an earlier request for the same
    answer, or by a stale task; either way the question's timer, finding it
    ``answering``, sends the answer at the latest when it fires.
    """
    name = f"answer-{question.key}-{question.answers_sent}"
    body = {
        "session_id": question.session_id,
        "turn_id": question.turn_id,
        "generation": question.generation,
        "answer": question.key,
    }
    if not tasks.schedule("stream_follow", body, name=name):
        log.warning("task_name_refused", target="stream_follow", name=name)


# What people do (called by the ingress) ------------------------------------------


@dataclass(frozen=True)
class InteractionReply:
    """What the ingress answers Slack: nothing, or a modal's errors."""

    body: dict[str, Any] | None = None


def handle_interaction(deps: Deps, payload: dict[str, Any]) -> InteractionReply:
    """A click or a modal submission on a prompt."""
    interaction = parse_interaction(payload)
    if interaction is None:
        return InteractionReply()
    questions = QuestionStore(deps.documents, deps.clock)
    question = questions.get(interaction.key)
    binding = deps.config.binding(question.binding) if question is not None else None
    session = deps.store.session(question.session_id) if question is not None else None
    if question is None or binding is None or not lifecycle.takes_actions(question, session):
        place = _place_of(payload)
        if place is not None:
            _refuse(deps.chat, *place, interaction.user, notices.QUESTION_CLOSED)
        return InteractionReply()
    if isinstance(interaction, AnswerFormOpened):
        progress = question.current
        view = answer_modal(progress) if isinstance(progress, AnswerSheet) else None
        if view is not None:
            deps.chat.views_open(trigger_id=interaction.trigger_id, view=view)
        return InteractionReply()
    approvals = binding.interactions.tool_approvals
    approvers = approvals.approvers if approvals else []
    at, prompt_ts = deps.clock.now(), _prompt_ts_of(payload)

    def clicked(progress: Progress) -> bool:
        return apply_interaction(progress, interaction, at, approvers).changed

    def act(current: OpenQuestion) -> OpenQuestion | Refused | None:
        return lifecycle.act(current, clicked, prompt_ts)

    verdict = questions.change(question.key, act)
    if isinstance(verdict, Refused):
        texts = getattr(interaction, "texts", None)
        if texts is not None:
            return InteractionReply(modal_errors(texts, verdict.reason))
        _refuse(deps.chat, question.channel, question.thread_ts, interaction.user, verdict.reason)
    elif isinstance(verdict, OpenQuestion):
        _after_change(deps, verdict)
    return InteractionReply()


def answer_by_reply(deps: Deps, key: str, text: str, user: str, message: str) -> bool:
    """A thread reply answers the open text question (or first open free-text one).

    Args:
        deps: The process's ports.
        key: The question's key (the session's ``open_question``).
        text: What the person wrote.
        user: Who wrote it.
        message: The chat message's key. Slack delivers a reply that mentions
            the bot twice (``app_mention`` and ``message``): a message
            already taken is taken again as the same answer, not as a turn.

    Returns:
        Whether the reply is an answer (then it is no turn).
    """
    questions = QuestionStore(deps.documents, deps.clock)
    actor, at = Actor(id=user, platform="slack"), deps.clock.now()
    verdict = questions.change(
        key, lambda current: lifecycle.reply(current, text, actor, message, at)
    )
    if isinstance(verdict, OpenQuestion):
        _after_change(deps, verdict)
    return verdict is not None


def _after_change(deps: Deps, question: OpenQuestion) -> None:
    """A change is committed (with its audit records): enqueue the answer, then show it."""
    if question.status == QuestionStatus.ANSWERING:
        request_answer(deps.tasks, question)
    update_prompt(deps.chat, deps.clock, question)


def _refuse(chat: Chat, channel: str, thread_ts: str | None, user: str, text: str) -> None:
    """Tell one person, in the prompt's thread, that their action changed nothing."""
    try:
        chat.chat_postEphemeral(channel=channel, thread_ts=thread_ts, user=user, text=text)
    except SlackApiError:
        log.warning("ephemeral_failed", channel=channel)


def _place_of(payload: dict[str, Any]) -> tuple[str, str | None] | None:
    """The channel and thread of the message clicked; None for a modal."""
    container = payload.get("container") or {}
    channel = container.get("channel_id") or (payload.get("channel") or {}).get("id")
    if not channel:
        return None
    thread_ts = container.get("thread_ts") or (payload.get("message") or {}).get("thread_ts")
    return str(channel), str(thread_ts) if thread_ts else None


def _prompt_ts_of(payload: dict[str, Any]) -> str | None:
    container = payload.get("container") or {}
    ts = container.get("message_ts") or (payload.get("message") or {}).get("ts")
    return str(ts) if ts else None


def _fields(question: OpenQuestion) -> dict[str, Any]:
    """The question as a document (its lists copied, so the caller's object is not shared)."""
    data = {name: getattr(question, name) for name in question.__dataclass_fields__}
    data["progress"] = dict(question.progress)
    data["replies"] = list(question.replies)
    data["status"] = question.status.value
    return data


def _cleared(data: Mapping[str, Any], at: datetime) -> bool:
    """Whether a stored question is past ``QUESTIONS_KEPT``: cleared (TTL deletes it late)."""
    expire_at = data.get("expire_at")
    return isinstance(expire_at, datetime) and expire_at <= at


def _question(data: dict[str, Any]) -> OpenQuestion:
    fields = OpenQuestion.__dataclass_fields__
    kept = {k: v for k, v in data.items() if k in fields}
    return OpenQuestion(
        **{**kept, "status": QuestionStatus(kept.get("status", QuestionStatus.OPEN))}
    )
