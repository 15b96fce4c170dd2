"""A reply's place in its workspace's Slack budget, call by call, with the time passed in.

No Slack and no Firestore here: a scripted budget answers each start and
stop as ``WorkspaceBudget`` would, and each test reads what ``ReplyBudget``
lets the reply do and the dates its timetable reads. (``tests/replies/
test_workspace_budget.py`` shows the same against the Slack stand-in.)
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from shared.slack.reply_budget import ReplyBudget
from shared.slack.workspace_budget import Admission, WorkspaceBudget

THREAD = "C1-1700000000.000100"


class Clock:
    """Time that moves only when someone waits."""

    def __init__(self, at: float = 1000.0) -> None:
        self.at = at

    def now(self) -> datetime:
        return datetime.fromtimestamp(self.at, UTC)

    def time(self) -> float:
        return self.at

    def monotonic(self) -> float:
        return self.at

    def sleep(self, seconds: float) -> None:
        self.at += seconds


class ScriptedBudget:
    """Answers starts and stops from a script; records every call the reply makes."""

    def __init__(
        self, clock: Clock, starts: list[Admission], stops: list[Admission], open_streams: int = 1
    ) -> None:
        self._clock = clock
        self._starts = starts
        self._stops = stops
        self._open_streams = open_streams
        self.calls: list[tuple[str, str | None, str, int]] = []

    def start(self, team: str | None, thread: str, index: int) -> Admission:
        self.calls.append(("start", team, thread, index))
        return self._starts.pop(0)

    def stop(self, team: str | None, thread: str, index: int) -> Admission:
        self.calls.append(("stop", team, thread, index))
        return self._stops.pop(0)

    def keep_open(self, team: str | None, thread: str, index: int) -> None:
        self.calls.append(("keep_open", team, thread, index))

    def open_streams(self, team: str | None) -> int:
        self.calls.append(("open_streams", team, "", 0))
        return self._open_streams

    def wait_until(self, at: float) -> None:
        self._clock.at = max(self._clock.at, at)


def reply_budget(clock: Clock, budget: ScriptedBudget | None, told: list[int]) -> ReplyBudget:
    workspace: WorkspaceBudget | None = budget  # type: ignore[assignment]
    return ReplyBudget(workspace, clock, "C1", "1700000000.000100", "T1", shared=told.append)


@pytest.mark.parametrize(
    ("admission", "may", "start_at", "open_until", "told"),
    [
        # Let in: counted as open until the reserved stop's date; appends paced for 3 streams.
        (Admission(None, open_streams=3, open_until=1060.0), True, 0.0, 1060.0, [3]),
        (Admission(None, open_streams=1), True, 0.0, None, [1]),
        # Refused: no start is tried before the date the budget named, nothing is shared.
        (Admission(1030.0), False, 1030.0, None, []),
    ],
)
def test_a_stream_starts_only_when_the_budget_lets_it(
    admission: Admission, may: bool, start_at: float, open_until: float | None, told: list[int]
) -> None:
    clock = Clock()
    shared: list[int] = []
    budget = ScriptedBudget(clock, [admission], [])
    reply = reply_budget(clock, budget, shared)

    assert reply.may_start(2) is may
    assert budget.calls == [("start", "T1", THREAD, 2)]
    assert (reply.start_at, reply.open_until, shared) == (start_at, open_until, told)
    assert reply.shared_at == (1000.0 if told else 0.0)


@pytest.mark.parametrize(
    ("later", "asks_again"),
    [
        (1029.9, False),  # before the date the budget named: the budget is not asked
        (1030.0, True),
    ],
)
def test_after_a_refused_start_the_budget_is_asked_again_only_from_its_date(
    later: float, asks_again: bool
) -> None:
    clock = Clock()
    budget = ScriptedBudget(clock, [Admission(1030.0), Admission(None)], [])
    reply = reply_budget(clock, budget, [])
    reply.may_start(0)

    clock.at = later
    assert reply.may_start(0) is asks_again
    assert len(budget.calls) == (2 if asks_again else 1)


def test_a_stop_waits_for_its_slot_and_then_no_longer_counts_the_stream_open() -> None:
    clock = Clock()
    budget = ScriptedBudget(
        clock,
        [Admission(None, open_until=1060.0)],
        [Admission(1005.0), Admission(1012.0), Admission(None)],
    )
    reply = reply_budget(clock, budget, [])
    reply.may_start(0)

    reply.wait_to_stop(0)

    assert clock.at == 1012.0  # waited for each date the budget named
    assert [call[0] for call in budget.calls] == ["start", "stop", "stop", "stop"]
    assert reply.open_until is None


def test_renewing_counts_the_stream_open_for_its_life() -> None:
    clock = Clock()
    budget = ScriptedBudget(clock, [Admission(None, open_until=1060.0)], [])
    reply = reply_budget(clock, budget, [])
    reply.may_start(1)

    reply.renew(1)

    assert budget.calls[-1] == ("keep_open", "T1", THREAD, 1)
    assert reply.open_until is None


def test_sharing_tells_the_reply_how_many_streams_share_the_appends_and_when() -> None:
    clock = Clock()
    told: list[int] = []
    reply = reply_budget(clock, ScriptedBudget(clock, [], [], open_streams=4), told)

    clock.at = 1010.0
    reply.share()

    assert (told, reply.shared_at) == ([4], 1010.0)


def test_without_a_budget_every_call_goes_at_once() -> None:
    clock = Clock()
    told: list[int] = []
    reply = reply_budget(clock, None, told)

    assert reply.may_start(0) is True
    reply.wait_to_stop(0)
    reply.renew(0)
    reply.share()

    assert (reply.budgeted, clock.at, told) == (False, 1000.0, [])
    assert (reply.start_at, reply.open_until, reply.shared_at) == (0.0, None, 0.0)
