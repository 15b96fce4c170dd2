"""Firestore: sessions, turns and Slack event de-duplication.

Theory of operation: a *turn* is one person's chat message, stored under its
own ID (channel and ts) the moment the ingress sees it, so a message is
recorded once however often Slack delivers it. A *session* is one Slack
thread under one binding: the agent's contextId, the backend incarnation it
is bound to, and the turn in flight (``active_turn`` with a lease). Turns
that wait are the session's turns still ``waiting``, in Slack order (their
ts); they are not copied into the session document, so the ingress never
contends with the functions for it.

Every change of session state is a write guarded by a precondition on the
document's update time (or on its absence): two functions that read the same
session cannot both win; the loser reads again and decides again. Per
document write rates stay low (about one per second), which Firestore needs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from typing import Any, Literal

import structlog
from google.api_core.exceptions import AlreadyExists, FailedPrecondition, NotFound
from google.cloud import firestore

from shared.settings import get_settings

log = structlog.get_logger()

SESSIONS = "kourier_sessions"
TURNS = "kourier_turns"
EVENTS = "kourier_events"
USERS = "kourier_users"

DONE_TURNS_KEPT = timedelta(days=30)
"""A finished turn is kept this long (Firestore's TTL deletes it after)."""

TurnStatus = Literal["received", "waiting", "running", "paused", "done"]


def now() -> datetime:
    """The current time, timezone-aware (Firestore returns aware datetimes)."""
    return datetime.now(UTC)


def session_key(binding: str, channel: str, thread_ts: str) -> str:
    """A session is one Slack thread under one binding."""
    return f"{binding}-{channel}-{thread_ts}"


@dataclass
class Turn:
    """A person's message to carry to the agent."""

    id: str
    session_id: str
    binding: str
    team: str
    channel: str
    thread_ts: str
    ts: str
    user: str
    text: str
    mentioned: bool = False
    """The message mentioned Agent Kourier; otherwise its text is untrusted data.

    False for a turn stored before the field existed: unknown text is untrusted."""
    status: TurnStatus = "received"
    trigger: str | None = None
    """The trigger that started it (an alert): then no person wrote it, and ``user`` is empty."""
    outcome: str | None = None
    task_id: str | None = None
    attempted: bool = False
    """A function began sending it (its outcome is unknown if that one died)."""
    checkpoint: str | None = None
    """JSON of the carrying function's checkpoint (see shared.turn)."""
    created_at: datetime | None = None

    @property
    def message_id(self) -> str:
        """The A2A messageId, fixed for this chat message."""
        return f"slack-{self.channel}-{self.ts}"


@dataclass
class Session:
    """One Slack thread under one binding."""

    id: str
    binding: str
    channel: str
    thread_ts: str
    backend_incarnation: str
    context_id: str | None = None
    active_turn: str | None = None
    lease_until: datetime | None = None
    task_id: str | None = None
    open_question: str | None = None
    """The key of the question the active turn waits on (a thread reply may answer it)."""
    generation: int = 0
    """Bumped by every claim, hand-over and timer: a stale Cloud Task finds it moved on."""
    updated_at: datetime = field(default_factory=now)

    def lease_expired(self, at: datetime) -> bool:
        """Whether the function carrying the active turn has stopped renewing it."""
        return self.lease_until is None or self.lease_until <= at


class Store:
    """The Firestore adapter."""

    def __init__(self, client: firestore.Client) -> None:
        self._db = client

    @property
    def db(self) -> firestore.Client:
        """The Firestore client, for the other stores of the product."""
        return self._db

    # Slack events --------------------------------------------------------------

    def event_seen(self, event_id: str) -> bool:
        """Whether this Slack event ID was already handled."""
        return bool(self._db.collection(EVENTS).document(event_id).get().exists)

    def remember_event(self, event_id: str, keep: timedelta = timedelta(hours=1)) -> None:
        """Record a handled Slack event ID (kept at least ``keep``; TTL on expire_at)."""
        self._db.collection(EVENTS).document(event_id).set({"expire_at": now() + keep})
        _wrote(EVENTS, event_id)

    # Turns ---------------------------------------------------------------------

    def record_turn(self, turn: Turn) -> Turn:
        """Store a new turn; if the chat message was stored before, return that one."""
        ref = self._db.collection(TURNS).document(turn.id)
        try:
            turn.created_at = now()
            ref.create(asdict(turn))
        except AlreadyExists:
            existing = self.turn(turn.id)
            assert existing is not None
            return existing
        _wrote(TURNS, turn.id)
        return turn

    def refuse_turn(self, turn: Turn, outcome: str) -> bool:
        """Store a message Kourier will not carry as a finished turn, without its text.

        Returns:
            Whether this call stored it: a Slack retry, or the ``message``
            twin of an ``app_mention``, finds it stored, and the person is
            told once.
        """
        turn.text, turn.status, turn.outcome, turn.created_at = "", "done", outcome, now()
        try:
            self._db.collection(TURNS).document(turn.id).create(
                {**asdict(turn), "expire_at": now() + DONE_TURNS_KEPT}
            )
        except AlreadyExists:
            return False
        _wrote(TURNS, turn.id)
        return True

    def turn(self, turn_id: str) -> Turn | None:
        """The turn with this ID."""
        snapshot = self._db.collection(TURNS).document(turn_id).get()
        return _turn(snapshot.to_dict()) if snapshot.exists else None

    def set_turn(self, turn_id: str, **fields: Any) -> None:
        """Update fields of a turn."""
        self._db.collection(TURNS).document(turn_id).update({**fields, "updated_at": now()})
        _wrote(TURNS, turn_id)

    def mark_handed_off(self, turn_id: str) -> None:
        """The turn's trigger is published: a turn still ``received`` now waits.

        Only a received turn changes (under a precondition on the read): the
        trigger may have been delivered and the turn carried, even to its
        end, before this write lands, and a finished turn marked waiting
        again would be carried again.
        """
        ref = self._db.collection(TURNS).document(turn_id)
        snapshot = ref.get()
        if not snapshot.exists or (snapshot.to_dict() or {}).get("status") != "received":
            return
        option = self._db.write_option(last_update_time=snapshot.update_time)
        try:
            ref.update({"status": "waiting", "updated_at": now()}, option=option)
        except FailedPrecondition:
            return  # changed since it was read: a function has it
        _wrote(TURNS, turn_id)

    def has_turns(self, session_id: str) -> bool:
        """Whether any turn of the session is stored (its thread is Kourier's)."""
        query = self._db.collection(TURNS).where(
            filter=firestore.FieldFilter("session_id", "==", session_id)
        )
        return bool(query.limit(1).get())

    def waiting_turns(self, session_id: str) -> list[Turn]:
        """The session's turns not yet carried, oldest first (Slack order)."""
        query = self._db.collection(TURNS).where(
            filter=firestore.FieldFilter("session_id", "==", session_id)
        )
        turns = [_turn(s.to_dict()) for s in query.stream()]
        waiting = [t for t in turns if t.status in ("received", "waiting")]
        return sorted(waiting, key=lambda t: float(t.ts))

    # Sessions ------------------------------------------------------------------

    def session(self, session_id: str) -> Session | None:
        """The session with this ID."""
        snapshot = self._db.collection(SESSIONS).document(session_id).get()
        return _session(snapshot.to_dict()) if snapshot.exists else None

    def change_session(
        self,
        session_id: str,
        decide: Callable[[Session | None], Session | None],
        attempts: int = 20,
    ) -> Session | None:
        """Apply ``decide`` to the stored session under a precondition.

        ``decide`` gets the current session (None if there is none) and
        returns the new one, or None to change nothing. When another writer
        got there first, the session is read again and ``decide`` runs again.
        Returns what was written (or None when nothing was).
        """

        def change(current: dict[str, Any] | None) -> dict[str, Any] | None:
            wanted = decide(_session(current) if current is not None else None)
            if wanted is None:
                return None
            wanted.updated_at = now()
            written.append(wanted)
            return asdict(wanted)

        written: list[Session] = []
        if self.change_document(SESSIONS, session_id, change, attempts) is None:
            return None
        return written[-1]

    def change_document(
        self,
        collection: str,
        document: str,
        decide: Callable[[dict[str, Any] | None], dict[str, Any] | None],
        attempts: int = 20,
    ) -> dict[str, Any] | None:
        """Apply ``decide`` to a stored document under a precondition on its update time.

        ``decide`` gets the document's fields (None if it does not exist)
        and returns the fields to write, or None to change nothing. When
        another writer got there first, the document is read again and
        ``decide`` runs again. Returns what was written (None: nothing).
        """
        ref = self._db.collection(collection).document(document)
        for _ in range(attempts):
            snapshot = ref.get()
            wanted = decide(snapshot.to_dict() if snapshot.exists else None)
            if wanted is None:
                return None
            try:
                if snapshot.exists:
                    option = self._db.write_option(last_update_time=snapshot.update_time)
                    ref.update(wanted, option=option)
                else:
                    ref.create(wanted)
            except (FailedPrecondition, AlreadyExists, NotFound):
                continue
            _wrote(collection, document)
            return wanted
        raise RuntimeError(f"{collection}/{document} kept changing under us")

    def renew_lease(self, session_id: str, turn_id: str, lease: timedelta) -> None:
        """Extend the claim of the turn being carried to at least ``lease`` from now.

        A renewal never shortens a lease: a turn that waits on a question or
        a long backoff holds its session until its timer is due (plus a
        lease), and a checkpoint written meanwhile must not hand it to the
        sweep before then. Nothing is written if the turn moved on, or if
        the lease already runs longer.
        """

        def renew(current: Session | None) -> Session | None:
            if current is None or current.active_turn != turn_id:
                return None
            until = now() + lease
            if current.lease_until is not None and current.lease_until >= until:
                return None
            current.lease_until = until
            return current

        self.change_session(session_id, renew)

    def stale_sessions(self, at: datetime) -> list[Session]:
        """Sessions whose active turn's lease has run out (their function died)."""
        query = self._db.collection(SESSIONS).where(
            filter=firestore.FieldFilter("lease_until", "<=", at)
        )
        return [s for s in (_session(d.to_dict()) for d in query.stream()) if s.active_turn]

    def sessions_with_waiting_turns(self) -> list[str]:
        """Session IDs that have turns nobody has started."""
        query = self._db.collection(TURNS).where(
            filter=firestore.FieldFilter("status", "in", ["received", "waiting"])
        )
        return sorted({str(d.get("session_id")) for d in query.stream()})

    # People --------------------------------------------------------------------

    def cached_user(self, user_id: str) -> dict[str, Any] | None:
        """A users.info answer cached earlier, if still fresh."""
        snapshot = self._db.collection(USERS).document(user_id).get()
        data = snapshot.to_dict() if snapshot.exists else None
        if data is None or data["expire_at"] <= now():
            return None
        return dict(data["profile"])

    def cache_user(self, user_id: str, profile: dict[str, Any], keep: timedelta) -> None:
        """Cache a users.info answer."""
        self._db.collection(USERS).document(user_id).set(
            {"profile": profile, "expire_at": now() + keep}
        )
        _wrote(USERS, user_id)


def _wrote(collection: str, document: str) -> None:
    """Log a document write when the writes-per-turn benchmark counts them."""
    if get_settings().log_firestore_writes:
        log.info("firestore_write", collection=collection, document=document)


def _turn(data: dict[str, Any] | None) -> Turn:
    assert data is not None
    fields = Turn.__dataclass_fields__
    return Turn(**{k: v for k, v in data.items() if k in fields})


def _session(data: dict[str, Any] | None) -> Session:
    assert data is not None
    fields = Session.__dataclass_fields__
    return Session(**{k: v for k, v in data.items() if k in fields})


@lru_cache(maxsize=1)
def get_store() -> Store:
    """The process's store (client built on first use)."""
    settings = get_settings()
    return Store(firestore.Client(project=settings.project, database=settings.firestore_database))
