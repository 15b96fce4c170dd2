"""What a notification does to its group's thread, and the flood limit: table-driven."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from shared.triggers.payloads import AlertGroup, read_payload
from shared.triggers.threads import (
    CLAIM_TIMEOUT,
    AlertThread,
    Later,
    Note,
    Nothing,
    Open,
    Resolve,
    TriggerLedger,
    admit,
    after,
    claimed,
    decide,
    opened,
    skip,
    summary_posted,
    unadmit,
)

from .payloads import alertmanager, all_resolved, encoded, with_group, with_new_alert

AT = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


def group(payload: dict[str, object] | None = None) -> AlertGroup:
    return read_payload("alertmanager", encoded(payload or alertmanager()))


def open_thread(of: AlertGroup) -> AlertThread:
    return opened(claimed(of, "am", AT), "C1", "100.1")


def test_a_firing_group_with_no_thread_opens_one() -> None:
    assert decide(None, group(), AT) == Open()


def test_a_resolved_group_with_no_thread_does_nothing() -> None:
    assert isinstance(decide(None, group(all_resolved(alertmanager())), AT), Nothing)


def test_a_repeat_or_a_retry_of_the_same_firing_set_adds_nothing() -> None:
    firing = group()
    repeat = alertmanager()
    repeat["notification_reason"] = "repeat interval elapsed"
    assert decide(open_thread(firing), group(repeat), AT) == Nothing("repeat")
    assert decide(open_thread(firing), firing, AT + timedelta(hours=4)) == Nothing("repeat")


def test_a_changed_firing_set_is_a_note_naming_the_new_alerts() -> None:
    thread = open_thread(group())
    grown = group(with_new_alert(alertmanager(), "ap-south-1", "aa00aa00aa00aa00"))

    decision = decide(thread, grown, AT)

    assert isinstance(decision, Note)
    assert [a.fingerprint for a in decision.new] == ["aa00aa00aa00aa00"]
    assert (decision.ended, decision.firing) == (0, 2)
    shrunk = decide(after(thread, grown, decision), group(), AT)
    assert isinstance(shrunk, Note) and (len(shrunk.new), shrunk.ended, shrunk.firing) == (0, 1, 1)


def test_a_new_firing_of_the_same_alert_is_a_change() -> None:
    again = alertmanager()
    again["alerts"][0]["startsAt"] = "2026-09-21T10:00:00Z"
    assert isinstance(decide(open_thread(group()), group(again), AT), Note)


def test_nothing_firing_resolves_the_thread_and_a_later_firing_opens_a_new_one() -> None:
    thread = open_thread(group())
    resolved = group(all_resolved(alertmanager()))

    decision = decide(thread, resolved, AT)

    assert isinstance(decision, Resolve)
    closed = after(thread, resolved, decision)
    assert closed.state == "closed"
    assert isinstance(decide(closed, resolved, AT), Nothing), "a repeated resolution"
    assert decide(closed, group(), AT) == Open()


def test_while_a_thread_is_being_opened_a_duplicate_waits_and_a_change_asks_to_retry() -> None:
    claim = claimed(group(), "am", AT)
    assert decide(claim, group(), AT + timedelta(seconds=5)) == Nothing(
        "the thread is being opened"
    )
    assert isinstance(decide(claim, group(all_resolved(alertmanager())), AT), Later)
    grown = group(with_new_alert(alertmanager(), "ap-south-1", "aa00aa00aa00aa00"))
    assert isinstance(decide(claim, grown, AT), Later)


def test_a_claim_whose_opener_died_is_taken_over() -> None:
    claim = claimed(group(), "am", AT)
    assert decide(claim, group(), AT + CLAIM_TIMEOUT) == Open()


# Flood control ---------------------------------------------------------------------


def test_a_trigger_opens_at_most_its_limit_of_threads_in_any_hour() -> None:
    ledger: TriggerLedger | None = TriggerLedger()
    for minute in range(3):
        assert ledger is not None
        ledger = admit(ledger, 3, AT + timedelta(minutes=minute))
    assert ledger is not None
    assert admit(ledger, 3, AT + timedelta(minutes=59)) is None
    assert admit(ledger, 3, AT + timedelta(minutes=60)) is not None, "the first left the hour"
    assert admit(unadmit(ledger, AT), 3, AT + timedelta(minutes=5)) is not None


def test_skipped_groups_share_one_summary_that_one_request_posts() -> None:
    first = skip(TriggerLedger(), group(with_group(alertmanager(), "A")), AT)
    assert first.post and not first.update
    summary = first.ledger.summary
    assert summary is not None

    # A second skip while the first request posts: listed, not posted twice.
    second = skip(first.ledger, group(with_group(alertmanager(), "B")), AT)
    assert not second.post and not second.update
    assert second.ledger.summary is not None
    assert [s.title for s in second.ledger.summary.skipped] == ["A", "B"]

    posted = summary_posted(second.ledger, summary.started_at, "200.1")
    assert posted is not None
    third = skip(posted, group(with_group(alertmanager(), "C")), AT)
    assert third.update and not third.post
    again = skip(third.ledger, group(with_group(alertmanager(), "C")), AT)
    assert not again.update, "a repeat of a listed group changes nothing"


def test_a_summary_claim_whose_poster_died_is_taken_over_and_a_new_flood_gets_a_new_summary() -> (
    None
):
    first = skip(TriggerLedger(), group(with_group(alertmanager(), "A")), AT)
    taken = skip(first.ledger, group(with_group(alertmanager(), "B")), AT + CLAIM_TIMEOUT)
    assert taken.post

    later = AT + timedelta(hours=1)
    posted = summary_posted(first.ledger, AT, "200.1")
    assert posted is not None
    fresh = skip(posted, group(with_group(alertmanager(), "Z")), later)
    assert fresh.post
    assert fresh.ledger.summary is not None
    assert [s.title for s in fresh.ledger.summary.skipped] == ["Z"]
    assert summary_posted(fresh.ledger, AT, "300.1") is None, "the old flood's post is stale"
