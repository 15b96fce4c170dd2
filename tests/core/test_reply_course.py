"""Table tests of a reply's course in Slack (pure, no I/O): how it ends, falls back, rolls over.

Each table names the reply's state, passed in as plain values, and what
``ThreadReply`` does next (``tests/replies`` shows the same against the
Slack stand-in).
"""

from __future__ import annotations

import pytest

from shared.core import notices
from shared.core.reply_course import (
    Then,
    closing,
    on_end,
    on_refusal,
    on_replace,
    on_stop,
    on_take_over,
    on_tell,
    orphans,
    reply_mark,
    streams,
    written_again_now,
)
from shared.core.step_cards import CONTINUED, CONTINUED_BELOW


@pytest.mark.parametrize(
    ("recipient_user", "channel", "streamed"),
    [
        ("U1", "C1", True),
        (None, "C1", False),  # no person to stream to: posted and edited
        ("", "C1", False),
        (None, "D1", True),  # a direct message streams to its person
    ],
)
def test_whether_a_reply_streams(recipient_user: str | None, channel: str, streamed: bool) -> None:
    assert streams(recipient_user, channel) is streamed


@pytest.mark.parametrize(
    ("fallback", "text_shown", "then"),
    [
        (True, True, Then.NOTHING),  # the next layout writes the new text
        (True, False, Then.NOTHING),
        (False, True, Then.FALL_BACK),  # a stream cannot take text back
        (False, False, Then.TAKE_BACK),  # nothing went out: queue it anew
    ],
)
def test_a_change_to_text_already_shown(fallback: bool, text_shown: bool, then: Then) -> None:
    assert on_replace(fallback, text_shown) is then


@pytest.mark.parametrize(
    ("call", "code", "then"),
    [
        ("start", "msg_too_long", Then.SHRINK),
        ("start", "ratelimited", Then.RAISE),  # slack_sdk retried it already
        ("start", "feature_not_enabled", Then.FALL_BACK),  # streams refused: post instead
        ("start", None, Then.FALL_BACK),
        ("append", "message_not_in_streaming_state", Then.GONE),  # cut after its lifetime
        ("append", "stopped_by_user", Then.GONE),  # Slack's stop button
        ("append", "msg_too_long", Then.SHRINK_AND_ROLL_OVER),
        ("append", "ratelimited", Then.RAISE),
        ("append", "channel_not_found", Then.RAISE),
        ("stop", "message_not_in_streaming_state", Then.GONE),
        ("stop", "stopped_by_user", Then.GONE),
        ("stop", "msg_too_long", Then.STOP_WITHOUT_TEXT),
        ("stop", "internal_error", Then.RAISE),
    ],
)
def test_a_call_slack_refused(call: str, code: str | None, then: Then) -> None:
    assert on_refusal(call, code) is then


def test_steps_still_running_at_the_end_say_what_kourier_knows() -> None:
    assert closing(paused=False) == ("error", notices.STEP_NO_RESULT)
    assert closing(paused=True) == ("complete", notices.STEP_WAITS_FOR_ANSWER)


@pytest.mark.parametrize(
    ("streaming", "queued", "carries_steps", "then"),
    [
        (True, False, False, Then.STOP),
        (True, True, True, Then.STOP),  # what no call may send yet goes in the stop
        (False, True, False, Then.FALL_BACK),  # no stream may start: posted whole
        (False, True, True, Then.FALL_BACK),
        (False, False, True, Then.CLOSE_CARRIED),  # steps a rollover continued, closed
        (False, False, False, Then.NOTHING),
    ],
)
def test_how_a_streamed_reply_ends(
    streaming: bool, queued: bool, carries_steps: bool, then: Then
) -> None:
    assert on_end(streaming, queued, carries_steps) is then


@pytest.mark.parametrize(
    ("streaming", "stopped_by_slack", "then"),
    [
        (True, True, Then.GONE),  # Slack stopped it for the click: no call
        (True, False, Then.STOP),  # a stream Slack did not stop is stopped
        (False, False, Then.NOTHING),
    ],
)
def test_how_a_reply_a_person_stopped_ends_its_stream(
    streaming: bool, stopped_by_slack: bool, then: Then
) -> None:
    assert on_stop(streaming, stopped_by_slack) is then


@pytest.mark.parametrize(
    ("streaming", "closed", "then"),
    [
        (True, None, Then.NOTHING),
        (True, CONTINUED, Then.ROLL_OVER),  # it rolled over: do the same
        (True, CONTINUED_BELOW, Then.FALL_BACK),  # it fell back: do the same
        (False, CONTINUED, Then.NOTHING),  # no open stream: nothing to stop
        (False, CONTINUED_BELOW, Then.NOTHING),
    ],
)
def test_what_a_reply_taken_over_does_first(
    streaming: bool, closed: str | None, then: Then
) -> None:
    assert on_take_over(streaming, closed) is then


@pytest.mark.parametrize(
    ("fallback", "streamed", "streaming", "now"),
    [
        (False, True, False, True),  # a stopped stream (seed 5877)
        (False, True, True, False),  # the open stream: once it stops
        (False, False, False, False),  # a posted message: at the next layout
        (True, True, False, False),  # the fallback writes every message anyway
    ],
)
def test_which_message_a_reply_taken_over_writes_again_at_once(
    fallback: bool, streamed: bool, streaming: bool, now: bool
) -> None:
    assert written_again_now(fallback, streamed, streaming) is now


@pytest.mark.parametrize(
    ("streaming", "then"),
    [
        (True, Then.ROLL_OVER),  # the answer goes on below the notice (seeds 4972, 5469)
        (False, Then.NOTHING),  # posted messages, or none yet: the notice follows them
    ],
)
def test_a_notice_told_mid_answer(streaming: bool, then: Then) -> None:
    assert on_tell(streaming) is then


MINE = reply_mark("C1-1.5", None)


@pytest.mark.parametrize(
    ("message", "adopted"),
    [
        ({"ts": "1.7", "metadata": MINE}, True),  # posted after the last checkpoint
        ({"ts": "1.6", "metadata": MINE}, False),  # the checkpoint names it
        ({"ts": "1.7"}, False),  # not marked: not provably the reply's
        ({"ts": "1.7", "metadata": reply_mark("C1-1.4", None)}, False),  # the turn before's
        # This turn's reply before a question; an answer's reply is a new one.
        ({"ts": "1.7", "metadata": reply_mark("C1-1.5", "q1")}, False),
        # The notice of the turn's end (``shared.core.telling.mark``).
        (
            {
                "ts": "1.7",
                "metadata": {
                    "event_type": "kourier_notice",
                    "event_payload": {"turn": "C1-1.5", "notice": "stopped"},
                },
            },
            False,
        ),
    ],
)
def test_a_reply_taken_over_adopts_only_the_messages_marked_as_its_own_it_does_not_know(
    message: dict[str, object], adopted: bool
) -> None:
    thread = [{"ts": "1.5", "user": "U1"}, {"ts": "1.6", "metadata": MINE}, message]

    assert orphans(thread, MINE, known={"1.6"}) == (["1.7"] if adopted else [])


def test_a_replys_mark_names_its_turn_and_the_question_it_answers() -> None:
    assert reply_mark("C1-1.5", None) == {
        "event_type": "kourier_reply",
        "event_payload": {"turn": "C1-1.5", "reply": ""},
    }
    assert reply_mark("C1-1.5", "q1")["event_payload"] == {"turn": "C1-1.5", "reply": "q1"}
