"""Who carries which turn: claiming a session, resuming, releasing.

Theory of operation: Pub/Sub delivers at least once and in no particular
order, so a delivery names a session and a turn only as a *trigger*: the
function then claims the session's next turn itself. The claim is a write
guarded by a precondition that sets ``active_turn`` with a lease and bumps
the session's ``generation``; while the lease holds, no other function
starts a turn in that thread (one task per context), and deliveries that
find it held are acknowledged. The carrier renews the lease with its
checkpoints. A hand-over or timer (a Cloud Task) resumes the turn only if
the session's generation is still the one it was scheduled with, and bumps
it, so a duplicate delivery does nothing. When the turn ends, the session is
released and the next waiting turn is triggered. A carrier that dies stops
renewing its lease; the reconcile sweep triggers the session again and the
next claim takes the turn over from its last checkpoint.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable

import structlog

from shared.config import AgentBackend, load_config
from shared.core import notices
from shared.handoff import publish_turn
from shared.questions import QuestionStore
from shared.settings import get_settings
from shared.slack.reply import ThreadReply
from shared.slack.web import slack_client
from shared.store import DONE_TURNS_KEPT, Session, Store, Turn, get_store, now
from shared.turn import TurnRun

log = structlog.get_logger()


def backend_incarnation(backend: AgentBackend) -> str:
    """Identity of a backend: replaced (another URL or agent), it is a new one."""
    identity = f"{backend.name}|{backend.dialect}|{backend.endpoint}"
    return hashlib.sha256(identity.encode()).hexdigest()[:16]


def function_deadline() -> float:
    """The monotonic time by which this function hands over."""
    return time.monotonic() + get_settings().follow_budget_seconds


def on_turn_published(session_id: str, turn_id: str) -> None:
    """A trigger from the turns topic: carry the session's next turn, if it is free."""
    store = get_store()
    claimed = claim_next_turn(store, session_id, turn_id)
    if claimed is None:
        return
    session, turn = claimed
    if turn.status != "done":
        _carry(store, session, turn, TurnRun.start)
    release_if_done(store, session_id, turn.id)


def on_resume(
    session_id: str,
    turn_id: str,
    generation: int,
    timer: str | None = None,
    answer: str | None = None,
) -> None:
    """A hand-over, a timer, or a question answered: continue the turn if still ours."""
    store = get_store()

    def claim(current: Session | None) -> Session | None:
        if current is None or current.active_turn != turn_id or current.generation != generation:
            return None  # stale or duplicate delivery
        current.generation += 1
        current.lease_until = now() + get_settings().lease
        return current

    session = store.change_session(session_id, claim)
    turn = store.turn(turn_id)
    if session is None or turn is None:
        return
    if turn.status != "done":
        _carry(
            store,
            session,
            turn,
            (lambda run: run.answer(answer)) if answer else (lambda run: run.resume(timer)),
        )
    release_if_done(store, session_id, turn_id)


def _carry(store: Store, session: Session, turn: Turn, go: Callable[[TurnRun], None]) -> None:
    """Carry the turn on; if a deploy removed or renamed its binding, end it and tell the thread.

    Its agent, identity and approvers came from the binding, so nothing of
    the turn can go on: the thread hears so once per turn, an open question
    is closed (a click on it changes nothing), and the session is released.
    """
    if load_config(get_settings().config_path).binding(turn.binding) is not None:
        go(TurnRun(store, session, turn, function_deadline()))
        return
    log.warning("turn_binding_gone", turn=turn.id, binding=turn.binding)
    reply = ThreadReply(slack_client(), turn.channel, turn.thread_ts, turn.user, turn.team)
    if turn.checkpoint:  # continue the messages of the turn's reply, to close them
        reply.restore(json.loads(turn.checkpoint)["slack"], taken_over=True)
    reply.notice(notices.turn_failed(notices.BINDING_GONE))
    QuestionStore(store).close_all(turn.id)
    store.set_turn(
        turn.id,
        status="done",
        outcome="binding_gone",
        checkpoint=None,
        expire_at=now() + DONE_TURNS_KEPT,
    )


def claim_next_turn(
    store: Store, session_id: str, trigger_turn_id: str
) -> tuple[Session, Turn] | None:
    """Claim the session for its next turn; None if it is busy or has nothing waiting."""
    trigger = store.turn(trigger_turn_id)
    if trigger is None:
        return None
    config = load_config(get_settings().config_path)
    binding = config.binding(trigger.binding)
    incarnation = backend_incarnation(config.backend(binding.agent_backend)) if binding else None
    chosen: list[str] = []

    def decide(current: Session | None) -> Session | None:
        at = now()
        chosen.clear()
        if current is not None and current.active_turn and not current.lease_expired(at):
            return None
        if current is not None and current.active_turn:
            chosen.append(current.active_turn)
            log.warning("turn_taken_over", session=session_id, turn=current.active_turn)
        else:
            waiting = store.waiting_turns(session_id)
            if not waiting:
                return None
            chosen.append(waiting[0].id)
        session = current or Session(
            id=session_id,
            binding=trigger.binding,
            channel=trigger.channel,
            thread_ts=trigger.thread_ts,
            backend_incarnation=incarnation or "",
        )
        if incarnation is not None and session.backend_incarnation != incarnation:
            session.backend_incarnation, session.context_id = incarnation, None
        session.active_turn, session.lease_until = chosen[0], at + get_settings().lease
        session.generation += 1
        return session

    session = store.change_session(session_id, decide)
    if session is None:
        return None
    turn = store.turn(chosen[0])
    assert turn is not None
    return session, turn


def release_if_done(store: Store, session_id: str, turn_id: str) -> None:
    """If the turn has ended, free the session and trigger the next waiting turn."""
    turn = store.turn(turn_id)
    if turn is None or turn.status != "done":
        return

    def decide(current: Session | None) -> Session | None:
        if current is None or current.active_turn != turn_id:
            return None
        current.active_turn, current.lease_until, current.task_id = None, None, None
        current.open_question = None
        current.generation += 1
        return current

    store.change_session(session_id, decide)
    waiting = store.waiting_turns(session_id)
    if waiting:
        publish_turn(session_id, waiting[0].id)
