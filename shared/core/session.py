"""The session lease: who carries a thread's turn, decided without I/O.

Theory of operation: a session is one Slack thread under one binding. Its
document says which turn is carried (``active_turn``), until when
(``lease_until``: the carrier renews it; one that stops renewing is dead) and
under which claim (``generation``: every claim, hand-over and timer bumps it,
so a stale delivery, or a carrier that stalled and was taken over, is told
apart from the current one). Every change of a session is one of the
functions below: each takes the session as stored (None when there is none)
and what the caller knows, changes the session in place, and returns whether
it is to be written (``Write``) or not (``Keep``). The shell writes it under a
precondition on the document's update time and, when another writer got
there first, reads it again and decides again, so each function must decide
from the session it is given and nothing else.

A carrier's own changes (``renew``, ``advance``, ``let_go`` and the
``carried`` edits) hold only while the session carries its turn at its
generation: otherwise the carrier is ``Superseded`` and must stop.

Where each change is made (no module outside ``shared.core`` assigns to a
session, ``tests/core/test_state_changes.py`` checks it):

- ``claim``: a trigger claims the session for its next turn, and
  ``give_way``: to a turn before it in the thread that was stored while the
  claim was decided (``shared.engine.claim_next_turn``);
- ``resume``: a hand-over, a timer or an answer's task at the generation it
  was scheduled with (``shared.engine.on_resume``);
- ``interrupt``: a person stopped the turn (``shared.engine.on_stop``);
- ``renew``: the carrier's lease, with its checkpoint
  (``shared.store.Store.renew_lease``, from ``TurnClaim.save``);
- ``advance``: a hand-over, a long wait or a question
  (``shared.turn_claim.TurnClaim.advance_generation``);
- ``carried``: the context learnt or forgotten, the session bound, its
  question closed (``TurnClaim.change_session``);
- ``follow``: the task the carrier follows, in its memory only (a restored
  checkpoint in ``Carrier.restore``, a task named in ``StreamFollower``, an end
  being told in ``TurnEnding``, kept across ``TurnClaim.change_session``);
- ``let_go``: a carrier that failed (``shared.engine.let_go``);
- ``release``: the turn ended (``shared.engine.release_if_done``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from shared.errors import Superseded


@dataclass
class Session:
    """One Slack thread under one binding."""

    id: str
    binding: str
    channel: str
    thread_ts: str
    incarnation: str | None = None
    """The agent incarnation its context belongs to (``shared.core.incarnation``); None for a
    session not yet bound, or written before sessions were bound."""
    context_id: str | None = None
    active_turn: str | None = None
    lease_until: datetime | None = None
    task_id: str | None = None
    open_question: str | None = None
    """The key of the question the active turn waits on (a thread reply may answer it)."""
    generation: int = 0
    """Bumped by every claim, hand-over and timer: a stale Cloud Task finds it moved on."""
    updated_at: datetime | None = None

    def lease_expired(self, at: datetime) -> bool:
        """Whether the function carrying the active turn has stopped renewing it."""
        return self.lease_until is None or self.lease_until <= at


@dataclass(frozen=True)
class Thread:
    """What a new session is made of: the thread and binding of the turn that triggered it."""

    session_id: str
    binding: str
    channel: str
    thread_ts: str


@dataclass(frozen=True)
class Claimed:
    """The session, claimed for ``turn_id``."""

    session: Session
    turn_id: str
    taken_over: bool
    """The turn was another function's, whose lease ran out (it died or failed)."""


def carries(session: Session | None, turn_id: str, generation: int) -> bool:
    """Whether ``session`` still carries ``turn_id`` for the claim of ``generation``."""
    return (
        session is not None and session.active_turn == turn_id and session.generation == generation
    )


def claim(
    current: Session | None,
    thread: Thread,
    first_waiting: Callable[[], str | None],
    at: datetime,
    lease: timedelta,
) -> Claimed | None:
    """Claim the session for its next turn (a trigger from the turns topic).

    The active turn, if its lease ran out (taken over); else the oldest
    waiting turn (``first_waiting``, read only when needed). None while the
    active turn's carrier holds its lease, or when nothing waits. Which agent
    the session's context belongs to is checked before each send, where the
    agent's card is read (``shared.core.incarnation``), not here.
    """
    if current is not None and current.active_turn:
        if not current.lease_expired(at):
            return None
        turn_id, taken_over = current.active_turn, True
    else:
        waiting = first_waiting()
        if waiting is None:
            return None
        turn_id, taken_over = waiting, False
    session = current or Session(
        id=thread.session_id,
        binding=thread.binding,
        channel=thread.channel,
        thread_ts=thread.thread_ts,
    )
    session.active_turn, session.lease_until = turn_id, at + lease
    session.generation += 1
    return Claimed(session, turn_id, taken_over)


def give_way(
    current: Session | None, turn_id: str, generation: int, earlier_id: str
) -> Session | None:
    """The claim just made for ``turn_id`` goes to ``earlier_id``, a turn before it in Slack.

    The claim read the waiting turns before it wrote the session, and a turn
    stored in between, earlier in the thread, was not among them (seed 1674:
    two messages 0.14 s apart, the first one's function started cold). Read
    again after the claim is written, the earlier turn is carried first, at
    a new generation; nothing of the later one was done. None if the claim
    is no longer this one (another function moved the session on).
    """
    if current is None or not carries(current, turn_id, generation):
        return None
    current.active_turn = earlier_id
    current.generation += 1
    return current


def resume(
    current: Session | None, turn_id: str, generation: int, at: datetime, lease: timedelta
) -> Session | None:
    """Claim the session for a hand-over, a timer or an answer scheduled at ``generation``.

    None for a stale or duplicate delivery (the session moved on).
    """
    if current is None or not carries(current, turn_id, generation):
        return None
    current.generation += 1
    current.lease_until = at + lease
    return current


def interrupt(
    current: Session | None, turn_id: str, at: datetime, lease: timedelta
) -> Session | None:
    """A person stopped the turn: claim the session for it now, whoever carries it.

    The carrier's lease may still run: the new generation fences it out
    (its next write is refused, and it reads the session before it starts
    anything new). None when the session carries another turn, or none.
    """
    if current is None or current.active_turn != turn_id:
        return None
    current.generation += 1
    current.lease_until = at + lease
    return current


def renew(
    current: Session | None, turn_id: str, generation: int, until: datetime
) -> Session | None:
    """Extend the carrier's lease to ``until``; never shorten it (None: nothing to write).

    Raises:
        Superseded: The session no longer carries the turn at ``generation``.
    """
    session = _own(current, turn_id, generation)
    if session.lease_until is not None and session.lease_until >= until:
        return None
    session.lease_until = until
    return session


def advance(
    current: Session | None,
    turn_id: str,
    generation: int,
    until: datetime,
    task_id: str | None,
    open_question: str | None,
) -> Session:
    """A hand-over or a long wait: a new generation, leased until ``until``.

    Raises:
        Superseded: The session no longer carries the turn at ``generation``.
    """
    session = _own(current, turn_id, generation)
    session.generation += 1
    session.lease_until = until
    session.task_id = task_id
    session.open_question = open_question
    return session


@dataclass(frozen=True)
class LearnContext:
    """The agent named the context the thread's turns go into; a session with no context
    before is bound with it to the agent ``incarnation`` that named it (None: bound already)."""

    context_id: str
    incarnation: str | None = None


@dataclass(frozen=True)
class ForgetContext:
    """The agent forgot the thread's context: the next turn starts a new one."""


@dataclass(frozen=True)
class CloseQuestion:
    """The turn waits on no question any more."""


@dataclass(frozen=True)
class Bind:
    """The session now belongs to agent incarnation ``incarnation`` (``shared.core.incarnation``),
    with no context: the next send starts a new conversation."""

    incarnation: str


Edit = LearnContext | ForgetContext | CloseQuestion | Bind
"""A change the carrier makes to its session besides the lease."""


def carried(current: Session | None, turn_id: str, generation: int, edit: Edit) -> Session:
    """A change the carrier makes besides the lease (``edit``).

    Raises:
        Superseded: The session no longer carries the turn at ``generation``.
    """
    session = _own(current, turn_id, generation)
    match edit:
        case LearnContext(context_id=context_id, incarnation=incarnation):
            session.context_id = context_id
            session.incarnation = incarnation or session.incarnation
        case ForgetContext():
            session.context_id = None
        case CloseQuestion():
            session.open_question = None
        case Bind(incarnation=incarnation):
            session.incarnation, session.context_id = incarnation, None
    return session


def follow(session: Session, task_id: str | None) -> bool:
    """The carrier follows task ``task_id`` (None: none named yet); whether that is news.

    Known in the carrier's memory only, never written on its own: the stored
    session learns it at the next hand-over or long wait (``advance``), and
    a function taking over learns it from the turn's checkpoint.
    """
    if session.task_id == task_id:
        return False
    session.task_id = task_id
    return True


def let_go(current: Session | None, turn_id: str, generation: int, at: datetime) -> Session | None:
    """After a failure: end the carrier's lease now (None if the claim is no longer its own)."""
    if current is None or not carries(current, turn_id, generation):
        return None
    current.lease_until = at
    return current


def release(current: Session | None, turn_id: str) -> Session | None:
    """The turn ended: the session carries nothing, and waits on no question.

    None if the session carries another turn.
    """
    if current is None or current.active_turn != turn_id:
        return None
    current.active_turn, current.lease_until, current.task_id = None, None, None
    current.open_question = None
    current.generation += 1
    return current


def _own(current: Session | None, turn_id: str, generation: int) -> Session:
    if current is None or not carries(current, turn_id, generation):
        raise Superseded(f"the session moved on from turn {turn_id} at generation {generation}")
    return current
