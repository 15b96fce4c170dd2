"""A workspace's Slack budget (``shared.slack.tiers.Budget``), shared by every function instance.

Theory of operation. Each workspace's budget is one document
(``kourier_slack_budgets/<team>``), read, decided on and written back under
a precondition on its update time, read again on a conflict (after
``ATTEMPTS`` conflicts the call asks again a second later, as if refused).
Only the calls the budget counts write it: a stream's start and its stop
(two writes per streamed message) and each session status that goes (a
one-message turn: four writes). A refused call writes nothing. At Slack's
full rates (20 starts, 20 stops and 50 statuses a minute) that is at most
1.5 writes a second to one document, above Firestore's guidance of about
one sustained, which it takes in bursts; a write that loses the race is
read and tried again. A budget that cannot be read or written in time lets
the call go (Slack's own 429 and slack_sdk's retry after Retry-After still
hold the limit): a budget is never why an answer is not shown.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import structlog

from shared.errors import DocumentExists, PreconditionFailed, StoreUnavailable
from shared.ports import Clock, Documents
from shared.slack.tiers import STATUS_KEPT, Budget

log = structlog.get_logger()

BUDGETS = "kourier_slack_budgets"
ATTEMPTS = 8
"""Reads and conditional writes before a contended budget says to ask again later."""
CONTENDED_WAIT = 1.0
"""Seconds until a call that found the budget contended asks again."""
NO_TEAM = "-"
"""The budget of turns that name no team (one workspace)."""


@dataclass(frozen=True)
class Admission:
    """What the budget answered: whether the call may go, and how many streams share appends."""

    retry_at: float | None
    """None: the call may go now (it was counted); else when to ask again."""
    open_streams: int = 1


class WorkspaceBudget:
    """The budgets of every workspace, in Firestore."""

    def __init__(self, documents: Documents, clock: Clock, log_writes: bool = False) -> None:
        self._documents = documents
        self._clock = clock
        self._log_writes = log_writes

    def start(self, team: str | None, stream: str) -> Admission:
        """May ``stream`` start now (chat.startStream)? If so it counts as open."""

        def decide(budget: Budget, now: float) -> float | None:
            retry_at = budget.take("chat.startStream", now)
            if retry_at is None:
                budget.opened(stream, now)
            return retry_at

        return self._change(team, decide)

    def stop(self, team: str | None, stream: str) -> Admission:
        """May ``stream`` stop now (chat.stopStream)? If so it no longer counts as open."""

        def decide(budget: Budget, now: float) -> float | None:
            retry_at = budget.take("chat.stopStream", now)
            if retry_at is None:
                budget.closed(stream)
            return retry_at

        return self._change(team, decide)

    def status(self, team: str | None, last: bool) -> Admission:
        """May a session status go now? ``last``: the turn's last, which may use every slot."""
        keep = 0 if last else STATUS_KEPT
        return self._change(
            team, lambda budget, now: budget.take("agents.sessions.setStatus", now, keep)
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

    def _change(
        self, team: str | None, decide: Callable[[Budget, float], float | None]
    ) -> Admission:
        key = team or NO_TEAM
        try:
            for _ in range(ATTEMPTS):
                snapshot = self._documents.get(BUDGETS, key)
                budget = Budget.from_state(snapshot.data if snapshot else None)
                now = self._clock.time()
                retry_at = decide(budget, now)
                open_streams = budget.open_streams(now)
                if retry_at is not None:
                    return Admission(retry_at, open_streams)
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
                return Admission(None, open_streams)
        except StoreUnavailable as error:
            log.info("slack_budget_unavailable", team=key, error=repr(error))
            return Admission(None)
        log.info("slack_budget_contended", team=key)
        return Admission(self._clock.time() + CONTENDED_WAIT)
