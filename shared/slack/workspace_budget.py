"""A workspace's Slack budget (``shared.slack.tiers.Budget``), shared by every function instance.

Theory of operation. Each workspace's budget is one document
(``kourier_slack_budgets/<team>``), read, decided on and written back under
a precondition on its update time, read again on a conflict (after
``ATTEMPTS`` conflicts the call asks again a second later, as if refused).
Only the calls the budget counts write it: a stream's start and its stop,
and each session status that goes. A refused call writes nothing.

A write counts the rest of a short turn with it (``AHEAD``): while the
workspace is quiet, a turn's first status also reserves its stream's start
and stop and its last status (``Budget.reserve``: slots dated
``RESERVED_FOR`` ahead), a start reserves the stop and the last status, a
stop the last status. This process keeps what it reserved for each thread
(``_held``), and a call of the thread made before its reservation's date
goes without a write: a turn that answers within that time writes the
budget once, not four times. A reservation lost with its process (the turn
taken over elsewhere) only costs the taker a write. A stream started or
stopped on a reservation counts as open until its stop's date; the reply
renews one that streams longer (``keep_open``).

At Slack's full rates (20 starts, 20 stops and 50 statuses a minute, when
nothing is reserved) that is at most 1.5 writes a second to one document,
above Firestore's guidance of about one sustained, which it takes in
bursts; a write that loses the race is read and tried again. A budget that
cannot be read or written in time lets the call go (Slack's own 429 and
slack_sdk's retry after Retry-After still hold the limit): a budget is
never why an answer is not shown.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import structlog

from shared.errors import DocumentExists, PreconditionFailed, StoreUnavailable
from shared.ports import Clock, Documents
from shared.slack.tiers import STATUS_KEPT, STREAM_LIFETIME, Budget

log = structlog.get_logger()

BUDGETS = "kourier_slack_budgets"
ATTEMPTS = 8
"""Reads and conditional writes before a contended budget says to ask again later."""
CONTENDED_WAIT = 1.0
"""Seconds until a call that found the budget contended asks again."""
NO_TEAM = "-"
"""The budget of turns that name no team (one workspace)."""


START = "chat.startStream"
STOP = "chat.stopStream"
STATUS = "agents.sessions.setStatus"
AHEAD: Mapping[str, tuple[str, ...]] = {
    STATUS: (START, STOP, STATUS),
    START: (STOP, STATUS),
    STOP: (STATUS,),
}
"""The calls a turn makes after each counted call (a working status, a start, a stop),
reserved in its write while the workspace is quiet."""


@dataclass(frozen=True)
class Admission:
    """What the budget answered: whether the call may go, and how many streams share appends."""

    retry_at: float | None
    """None: the call may go now (it was counted); else when to ask again."""
    open_streams: int = 1
    open_until: float | None = None
    """A stream started: when it stops counting as open unless renewed (``keep_open``);
    None: for its whole life, or until stopped."""


class WorkspaceBudget:
    """The budgets of every workspace, in Firestore."""

    def __init__(self, documents: Documents, clock: Clock, log_writes: bool = False) -> None:
        self._documents = documents
        self._clock = clock
        self._log_writes = log_writes
        self._held: dict[tuple[str, str], float] = {}
        """(thread, method) to the date of a slot this process reserved for the thread's next call."""

    def start(self, team: str | None, thread: str, index: int) -> Admission:
        """May the thread's stream ``index`` start now (chat.startStream)? It then counts as open."""
        stream = _stream_key(thread, index)
        if self._use(thread, START):
            return Admission(None, self.open_streams(team), self._held_until(thread, STOP))
        # The stream's stop is reserved with its start (it counts as open until then), or
        # takes a slot of its own, which says it closed.
        self._held.pop((thread, STOP), None)

        def decide(budget: Budget, now: float) -> float | None:
            retry_at = budget.take(START, now)
            if retry_at is None:
                budget.opened(stream, now + STREAM_LIFETIME)
            return retry_at

        def reserved(budget: Budget, held: dict[str, float]) -> None:
            if STOP in held:  # the stream counts as open until its stop's date
                budget.opened(stream, held[STOP])

        admission = self._change(team, thread, decide, AHEAD[START], reserved)
        if admission.retry_at is None:
            return Admission(None, admission.open_streams, self._held_until(thread, STOP))
        return admission

    def stop(self, team: str | None, thread: str, index: int) -> Admission:
        """May the thread's stream ``index`` stop now (chat.stopStream)? It is then no longer open."""
        if self._use(thread, STOP):
            return Admission(None)

        def decide(budget: Budget, now: float) -> float | None:
            retry_at = budget.take(STOP, now)
            if retry_at is None:
                budget.closed(_stream_key(thread, index), thread)
            return retry_at

        return self._change(team, thread, decide, AHEAD[STOP])

    def keep_open(self, team: str | None, thread: str, index: int) -> None:
        """The thread's stream ``index`` outlives its reserved stop: it counts as open for its life.

        Its stop then takes a slot of its own (and says the stream closed).
        """
        self._held.pop((thread, STOP), None)
        stream = _stream_key(thread, index)

        def decide(budget: Budget, now: float) -> float | None:
            budget.opened(stream, now + STREAM_LIFETIME)
            return None

        self._change(team, thread, decide)

    def status(self, team: str | None, thread: str, last: bool) -> Admission:
        """May a session status go now? ``last``: the turn's last, which may use every slot."""
        if self._use(thread, STATUS):
            return Admission(None)
        keep = 0 if last else STATUS_KEPT

        def reserved(budget: Budget, held: dict[str, float]) -> None:
            if START in held:  # a stream starts on it: open until its stop, or for its life
                budget.opened(thread, held.get(STOP, held[START] + STREAM_LIFETIME))

        return self._change(
            team,
            thread,
            lambda budget, now: budget.take(STATUS, now, keep),
            () if last else AHEAD[STATUS],
            reserved,
        )

    def wait_until(self, at: float) -> None:
        """Block until ``at`` (epoch seconds), when the budget said to ask again."""
        self._clock.sleep(max(0.0, at - self._clock.time()))

    def open_streams(self, team: str | None) -> int:
        """How many streams are open in the workspace (a read; 1 if it fails)."""
        try:
            snapshot = self._documents.get(BUDGETS, team or NO_TEAM)
        except StoreUnavailable:
            return 1
        budget = Budget.from_state(snapshot.data if snapshot else None)
        return budget.open_streams(self._clock.time())

    def _use(self, thread: str, method: str) -> bool:
        """Whether this process holds a slot for the thread's call of ``method`` now (it is spent)."""
        until = self._held.pop((thread, method), None)
        return until is not None and self._clock.time() < until

    def _holding(self, thread: str, methods: tuple[str, ...]) -> dict[str, float]:
        """The dates of the slots this process holds for the thread's calls of ``methods``."""
        dates = {method: self._held_until(thread, method) for method in methods}
        return {method: until for method, until in dates.items() if until is not None}

    def _held_until(self, thread: str, method: str) -> float | None:
        until = self._held.get((thread, method))
        return until if until is not None and self._clock.time() < until else None

    def _change(
        self,
        team: str | None,
        thread: str,
        decide: Callable[[Budget, float], float | None],
        ahead: tuple[str, ...] = (),
        reserved: Callable[[Budget, dict[str, float]], None] | None = None,
    ) -> Admission:
        """Count a call (``decide``) and reserve the ``ahead`` calls this process holds no slot for."""
        key = team or NO_TEAM
        try:
            for _ in range(ATTEMPTS):
                snapshot = self._documents.get(BUDGETS, key)
                budget = Budget.from_state(snapshot.data if snapshot else None)
                now = self._clock.time()
                retry_at = decide(budget, now)
                if retry_at is not None:
                    return Admission(retry_at, budget.open_streams(now))
                held = self._reserve(budget, thread, ahead, now)
                if reserved is not None:
                    reserved(budget, {**self._holding(thread, ahead), **held})
                open_streams = budget.open_streams(now)
                try:
                    if snapshot is None:
                        self._documents.create(BUDGETS, key, budget.to_state())
                    else:
                        self._documents.update(
                            BUDGETS, key, budget.to_state(), if_updated_at=snapshot.update_time
                        )
                except (DocumentExists, PreconditionFailed):
                    continue
                if self._log_writes:
                    log.info("firestore_write", collection=BUDGETS, document=key)
                self._keep(thread, held, now)
                return Admission(None, open_streams)
        except StoreUnavailable as error:
            log.info("slack_budget_unavailable", team=key, error=repr(error))
            return Admission(None)
        log.info("slack_budget_contended", team=key)
        return Admission(self._clock.time() + CONTENDED_WAIT)

    def _reserve(
        self, budget: Budget, thread: str, ahead: tuple[str, ...], now: float
    ) -> dict[str, float]:
        """Reserve in ``budget`` the ``ahead`` calls the thread holds no slot for: their dates."""
        held: dict[str, float] = {}
        for method in ahead:
            if self._held_until(thread, method) is None:
                until = budget.reserve(method, now)
                if until is not None:
                    held[method] = until
        return held

    def _keep(self, thread: str, held: dict[str, float], now: float) -> None:
        """Hold what a write reserved (and forget reservations past their date)."""
        for held_key, until in list(self._held.items()):
            if until <= now:
                self._held.pop(held_key, None)
        for method, until in held.items():
            self._held[(thread, method)] = until


def _stream_key(thread: str, index: int) -> str:
    """The key of the thread's message ``index`` among the workspace's open streams."""
    return f"{thread}-{index}"
