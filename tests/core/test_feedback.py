"""Feedback records: what a button says, which click wins, and a backend's tally."""

from __future__ import annotations

import pytest

from shared.core import feedback
from shared.core.feedback import FeedbackRecord, Rated, Rating


def record(
    user: str, rating: Rating, at: float, turn: str = "C1-1.0", backend: str = "demo"
) -> FeedbackRecord:
    return FeedbackRecord(
        turn_id=turn,
        backend=backend,
        user=user,
        rating=rating,
        clicked_at=at,
        channel="C1",
        message_ts=f"{at:.6f}",
    )


def test_a_button_says_its_rating_turn_and_backend() -> None:
    rated = Rated(Rating.DOWN, "C0123-1782234671.392669", "ops|agent: one")
    value = feedback.button_value(rated)
    assert len(value) <= 2000
    assert feedback.read_value(value) == rated


@pytest.mark.parametrize(
    "value",
    [
        None,
        "",
        "down:task_42",
        "[]",
        '{"rating":"meh","turn":"t","backend":"b"}',
        '{"rating":"up"}',
    ],
)
def test_a_value_that_is_not_ours_says_nothing(value: object) -> None:
    assert feedback.read_value(value) is None


def test_one_record_per_person_and_answer() -> None:
    assert feedback.record_key("C1-1.0", "U1") == feedback.record_key("C1-1.0", "U1")
    assert feedback.record_key("C1-1.0", "U1") != feedback.record_key("C1-1.0", "U2")
    assert feedback.record_key("C1-1.0", "U1") != feedback.record_key("C1-2.0", "U1")


def test_the_later_click_wins_whatever_the_order_it_arrives_in() -> None:
    first, second = record("U1", Rating.UP, 10.0), record("U1", Rating.DOWN, 11.0)
    assert feedback.replaces(first, None)
    assert feedback.replaces(second, first)
    assert not feedback.replaces(first, second)  # handled late: the earlier click loses
    assert feedback.replaces(second, second)  # the same click again changes nothing


def test_a_record_reads_back_as_written() -> None:
    written = record("U1", Rating.DOWN, 12.5)
    stored = {**written.to_dict(), "expire_at": "ignored"}
    assert stored["rating"] == "down"
    assert FeedbackRecord.from_dict(stored) == written


def test_a_tally_counts_one_backend_and_lists_the_disliked_answers_newest_first() -> None:
    records = [
        record("U1", Rating.UP, 1.0),
        record("U2", Rating.DOWN, 2.0, turn="C1-2.0"),
        record("U3", Rating.DOWN, 5.0, turn="C1-3.0"),
        record("U4", Rating.DOWN, 3.0, backend="other"),
    ]
    tally = feedback.tally("demo", records)
    assert (tally.backend, tally.up, tally.down) == ("demo", 1, 2)
    assert [r.turn_id for r in tally.disliked] == ["C1-3.0", "C1-2.0"]
    assert feedback.tally("nobody", records) == feedback.Tally("nobody", 0, 0, ())
