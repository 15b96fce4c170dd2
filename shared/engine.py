"""turn_send: carrying a session's turns to the agent, one at a time.

Theory of operation: Pub/Sub delivers at least once and in no particular
order, so a delivery names a session and a turn only as a *trigger*: the
function then claims the session's next turn itself. The claim is a write
guarded by a precondition that sets ``active_turn`` with a lease; while the
lease holds, no other function starts a turn in that thread (one task per
context), and deliveries that find it held are acknowledged. The carrier
renews the lease while it follows the stream. When it finishes it marks the
turn done, releases the session and publishes a trigger for the next waiting
turn. A carrier that dies stops renewing its lease; the reconcile sweep then
triggers the session again and the next claim takes the turn over, sending
the same message again with the same messageId.
"""

from __future__ import annotations

import hashlib
from datetime import timedelta

import structlog

from shared.config import AgentBackend, load_config
from shared.handoff import publish_turn
from shared.settings import get_settings
from shared.store import Session, Store, Turn, get_store, now
from shared.turn import carry_turn

log = structlog.get_logger()


def backend_incarnation(backend: AgentBackend) -> str:
    """Identity of a backend: replaced (another URL or agent), it is a new one."""
    identity = f"{backend.name}|{backend.dialect}|{backend.endpoint}"
    return hashlib.sha256(identity.encode()).hexdigest()[:16]


def lease_length() -> timedelta:
    """How long a claim holds without renewal."""
    return timedelta(seconds=get_settings().follow_budget_seconds + 60)


def on_turn_published(session_id: str, turn_id: str) -> None:
    """A trigger from the turns topic: carry the session's next turn, if it is free."""
    store = get_store()
    claimed = claim_next_turn(store, session_id, turn_id)
    if claimed is None:
        return
    session, turn = claimed
    if turn.status != "done":
        carry_turn(store, session, turn)
    release(store, session_id, turn.id)


def claim_next_turn(store: Store, session_id: str, trigger_turn_id: str) -> tuple[Session, Turn] | None:
    """Claim the session for its next turn; None if it is busy or has nothing waiting."""
    trigger = store.turn(trigger_turn_id)
    if trigger is None:
        return None
    config = load_config(get_settings().config_path)
    binding = config.binding(trigger.binding)
    incarnation = backend_incarnation(config.backend(binding.agent_backend))
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
            backend_incarnation=incarnation,
        )
        if session.backend_incarnation != incarnation:
            session.backend_incarnation, session.context_id = incarnation, None
        session.active_turn, session.lease_until = chosen[0], at + lease_length()
        return session

    session = store.change_session(session_id, decide)
    if session is None:
        return None
    turn = store.turn(chosen[0])
    assert turn is not None
    return session, turn


def release(store: Store, session_id: str, turn_id: str) -> None:
    """End the claim of ``turn_id`` and trigger the next waiting turn."""

    def decide(current: Session | None) -> Session | None:
        if current is None or current.active_turn != turn_id:
            return None
        current.active_turn, current.lease_until, current.task_id = None, None, None
        return current

    store.change_session(session_id, decide)
    waiting = store.waiting_turns(session_id)
    if waiting:
        publish_turn(session_id, waiting[0].id)
