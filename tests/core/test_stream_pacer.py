"""A streamed reply's pacing, decision by decision, with the time passed in.

No Slack here: each test feeds ``StreamPacer`` text and steps, asks which call
comes next at a given instant, and says what Slack took, as ``ThreadReply``
does. (``tests/replies/test_thread_reply.py`` shows the same rules in a
thread of the Slack stand-in.)
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from shared.core.step_cards import CONTINUED, Shown
from shared.slack.pacing import (
    NEW_MESSAGE,
    Append,
    Chunk,
    ReplyLimits,
    RollOver,
    Start,
    StreamPacer,
    text_chunk,
)

LIMITS = ReplyLimits(stream_seconds=240.0, message_chars=1_000, stream_interval=0.6)


@dataclass
class Stream:
    """The open streamed message, as the pacer reads it."""

    started_at: float
    text: str
    ts: str = "1.0"


def step(call_id: str, status: str = "in_progress") -> Chunk:
    return {"type": "task_update", "id": call_id, "title": call_id, "status": status}


def test_an_empty_queue_asks_for_nothing() -> None:
    pacer = StreamPacer(LIMITS)
    assert pacer.send_at() is None
    assert pacer.next_call(None, now=0.0) is None
    assert pacer.next_call(Stream(0.0, "shown"), now=10.0) is None


def test_the_first_text_starts_a_message_at_once_and_later_text_waits_one_interval() -> None:
    pacer = StreamPacer(LIMITS)
    pacer.add_text("Hello")
    send_at = pacer.send_at()
    assert send_at is not None and send_at <= 100.0  # after a quiet spell: at once
    call = pacer.next_call(None, now=100.0)
    assert call == Start([text_chunk("Hello")], [text_chunk("Hello")], 5)
    assert isinstance(call, Start)
    pacer.sent(call, now=100.0)
    assert pacer.send_at() is None
    pacer.add_text(", wor")
    pacer.add_text("ld")  # joined to the queued text: one chunk, one call
    assert pacer.send_at() == pytest.approx(100.6)
    assert pacer.next_call(Stream(100.0, "Hello"), now=100.6) == Append([text_chunk(", world")], 7)


def test_a_call_slack_did_not_take_is_the_same_call_next_time() -> None:
    pacer = StreamPacer(LIMITS)
    pacer.add_text("one ")
    pacer.add_step(step("c1"))
    pacer.add_text("two")
    first = pacer.next_call(None, now=1.0)
    # Slack refused (rate limited): nothing is marked sent, so nothing is lost or reordered.
    assert pacer.next_call(None, now=5.0) == first
    assert first == Start(
        [text_chunk("one "), step("c1"), text_chunk("two")],
        [text_chunk("one "), step("c1"), text_chunk("two")],
        7,
    )


@pytest.mark.parametrize(
    ("stream", "now", "expected"),
    [
        # Young and short: append.
        (Stream(0.0, "x" * 10), 239.0, Append),
        # As old as stream_seconds: roll over before Slack cuts it.
        (Stream(0.0, "x" * 10), 240.0, RollOver),
        # As long as a message may be: roll over.
        (Stream(0.0, "x" * 1_000), 1.0, RollOver),
        # More than half full, and the next text does not fit: it starts a new message.
        (Stream(0.0, "x" * 900), 1.0, RollOver),
    ],
)
def test_when_a_stream_rolls_over(stream: Stream, now: float, expected: type) -> None:
    pacer = StreamPacer(LIMITS)
    pacer.add_text("y" * 200)
    assert isinstance(pacer.next_call(stream, now), expected)
    assert pacer.roll_over_at(stream) == stream.started_at + LIMITS.stream_seconds


def test_text_too_long_for_one_message_is_cut_at_a_line_end_and_the_rest_stays_queued() -> None:
    pacer = StreamPacer(LIMITS)
    lines = "".join(f"line {n:03}\n" for n in range(200))  # 1,800 characters
    pacer.add_text(lines)
    call = pacer.next_call(None, now=0.0)
    assert isinstance(call, Start)
    sent = call.batch[0]["text"]
    assert sent.endswith("\n") and 500 < len(sent) <= 1_000 and lines.startswith(sent)
    pacer.sent(call, now=0.0)
    assert pacer.queue == [text_chunk(lines[len(sent) :])]


def test_a_rollover_closes_the_code_block_and_running_steps_and_the_next_message_reopens_them() -> (
    None
):
    pacer = StreamPacer(LIMITS)
    pacer.add_step(step("c1"))
    pacer.add_step(step("c2"))
    pacer.add_step(step("c2", "complete"))
    pacer.add_text("```python\nprint(1)\n")
    start = pacer.next_call(None, now=0.0)
    assert isinstance(start, Start)
    pacer.sent(start, now=0.0)
    assert set(pacer.running) == {"c1"}

    stop = pacer.roll_over(Stream(0.0, "```python\nprint(1)\n"))
    assert stop.closing == "```"
    assert stop.steps == [{**step("c1"), "status": "complete", "output": CONTINUED}]
    assert pacer.running == {}

    pacer.add_text("print(2)\n")
    carried = pacer.next_call(None, now=300.0)
    assert carried == Start(
        [step("c1"), text_chunk("```python\n"), text_chunk("print(2)\n")],
        [text_chunk("print(2)\n")],
        9,
    )


def test_a_rollover_with_nothing_queued_still_carries_the_running_steps_to_close_them() -> None:
    pacer = StreamPacer(LIMITS)
    pacer.add_step(step("c1"))
    start = pacer.next_call(None, now=0.0)
    assert isinstance(start, Start)
    pacer.sent(start, now=0.0)
    pacer.roll_over(Stream(0.0, ""))
    assert pacer.carries_steps()
    assert pacer.next_call(None, now=250.0) is None  # nothing to send ...
    closing = Start(pacer.carry, [], 0)  # ... but the end of the reply shows and closes them
    pacer.sent(closing, now=250.0)
    assert not pacer.carries_steps() and set(pacer.running) == {"c1"}
    assert pacer.stop("2.0").steps == [{**step("c1"), "status": "complete"}]


def test_a_message_slack_refused_as_too_long_keeps_the_next_ones_shorter() -> None:
    pacer = StreamPacer(LIMITS)
    assert pacer.shrink(600)
    assert pacer.room == 600
    assert pacer.shrink(800)  # never longer again
    assert pacer.room == 600
    assert not pacer.shrink(100)  # too short to be worth a message: the caller gives up
    assert pacer.room == 600


def test_taking_back_text_keeps_the_steps_and_abandoning_names_every_step_not_shown_as_it_stands() -> (
    None
):
    pacer = StreamPacer(LIMITS)
    pacer.add_step(step("shown"))
    start = pacer.next_call(None, now=0.0)
    assert isinstance(start, Start)
    pacer.sent(start, now=0.0)
    pacer.add_text("draft")
    pacer.add_step(step("queued"))
    pacer.take_back_text()
    assert pacer.queue == [step("queued")]
    assert pacer.abandon() == {"shown", "queued"}
    assert pacer.queue == [] and pacer.carry == []


def test_the_state_round_trips_through_a_checkpoint_and_decides_the_same() -> None:
    pacer = StreamPacer(LIMITS)
    pacer.add_step(step("c1"))
    pacer.add_text("```\ncode\n")
    start = pacer.next_call(None, now=0.0)
    assert isinstance(start, Start)
    pacer.sent(start, now=0.0)
    pacer.shrink(700)
    pacer.roll_over(Stream(0.0, "```\ncode\n"))
    pacer.add_text("more")
    back = StreamPacer.from_state(pacer.to_state(), LIMITS)
    assert back.to_state() == pacer.to_state()
    assert back.next_call(None, now=9.0) == pacer.next_call(None, now=9.0)
    # When Slack last took a batch is not kept: the function taking over sends at once.
    assert back.send_at() == LIMITS.stream_interval


# Steps shown once, across a take-over ------------------------------------------------


def final(call_id: str) -> Chunk:
    return step(call_id, "complete")


def record(**where: tuple[str, Chunk | None]) -> dict[str, Shown]:
    return {key: Shown(ts, update) for key, (ts, update) in where.items()}


def test_a_call_that_shows_a_step_says_where_and_as_what_before_it_is_made() -> None:
    pacer = StreamPacer(LIMITS)
    kept = pacer.showing([step("c1")], "1.0")  # running: kept, to close it there after a take-over
    assert kept == {"c1": {"ts": "1.0", "update": step("c1")}}
    assert pacer.showing([step("c1")], "1.0") is None  # kept already
    assert pacer.showing([final("c1")], NEW_MESSAGE) == {
        "c1": {"ts": NEW_MESSAGE, "update": final("c1")}
    }
    pacer.started("2.0")
    assert pacer.shown == {"c1": Shown("2.0", final("c1"))}
    assert pacer.showing([step("c1")], "3.0") is None  # shown final: never running again


def test_after_a_take_over_a_step_shown_final_goes_only_to_the_message_that_may_show_it() -> None:
    pacer = StreamPacer(LIMITS)
    pacer.taken_over(record(c1=("1.0", None)), "1.0")  # a record of the release before
    pacer.add_step(final("c1"))
    pacer.add_text("more")
    young = Stream(0.0, "text", ts="1.0")
    call = pacer.next_call(young, now=10.0)
    assert call == Append([final("c1"), text_chunk("more")], 4)  # the same card, updated

    pacer = StreamPacer(LIMITS)
    pacer.taken_over(record(c1=("1.0", None)), None)
    pacer.add_step(final("c1"))
    pacer.add_text("more")
    assert pacer.next_call(None, now=10.0) == Start(
        [text_chunk("more")], [text_chunk("more")], 4
    )  # never in another message


def test_after_a_take_over_a_step_shown_final_in_the_open_stream_is_shown_there_again() -> None:
    pacer = StreamPacer(LIMITS)
    pacer.taken_over(record(c1=("1.0", final("c1")), c2=("0.5", final("c2"))), "1.0")
    assert pacer.queue == [final("c1")]  # its call may have failed: shown again, in place
    assert pacer.next_call(Stream(0.0, "text", ts="1.0"), now=10.0) == Append([final("c1")], 0)


def test_after_a_take_over_a_step_shown_in_a_message_never_kept_is_shown_in_the_next() -> None:
    pacer = StreamPacer(LIMITS)
    pacer.taken_over(record(c1=(NEW_MESSAGE, final("c1"))), None)
    assert pacer.queue == [final("c1")]
    pacer = StreamPacer.from_state(
        {**StreamPacer(LIMITS).to_state(), "shown_final": {"c1": "2.0"}}, LIMITS
    )
    pacer.taken_over(record(c1=(NEW_MESSAGE, final("c1"))), None)
    assert pacer.queue == []  # the checkpoint knows where it shows


def test_after_a_take_over_a_step_shown_running_in_the_open_stream_is_closed_there() -> None:
    pacer = StreamPacer(LIMITS)
    pacer.taken_over(record(c1=("1.0", step("c1")), c2=("0.5", step("c2"))), "1.0")
    stop = pacer.roll_over(Stream(0.0, "text", ts="1.0"))
    assert stop.steps == [{**step("c1"), "status": "complete", "output": CONTINUED}]
    assert pacer.carry == [step("c1")]


def test_a_rollover_after_a_take_over_leaves_a_step_shown_final_where_it_is() -> None:
    pacer = StreamPacer(LIMITS)
    pacer.running = {"c1": step("c1"), "c2": step("c2"), "c3": step("c3")}
    pacer.taken_over(record(c1=("1.0", None), c2=("1.0", None)), "1.0")
    pacer.add_step(final("c2"))  # its result, read again by the function taking over
    stop = pacer.roll_over(Stream(0.0, "text", ts="1.0"))
    assert stop.steps == [
        final("c2"),  # its final state, to the message that may show it already
        {**step("c3"), "status": "complete", "output": CONTINUED},
    ]  # c1 is left as the function that died left it
    assert pacer.carry == [step("c3")]
    assert pacer.queue == []
