"""One seed, one history: build the world, run it to quiescence, judge it.

Theory of operation. A ``Simulation`` expands its seed into a configuration
(the agents' profile, the binding's settings, the workload) and builds the
world: one in-memory Firestore, Slack, Pub/Sub and Cloud Tasks, the agents,
and the function platform, whose instances each get a ``Deps`` of their own
from those services. It runs a chaos phase, in which every fault may
strike, until the last post plus half an hour, then a quiet phase without
faults, until nothing is pending and every turn has ended, or a liveness
bound passes. The oracle then judges the history. The shell is reached only
through ``ShellCalls``, the one place that knows its entry points.
"""

from __future__ import annotations

import importlib
import json
import random
import re
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import httpx

from local.sim.agent import AgentServer, AgentWorld, DecodedLink, SimAgentTransport
from local.sim.oracle import Oracle, Violation
from local.sim.people import APPROVERS, PEOPLE, SIGNING_SECRET, People
from local.sim.plants import Plant
from local.sim.platform import Platform
from local.sim.scripts import AgentProfile
from local.sim.services import (
    EPOCH_SECONDS,
    NamedTask,
    SimClock,
    SimDocuments,
    SimIds,
    SimRuntime,
    SimTaskQueue,
    SimTurnQueue,
    run_due_timers,
)
from local.sim.slack import SimChat, SimSlack
from local.sim.tripwires import tripwires
from local.sim.world import ACTIVE, SECOND, Draws, Instance, World, stream_seed, us

CHANNELS = ["C0SIM1", "C0SIM2", "C0SIM3"]
BINDING = "sim"
CHAOS_AFTER_LAST_POST_US = 1800 * SECOND
LIVENESS_BOUND_US = 9000 * SECOND
"""Quiet time within which every turn must end: a 1800 s lease, a sweep, Pub/Sub's 600 s
backoff, the 900 s give-up, a question's timeout and the longest script fit well inside."""
SLICE_US = 30 * SECOND
WIRE_SHARE = 0.1
"""The share of instances that reach the agents over HTTP and SSE (the others: decoded)."""


class ShellCalls:
    """The shell's entry points, as the simulator calls them (one place to follow the shell).

    The handlers hold the functions' error policy: they answer "ack" or "retry",
    as the platform's triggers are answered.
    """

    def __init__(self) -> None:
        handlers = importlib.import_module("shared.handlers")
        self.ingress = importlib.import_module("shared.ingress")
        self.handlers = handlers
        self.transient: Callable[[BaseException], bool] = importlib.import_module(
            "shared.errors"
        ).is_transient
        """The shell's error mapping: a failure a later delivery may not meet (an entry
        point that lets it escape answers 500, and the trigger delivers again)."""

    def handle_event(self, deps: Any, body: bytes, headers: dict[str, str]) -> Any:
        return self.ingress.handle_event(deps, body, headers)

    def handle_interaction(self, deps: Any, body: bytes, headers: dict[str, str]) -> Any:
        return self.ingress.handle_interaction(deps, body, headers)

    def turn_send(self, deps: Any, payload: dict[str, Any]) -> str:
        return str(self.handlers.turn_send(deps, payload))

    def task(self, target: str, deps: Any, body: dict[str, Any]) -> str:
        handler = (
            self.handlers.stream_follow if target == "stream_follow" else self.handlers.timeout
        )
        return str(handler(deps, body))

    def sweep(self, deps: Any) -> str:
        return str(self.handlers.reconcile(deps))


def config_yaml(profile: AgentProfile) -> str:
    """The backends and bindings file of one seed."""
    backend: dict[str, Any] = {
        "name": "sim",
        "url": "http://agent.sim/",
        "dialect": profile.dialect,
    }
    if profile.dialect == "kagent-v1":
        backend |= {"namespace": "team", "agent": "helper"}
    binding: dict[str, Any] = {
        "name": BINDING,
        "channels": CHANNELS,
        "agentBackend": "sim",
        "identity": {"userId": "kourier-sim"},
    }
    if profile.pauses:
        binding["interactions"] = {
            "questions": {"timeout": "5m"},
            "toolApprovals": {"approvers": list(APPROVERS), "timeout": "5m"},
        }
    return json.dumps({"agentBackends": [backend], "bindings": [binding]})


@dataclass
class Result:
    """What one seed did and what the oracle found."""

    seed: int
    violations: list[Violation]
    accepted: list[Violation]
    """Breaks of the promise the product knowingly allows (counted, not failed)."""
    digest: str
    turns: int
    fired: list[tuple[str, str, int]]
    virtual_seconds: float
    steps: int


TUNING: dict[str, tuple[float, ...]] = {
    "KOURIER_LEASE_MARGIN_SECONDS": (60.0, 20.0, 120.0),
    "KOURIER_MAX_TAKEOVERS": (5, 3, 8),
    "KOURIER_BACKOFF_START_SECONDS": (1.0, 0.2, 3.0),
    "KOURIER_BACKOFF_CAP_SECONDS": (60.0, 10.0),
    "KOURIER_POLL_CAP_SECONDS": (60.0, 5.0),
    "KOURIER_BUSY_NOTICE_SECONDS": (120.0, 10.0),
    "KOURIER_INLINE_WAIT_SECONDS": (5.0, 0.0, 20.0),
    "KOURIER_CHECKPOINT_SECONDS": (5.0, 0.5, 30.0),
    "KOURIER_REREAD_AFTER_DROP_SECONDS": (1.0, 0.0, 10.0),
}
"""Settings a seed may vary, and their values: the default first (kept half of the time)."""


def draw_tuning(rng: random.Random) -> dict[str, float]:
    """A seed's settings: each one its default half of the time, else another legal value."""
    tuning = {}
    for name, values in TUNING.items():
        if rng.random() < 0.5:
            tuning[name] = rng.choice(values[1:])
    return tuning


class Simulation:
    """The world of one seed."""

    def __init__(
        self,
        seed: int,
        *,
        disabled: Iterable[tuple[str, str, int]] = (),
        threads: int | None = None,
    ) -> None:
        self.seed = seed
        self.world = world = World(seed, disabled=frozenset(disabled))
        swarm = world.stream("swarm")
        self.profile = AgentProfile.draw(swarm)
        self.budget = swarm.choice((480.0, 480.0, 120.0))
        self.tuning = draw_tuning(world.stream("tuning"))
        """This seed's settings beside the defaults (legal values the operator may choose)."""
        self.agents = AgentWorld(world, self.profile)
        self.documents = SimDocuments(world)
        self.slack = SimSlack(world, list(CHANNELS), dict(PEOPLE))
        self.platform = Platform(world, self.make_deps)
        self.turn_queue = SimTurnQueue(world, self.deliver_turn)
        self.task_queue = SimTaskQueue(world, self.dispatch_task)
        self.chat = SimChat(self.slack)
        self.agent_server = AgentServer(self.agents, self.platform.hand_over_at)
        self.agent_server.run_timers = lambda limit: run_due_timers(world, limit)
        self.http = httpx.Client(transport=SimAgentTransport(self.agent_server))
        """One HTTP client for every instance: on an in-process transport it holds no state."""
        self.decoded = DecodedLink(self.agent_server)
        """The fast lane: most instances get the agents' answers decoded (no httpx, SSE, JSON)."""
        self.people = People(
            self, threads if threads is not None else swarm.randint(4, 12), CHANNELS
        )
        self.shell = ShellCalls()
        self.platform.transient = self.shell.transient
        self.slack.active_turn = self._active_turn
        self.slack.on_prompt = self.people.prompt_posted
        world.on_failure = self.platform.failed
        self._settings: Any = None
        self._config: Any = None
        self.reconciling = True
        self._lineage: dict[str, tuple[list[Any], dict[str, int]]] | None = None
        self._stopped_at: dict[str, int] = {}
        """When a person's stop was first written to each stopped turn (indexed with the lineage)."""

    # Wiring -------------------------------------------------------------------------------

    def make_deps(self, instance: Instance) -> Any:
        from shared.a2a.discovery import CardCache

        deps_class = importlib.import_module("shared.bootstrap").Deps
        if self._settings is None:
            self._settings = sim_settings(self.budget, self.tuning)
            self._config = sim_config(config_yaml(self.profile))
        clock = SimClock(self.world, instance)
        return deps_class(
            settings=self._settings,
            config=self._config,
            clock=clock,
            ids=SimIds(self.world, instance),
            runtime=SimRuntime(self.world, clock),
            documents=self.documents,
            turns=self.turn_queue,
            tasks=self.task_queue,
            chat=self.chat,
            http=self.http,
            agent_link=self.agent_link(instance),
            cards=CardCache(),
        )

    def agent_link(self, instance: Instance) -> Any:
        """How this instance reaches the agents: HTTP and SSE for about one in ten.

        The two lanes give the same history (the same answers, read at the same
        scheduling points); the wire lane keeps httpx, SSE and JSON covered.
        """
        from shared.a2a.transport import HttpLink

        lane = Draws(stream_seed(self.seed, "agent/lane", instance.name))
        return HttpLink(self.http) if lane.random() < WIRE_SHARE else self.decoded

    def slack_time(self, at_us: int) -> float:
        """Slack's clock (no skew) at virtual time ``at_us``."""
        return EPOCH_SECONDS + at_us / SECOND

    def _active_turn(self, channel: str, thread_ts: str) -> str | None:
        session = self.documents.peek("kourier_sessions", f"{BINDING}-{channel}-{thread_ts}")
        return None if session is None else session.get("active_turn")

    def deliver_turn(self, payload: dict[str, Any]) -> None:
        """Pub/Sub: a published turn reaches ``turn_send`` after a latency."""
        world = self.world
        rng = world.stream("pubsub/delivery")
        delay = 0.01 + rng.random() * 0.1
        if world.chance("pubsub.delivery_tail", 0.01):
            delay += rng.uniform(30, 120)
        label = f"{payload['turn_id']}"
        self.platform.later(
            us(delay),
            lambda: self.platform.push(
                "turn_send", label, lambda deps: self.shell.turn_send(deps, payload)
            ),
        )

    def dispatch_task(self, target: str, body: dict[str, Any], task: NamedTask | None) -> None:
        """Cloud Tasks: a created task runs its target at its time (or later)."""
        world = self.world
        rng = world.stream("tasks/delivery")
        due = max(world.now_us, task.due_us if task else world.now_us) + us(
            0.02 + rng.random() * 0.2
        )
        if world.chance("tasks.late", 0.005):
            due += us(rng.uniform(60, 300))
        label = (task.name if task and task.name else target) or target

        def done() -> None:
            if task is not None:
                task.done_us = world.now_us

        self.platform.later(
            due - world.now_us,
            lambda: self.platform.dispatch(
                target, label, lambda deps: self.shell.task(target, deps, body), on_done=done
            ),
        )

    def _reconcile_tick(self) -> None:
        if not self.reconciling:
            return
        self.platform.invoke("reconcile", "sweep", self.shell.sweep, lambda outcome: None)
        self.world.call_later(60 * SECOND, self._reconcile_tick)

    # Running -----------------------------------------------------------------------------

    def run(self) -> Result:
        world = self.world
        self.people.schedule()
        world.call_later(60 * SECOND, self._reconcile_tick)
        quiet_at = self.people.last_post_us() + CHAOS_AFTER_LAST_POST_US
        bound = quiet_at + LIVENESS_BOUND_US
        ACTIVE.append(world)
        tripped: list[str] = []
        try:
            with tripwires(tripped.append):
                self._run_until(quiet_at, bound)
        finally:
            ACTIVE.remove(world)
        self.reconciling = False
        oracle = Oracle(self)
        violations = oracle.check()
        violations += [Violation("S0 tripwire", what) for what in dict.fromkeys(tripped)]
        result = Result(
            seed=self.seed,
            violations=violations,
            accepted=oracle.accepted,
            digest=world.digest(),
            turns=len(self.turn_ids()),
            fired=list(world.fired),
            virtual_seconds=world.now_us / SECOND,
            steps=world.steps,
        )
        world.close()
        return result

    def _run_until(self, quiet_at: int, bound: int) -> None:
        """Chaos until ``quiet_at``, then quiet, until quiescence or ``bound``."""
        world = self.world
        while True:
            world.run(until_us=world.now_us + SLICE_US)
            if world.faults_on and world.now_us >= quiet_at:
                world.faults_on = False
                world.log("quiet")
            if world.now_us > self.people.last_post_us() and self.quiescent():
                return
            if world.now_us >= bound:
                return

    def quiescent(self) -> bool:
        if self.platform.pending:
            return False
        collections = self.documents.collections
        turns = collections.get("kourier_turns", {})
        if any(stored.data.get("status") != "done" for stored in turns.values()):
            return False
        # A session still holding an ended turn (its carrier died before letting go)
        # is released by a sweep once its lease runs out: wait for that too.
        sessions = collections.get("kourier_sessions", {})
        return all(stored.data.get("active_turn") is None for stored in sessions.values())

    # What the oracle asks ----------------------------------------------------------------

    def turn_ids(self) -> list[str]:
        return sorted(self.documents.collections.get("kourier_turns", {}))

    def turn_of_task(self, task_id: str | None) -> str | None:
        task = self.agents.tasks.get(task_id or "")
        return None if task is None else task.message_id.removeprefix("slack-")

    def answered_turns(self) -> set[str]:
        answered = set()
        for request in self.agents.requests:
            if request.method in ("SendStreamingMessage", "message/stream") and request.task_id:
                turn = self.turn_of_task(request.task_id)
                if turn:
                    answered.add(turn)
        return answered

    def lineage_events(
        self, turn_id: str, kept: bool = True, before: int | None = None
    ) -> list[dict[str, Any]]:
        """The events the turn's carriers read and kept (a dead carrier's last ones are lost).

        A carrier keeps what it read once a checkpoint it wrote after the read
        holds it (or once it ends the turn): a write of the turn that stores no
        checkpoint (its shown steps, a takeover's fence) keeps nothing, and a
        read and a write at the same microsecond are told apart by their place
        (``World.record``). Without ``kept``, every event any carrier read, a
        dead one's last ones too. With ``before`` (a world time), only the
        events read before it. Asked once the history has ended (the oracle's
        question): the deliveries and writes are indexed by turn on the first call.
        """
        if self._lineage is None:
            self._lineage = self._index_lineage()
        deliveries, cutoff = self._lineage.get(turn_id, ([], {}))
        outcomes = self.platform.outcomes
        events: list[tuple[int, dict[str, Any]]] = []
        for delivery in deliveries:
            for at_us, place, invocation, event in delivery.events:
                lost = outcomes.get(invocation, "ok") != "ok" and place > cutoff.get(invocation, -1)
                if (kept and lost) or (before is not None and at_us >= before):
                    continue
                events.append((place, event))
        return [event for _, event in sorted(events, key=lambda item: item[0])]

    def _index_lineage(self) -> dict[str, tuple[list[Any], dict[str, int]]]:
        """Per turn: the deliveries of its requests, and each invocation's last checkpoint of it."""
        lineage: dict[str, tuple[list[Any], dict[str, int]]] = {}
        for delivery in self.agents.deliveries:
            request = delivery.request
            owner = (
                (request.message_id or "").removeprefix("slack-")
                if request.message_id
                else self.turn_of_task(delivery.task_id)
            )
            if owner is not None:
                lineage.setdefault(owner, ([], {}))[0].append(delivery)
        stored: dict[str, tuple[Any, Any]] = {}
        for at_us, invocation, _op, collection, key, data, place in self.documents.writes:
            if collection == "kourier_turns" and key in lineage:
                checkpoint = (data.get("checkpoint"), data.get("checkpoint_parts"))
                if stored.get(key) != checkpoint or data.get("status") == "done":
                    lineage[key][1][invocation] = place
                stored[key] = checkpoint
                if data and data.get("stop"):
                    self._stopped_at.setdefault(key, at_us)
        return lineage

    def reference_text(self, turn_id: str) -> str | None:
        from local.sim.reference import ReferenceReply

        reference = ReferenceReply()
        events = self.lineage_events(turn_id)
        if not events:
            return None
        for event in events:
            reference.feed(event)
        return reference.answer

    def first_results(
        self, turn_id: str, kept: bool = True, after_stop: bool = False
    ) -> dict[str, bool]:
        """Each step's first result, ok or failed (see ``lineage_events`` for ``kept``).

        A step finishes at the first result of its call; but a task snapshot is
        history, and "of several results of one call in a snapshot the last
        counts" (the contract): a snapshot gives each call one result, its last.
        A person's stop ends the reply where it stands (the README's stop
        button): what the turn reads once the stop is written (the stop's own
        read of the task, to cancel it) is not a result the reply must show
        (it may: the stop finishes a step still running at the result the
        cancelled task holds), unless ``after_stop`` (any result at all, for a
        step shown complete).
        """
        results: dict[str, bool] = {}
        self.lineage_events(turn_id)  # indexes the lineage, and when each turn was stopped
        stopped_at = None if after_stop else self._stopped_at.get(turn_id)
        events = self.lineage_events(turn_id, kept, before=stopped_at)
        for event in events:
            said: dict[str, bool] = {}
            for part in _tool_parts(event):
                data = part.get("data") or {}
                if "response" in data and data.get("id"):
                    response = data["response"]
                    failed = isinstance(response, dict) and (
                        bool(response.get("error")) or response.get("isError") is True
                    )
                    if event["kind"] == "task":
                        said[data["id"]] = not failed
                    else:
                        said.setdefault(data["id"], not failed)
            for call_id, ok in said.items():
                results.setdefault(call_id, ok)
        return results


def _tool_parts(event: dict[str, Any]) -> list[dict[str, Any]]:
    kind = event["kind"]
    if kind == "artifact":
        return [p for p in event["parts"] if "data" in p]
    if kind == "status" and event.get("message"):
        return [p for p in event["message"].get("parts", []) if "data" in p]
    if kind == "task":  # the agent's messages, then the artifacts
        messages = event.get("history", [])[1:]
        status_message = (event.get("status") or {}).get("message")
        if status_message:  # a snapshot's working status message carries tool parts too
            messages = [*messages, status_message]
        parts = [p for message in messages for p in message.get("parts", []) if "data" in p]
        return parts + [p for a in event.get("artifacts", []) for p in a["parts"] if "data" in p]
    return []


def sim_settings(budget: float, tuning: dict[str, float]) -> Any:
    """The settings of one seed: the process's validated base with this seed's values.

    Validating reads the environment (about 3 ms, a few per cent of a history);
    the tuned values have their fields' types already, so a copy needs none.
    """
    fields = {field.alias: name for name, field in type(base_settings()).model_fields.items()}
    values = {"KOURIER_FOLLOW_BUDGET_SECONDS": budget, **tuning}
    return base_settings().model_copy(update={fields[key]: value for key, value in values.items()})


@lru_cache(maxsize=1)
def base_settings() -> Any:
    """The simulator's settings before a seed's own values (validated once per process)."""
    from shared.settings import Settings

    return Settings.model_validate(
        {
            "GOOGLE_CLOUD_PROJECT": "sim",
            "SLACK_SIGNING_SECRET": SIGNING_SECRET,
            "SLACK_BOT_TOKEN": "xoxb-sim",
        }
    )


@lru_cache(maxsize=64)
def sim_config(text: str) -> Any:
    """The configuration of an agent profile: parsed once per process (it is frozen, and
    seeds share a handful of profiles)."""
    from shared.config import parse_config

    return parse_config(text, source="sim")


def run_seed(seed: int, disabled: Iterable[tuple[str, str, int]] = ()) -> Result:
    """Run one seed to the end and judge it."""
    return Simulation(seed, disabled=disabled).run()


def shrink(seed: int, failing: Result) -> Result:
    """Drop fired faults while the same rule still breaks (ddmin over the fault decisions)."""
    codes = {v.code for v in failing.violations}
    fired = list(failing.fired)
    disabled: list[tuple[str, str, int]] = []
    best = failing
    chunk = max(1, len(fired) // 2)
    while chunk >= 1 and fired:
        progressed = False
        for start in range(0, len(fired), chunk):
            trial = fired[start : start + chunk]
            result = run_seed(seed, disabled=[*disabled, *trial])
            if codes & {v.code for v in result.violations}:
                disabled += trial
                fired = [f for f in fired if f not in trial]
                best = result
                progressed = True
                break
        if not progressed:
            chunk //= 2
    return best


def cpu_seconds() -> float:
    return time.process_time()


def trace_of(seed: int, result: Result) -> list[tuple[object, ...]]:
    """The whole trace of a seed's history, with the faults ``result`` kept (a replay)."""
    everything = run_seed(seed)
    dropped = [fault for fault in everything.fired if fault not in result.fired]
    simulation = Simulation(seed, disabled=dropped)
    simulation.run()
    return simulation.world.trace


TURN_IN_TEXT = re.compile(r"C0SIM\d-\d+\.\d+")


def broken_rules(result: Result) -> set[tuple[str, str]]:
    """The rules a history broke, by rule and turn (stable across small timing changes)."""
    rules = set()
    for violation in result.violations:
        turn = TURN_IN_TEXT.search(violation.detail)
        rules.add((violation.code, turn.group(0) if turn else violation.detail))
    return rules


def first_catch(
    bug: Plant, seeds: Iterable[int], baseline: dict[int, Result]
) -> tuple[int, int] | None:
    """The first seed whose history breaks a rule with ``bug`` planted that it keeps without it.

    Returns:
        (seed, how many histories it took), or None within ``seeds``.
    """
    from local.sim.plants import planted

    for count, seed in enumerate(seeds, start=1):
        if seed not in baseline:
            baseline[seed] = run_seed(seed)
        with planted(bug):
            result = run_seed(seed)
        if broken_rules(result) - broken_rules(baseline[seed]):
            return seed, count
    return None
