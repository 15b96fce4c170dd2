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

A store remembers each session and turn document as it last read or wrote
it (the update time every write returns). A session change, or a fenced
write of a turn, decides on that version and writes under a precondition on
its update time, with no read first: the write applies only if the document
is still that version, so the decision is the one a fresh read would have
made; if another writer came between, the precondition fails and the store
reads and decides again. Only a decision to write is taken that way: a
remembered version that gives no write, or a refusal, is read again and
decided again (a remembered lease may have been released since). A fence
above the writer's own is final even when remembered: fences only grow.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any, Literal

import structlog

from shared.core import session as sessions
from shared.core.session import Session
from shared.errors import DocumentExists, PreconditionFailed, StoreUnavailable, Superseded
from shared.ports import Clock, Create, Documents, Snapshot, Update, Write

log = structlog.get_logger()

SESSIONS = "kourier_sessions"
TURNS = "kourier_turns"
EVENTS = "kourier_events"
USERS = "kourier_users"

EVENTS_KEPT = timedelta(hours=1)
"""A handled Slack event ID is kept this long (Slack retries within minutes)."""
DONE_TURNS_KEPT = timedelta(days=30)
"""A finished turn is kept this long (Firestore's TTL deletes it after)."""
REMEMBERED = (SESSIONS, TURNS)
"""The collections whose documents a store remembers as last read or written (their fields
are replaced, never changed in place)."""
REMEMBERED_AT_MOST = 256
"""How many documents a store remembers (past that it forgets them all and reads again)."""

TurnStatus = Literal["received", "waiting", "running", "paused", "done"]
"""``received``: stored and handed off to ``turn_send`` (or being); ``waiting`` is the same, as
turns stored by earlier versions say it."""


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
    takeovers: int = 0
    """How often a function took the turn over from one that died or failed."""
    fence: int = 0
    """The highest session generation that wrote the turn (see ``shared.fence``)."""
    checkpoint: str | None = None
    """JSON of the carrying function's checkpoint, when small (see shared.checkpoint)."""
    checkpoint_parts: dict[str, Any] | None = None
    """Where the parts of a larger checkpoint are (see shared.checkpoint)."""
    shown_steps: dict[str, Any] = field(default_factory=dict)
    """Steps the reply shows, or may show: call ID to the message's ts and the step's
    update as shown (running, final or closed to continue; a ts alone, written by the
    release before: shown final), written before each Slack call that shows one anew
    (see ``shared.core.step_cards.Shown``)."""
    posting: bool = False
    """The reply posted a message, or was about to: written before its first
    chat.postMessage, so that a function taking over reads the thread back for
    messages no checkpoint names (``shared.core.reply_course.orphans``)."""
    started_streams: list[str] = field(default_factory=list)
    """The ts of each stream the reply started, written as soon as chat.startStream
    answered (a stream carries no metadata, so no read-back finds it): a function
    taking over adopts those its checkpoint does not name (``ReplyState.adopt``)."""
    created_at: datetime | None = None
    started_at: datetime | None = None
    """When a function first carried it (a stop pressed before is for the turn before it)."""
    title: str | None = None
    """A title for the thread's agent session where it began the thread (an alert's)."""
    stop: dict[str, Any] | None = None
    """A person stopped it (see ``shared.stops``): ``by`` (their user ID) and ``streams``
    (the streamed messages Slack stopped for the click)."""

    @property
    def stopped_by(self) -> str | None:
        """Who stopped the turn, if someone did."""
        return str(self.stop["by"]) if self.stop else None

    @property
    def stopped_streams(self) -> list[str]:
        """The streamed messages Slack stopped when the turn was stopped."""
        return [str(ts) for ts in (self.stop or {}).get("streams", [])]

    @property
    def message_id(self) -> str:
        """The A2A messageId, fixed for this chat message."""
        return f"slack-{self.channel}-{self.ts}"


class Store:
    """Sessions, turns, Slack event IDs and cached people, over the ``Documents`` port."""

    def __init__(self, documents: Documents, clock: Clock, log_writes: bool = False) -> None:
        """Creates the store.

        Args:
            documents: The document database.
            clock: What ``now`` is (write times, leases, TTLs).
            log_writes: Log every document write (``firestore_write``), for
                the writes-per-turn benchmark.
        """
        self._documents = documents
        self._clock = clock
        self._log_writes = log_writes
        self._known: dict[tuple[str, str], Snapshot] = {}
        """Documents of ``REMEMBERED`` as this store last read or wrote them."""

    def now(self) -> datetime:
        """The current time, timezone-aware."""
        return self._clock.now()

    # Slack events --------------------------------------------------------------

    def event_seen(self, event_id: str) -> bool:
        """Whether this Slack event ID was already handled."""
        return self._documents.get(EVENTS, event_id) is not None

    def remember_event(self, event_id: str) -> None:
        """Record a handled Slack event ID (kept at least ``EVENTS_KEPT``; TTL on expire_at)."""
        self._documents.set(EVENTS, event_id, {"expire_at": self.now() + EVENTS_KEPT})
        self._wrote(EVENTS, event_id)

    def record_event_turn(self, event_id: str, turn: Turn) -> bool:
        """Store the turn a Slack event brings, and the event as handled, in one commit.

        A claim of the session's next turn that read the waiting turns before
        this one was stored reads them again once it is written
        (``shared.engine.claim_next_turn``), so no later message of the
        thread is claimed past an earlier one already stored.

        Returns:
            Whether the turn is to be handed off: a new turn, or a Slack
            retry of this event whose turn is still ``received`` (the first
            try's hand-off may have failed; a trigger twice is harmless,
            as ``turn_send``'s claim decides). Not for another event of a
            stored turn, such as the ``message`` twin of an ``app_mention``:
            the event that stored it hands it off, or is retried.
        """
        at = self.now()
        turn.created_at = at
        writes: list[Write] = [
            Create(EVENTS, event_id, {"expire_at": at + EVENTS_KEPT}),
            Create(TURNS, turn.id, _fields(turn)),
        ]
        try:
            self._documents.commit(writes)
        except (DocumentExists, PreconditionFailed) as found:
            # PreconditionFailed: a commit that may have applied was retried and found its
            # documents; if it did not apply, Slack's retry stores the turn.
            stored = self.turn(turn.id)
            if stored is None and isinstance(found, PreconditionFailed):
                raise StoreUnavailable(f"turn {turn.id}: {found}") from found
            return stored is not None and stored.status == "received" and self.event_seen(event_id)
        for write in writes:
            self._wrote(write.collection, write.key)
        return True

    # Turns ---------------------------------------------------------------------

    def record_turn(self, turn: Turn) -> Turn:
        """Store a new turn; if the chat message was stored before, return that one."""
        try:
            turn.created_at = self.now()
            self._documents.create(TURNS, turn.id, _fields(turn))
        except DocumentExists:
            existing = self.turn(turn.id)
            assert existing is not None
            return existing
        self._wrote(TURNS, turn.id)
        return turn

    def refuse_turn(self, turn: Turn, outcome: str) -> bool:
        """Store a message Kourier will not carry as a finished turn, without its text.

        Returns:
            Whether this call stored it: a Slack retry, or the ``message``
            twin of an ``app_mention``, finds it stored, and the person is
            told once.
        """
        at = self.now()
        turn.text, turn.status, turn.outcome, turn.created_at = "", "done", outcome, at
        try:
            self._documents.create(
                TURNS, turn.id, {**_fields(turn), "expire_at": at + DONE_TURNS_KEPT}
            )
        except DocumentExists:
            return False
        self._wrote(TURNS, turn.id)
        return True

    def turn(self, turn_id: str) -> Turn | None:
        """The turn with this ID."""
        snapshot = self._read(TURNS, turn_id)
        return _turn(snapshot.data) if snapshot is not None else None

    def set_turn(self, turn_id: str, **fields: Any) -> None:
        """Update fields of a turn."""
        self._documents.update(TURNS, turn_id, {**fields, "updated_at": self.now()})
        self._wrote(TURNS, turn_id)

    def request_stop(self, turn_id: str, by: str, streams: list[str]) -> bool:
        """Record that ``by`` stopped the turn: the first stop counts, a finished turn takes none.

        Returns:
            Whether the turn has a stop to carry out (this one, or one before it).
        """

        def decide(current: dict[str, Any] | None) -> dict[str, Any] | None:
            if current is None or current.get("status") == "done" or current.get("stop"):
                return None
            return {"stop": {"by": by, "streams": streams}, "updated_at": self.now()}

        self.change_document(TURNS, turn_id, decide)
        turn = self.turn(turn_id)
        return turn is not None and turn.status != "done" and turn.stop is not None

    def has_turns(self, session_id: str) -> bool:
        """Whether any turn of the session is stored (its thread is Kourier's)."""
        return bool(self._documents.query(TURNS, "session_id", "==", session_id, limit=1))

    def write_turn(
        self,
        turn_id: str,
        generation: int,
        attempts: int = 20,
        along: Sequence[Write] = (),
        **fields: Any,
    ) -> dict[str, Any]:
        """Update fields of a turn for the function holding ``generation`` (its fencing token).

        The turn as this store last knew it is written under a precondition,
        with no read first (see the theory of operation). ``along``: other
        documents written in the same commit, so only while the turn is this
        function's (a question it asks: ``shared.questions``).

        Returns:
            The turn's fields as written (``stop``: a person's stop was recorded).

        Raises:
            Superseded: A function with a later generation has written the turn.
            StoreUnavailable: The turn kept changing under us.
        """
        snapshot = self._known.get((TURNS, turn_id))
        for _ in range(attempts):
            if snapshot is None:
                snapshot = self._read(TURNS, turn_id)
            if snapshot is None or int(snapshot.data.get("fence") or 0) > generation:
                raise Superseded(
                    f"turn {turn_id} is carried by a later generation than {generation}"
                )
            changes = {**fields, "fence": generation, "updated_at": self.now()}
            try:
                written = self._update(TURNS, turn_id, snapshot, changes, along)
            except PreconditionFailed:
                snapshot = None
                continue
            self._wrote(TURNS, turn_id)
            return written
        raise StoreUnavailable(f"turn {turn_id} kept changing under us")

    def waiting_counts(self, session_id: str, user: str) -> tuple[int, int]:
        """How many turns wait to be carried: in the session, and of ``user`` in any session.

        One query of every waiting turn (the sweep reads the same each minute),
        whose number the ingress's limits keep small.
        """
        waiting = self._documents.query(TURNS, "status", "in", ["received", "waiting"])
        in_session = sum(1 for data in waiting if data.get("session_id") == session_id)
        return in_session, sum(1 for data in waiting if data.get("user") == user)

    def waiting_turns(self, session_id: str) -> list[Turn]:
        """The session's turns not yet carried, oldest first (Slack order)."""
        return [t for t in self.session_turns(session_id) if t.status in ("received", "waiting")]

    def session_turns(self, session_id: str) -> list[Turn]:
        """The session's turns, oldest first (Slack order)."""
        turns = [
            _turn(data) for data in self._documents.query(TURNS, "session_id", "==", session_id)
        ]
        return sorted(turns, key=lambda t: float(t.ts))

    # Sessions ------------------------------------------------------------------

    def session(self, session_id: str) -> Session | None:
        """The session with this ID."""
        snapshot = self._read(SESSIONS, session_id)
        return _session(snapshot.data) if snapshot is not None else None

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

        Raises:
            StoreUnavailable: The session kept changing under us (or the
                database failed): a later delivery decides again.
        """

        def change(current: dict[str, Any] | None) -> dict[str, Any] | None:
            wanted = decide(_session(current) if current is not None else None)
            if wanted is None:
                return None
            stamped = replace(wanted, updated_at=self.now())
            written.append(stamped)
            return _fields(stamped)

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
        A document this store remembers is decided on without a read; only
        a write is decided that way (see the theory of operation).

        Raises:
            StoreUnavailable: The document kept changing under us (or the
                database failed): a later delivery decides again.
        """
        snapshot = self._known.get((collection, document))
        fresh = snapshot is None
        if fresh:
            snapshot = self._read(collection, document)
        for _ in range(attempts):
            try:
                wanted = decide(dict(snapshot.data) if snapshot is not None else None)
            except Exception:
                if fresh:
                    raise
                wanted = None  # decided on what this store remembered: read and decide again
            if wanted is None:
                if fresh:
                    return None
                snapshot, fresh = self._read(collection, document), True
                continue
            try:
                if snapshot is not None:
                    self._update(collection, document, snapshot, wanted)
                else:
                    self._documents.create(collection, document, wanted)
            except (PreconditionFailed, DocumentExists):
                snapshot, fresh = self._read(collection, document), True
                continue
            self._wrote(collection, document)
            return wanted
        raise StoreUnavailable(f"{collection}/{document} kept changing under us")

    def renew_lease(self, session_id: str, turn_id: str, generation: int, lease: timedelta) -> None:
        """Extend the claim of the turn being carried to at least ``lease`` from now.

        A renewal never shortens a lease: a turn that waits on a question or
        a long backoff holds its session until its timer is due (plus a
        lease), and a checkpoint written meanwhile must not hand it to the
        sweep before then. Nothing is written if the turn moved on, or if
        the lease already runs longer.

        Raises:
            Superseded: The session no longer carries the turn at ``generation``.
        """
        until = self.now() + lease
        self.change_session(
            session_id, lambda current: sessions.renew(current, turn_id, generation, until)
        )

    def stale_sessions(self, at: datetime) -> list[Session]:
        """Sessions whose active turn's lease has run out (their function died)."""
        found = self._documents.query(SESSIONS, "lease_until", "<=", at)
        return [s for s in map(_session, found) if s.active_turn]

    def sessions_with_waiting_turns(self) -> list[str]:
        """Session IDs that have turns nobody has started."""
        found = self._documents.query(TURNS, "status", "in", ["received", "waiting"])
        return sorted({str(data.get("session_id")) for data in found})

    # People --------------------------------------------------------------------

    def cached_user(self, user_id: str) -> dict[str, Any] | None:
        """A users.info answer cached earlier, if still fresh."""
        snapshot = self._documents.get(USERS, user_id)
        if snapshot is None or snapshot.data["expire_at"] <= self.now():
            return None
        return dict(snapshot.data["profile"])

    def cache_user(self, user_id: str, profile: dict[str, Any], keep: timedelta) -> None:
        """Cache a users.info answer."""
        self._documents.set(USERS, user_id, {"profile": profile, "expire_at": self.now() + keep})
        self._wrote(USERS, user_id)

    def _read(self, collection: str, key: str) -> Snapshot | None:
        """Read a document, and remember it as read."""
        snapshot = self._documents.get(collection, key)
        if collection in REMEMBERED:
            self._remember(collection, key, snapshot)
        return snapshot

    def _update(
        self,
        collection: str,
        key: str,
        snapshot: Snapshot,
        changes: dict[str, Any],
        along: Sequence[Write] = (),
    ) -> dict[str, Any]:
        """Update the document under a precondition on ``snapshot``, in one commit with the
        writes ``along`` (if any); its fields as written."""
        update = Update(collection, key, changes, if_updated_at=snapshot.update_time)
        try:
            if along:
                update_time = self._documents.commit([update, *along])[0]
            else:
                update_time = self._documents.update(
                    collection, key, changes, if_updated_at=update.if_updated_at
                )
        except BaseException:
            self._known.pop((collection, key), None)  # it may or may not have applied
            raise
        written = {**snapshot.data, **changes}
        if collection in REMEMBERED:
            self._remember(collection, key, Snapshot(written, update_time))
        return written

    def _remember(self, collection: str, key: str, snapshot: Snapshot | None) -> None:
        if snapshot is None:
            self._known.pop((collection, key), None)
            return
        if len(self._known) >= REMEMBERED_AT_MOST:
            self._known.clear()
        self._known[(collection, key)] = snapshot

    def _wrote(self, collection: str, document: str) -> None:
        """Log a document write when the writes-per-turn benchmark counts them."""
        if self._log_writes:
            log.info("firestore_write", collection=collection, document=document)


def _fields(record: Turn | Session) -> dict[str, Any]:
    """A dataclass's fields as a document (values are immutable: no deep copy)."""
    return {name: getattr(record, name) for name in record.__dataclass_fields__}


def _turn(data: dict[str, Any]) -> Turn:
    fields = Turn.__dataclass_fields__
    if data.keys() <= fields.keys():  # no field of another version: no filtered copy
        return Turn(**data)
    return Turn(**{k: v for k, v in data.items() if k in fields})


def _session(data: dict[str, Any]) -> Session:
    fields = Session.__dataclass_fields__
    if data.keys() <= fields.keys():
        return Session(**data)
    return Session(**{k: v for k, v in data.items() if k in fields})
