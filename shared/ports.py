"""The ports: everything the shell touches outside its own process, as Protocols.

Theory of operation: the pure core (``shared/core``) decides; the shell
(``engine``, ``turn``, ``questions``, ``ingress``, ``reconciler``) carries out
its decisions through the ports below, and never reaches for a client, the
wall clock, a thread or a random number by itself. ``shared.bootstrap`` is the
one place that builds the real adapters (Firestore, Pub/Sub, Cloud Tasks,
Slack's WebClient, httpx, the system clock, threads) and hands them over as
one ``Deps``; a test or the simulator builds a ``Deps`` of its own from
in-memory implementations with the same semantics.

Each port sits where the adapter below it has no decision left to make:

- ``Documents`` is a document database with Firestore's semantics (create if
  absent, whole-document set, top-level merge on update, a precondition on
  the update time read before, equality/range/``in`` queries), not
  Firestore's client object graph. The Firestore adapter is one client call
  per method plus error translation; every rule built on those semantics
  (read, decide, write under a precondition, read again on a conflict)
  stays in ``shared.store`` and ``shared.questions`` above the port, so a
  fake of the port runs that code too.
- ``TurnQueue`` and ``TaskQueue`` are Pub/Sub's publish and Cloud Tasks'
  named, scheduled HTTP tasks, with Cloud Tasks' name de-duplication.
- ``Chat`` is the subset of Slack's Web API that Kourier calls, with
  slack_sdk's names and keywords, so slack_sdk's ``WebClient`` *is* the
  adapter (its own retry handlers included) and a fake raises
  ``SlackApiError`` as it does.
- The agent's HTTP is an ``httpx.Client`` (``httpx.MockTransport`` serves
  in-process); it is not a Protocol of its own.
- ``Clock``, ``Ids`` and ``Runtime`` are time, randomness and the reply's
  timer thread and lock.

Errors: a port raises the errors of ``shared.errors`` for the outcomes the
shell decides on (``DocumentExists``, ``PreconditionFailed``) and
``RetryableError`` subclasses for transient failures of the service, which
the entry points answer so that the platform delivers the event again.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from types import TracebackType
from typing import Any, Literal, Protocol

# Time, randomness, threads ----------------------------------------------------


class Clock(Protocol):
    """Time as the shell sees it."""

    def now(self) -> datetime:
        """The current time, timezone-aware UTC."""
        ...

    def time(self) -> float:
        """The current time in seconds since the epoch (``now().timestamp()``)."""
        ...

    def monotonic(self) -> float:
        """Seconds on a clock that never goes back (deadlines and intervals)."""
        ...

    def sleep(self, seconds: float) -> None:
        """Block for ``seconds`` (a scheduling point in the simulator)."""
        ...


class Ids(Protocol):
    """Fresh identifiers and random draws."""

    def token(self) -> str:
        """A new unique identifier (JSON-RPC request ids)."""
        ...

    def random(self) -> float:
        """A random float in [0, 1) (backoff jitter)."""
        ...


class Lock(Protocol):
    """A re-entrant lock, used as a context manager."""

    def __enter__(self) -> object: ...

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> bool | None: ...


class Timer(Protocol):
    """Calls its action, holding its lock, at the time last set."""

    def set(self, at: float | None) -> None:
        """Call the action at ``at`` (epoch seconds), or not at all (None). Hold the lock."""
        ...

    def close(self) -> None:
        """Never call the action again (a later ``set`` arms it anew). Hold the lock."""
        ...


class Runtime(Protocol):
    """Where work that is not the request's own runs: the reply's timer."""

    def lock(self) -> Lock:
        """A new re-entrant lock."""
        ...

    def timer(self, lock: Lock, action: Callable[[], None]) -> Timer:
        """A timer whose action runs holding ``lock`` (a lock this runtime made)."""
        ...


# Documents (Firestore) ----------------------------------------------------------


@dataclass(frozen=True)
class Snapshot:
    """A document as read: its fields and the time of its last write."""

    data: dict[str, Any]
    update_time: datetime
    """Unique per write of the document; the precondition of an ``update``."""


QueryOp = Literal["==", "<=", "in"]


@dataclass(frozen=True)
class Create:
    """In a ``commit``: create a document that must not exist."""

    collection: str
    key: str
    data: Mapping[str, Any]


@dataclass(frozen=True)
class Update:
    """In a ``commit``: update an existing document, under a precondition when given."""

    collection: str
    key: str
    data: Mapping[str, Any]
    if_updated_at: datetime | None = None


@dataclass(frozen=True)
class Put:
    """In a ``commit``: write a whole document, whether or not it exists."""

    collection: str
    key: str
    data: Mapping[str, Any]


Write = Create | Update | Put


class Documents(Protocol):
    """A document database with Firestore's semantics.

    Documents are dicts of top-level fields whose values are str, bytes, int,
    float, bool, None, aware datetimes (kept to the microsecond), lists and
    dicts; a document holds at most 1 MiB.
    Reads are strongly consistent. Every method may raise ``StoreUnavailable``
    (a ``RetryableError``: aborted, unavailable, deadline exceeded), and a
    write that raised it may or may not have been applied.
    """

    def get(self, collection: str, key: str) -> Snapshot | None:
        """The document, or None if there is none."""
        ...

    def create(self, collection: str, key: str, data: Mapping[str, Any]) -> None:
        """Write a new document.

        Raises:
            DocumentExists: A document with that key exists.
        """
        ...

    def set(self, collection: str, key: str, data: Mapping[str, Any]) -> None:
        """Write the whole document, whether or not it exists."""
        ...

    def update(
        self,
        collection: str,
        key: str,
        data: Mapping[str, Any],
        *,
        if_updated_at: datetime | None = None,
    ) -> datetime:
        """Replace the given top-level fields of an existing document.

        Returns:
            The document's new update time (what a later ``if_updated_at`` names).

        Raises:
            PreconditionFailed: The document does not exist, or
                ``if_updated_at`` is given and is not its update time.
        """
        ...

    def commit(self, writes: Sequence[Write]) -> list[datetime]:
        """Apply every write, or none of them; each one's update time, in order.

        Raises:
            DocumentExists: A ``Create`` found its document.
            PreconditionFailed: An ``Update`` found its document missing or changed.
        """
        ...

    def query(
        self, collection: str, field: str, op: QueryOp, value: Any, *, limit: int | None = None
    ) -> list[dict[str, Any]]:
        """The documents whose ``field`` matches (a range never matches None), at most ``limit``.

        In any order: callers sort what they need sorted.
        """
        ...


# Hand-offs (Pub/Sub, Cloud Tasks) ----------------------------------------------


class TurnQueue(Protocol):
    """The turns topic: each message makes ``turn_send`` run, at least once."""

    def publish_turn(self, session_id: str, turn_id: str) -> None:
        """Ask ``turn_send`` to carry the session's next turn (``turn_id`` is the trigger)."""
        ...


TaskTarget = Literal["stream_follow", "timeout"]
"""The function a Cloud Task calls (``stream_follow``: follow queue; ``timeout``: timers queue)."""


class TaskQueue(Protocol):
    """Cloud Tasks: an HTTP call to one of our functions, later, at least once."""

    def schedule(
        self,
        target: TaskTarget,
        body: Mapping[str, Any],
        *,
        name: str | None = None,
        at: datetime | None = None,
    ) -> bool:
        """POST ``body`` as JSON to ``target`` at ``at`` (now when None).

        Returns:
            False when a task of that ``name`` exists, or existed recently
            (Cloud Tasks keeps a name about an hour after the task ran): the
            same task scheduled twice runs once.
        """
        ...


# Slack's Web API ------------------------------------------------------------------


class ChatAnswer(Protocol):
    """What a Web API method returns (slack_sdk's ``SlackResponse``)."""

    def __getitem__(self, key: str) -> Any: ...

    def get(self, key: str, default: Any = None) -> Any: ...


Blocks = Sequence[dict[str, Any]]


class Chat(Protocol):
    """The Slack Web API methods Kourier calls, as slack_sdk's ``WebClient`` has them.

    Each raises ``slack_sdk.errors.SlackApiError`` when Slack answers
    ``ok: false`` (``error.response.get("error")`` is Slack's error code),
    after the client's own retries of rate limits and lost connections.
    """

    def chat_postMessage(
        self,
        *,
        channel: str,
        text: str | None = None,
        blocks: Blocks | None = None,
        thread_ts: str | None = None,
        markdown_text: str | None = None,
        parse: str | None = None,
        link_names: bool | None = None,
        unfurl_links: bool | None = None,
        unfurl_media: bool | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> ChatAnswer: ...

    def conversations_replies(
        self,
        *,
        channel: str,
        ts: str,
        cursor: str | None = None,
        include_all_metadata: bool | None = None,
        limit: int | None = None,
        oldest: str | None = None,
    ) -> ChatAnswer:
        """A page of a thread, oldest first (``messages``; ``response_metadata.next_cursor``).

        Tier 3 (50+ a minute): called only by a function that takes over a
        turn whose end was being told (``shared.core.telling``).
        """
        ...

    def chat_update(
        self,
        *,
        channel: str,
        ts: str,
        text: str | None = None,
        blocks: Blocks | None = None,
        markdown_text: str | None = None,
    ) -> ChatAnswer: ...

    def chat_postEphemeral(
        self, *, channel: str, user: str, text: str | None = None, thread_ts: str | None = None
    ) -> ChatAnswer: ...

    def chat_startStream(
        self,
        *,
        channel: str,
        thread_ts: str,
        recipient_team_id: str | None = None,
        recipient_user_id: str | None = None,
        chunks: Blocks | None = None,
    ) -> ChatAnswer: ...

    def chat_appendStream(
        self, *, channel: str, ts: str, chunks: Blocks | None = None
    ) -> ChatAnswer: ...

    def chat_stopStream(
        self,
        *,
        channel: str,
        ts: str,
        chunks: Blocks | None = None,
        blocks: Blocks | None = None,
        session_status: str | None = None,
    ) -> ChatAnswer: ...

    def assistant_threads_setStatus(
        self, *, channel_id: str, thread_ts: str, status: str
    ) -> ChatAnswer: ...

    def agents_sessions_setStatus(
        self,
        *,
        channel_id: str,
        status: str,
        thread_ts: str | None = None,
        title: str | None = None,
        initiator_user_id: str | None = None,
    ) -> ChatAnswer: ...

    def agents_sessions_rename(
        self, *, channel_id: str, title: str, thread_ts: str | None = None
    ) -> ChatAnswer: ...

    def views_open(self, *, trigger_id: str | None = None, view: dict[str, Any]) -> ChatAnswer: ...

    def users_info(self, *, user: str) -> ChatAnswer: ...

    def auth_test(self) -> ChatAnswer: ...
