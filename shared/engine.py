"""Who carries which turn: claiming a session, resuming, releasing.

Theory of operation: Pub/Sub delivers at least once and in no particular
order, so a delivery names a session and a turn only as a *trigger*: the
function then claims the session's next turn itself. The claim is a write
guarded by a precondition that sets ``active_turn`` with a lease and bumps
the session's ``generation``; while the lease holds, no other function
starts a turn in that thread (one task per context), and deliveries that
find it held are acknowledged. A carrier whose lease is half spent renews it
with its next checkpoint (a function hands over before its claim's lease runs
out, so a short turn never renews). A hand-over or timer (a Cloud Task) resumes the turn only if
the session's generation is still the one it was scheduled with, and bumps
it, so a duplicate delivery does nothing. When the turn ends, the session is
released and the next waiting turn is triggered. A carrier that dies stops
renewing its lease; the reconcile sweep triggers the session again and the
next claim takes the turn over from its last checkpoint.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import structlog
from slack_sdk.errors import SlackApiError

from shared.bootstrap import Deps
from shared.checkpoint import NONE as NO_CHECKPOINT
from shared.checkpoint import Checkpoint, CheckpointStore, Stored
from shared.core import agent_session, notices
from shared.core import session as sessions
from shared.core.session import Session
from shared.core.telling import mark
from shared.core.timers import Timer
from shared.errors import RetryableError, Superseded
from shared.questions import QuestionStore
from shared.slack.left_behind import Predecessor, read_left_behind
from shared.slack.reply import ThreadReply
from shared.slack.session_status import ThreadStatus
from shared.slack.thread_read_back import ThreadReadBack
from shared.store import DONE_TURNS_KEPT, Turn
from shared.turn import TurnRun
from shared.turn_carried import new_reply, thread_status
from shared.turn_ending import tell_if_untold

log = structlog.get_logger()


def function_deadline(deps: Deps) -> float:
    """The monotonic time by which this function hands over."""
    return deps.clock.monotonic() + deps.settings.follow_budget_seconds


def on_turn_published(deps: Deps, session_id: str, turn_id: str) -> None:
    """A trigger from the turns topic: carry the session's next turn, if it is free."""
    deadline = function_deadline(deps)
    claim = claim_next_turn(deps, session_id, turn_id)
    if claim is None:
        return
    turn = claim.turn
    if claim.taken_over and turn.status != "done":
        turn = _count_takeover(deps, turn)
    if turn.status != "done" and not _carry(deps, claim.session, turn, deadline, TurnRun.start):
        return
    release_if_done(deps, session_id, turn.id)


def on_resume(
    deps: Deps,
    session_id: str,
    turn_id: str,
    generation: int,
    timer: Timer | None = None,
    answer: str | None = None,
) -> None:
    """A hand-over, a timer, or a question answered: continue the turn if still ours."""
    deadline = function_deadline(deps)
    store = deps.store
    at, lease = deps.clock.now(), deps.settings.lease
    session = store.change_session(
        session_id, lambda current: sessions.resume(current, turn_id, generation, at, lease)
    )
    turn = store.turn(turn_id)
    if session is None or turn is None:
        return
    if turn.status != "done":
        go: Callable[[TurnRun], None] = (
            (lambda run: run.answer(answer)) if answer else (lambda run: run.resume(timer))
        )
        if not _carry(deps, session, turn, deadline, go):
            return
    release_if_done(deps, session_id, turn_id)


def on_stop(deps: Deps, session_id: str, turn_id: str) -> None:
    """A person stopped the turn (``shared.stops``): take it from its carrier now, and end it."""
    deadline = function_deadline(deps)
    turn = deps.store.turn(turn_id)
    if turn is None or turn.status == "done" or turn.stop is None:
        return
    if _end_being_told(deps, turn):
        # Its carrier recorded the end as told before the stop was: its notice may be in
        # flight, and a read-back of the thread now could miss it (told twice, seed 14342).
        # The stop came too late: that carrier ends the turn, or if it died, the function
        # taking over after its lease tells the end once (``TurnEnding.ended_already``).
        log.info("stop_too_late", turn=turn.id)
        return
    at, lease = deps.clock.now(), deps.settings.lease
    session = deps.store.change_session(
        session_id, lambda current: sessions.interrupt(current, turn_id, at, lease)
    )
    if session is None:
        return
    # Read again: the carrier, fenced out only now, may have ended the turn
    # since the first read; an ended turn keeps its outcome.
    turn = deps.store.turn(turn_id)
    if turn is None or turn.status == "done":
        release_if_done(deps, session_id, turn_id)
        return
    if _carry(deps, session, turn, deadline, TurnRun.stop):
        release_if_done(deps, session_id, turn_id)


def _last_checkpoint(deps: Deps, turn: Turn) -> Checkpoint | None:
    """The turn's last checkpoint, read outside any claim (None: it has none)."""
    return CheckpointStore(deps.documents, deps.clock).load(
        turn.id, Stored(turn.checkpoint, turn.checkpoint_parts)
    )


def _end_being_told(deps: Deps, turn: Turn) -> bool:
    """Whether the turn's carrier recorded its end as being told, other than as stopped.

    A run records its end in its checkpoint (``told``) before it posts the
    notice. ``stopped`` is a stop's own end: its function died or failed
    before it finished, and this delivery of its task carries it out.
    """
    checkpoint = _last_checkpoint(deps, turn)
    return checkpoint is not None and checkpoint.told not in (None, "stopped")


def _carry(
    deps: Deps, session: Session, turn: Turn, deadline: float, go: Callable[[TurnRun], None]
) -> bool:
    """Carry the turn on (False: another function carries it now).

    A turn someone stopped is stopped, whichever delivery carries it on, so
    a stop is carried out even if its own task is lost.

    If a deploy removed or renamed its binding, end it and tell the thread:
    its agent, identity and approvers came from the binding, so nothing of
    the turn can go on. The thread hears so exactly once (the turn's outcome
    is recorded before the notice is posted: ``_end_outside_run``), an open question
    is closed (a click on it changes nothing), and the session is released.
    """
    if deps.config.binding(turn.binding) is not None:
        run = TurnRun(deps, session, turn, deadline)
        carry_on = TurnRun.stop if turn.stop else go
        return _carried(deps, run, lambda: carry_on(run))
    log.warning("turn_binding_gone", turn=turn.id, binding=turn.binding)
    _end_outside_run(
        deps,
        turn,
        "binding_gone",
        notices.turn_failed(notices.BINDING_GONE),
        told=turn.outcome == "binding_gone",
        record=lambda being: deps.store.set_turn(
            turn.id, outcome="binding_gone" if being else None
        ),
    )
    return True


def _carried(deps: Deps, run: TurnRun, work: Callable[[], None]) -> bool:
    """Carry a turn; False if another function carries it now (this one did nothing more).

    If carrying fails, this function lets go of the turn first, and the
    failure propagates.
    """
    try:
        work()
    except Superseded as superseded:
        log.warning("turn_superseded", turn=run.turn.id, detail=str(superseded))
        return False
    except Exception:
        let_go(deps, run.session.id, run.turn.id, run.session.generation)
        raise
    return True


def let_go(deps: Deps, session_id: str, turn_id: str, generation: int) -> None:
    """After a failure: end this function's claim now, so the turn is taken over at once.

    Best effort, and only while the claim is still this function's
    (``generation``): if the store fails too, the lease runs out as it would
    have. The platform's redelivery, or the next sweep, takes the turn over.
    """
    at = deps.clock.now()
    try:
        deps.store.change_session(
            session_id, lambda current: sessions.let_go(current, turn_id, generation, at)
        )
    except RetryableError:
        log.warning("let_go_failed", session=session_id, turn=turn_id)


def _count_takeover(deps: Deps, turn: Turn) -> Turn:
    """A turn taken over from a function that died or failed: one more attempt, or the last.

    Past ``max_takeovers`` the turn ends, and the thread is told, instead of
    failing again for ever; its questions close, as for any end of a turn.
    The thread is told exactly once, as a turn's end is
    (``shared.core.telling``): the attempt past the limit is recorded before
    the notice is posted, marked as the ``kept_failing`` end of the turn, and
    a function taking over after that record reads the thread back and posts
    the notice only if no message carries the mark (``tell_if_untold``).
    """
    attempts = turn.takeovers + 1
    limit = deps.settings.max_takeovers
    if attempts <= limit:
        deps.store.set_turn(turn.id, takeovers=attempts)
        turn.takeovers = attempts
        return turn
    log.error("turn_kept_failing", turn=turn.id, attempts=turn.takeovers)
    _end_outside_run(
        deps,
        turn,
        "kept_failing",
        notices.turn_failed(notices.KEPT_FAILING),
        told=turn.takeovers > limit,
        record=lambda being: deps.store.set_turn(
            turn.id, takeovers=attempts if being else turn.takeovers
        ),
    )
    turn.status = "done"
    return turn


def _end_outside_run(
    deps: Deps,
    turn: Turn,
    outcome: str,
    notice: str,
    *,
    told: bool,
    record: Callable[[bool], None],
) -> None:
    """End ``turn`` as ``outcome`` outside its run, and tell its thread ``notice`` exactly once.

    Its questions close first (a click on one changes nothing), and its
    reply is closed as its last checkpoint holds it (``_reply_to_close``).
    The end is told as a run tells its end (``shared.core.telling``):
    ``record(True)`` says it is being told before the notice is posted,
    marked as the turn's ``outcome``; when Slack answers that it did not
    post it, ``record(False)`` takes that back, so the function taking over
    tells it. ``told``: a function that died recorded it so: the thread is
    read back, and the notice posted only if no message carries its mark
    (``tell_if_untold``). Then the turn is done and the thread's agent
    session ended.
    """
    QuestionStore(deps.documents, deps.clock).close_all(turn.id)
    status = thread_status(deps, turn, deps.chat)
    reply = _reply_to_close(deps, turn, status)
    if told:
        thread = ThreadReadBack(deps.chat, turn.channel, turn.thread_ts)
        tell_if_untold(reply, thread, turn, outcome, notice)
    else:
        record(True)
        try:
            reply.notice(notice, metadata=mark(turn.id, outcome))
        except SlackApiError:
            record(False)
            raise
    deps.store.set_turn(
        turn.id,
        status="done",
        outcome=outcome,
        expire_at=deps.clock.now() + DONE_TURNS_KEPT,
        **NO_CHECKPOINT.fields(),
    )
    status.show(agent_session.ended(outcome))


def _reply_to_close(deps: Deps, turn: Turn, status: ThreadStatus) -> ThreadReply:
    """The reply of a turn ended outside its run, as its last checkpoint holds it, to close it.

    Its function died (or cannot go on): each message is written whole again
    and each step still running closed when the end's notice finishes the
    reply, the messages it posted after the checkpoint adopted
    (``ThreadReply.restore``), instead of steps left running (seeds 826, 868).
    """
    checkpoint = _last_checkpoint(deps, turn)
    reply = new_reply(deps, turn, deps.chat, status)
    if checkpoint is not None:
        left = read_left_behind(deps.chat, turn, checkpoint.answering, Predecessor.DIED)
        reply.restore(checkpoint.slack, left)
    return reply


@dataclass(frozen=True)
class Claim:
    """A session claimed for one of its turns."""

    session: Session
    turn: Turn
    taken_over: bool
    """The turn was another function's, whose lease ran out (it died or failed)."""


def claim_next_turn(deps: Deps, session_id: str, trigger_turn_id: str) -> Claim | None:
    """Claim the session for its next turn; None if it is busy or has nothing waiting."""
    store = deps.store
    trigger = store.turn(trigger_turn_id)
    if trigger is None:
        return None
    thread = sessions.Thread(
        session_id=session_id,
        binding=trigger.binding,
        channel=trigger.channel,
        thread_ts=trigger.thread_ts,
    )
    claimed: list[sessions.Claimed] = []

    def first_waiting() -> str | None:
        waiting = store.waiting_turns(session_id)
        return waiting[0].id if waiting else None

    def decide(current: Session | None) -> Session | None:
        claimed.clear()
        outcome = sessions.claim(current, thread, first_waiting, store.now(), deps.settings.lease)
        if outcome is None:
            return None
        claimed.append(outcome)
        return outcome.session

    session = store.change_session(session_id, decide)
    if session is None:
        return None
    [outcome] = claimed
    turn_id = outcome.turn_id
    if outcome.taken_over:
        log.warning("turn_taken_over", session=session_id, turn=turn_id)
    else:
        # A turn stored after the waiting turns were read, but before the claim was
        # written, was not seen: read them again, so the thread's order holds.
        earlier, generation = first_waiting(), session.generation
        if earlier is not None and earlier != turn_id:
            log.info("claim_gives_way", session=session_id, turn=turn_id, earlier=earlier)
            session = store.change_session(
                session_id,
                lambda current: sessions.give_way(current, turn_id, generation, earlier),
            )
            if session is None:
                return None
            turn_id = earlier
    turn = store.turn(turn_id)
    assert turn is not None
    return Claim(session, turn, taken_over=outcome.taken_over)


def release_if_done(deps: Deps, session_id: str, turn_id: str) -> None:
    """If the turn has ended, free the session and trigger the next waiting turn."""
    store = deps.store
    turn = store.turn(turn_id)
    if turn is None or turn.status != "done":
        return

    store.change_session(session_id, lambda current: sessions.release(current, turn_id))
    waiting = store.waiting_turns(session_id)
    if waiting:
        deps.turns.publish_turn(session_id, waiting[0].id)
