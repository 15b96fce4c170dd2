"""A workspace's Slack budget, decided without I/O (shared.slack.tiers)."""

from __future__ import annotations

from shared.slack.tiers import (
    MARGIN,
    QUIET,
    RESERVED_FOR,
    STATUS_KEPT,
    STREAM_LIFETIME,
    TIERS,
    WINDOW_SECONDS,
    Budget,
    append_interval,
)

START = "chat.startStream"


def test_twenty_starts_a_minute_go_and_the_next_waits_for_the_oldest_to_leave_the_window() -> None:
    budget = Budget()
    assert all(budget.take(START, 1000.0 + n) is None for n in range(TIERS[START]))
    assert budget.take(START, 1030.0) == 1000.0 + WINDOW_SECONDS + MARGIN
    # a refused call does not count
    assert budget.take(START, 1000.0 + WINDOW_SECONDS + MARGIN) is None
    assert budget.take(START, 1000.0 + WINDOW_SECONDS + MARGIN) == 1001.0 + WINDOW_SECONDS + MARGIN


def test_each_method_has_its_own_window() -> None:
    budget = Budget()
    for n in range(TIERS[START]):
        budget.take(START, 100.0 + n)
    assert budget.take("chat.stopStream", 130.0) is None


def test_open_streams_count_until_stopped_or_cut_by_slack() -> None:
    budget = Budget()
    assert budget.open_streams(0.0) == 1  # the caller's own
    budget.opened("C1-1.0-0", 10.0 + STREAM_LIFETIME)
    budget.opened("C1-2.0-0", 20.0 + STREAM_LIFETIME)
    budget.opened("C1-3.0-0", 30.0 + STREAM_LIFETIME)
    budget.closed("C1-2.0-0")
    assert budget.open_streams(40.0) == 2
    assert budget.open_streams(10.0 + STREAM_LIFETIME) == 1  # never stopped: Slack cut it


def test_the_budget_is_plain_json() -> None:
    budget = Budget()
    budget.take(START, 5.0)
    budget.opened("C1-1.0-0", 5.0 + STREAM_LIFETIME)
    again = Budget.from_state(budget.to_state())
    assert again == budget
    assert Budget.from_state(None) == Budget()


def test_appends_are_shared_out_so_the_workspace_stays_within_its_tier() -> None:
    assert append_interval(1, 1.0) == 1.0
    for streams in (1, 2, 20, 80):
        interval = append_interval(streams, 0.6)
        per_window = streams * (WINDOW_SECONDS / interval)
        assert per_window <= TIERS["chat.appendStream"]


def test_slots_kept_for_calls_that_matter_more_refuse_the_others() -> None:
    budget = Budget()
    method = "agents.sessions.setStatus"
    limit = TIERS[method]
    assert all(
        budget.take(method, 10.0, keep=STATUS_KEPT) is None for _ in range(limit - STATUS_KEPT)
    )
    assert budget.take(method, 11.0, keep=STATUS_KEPT) == 10.0 + WINDOW_SECONDS + MARGIN
    assert all(budget.take(method, 12.0) is None for _ in range(STATUS_KEPT))
    assert budget.take(method, 13.0) is not None


def test_a_reserved_slot_counts_from_now_until_a_window_after_its_date() -> None:
    # A call made later on the slot falls before its date, so Slack's window
    # after the call ends before the budget's does.
    budget = Budget()
    until = budget.reserve(START, 100.0)
    assert until == 100.0 + RESERVED_FOR
    assert all(budget.take(START, 101.0) is None for _ in range(TIERS[START] - 1))
    assert budget.take(START, 102.0) is not None  # the reserved slot counts already

    later = Budget()
    later.reserve(START, 100.0)
    assert all(later.take(START, until + 1 + n / 10) is None for n in range(TIERS[START] - 1))
    assert later.take(START, until + 5) == until + WINDOW_SECONDS + MARGIN


def test_slots_are_reserved_only_while_the_window_is_at_most_half_full() -> None:
    budget = Budget()
    half = int(TIERS[START] * QUIET)
    for n in range(half - 1):
        budget.take(START, 10.0 + n / 10)
    assert budget.reserve(START, 11.0) is not None  # the half-th slot
    assert budget.reserve(START, 11.0) is None
    assert budget.take(START, 11.0) is None  # a call at its own time still goes


def test_a_stream_counts_as_open_until_the_date_it_was_given() -> None:
    budget = Budget()
    budget.opened("C1-1.0", 50.0)
    budget.opened("C1-2.0-0", 10.0 + STREAM_LIFETIME)
    assert budget.open_streams(49.0) == 2
    assert budget.open_streams(50.0) == 1
    budget.closed("C1-2.0-0", "C1-2.0")
    assert budget.open_streams(51.0) == 1 and budget.open_until == {}
