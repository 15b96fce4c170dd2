"""The real clock, identifiers and threads (the ``Clock``, ``Ids`` and ``Runtime`` ports)."""

from __future__ import annotations

import random
import threading
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from typing import cast

from shared.ports import Lock


class SystemClock:
    """The machine's clocks."""

    def now(self) -> datetime:
        """The current time, timezone-aware UTC."""
        return datetime.now(UTC)

    def time(self) -> float:
        """Seconds since the epoch."""
        return time.time()

    def monotonic(self) -> float:
        """Seconds on the monotonic clock."""
        return time.monotonic()

    def sleep(self, seconds: float) -> None:
        """Block the calling thread."""
        time.sleep(max(0.0, seconds))


class SystemIds:
    """UUIDs and the process's random numbers."""

    def __init__(self) -> None:
        self._random = random.Random()

    def token(self) -> str:
        """A random UUID, as 32 hex digits."""
        return uuid.uuid4().hex

    def random(self) -> float:
        """A random float in [0, 1)."""
        return self._random.random()


class ThreadRuntime:
    """Timers on threads of their own; locks are ``threading.RLock``."""

    def lock(self) -> Lock:
        """A new ``threading.RLock``."""
        return threading.RLock()

    def timer(self, lock: Lock, action: Callable[[], None]) -> ThreadTimer:
        """A timer whose thread runs ``action`` holding ``lock``."""
        return ThreadTimer(cast(threading.RLock, lock), action)


class ThreadTimer:
    """Calls ``action`` under ``lock`` at the time last set, from a thread of its own.

    The thread starts when a time is first set and ends at ``close``; a time
    set after ``close`` starts a new one. Call ``set`` and ``close`` holding
    the lock.
    """

    def __init__(self, lock: threading.RLock, action: Callable[[], None]) -> None:
        self._wake = threading.Condition(lock)
        self._action = action
        self._at: float | None = None
        self._generation = 0
        self._running = False

    def set(self, at: float | None) -> None:
        """Call the action at ``at`` (epoch seconds), or not at all (None)."""
        self._at = at
        if at is not None and not self._running:
            self._running = True
            threading.Thread(
                target=self._run, args=(self._generation,), name="thread-reply-timer", daemon=True
            ).start()
        self._wake.notify_all()

    def close(self) -> None:
        """End the thread; it leaves once the lock is free."""
        self._at = None
        self._generation += 1
        self._running = False
        self._wake.notify_all()

    def _run(self, generation: int) -> None:
        with self._wake:
            while generation == self._generation:
                if self._at is None:
                    self._wake.wait()
                    continue
                delay = self._at - time.time()
                if delay > 0:
                    self._wake.wait(delay)
                    continue
                self._at = None
                self._action()
