"""The function platform: instances, triggers, deadlines, retries and kills.

Theory of operation. Five functions run as in ``functions/main.py``, each
delivery on a warm idle instance of its function or on a cold new one (a new
``Deps``: empty caches, as a new Cloud Run process has). An invocation's
outcome follows the entry points' error policy: a transient error (``errors.is_transient``) asks for
the event again, any other ``Exception`` is logged and acknowledged, and a
``Killed`` instance answers nothing. The triggers then behave as the real
ones do:

- Pub/Sub push to ``turn_send``: at least once; a failure, a kill or no
  answer within the ack deadline (600 s) delivers again after a backoff
  (10 s doubling to 600 s), and a delivery past its deadline runs beside the
  one still going (Cloud Run does not stop it); after ten attempts the
  message is dead-lettered. Rarely, an acknowledged message comes again.
- Cloud Tasks to ``stream_follow`` and ``timeout``: dispatched at the
  schedule time plus latency, sometimes minutes late, rarely twice; retried
  on failure (2 s doubling to 300 s) within a 1800 s dispatch deadline.
- Cloud Scheduler calls ``reconcile`` every minute, with no retry.
- Slack's Events API calls ``chat_ingress``, and re-sends an event whose
  acknowledgement took longer than 3 s (at once, after a minute, after five).

A time limit never stops an invocation; only a kill does, and a kill takes
the whole instance with every invocation on it.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from local.sim.world import SECOND, Instance, Invocation, World, us

TIME_LIMITS = {
    "chat_ingress": 60,
    "turn_send": 540,
    "stream_follow": 1800,
    "timeout": 1800,
    "reconcile": 1800,
}
ACK_DEADLINE_US = 600 * SECOND
MAX_DELIVERIES = 10


@dataclass
class Failure:
    """An invocation that failed with an exception the simulation did not plan."""

    invocation: str
    error: str
    at_us: int


@dataclass
class PlatformStats:
    """What the platform did, for the "sometimes" counts."""

    invocations: int = 0
    cold_starts: int = 0
    kills: int = 0
    redeliveries: int = 0
    overlapping_deliveries: int = 0
    dead_letters: int = 0
    retries: int = 0
    errors: int = 0
    by_function: dict[str, int] = field(default_factory=dict)


class Platform:
    """Runs the entry points on instances, and redelivers as the triggers do."""

    def __init__(self, world: World, make_deps: Callable[[Instance], Any]) -> None:
        self.world = world
        self._make_deps = make_deps
        self.instances: dict[str, list[Instance]] = {}
        self.running: dict[str, Invocation] = {}
        self.failures: list[Failure] = []
        self.outcomes: dict[str, str] = {}
        """Each invocation's outcome, by name."""
        self.stats = PlatformStats()
        self._count = 0
        self.pending = 0
        """Deliveries and dispatches scheduled but not started, and invocations running."""
        self.transient: Callable[[BaseException], bool] = lambda error: False
        """The shell's ``errors.is_transient`` (set once the shell is imported)."""

    # Instances -----------------------------------------------------------------------------

    def _instance(self, function: str) -> Instance:
        world = self.world
        pool = self.instances.setdefault(function, [])
        idle = [i for i in pool if not i.dead and not i.busy]
        if idle and not world.chance("platform.cold_start", 0.3, function):
            return idle[0]
        rng = world.stream("platform/skew", function)
        skew = us(rng.uniform(-0.5, 0.5)) if rng.random() > 0.01 else us(rng.uniform(-5, 5))
        instance = Instance(name=f"{function}@{len(pool) + 1}", function=function, skew_us=skew)
        instance.deps = self._make_deps(instance)
        pool.append(instance)
        self.stats.cold_starts += 1
        return instance

    def invoke(
        self,
        function: str,
        label: str,
        work: Callable[[Any], object],
        on_end: Callable[[str], None],
    ) -> Invocation:
        """Run ``work(deps)`` now as one invocation of ``function``; ``on_end(outcome)`` after."""
        self._count += 1
        self.stats.invocations += 1
        self.stats.by_function[function] = self.stats.by_function.get(function, 0) + 1
        instance = self._instance(function)
        instance.busy = True
        instance.served += 1
        name = f"{function}#{self._count}@{instance.name}:{label}"
        transient = self.transient

        def run() -> str:
            try:
                answer = work(instance.deps)
            except Exception as error:  # noqa: BLE001 - the entry points log and acknowledge these
                if transient(error):
                    return "retry"
                self.failed(name, error)
                return "error"
            return "retry" if answer == "retry" else "ok"

        def ended(invocation: Invocation) -> None:
            instance.busy = False
            self.running.pop(name, None)
            self.pending -= 1
            self.outcomes[name] = invocation.outcome
            if invocation.outcome == "killed":
                self.stats.kills += 1
            on_end(invocation.outcome)

        invocation = Invocation(name=name, instance=instance, work=run, on_end=ended)
        self.running[name] = invocation
        self.pending += 1
        self.world.start(invocation)
        return invocation

    def failed(self, invocation: str, error: BaseException) -> None:
        """An invocation failed with an error nobody planned (the shell logged ``event_failed``)."""
        self.stats.errors += 1
        frames = traceback.extract_tb(error.__traceback__)[-4:]
        where = " < ".join(f"{f.name}:{f.lineno}" for f in reversed(frames))
        detail = f"{type(error).__name__}: {error} (at {where})"
        self.failures.append(Failure(invocation, detail, self.world.now_us))
        self.world.log("error", invocation, type(error).__name__, str(error)[:200])

    def hand_over_at(self) -> int | None:
        """The current invocation's hand-over deadline (the shell's ``until``), in virtual µs."""
        invocation = self.world.current
        if invocation is None:
            return None
        budget = getattr(invocation.instance.deps.settings, "follow_budget_seconds", None)
        return None if budget is None else invocation.started_us + us(budget)

    # Triggers --------------------------------------------------------------------------------

    def push(
        self, function: str, label: str, work: Callable[[Any], object], attempt: int = 1
    ) -> None:
        """Pub/Sub push delivery (at least once, ack deadline, backoff, dead letter)."""
        world = self.world
        state = {"answered": False}

        def redeliver(why: str) -> None:
            if attempt >= MAX_DELIVERIES:
                self.stats.dead_letters += 1
                world.log("dead-letter", label)
                return
            self.stats.redeliveries += 1
            backoff = min(600.0, 10.0 * 2 ** (attempt - 1)) * (
                0.5 + world.stream("pubsub/backoff").random()
            )
            world.log("redeliver", label, why, attempt)
            self.later(us(backoff), lambda: self.push(function, label, work, attempt + 1))

        def on_end(outcome: str) -> None:
            if state["answered"]:
                return
            state["answered"] = True
            if outcome in ("retry", "killed"):
                redeliver(outcome)
            elif world.chance("pubsub.duplicate", 0.01, label):
                self.later(
                    us(world.stream("pubsub/dup").uniform(0, 600)),
                    lambda: self.push(function, label, work, attempt),
                )

        def deadline() -> None:
            if not state["answered"] and invocation.finished is False:
                state["answered"] = True
                self.stats.overlapping_deliveries += 1
                redeliver("ack deadline")

        invocation = self.invoke(function, label, work, on_end)
        if not invocation.finished:
            self.later(ACK_DEADLINE_US, deadline, counts=False)

    def dispatch(
        self,
        function: str,
        label: str,
        work: Callable[[Any], object],
        attempt: int = 1,
        on_done: Callable[[], None] | None = None,
    ) -> None:
        """Cloud Tasks dispatch (at least once, dispatch deadline, retries)."""
        world = self.world
        state = {"answered": False}

        def retry(why: str) -> None:
            if attempt >= 50:
                world.log("task-gave-up", label)
                if on_done:
                    on_done()
                return
            self.stats.retries += 1
            backoff = min(300.0, 2.0 * 2 ** (attempt - 1))
            world.log("task-retry", label, why, attempt)
            self.later(
                us(backoff), lambda: self.dispatch(function, label, work, attempt + 1, on_done)
            )

        def on_end(outcome: str) -> None:
            if state["answered"]:
                return
            state["answered"] = True
            if outcome in ("retry", "killed"):
                retry(outcome)
            else:
                if on_done:
                    on_done()
                if world.chance("tasks.duplicate", 0.005, label):
                    self.later(
                        us(world.stream("tasks/dup").uniform(1, 120)),
                        lambda: self.dispatch(function, label, work, attempt),
                    )

        def deadline() -> None:
            if not state["answered"] and not invocation.finished:
                state["answered"] = True
                self.stats.overlapping_deliveries += 1
                retry("dispatch deadline")

        invocation = self.invoke(function, label, work, on_end)
        if not invocation.finished:
            self.later(us(TIME_LIMITS[function]), deadline, counts=False)

    def later(self, delay_us: int, action: Callable[[], None], counts: bool = True) -> None:
        """Schedule trigger work; ``counts``: it keeps the world from being quiescent."""
        if not counts:
            self.world.call_later(delay_us, action)
            return
        self.pending += 1

        def run() -> None:
            self.pending -= 1
            action()

        self.world.call_later(delay_us, run)
