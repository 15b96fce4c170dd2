"""The simulated world: virtual time, one thread, greenlets, seeded faults, a trace.

Theory of operation. Everything runs on the one OS thread that calls
``World.run``: the scheduler loop lives in that thread's main greenlet, and
every function invocation runs in a greenlet of its own (with its own
``contextvars`` context, so one invocation's trace and log bindings never
bleed into another's). A greenlet whose invocation ended serves the next one
(a new greenlet costs tens of microseconds: Python's frame stack for it is
allocated and freed each time), so only invocations running at once hold one. Time is an integer count of microseconds that only
the scheduler moves: it pops the earliest ``(time, seq)`` entry of a heap,
sets the clock to it and runs it; the ``seq`` tie-breaker keeps the order
of simultaneous entries fixed. An invocation gives control back only at a
*scheduling point* (``World.block``): every call into a simulated port is
one, so the interleavings the world explores are exactly the orders of port
calls, which is where the races of a serverless system live. Nothing sleeps
for real and nothing reads the wall clock.

Randomness comes from named streams, ``Random(blake2b(seed/kind/key))``,
never from one global stream, so a new draw at one site does not move the
draws of any other. Every fault is a ``chance`` at a named site; the ones
that fired are recorded, and a replay can switch any of them off (the
shrinker's lever). A kill marks an instance dead: its invocations raise
``Killed`` (a ``BaseException``, which ``except Exception`` does not catch)
at their next scheduling point, so code after the kill never reaches a port.

The trace is a list of short tuples; its digest is the determinism check:
the same seed and code give the same digest, byte for byte.
"""

from __future__ import annotations

import contextvars
import hashlib
import heapq
import marshal
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import greenlet

SECOND = 1_000_000
"""Microseconds in a second: virtual time is an integer count of microseconds."""
FOREVER = 1 << 62
"""A time no history reaches."""


def us(seconds: float) -> int:
    """Seconds as whole microseconds."""
    return round(seconds * SECOND)


ACTIVE: list[World] = []
"""The world running now (the simulator's log processor reports to it)."""


class Killed(BaseException):
    """The instance running this invocation died; raised out of the port call it was in."""


def stream_seed(seed: int, kind: str, key: str) -> int:
    """The seed of one named random stream (blake2b: ``hash()`` is salted per process)."""
    digest = hashlib.blake2b(f"{seed}/{kind}/{key}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big")


MASK64 = (1 << 64) - 1


class Draws:
    """A fault site's own random numbers: SplitMix64, cheap to start (a site may be asked once)."""

    __slots__ = ("_state", "count")

    def __init__(self, seed: int) -> None:
        self._state = seed & MASK64
        self.count = 0
        """How many numbers were drawn."""

    def random(self) -> float:
        """The next number in [0, 1)."""
        self.count += 1
        self._state = state = (self._state + 0x9E3779B97F4A7C15) & MASK64
        mixed = ((state ^ (state >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
        mixed = ((mixed ^ (mixed >> 27)) * 0x94D049BB133111EB) & MASK64
        return ((mixed ^ (mixed >> 31)) >> 11) * (1.0 / (1 << 53))


@dataclass
class Instance:
    """One process of a function (a Cloud Run instance): it lives and dies whole."""

    name: str
    function: str
    skew_us: int = 0
    dead: bool = False
    busy: bool = False
    served: int = 0
    deps: Any = None
    """The shell's dependencies of this process, built when it starts (caches die with it)."""


@dataclass
class Invocation:
    """One run of a function entry point, on one instance, in its own greenlet."""

    name: str
    instance: Instance
    work: Callable[[], Any]
    started_us: int = 0
    glet: greenlet.greenlet | None = None
    finished: bool = False
    outcome: str = ""
    """"ok", "retry" (a RetryableError), "error" (logged and acknowledged) or "killed"."""
    on_end: Callable[[Invocation], None] | None = None
    timers: list[Any] = field(default_factory=list)
    """The reply timers this invocation armed (run at its blocking points)."""
    lock_depth: int = 0


class World:
    """Virtual time, the scheduler, named random streams, faults and the trace."""

    def __init__(self, seed: int, *, disabled: frozenset[tuple[str, str, int]] = frozenset()):
        self.seed = seed
        self.now_us = 0
        self._heap: list[tuple[int, int, Callable[[], None]]] = []
        self._seq = 0
        self._streams: dict[tuple[str, str], random.Random] = {}
        self._sites: dict[tuple[str, str], Draws] = {}
        """Per fault site and entity: its own draws."""
        self.disabled = disabled
        """Fault decisions forced off: (site, entity, occurrence)."""
        self.fired: list[tuple[str, str, int]] = []
        """Every fault decision that fired, in order."""
        self.faults_on = True
        """False in the quiet phase: no fault fires."""
        self.trace: list[tuple[Any, ...]] = []
        self.current: Invocation | None = None
        self.on_failure: Callable[[str, BaseException], None] = lambda invocation, error: None
        """Told of every error the shell logs as ``event_failed`` (poison it acknowledged)."""
        self._main = greenlet.getcurrent()
        self._idle: list[greenlet.greenlet] = []
        """Greenlets whose invocation ended, each waiting for another to run."""
        self._started: list[Invocation] = []
        """Every invocation started (``close`` unwinds the ones still parked)."""
        self.steps = 0
        self.recorded = 0
        """How many reads and writes the oracle compares were recorded (``record``)."""
        self._until = -1
        """While ``run`` runs: the time it stops at (an invocation may not run past it alone)."""

    # Randomness and faults --------------------------------------------------------

    def stream(self, kind: str, key: str = "") -> random.Random:
        """The named random stream ``kind/key`` of this seed."""
        found = self._streams.get((kind, key))
        if found is None:
            found = random.Random(stream_seed(self.seed, kind, key))
            self._streams[(kind, key)] = found
        return found

    def chance(self, site: str, probability: float, entity: str = "") -> bool:
        """Whether the fault at ``site`` fires now (drawn from the site's own stream)."""
        if probability <= 0.0 or not self.faults_on:
            return False
        draws = self._sites.get((site, entity)) or self._draws(site, entity)
        occurrence = draws.count
        if draws.random() >= probability:
            return False
        decision = (site, entity, occurrence)
        if decision in self.disabled:
            return False
        self.fired.append(decision)
        self.log("fault", site, entity, occurrence)
        return True

    def pick(
        self, site: str, faults: tuple[tuple[str, float], ...], entity: str = ""
    ) -> str | None:
        """Which one of several faults at one point fires now, if any (one draw for all)."""
        if not self.faults_on:
            return None
        draws = self._sites.get((site, entity)) or self._draws(site, entity)
        occurrence = draws.count
        roll = draws.random()
        for name, probability in faults:
            if roll < probability:
                decision = (name, f"{site}/{entity}", occurrence)
                if decision in self.disabled:
                    return None
                self.fired.append(decision)
                self.log("fault", name, site, entity, occurrence)
                return name
            roll -= probability
        return None

    def _draws(self, site: str, entity: str) -> Draws:
        """A site's draws, started when first asked (a Draws is always true)."""
        draws = Draws(stream_seed(self.seed, "fault/" + site, entity))
        self._sites[(site, entity)] = draws
        return draws

    def record(self) -> int:
        """The place of a read or write the oracle compares: their order where times tie."""
        self.recorded += 1
        return self.recorded

    # Time and scheduling ------------------------------------------------------------

    def call_at(self, at_us: int, action: Callable[[], None]) -> None:
        """Run ``action`` in the scheduler at virtual time ``at_us`` (not before now)."""
        self._seq += 1
        heapq.heappush(self._heap, (max(at_us, self.now_us), self._seq, action))

    def call_later(self, delay_us: int, action: Callable[[], None]) -> None:
        """Run ``action`` in the scheduler ``delay_us`` from now."""
        self.call_at(self.now_us + delay_us, action)

    def start(self, invocation: Invocation) -> None:
        """Start ``invocation`` now, in a greenlet of its own (an idle one, or a new one)."""
        invocation.started_us = self.now_us
        glet = self._idle.pop() if self._idle else greenlet.greenlet(self._serve, parent=self._main)
        glet.gr_context = contextvars.Context()
        invocation.glet = glet
        self._started.append(invocation)
        self.log("start", invocation.name)
        self.current = invocation
        glet.switch(invocation)
        self.current = None

    def block(self, delay_us: int) -> None:
        """A scheduling point: park the current invocation for ``delay_us`` (0: yield).

        When nothing else is due until then, the invocation goes on at once:
        the scheduler would pick it next anyway (the same order, without two
        greenlet switches and a trip through the heap).

        Raises:
            Killed: The invocation's instance died meanwhile.
        """
        invocation = self.current
        if invocation is None:
            raise RuntimeError("a scheduling point outside any invocation")
        if invocation.instance.dead:
            raise Killed(invocation.name)
        wake = self.now_us + delay_us
        heap = self._heap
        if wake <= self._until and (not heap or heap[0][0] > wake):
            self.now_us = wake
            self.steps += 1
            return
        self.call_at(wake, lambda: self._switch_to(invocation))
        self.current = None
        self._main.switch()
        if invocation.instance.dead:
            raise Killed(invocation.name)

    def close(self) -> None:
        """End every greenlet of this world once its history is over, so the world can be freed.

        The garbage collector does not look into a suspended greenlet's frames
        (greenlet's documentation), and each of them refers to the world: a
        world left with parked invocations or idle greenlets is never freed,
        and a process running histories one after another would keep every
        one of them (about 1.7 MB each). An invocation still parked unwinds as
        its instance's death unwinds it (``Killed`` at its scheduling point,
        and at any port its ``finally`` blocks call); an idle greenlet gets
        ``GreenletExit``. The teardown is no part of the history: the trace is
        left as it was.
        """
        kept = len(self.trace)
        for invocation in self._started:
            glet = invocation.glet
            if invocation.finished or glet is None or glet.dead:
                continue
            invocation.instance.dead = True
            self.current = invocation
            glet.throw(Killed(invocation.name))
            self.current = None
        for glet in self._idle:
            glet.throw(greenlet.GreenletExit)
        self._idle.clear()
        self._started.clear()
        self._heap.clear()
        del self.trace[kept:]

    def kill(self, instance: Instance, why: str) -> None:
        """The instance dies: its invocations raise ``Killed`` at their next point."""
        if not instance.dead:
            instance.dead = True
            self.log("kill", instance.name, why)

    def run(self, until_us: int | None = None, max_steps: int | None = None) -> None:
        """Run scheduled entries in time order until none is left (or ``until_us``)."""
        heap = self._heap
        self._until = until_us if until_us is not None else FOREVER
        try:
            while heap:
                if until_us is not None and heap[0][0] > until_us:
                    self.now_us = until_us
                    return
                at, _, action = heapq.heappop(heap)
                self.now_us = at
                self.steps += 1
                action()
                if max_steps is not None and self.steps >= max_steps:
                    raise RuntimeError(f"no quiescence after {max_steps} steps (a livelock?)")
        finally:
            self._until = -1

    @property
    def idle(self) -> bool:
        """Whether nothing at all is scheduled."""
        return not self._heap

    def next_time(self) -> int | None:
        """When the next scheduled entry runs, if any."""
        return self._heap[0][0] if self._heap else None

    def _switch_to(self, invocation: Invocation) -> None:
        if invocation.finished or invocation.glet is None:
            return
        self.current = invocation
        invocation.glet.switch()
        self.current = None

    def _serve(self, invocation: Invocation) -> None:
        """A greenlet's life: run an invocation, then wait to be handed the next one."""
        while True:
            self._body(invocation)
            self._idle.append(greenlet.getcurrent())
            invocation = self._main.switch()

    def _body(self, invocation: Invocation) -> None:
        outcome = "ok"
        try:
            outcome = invocation.work() or "ok"
        except Killed:
            outcome = "killed"
        finally:
            invocation.finished = True
            invocation.outcome = outcome
            self.log("end", invocation.name, outcome)
            if invocation.on_end is not None:
                invocation.on_end(invocation)

    # The trace ----------------------------------------------------------------------

    def log(self, kind: str, *fields: Any) -> None:
        """Add one line to the trace."""
        self.trace.append((self.now_us, kind, *fields))

    def digest(self) -> str:
        """A digest of the whole trace: equal for equal runs, byte for byte.

        The trace holds only str, int, float, bool and None, so ``marshal``
        encodes it exactly, for about half of ``repr``'s cost. Format version 2:
        the later ones refer back to an object seen before by identity, so equal
        traces built from different objects would give different bytes.
        """
        return hashlib.blake2b(marshal.dumps(self.trace, 2), digest_size=16).hexdigest()
