"""One reply's place in its workspace's Slack budget (``shared.slack.workspace_budget``).

Theory of operation. The reply's streams count in the workspace's budget:
one starts only when the budget lets it (a refusal names when to ask again,
and no start is tried before then), and stops only once it lets it, waiting
for the slot. A stream started on a reserved stop counts as open until that
stop's date (``open_until``); one that streams on past it is counted again,
for its life (``renew``). While a stream is open the reply asks now and then
how many streams share the workspace's appends (``share``), and each answer
is passed on (``shared``), which paces the reply's appends
(``shared.slack.tiers.append_interval``). The reply's timetable
(``shared.slack.timetable``) reads these dates to know when to ask. Without
a budget every call may go at once.
"""

from __future__ import annotations

from collections.abc import Callable

import structlog

from shared.ports import Clock
from shared.slack.workspace_budget import WorkspaceBudget

log = structlog.get_logger()


class ReplyBudget:
    """The streams of one reply in its workspace's budget: when each may start and stop."""

    def __init__(
        self,
        budget: WorkspaceBudget | None,
        clock: Clock,
        channel: str,
        thread_ts: str,
        team: str | None,
        *,
        shared: Callable[[int], None],
    ) -> None:
        """Place a reply of the thread in ``budget`` (None: no budget but Slack's).

        ``shared`` is told how many streams share the workspace's appends,
        each time the reply learns it.
        """
        self._budget = budget
        self._clock = clock
        self._channel = channel
        self._team = team
        self._thread_key = f"{channel}-{thread_ts}"
        self._tell_shared = shared
        self.start_at = 0.0
        """No stream starts before this: the workspace's budget of starts was spent."""
        self.open_until: float | None = None
        """The stream counts as open in the workspace's budget until then, unless renewed."""
        self.shared_at = 0.0
        """When the reply last learnt how many streams share the workspace's appends."""

    @property
    def budgeted(self) -> bool:
        """Whether the reply shares a workspace's budget."""
        return self._budget is not None

    def may_start(self, index: int) -> bool:
        """Whether the reply's stream ``index`` may start now (it then counts as open)."""
        if self._budget is None:
            return True
        if self._clock.time() < self.start_at:
            return False
        admission = self._budget.start(self._team, self._thread_key, index)
        if admission.retry_at is not None:
            self.start_at = admission.retry_at
            log.info("slack_stream_queued", channel=self._channel, until=admission.retry_at)
            return False
        self.open_until = admission.open_until
        self._shared(admission.open_streams)
        return True

    def wait_to_stop(self, index: int) -> None:
        """Wait until the budget lets the reply's stream ``index`` stop (it then no longer counts)."""
        if self._budget is None:
            return
        while True:
            admission = self._budget.stop(self._team, self._thread_key, index)
            if admission.retry_at is None:
                self.open_until = None
                return
            self._budget.wait_until(admission.retry_at)

    def renew(self, index: int) -> None:
        """The open stream ``index`` outlives its reserved stop: it counts as open for its life."""
        if self._budget is not None:
            self._budget.keep_open(self._team, self._thread_key, index)
            self.open_until = None

    def share(self) -> None:
        """Learn again how many streams share the workspace's appends."""
        if self._budget is not None:
            self._shared(self._budget.open_streams(self._team))

    def _shared(self, open_streams: int) -> None:
        self.shared_at = self._clock.time()
        self._tell_shared(open_streams)
