"""In-memory Firestore, Pub/Sub, Cloud Tasks, clock, ids and runtime, with their faults.

Theory of operation. Each class implements one port of ``shared.ports`` with
the semantics of the real service, and every call is a scheduling point of
the world (``World.block``): the call is recorded, its faults are drawn from
its own named stream, other invocations may run, and only then is the
operation applied, atomically. A fault may strike before the operation (it
never happens) or after it applied (the caller never learns it did), which
is how ambiguous commits and lost acknowledgements arise.

- ``SimDocuments`` (Firestore): create-if-absent, whole-document set,
  top-level merge on update, a precondition on the update time (unique per
  write, strictly increasing), copies on read and on write, queries where a
  range never matches None, and transient failures (``StoreUnavailable``),
  some after the write applied; an "applied, then the client's retry found
  it done" commit surfaces as ``DocumentExists`` or ``PreconditionFailed``.
- ``SimTurnQueue`` (Pub/Sub publish): at least once; a publish may fail,
  or time out and still deliver.
- ``SimTaskQueue`` (Cloud Tasks): named tasks de-duplicated against live
  tasks and tombstones of about an hour; at least once; dispatch late.
- ``SimClock``, ``SimIds``, ``SimRuntime``: per instance (clock skew), ids
  from counters, and reply timers that run at their owner's blocking points.

Every write to the collections the oracle reads is kept in ``writes``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from types import TracebackType
from typing import Any, Self

from local.sim.world import SECOND, Instance, Invocation, Killed, World, us

EPOCH = datetime(2026, 12, 1, tzinfo=UTC)
EPOCH_SECONDS = EPOCH.timestamp()


def errors() -> Any:
    """shared.errors, imported when first needed (the shell may not be importable yet)."""
    import shared.errors

    return shared.errors


# Time, ids, timers ------------------------------------------------------------------------


class SimClock:
    """One instance's clocks: virtual time plus the instance's skew."""

    def __init__(self, world: World, instance: Instance) -> None:
        self._world = world
        self._instance = instance

    def now(self) -> datetime:
        return EPOCH + timedelta(microseconds=self._world.now_us + self._instance.skew_us)

    def time(self) -> float:
        return self._reading(self._world.now_us)

    def monotonic(self) -> float:
        return 1000.0 + self._world.now_us / SECOND

    def sleep(self, seconds: float) -> None:
        world = self._world
        # A real sleep always takes some time: round up, so a loop that sleeps
        # until a float deadline a fraction of a microsecond away gets there.
        until = world.now_us + max(1, math.ceil(seconds * SECOND))
        world.log("sleep", seconds)
        while True:
            next_timer = run_due_timers(world, until)
            target = until if next_timer is None else min(until, next_timer)
            world.block(max(0, target - world.now_us))
            if world.now_us >= until:
                return

    def to_world_us(self, epoch_seconds: float) -> int:
        """A time of this instance's wall clock as virtual microseconds."""
        return us(epoch_seconds - EPOCH_SECONDS) - self._instance.skew_us

    def first_us_reading(self, epoch_seconds: float) -> int:
        """The first virtual microsecond at which this instance's clock reads ``epoch_seconds``.

        A real timer never fires before its time (``shared.system.ThreadTimer``
        waits until ``time.time()`` reaches it); rounding to the nearest
        microsecond alone could fire it a fraction early, where the clock
        still reads less and the owner sets the same time again, for ever.
        """
        at_us = self.to_world_us(epoch_seconds)
        while self._reading(at_us) < epoch_seconds:
            at_us += 1
        return at_us

    def _reading(self, world_us: int) -> float:
        """What this instance's wall clock reads at virtual time ``world_us``."""
        return EPOCH_SECONDS + (world_us + self._instance.skew_us) / SECOND


class SimIds:
    """Request ids from a counter; jitter from the instance's own stream."""

    def __init__(self, world: World, instance: Instance) -> None:
        self._world = world
        self._instance = instance
        self._count = 0

    def token(self) -> str:
        self._count += 1
        return f"{self._instance.name}-{self._count}"

    def random(self) -> float:
        return self._world.stream("ids", self._instance.name).random()


class SimLock:
    """A re-entrant lock for greenlets on one thread: a depth count on its owner."""

    def __init__(self) -> None:
        self.depth = 0

    def __enter__(self) -> Self:
        self.depth += 1
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.depth -= 1


class SimTimer:
    """A reply timer: records when it is due; its owner's blocking points run it."""

    def __init__(self, world: World, clock: SimClock, lock: SimLock, action: Callable[[], None]):
        self._world = world
        self._clock = clock
        self.lock = lock
        self.action = action
        self.due_us: int | None = None
        owner = world.current
        if owner is not None:
            owner.timers.append(self)

    def set(self, at: float | None) -> None:
        self.due_us = None if at is None else self._clock.first_us_reading(at)

    def close(self) -> None:
        self.due_us = None


class SimRuntime:
    """Locks and timers of one instance."""

    def __init__(self, world: World, clock: SimClock) -> None:
        self._world = world
        self._clock = clock

    def lock(self) -> SimLock:
        return SimLock()

    def timer(self, lock: Any, action: Callable[[], None]) -> SimTimer:
        return SimTimer(self._world, self._clock, lock, action)


def run_due_timers(world: World, limit_us: int) -> int | None:
    """Run the current invocation's reply timers that are due, outside their lock.

    Returns:
        When the next armed timer is due (None if none is armed before ``limit_us``).
    """
    invocation = world.current
    if invocation is None:
        return None
    while True:
        pending = [t for t in invocation.timers if t.due_us is not None]
        if not pending:
            return None
        timer = min(pending, key=lambda t: t.due_us or 0)
        assert timer.due_us is not None
        if timer.due_us > world.now_us:
            return timer.due_us if timer.due_us < limit_us else None
        if timer.lock.depth:
            return None  # the owner holds the lock: the timer thread would wait
        timer.due_us = None
        world.log("timer")
        with timer.lock:
            timer.action()


# Firestore ------------------------------------------------------------------------------


@dataclass
class Stored:
    """One document: its fields and the time of its last write."""

    data: dict[str, Any]
    update_time: datetime
    nested: tuple[str, ...] = ()
    """The fields holding a map or an array: all a copy must copy beyond the top level."""

    def copy(self) -> dict[str, Any]:
        """The fields as a caller may change them (a stored document never changes in place)."""
        copied = dict(self.data)
        for key in self.nested:
            copied[key] = _copy_value(copied[key])
        return copied


WATCHED = ("kourier_turns", "kourier_sessions", "kourier_questions")
READ_FAULTS = (("crash_before", 0.003), ("unavailable", 0.002))
WRITE_FAULTS = (
    ("crash_before", 0.003),
    ("aborted", 0.002),
    ("applied_unavailable", 0.002),
    ("applied_retried", 0.002),
    ("crash_after", 0.005),
)
"""Faults of one call: the instance dies before it; the commit aborts; it applies and the
caller gets an error; it applies and the client's retry finds it done; it applies and the
instance dies."""


class SimDocuments:
    """The ``Documents`` port: one Firestore database shared by every instance."""

    def __init__(self, world: World) -> None:
        self.world = world
        self.collections: dict[str, dict[str, Stored]] = {}
        self.writes: list[tuple[int, str, str, str, str, dict[str, Any], int]] = []
        """(time, invocation, op, collection, key, document after the write, place
        (``World.record``))."""
        self._last_write_us = -1
        self._latency = world.stream("firestore/latency")

    # The port ------------------------------------------------------------------------

    def get(self, collection: str, key: str) -> Any:
        self._point("get", collection, key, read=True)
        stored = self.collections.get(collection, {}).get(key)
        if stored is None:
            return None
        return _snapshot()(data=stored.copy(), update_time=stored.update_time)

    def create(self, collection: str, key: str, data: Mapping[str, Any]) -> None:
        ambiguous = self._point("create", collection, key)
        documents = self.collections.setdefault(collection, {})
        if key in documents:
            raise errors().DocumentExists(f"{collection}/{key}")
        self._write("create", collection, key, _checked(data))
        self._after_write(ambiguous, lambda: errors().DocumentExists(f"{collection}/{key}"))

    def set(self, collection: str, key: str, data: Mapping[str, Any]) -> None:
        ambiguous = self._point("set", collection, key)
        self._write("set", collection, key, _checked(data))
        self._after_write(ambiguous, None)

    def update(
        self,
        collection: str,
        key: str,
        data: Mapping[str, Any],
        *,
        if_updated_at: datetime | None = None,
    ) -> datetime:
        ambiguous = self._point("update", collection, key)
        stored = self.collections.get(collection, {}).get(key)
        if stored is None:
            raise errors().PreconditionFailed(f"{collection}/{key} does not exist")
        if if_updated_at is not None and if_updated_at != stored.update_time:
            raise errors().PreconditionFailed(f"{collection}/{key} changed")
        for field_name in data:
            if "." in field_name:
                raise ValueError(f"a dotted key is a field path: {field_name}")
        written = self._write("update", collection, key, {**stored.data, **_checked(data)})
        failure = (
            (lambda: errors().PreconditionFailed(f"{collection}/{key} changed"))
            if if_updated_at is not None
            else None
        )
        self._after_write(ambiguous, failure)
        return written.update_time

    def commit(self, writes: Sequence[Any]) -> list[datetime]:
        """Every write or none: all are checked before any applies (one scheduling point)."""
        from shared.ports import Create, Put

        first = writes[0]
        ambiguous = self._point("commit", first.collection, first.key)
        for write in writes:
            stored = self.collections.get(write.collection, {}).get(write.key)
            if isinstance(write, Create):
                if stored is not None:
                    raise errors().DocumentExists(f"{write.collection}/{write.key}")
            elif isinstance(write, Put):
                continue
            elif stored is None or (
                write.if_updated_at is not None and write.if_updated_at != stored.update_time
            ):
                raise errors().PreconditionFailed(f"{write.collection}/{write.key} changed")
        written = []
        for write in writes:
            stored = self.collections.get(write.collection, {}).get(write.key)
            before = stored.data if stored is not None and not isinstance(write, Put) else {}
            data = {**before, **_checked(write.data)}
            written.append(self._write("commit", write.collection, write.key, data))
        self._after_write(
            ambiguous, lambda: errors().PreconditionFailed(f"{first.collection}/{first.key}")
        )
        return [stored.update_time for stored in written]

    def query(
        self, collection: str, field: str, op: str, value: Any, *, limit: int | None = None
    ) -> list[dict[str, Any]]:
        field_name = field
        self._point("query", collection, field_name, read=True)
        found: list[tuple[Any, str, Stored]] = []
        documents = self.collections.get(collection, {})
        if op == "==":  # the common query, without a call per document
            kind = type(value)
            for key, stored in documents.items():
                have = stored.data.get(field_name, _ABSENT)
                if have == value and type(have) is kind:
                    found.append((0, key, stored))
        else:
            for key, stored in documents.items():
                if field_name not in stored.data:
                    continue
                have = stored.data[field_name]
                if _matches(have, op, value):
                    found.append((have if op == "<=" else 0, key, stored))
        found.sort(key=lambda item: (item[0], item[1]))
        return [stored.copy() for _, _, stored in found[:limit]]

    # Faults ----------------------------------------------------------------------------

    def _point(self, op: str, collection: str, key: str, read: bool = False) -> str | None:
        """The scheduling point of one call, and its faults before it applies.

        Returns:
            How a write that applies ends for the caller: None (it learns it
            succeeded), "applied_unavailable" (it applied, then the caller got
            an error), "applied_retried" (applied; the client's retry found it
            done) or "crash_after" (applied; the instance dies).
        """
        world = self.world
        rng = self._latency
        latency = 0.002 + rng.random() * 0.01
        if rng.random() < 0.01:
            latency += rng.uniform(0.2, 2.0)
        world.block(us(latency))
        invocation = world.current
        assert invocation is not None
        world.log("fs", op, collection, key)
        fault = world.pick(f"firestore.{op}", READ_FAULTS if read else WRITE_FAULTS, collection)
        if fault is None:
            return None
        if fault == "crash_before":
            world.kill(invocation.instance, f"before {op} {collection}/{key}")
            raise Killed(invocation.name)
        if fault in ("unavailable", "aborted"):
            raise errors().StoreUnavailable(f"Firestore: {fault} ({op})")
        return fault

    def _after_write(self, ambiguous: str | None, on_retry: Callable[[], Exception] | None) -> None:
        world = self.world
        if ambiguous is None:
            return
        invocation = world.current
        assert invocation is not None
        if ambiguous == "crash_after":
            world.kill(invocation.instance, "after a write applied")
            raise Killed(invocation.name)
        if ambiguous == "applied_unavailable":
            raise errors().StoreUnavailable("Firestore: deadline exceeded after the commit")
        if on_retry is not None:
            raise on_retry()

    def _write(self, op: str, collection: str, key: str, data: dict[str, Any]) -> Stored:
        world = self.world
        stamp_us = max(world.now_us, self._last_write_us + 1)
        self._last_write_us = stamp_us
        nested = tuple(
            key for key, value in data.items() if type(value) is dict or type(value) is list
        )
        stored = Stored(data, EPOCH + timedelta(microseconds=stamp_us), nested)
        self.collections.setdefault(collection, {})[key] = stored
        if collection in WATCHED:
            invocation = world.current
            name = invocation.name if invocation is not None else ""
            # No copy: a stored document is never changed in place (a write stores a new dict).
            self.writes.append((world.now_us, name, op, collection, key, data, world.record()))
        return stored

    # For the oracle (no scheduling point) -----------------------------------------------

    def peek(self, collection: str, key: str) -> dict[str, Any] | None:
        """A document as stored now, read outside the simulation."""
        stored = self.collections.get(collection, {}).get(key)
        return None if stored is None else stored.data


_ABSENT = object()
"""A field a document does not hold (None is a value)."""


def _matches(have: Any, op: str, value: Any) -> bool:
    if op == "==":
        return bool(have == value and type(have) is type(value))
    if op == "in":
        return any(have == item and type(have) is type(item) for item in value)
    if op == "<=":
        if have is None or isinstance(have, bool) or isinstance(value, bool):
            return False
        try:
            return bool(have <= value)
        except TypeError:
            return False
    raise ValueError(f"unsupported operator {op}")


def _checked(data: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of fields to write (one pass: a naive datetime is refused, maps and arrays copied)."""
    copied = dict(data)
    for key, value in copied.items():
        kind = type(value)
        if kind is dict or kind is list:
            copied[key] = _copy_value(value)
        elif isinstance(value, datetime) and value.tzinfo is None:
            raise ValueError("a naive datetime cannot be stored")
    return copied


def _snapshot() -> Any:
    """shared.ports.Snapshot (imported on first use, as ``errors``)."""
    global _SNAPSHOT
    if _SNAPSHOT is None:
        from shared.ports import Snapshot

        _SNAPSHOT = Snapshot
    return _SNAPSHOT


_SNAPSHOT: Any = None


SCALARS = frozenset((str, int, float, bool, type(None), datetime))
"""Types a copy shares (immutable): most values of a document, tested by exact type first."""


def _copy_value(value: Any) -> Any:
    kind = type(value)
    if kind is dict:
        return {
            key: item if type(item) in SCALARS else _copy_value(item) for key, item in value.items()
        }
    if kind is list:
        return [item if type(item) in SCALARS else _copy_value(item) for item in value]
    if kind in SCALARS:
        return value
    if isinstance(value, dict):
        return {key: _copy_value(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_copy_value(item) for item in value]
    return value


# Pub/Sub and Cloud Tasks --------------------------------------------------------------------


def handoff_unavailable(text: str) -> Exception:
    """The shell's error for a hand-off that failed for now."""
    import shared.handoff

    kind = getattr(shared.handoff, "HandoffUnavailable", None) or errors().RetryableError
    error: Exception = kind(text)
    return error


class SimTurnQueue:
    """Pub/Sub publish to the turns topic; the platform delivers to ``turn_send``."""

    def __init__(self, world: World, deliver: Callable[[dict[str, Any]], None]) -> None:
        self.world = world
        self._deliver = deliver
        self.published = 0

    def publish_turn(self, session_id: str, turn_id: str) -> None:
        world = self.world
        world.block(us(0.005 + world.stream("pubsub/latency").random() * 0.02))
        invocation = world.current
        assert invocation is not None
        world.log("publish", session_id, turn_id)
        if world.chance("platform.crash_before", 0.003, "publish"):
            world.kill(invocation.instance, "before publish")
            raise Killed(invocation.name)
        if world.chance("pubsub.publish_fails", 0.002):
            raise handoff_unavailable("Pub/Sub: publish failed")
        payload = {"session_id": session_id, "turn_id": turn_id}
        self.published += 1
        self._deliver(payload)
        if world.chance("pubsub.publish_times_out", 0.002):
            raise handoff_unavailable("Pub/Sub: publish timed out (the message was delivered)")
        if world.chance("platform.crash_after", 0.005, "publish"):
            world.kill(invocation.instance, "after publish")
            raise Killed(invocation.name)


@dataclass
class NamedTask:
    """A Cloud Task by name: scheduled, running, or a tombstone after it ran."""

    name: str
    target: str
    body: dict[str, Any]
    due_us: int
    done_us: int | None = None


TOMBSTONE_US = 3600 * SECOND


class SimTaskQueue:
    """Cloud Tasks: named HTTP tasks to ``stream_follow`` and ``timeout``."""

    def __init__(
        self, world: World, dispatch: Callable[[str, dict[str, Any], NamedTask | None], None]
    ) -> None:
        self.world = world
        self._dispatch = dispatch
        self.named: dict[str, NamedTask] = {}
        self.refused = 0

    def schedule(
        self,
        target: str,
        body: Mapping[str, Any],
        *,
        name: str | None = None,
        at: datetime | None = None,
    ) -> bool:
        world = self.world
        world.block(us(0.01 + world.stream("tasks/latency").random() * 0.03))
        invocation = world.current
        assert invocation is not None
        world.log("task.create", target, name)
        if world.chance("platform.crash_before", 0.003, "tasks"):
            world.kill(invocation.instance, "before a task was created")
            raise Killed(invocation.name)
        if world.chance("tasks.create_fails", 0.002):
            raise handoff_unavailable("Cloud Tasks: unavailable")
        due_us = world.now_us if at is None else us((at - EPOCH).total_seconds())
        if name is not None:
            existing = self.named.get(name)
            if existing is not None and (
                existing.done_us is None or world.now_us - existing.done_us < TOMBSTONE_US
            ):
                self.refused += 1
                world.log("task.exists", name)
                return False
        task = NamedTask(name or "", target, dict(body), due_us)
        if name is not None:
            self.named[name] = task
        self._dispatch(target, dict(body), task)
        if world.chance("tasks.create_times_out", 0.002):
            raise handoff_unavailable("Cloud Tasks: deadline exceeded (the task was created)")
        if world.chance("platform.crash_after", 0.005, "tasks"):
            world.kill(invocation.instance, "after a task was created")
            raise Killed(invocation.name)
        return True


def invocation_of(world: World) -> Invocation:
    """The invocation making a port call."""
    invocation = world.current
    if invocation is None:
        raise RuntimeError("a port call outside any invocation")
    return invocation
