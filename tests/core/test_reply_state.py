"""A reply's state in Slack, change by change and answer by answer, with the time passed in.

No Slack here: each test changes a ``ReplyState`` as the turn engine and
Slack's answers would, and reads what the reply then does, what it queues,
and what its messages hold. (``tests/replies/test_thread_reply.py`` shows
the same in a thread of the Slack stand-in, made by ``ThreadReply``.)
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from shared.core.reply import ReplyChange, TextAppended, TextReplaced
from shared.core.reply_course import Then
from shared.core.step_cards import CONTINUED, CONTINUED_BELOW, Shown
from shared.core.tool_steps import StepFinished, StepStarted
from shared.slack.layout import EMPTIED, Message
from shared.slack.pacing import Append, ReplyLimits, Start, text_chunk, text_of
from shared.slack.reply_state import ReplyState

LIMITS = ReplyLimits(stream_seconds=240.0, message_chars=1_000, stream_interval=0.6)
NOW = 1000.0


def streaming(*changes: ReplyChange) -> ReplyState:
    """A reply that streams, given ``changes``."""
    reply = ReplyState(LIMITS, streams=True)
    for change in changes:
        reply.take(change)
    return reply


def sent_all(reply: ReplyState, ts: str = "1.1", now: float = NOW) -> Message:
    """Slack took every call the pacer names: the open stream."""
    while (call := reply.pacer.next_call(reply.layout.stream(), now)) is not None:
        if isinstance(call, Start):
            reply.started(call, ts, now)
        else:
            assert isinstance(call, Append)
            stream = reply.layout.stream()
            assert stream is not None
            reply.appended(stream, call, now)
    stream = reply.layout.stream()
    assert stream is not None
    return stream


def queued_text(reply: ReplyState) -> str:
    return text_of(reply.pacer.queue)


def queued_steps(reply: ReplyState) -> list[tuple[str, str]]:
    return [(c["id"], c["status"]) for c in reply.pacer.queue if c["type"] == "task_update"]


@dataclass(frozen=True)
class Case:
    streams: bool
    shown: str
    """Text already streamed (sent to Slack) before ``change``."""
    change: ReplyChange
    then: Then | None
    answer: str
    queued: str


@pytest.mark.parametrize(
    "case",
    [
        Case(True, "", TextAppended("Hello.\n"), Then.NOTHING, "Hello.\n", "Hello.\n"),
        Case(True, "Hi.\n", TextAppended("More.\n"), Then.NOTHING, "Hi.\nMore.\n", "More.\n"),
        # A replace that changes nothing shows nothing (the reply is not even pumped).
        Case(True, "Hi.\n", TextReplaced("Hi.\n"), None, "Hi.\n", ""),
        # A stream cannot take text back: the reply falls back, the new text posted.
        Case(True, "Hi.\n", TextReplaced("Bye.\n"), Then.FALL_BACK, "Bye.\n", ""),
        # Posted and edited: the next layout writes the text, nothing is queued.
        Case(False, "", TextAppended("Hello.\n"), Then.NOTHING, "Hello.\n", ""),
        Case(False, "", TextReplaced("Bye.\n"), Then.NOTHING, "Bye.\n", ""),
    ],
)
def test_a_change_of_the_answer(case: Case) -> None:
    reply = ReplyState(LIMITS, streams=case.streams)
    if case.shown:
        reply.take(TextAppended(case.shown))
        sent_all(reply)

    assert reply.take(case.change) is case.then
    assert (reply.answer, queued_text(reply)) == (case.answer, case.queued)


def test_text_replaced_before_any_went_out_is_queued_anew_not_twice() -> None:
    reply = streaming(TextAppended("Draft.\n"), StepStarted("c1", "search", {"q": "x"}))

    assert reply.take(TextReplaced("Final.\n")) is Then.NOTHING

    assert queued_text(reply) == "Final.\n"
    assert queued_steps(reply) == [("c1", "in_progress")]  # the step stays queued


@pytest.mark.parametrize(
    ("streams", "queued", "cards"),
    [
        (True, [("c1", "in_progress"), ("c1", "complete")], []),
        (False, [], [["c1"]]),  # posted: a card in a new message, updated in place
    ],
)
def test_a_step_is_queued_in_a_stream_or_shown_as_a_card(
    streams: bool, queued: list[tuple[str, str]], cards: list[list[str]]
) -> None:
    reply = ReplyState(LIMITS, streams=streams)
    reply.take(StepStarted("c1", "search", {"q": "x"}))
    reply.take(StepFinished("c1", "search", True, {"answer": "y"}))

    assert queued_steps(reply) == queued
    assert [[key for key, _ in m.cards] for m in reply.layout.messages] == cards
    assert reply.steps.steps["c1"]["status"] == "complete"


def test_a_started_stream_holds_what_slack_took_and_ends_the_status_line() -> None:
    reply = streaming(TextAppended("Hello.\n"))
    reply.status_at = NOW - 5

    stream = sent_all(reply, ts="9.9")

    assert (stream.ts, stream.text, stream.content, stream.started_at) == (
        "9.9",
        "Hello.\n",
        len("Hello.\n"),
        NOW,
    )
    assert reply.status_at is None
    assert reply.pacer.send_at() is None  # nothing waits
    reply.take(TextAppended("More.\n"))
    assert reply.pacer.send_at() == NOW + LIMITS.stream_interval  # batched after the last send


@pytest.mark.parametrize(
    ("code", "size", "then", "room"),
    [
        ("msg_too_long", 900, Then.SHRINK, 450),  # half of what Slack refused, from now on
        ("msg_too_long", 300, Then.RAISE, 1_000),  # shorter than any message may be
        ("feature_not_enabled", 900, Then.FALL_BACK, 1_000),
        ("ratelimited", 900, Then.RAISE, 1_000),  # slack_sdk retried it already
    ],
)
def test_a_refused_start(code: str, size: int, then: Then, room: int) -> None:
    reply = streaming()
    call = Start([text_chunk("x" * size)], [text_chunk("x" * size)], size)

    assert reply.start_refused(call, code) is then
    assert reply.pacer.room == room


@pytest.mark.parametrize(
    ("code", "size", "then", "room"),
    [
        ("msg_too_long", 400, Then.ROLL_OVER, 300),  # (200 shown + 400) // 2
        ("msg_too_long", 100, Then.RAISE, 1_000),  # 150: shorter than any message may be
        ("message_not_in_streaming_state", 400, Then.GONE, 1_000),
        ("stopped_by_user", 400, Then.GONE, 1_000),
        ("channel_not_found", 400, Then.RAISE, 1_000),
    ],
)
def test_a_refused_append(code: str, size: int, then: Then, room: int) -> None:
    reply = streaming(TextAppended("s" * 199 + "\n"))
    stream = sent_all(reply)

    call = Append([text_chunk("x" * size)], size)
    assert reply.append_refused(stream, call, code) is then
    assert reply.pacer.room == room


def running_stream() -> ReplyState:
    """A stream showing text and one step still running, more text queued."""
    reply = streaming(TextAppended("Hi.\n"), StepStarted("c1", "search", {"q": "x"}))
    sent_all(reply)
    reply.take(TextAppended("Queued.\n"))
    return reply


@pytest.mark.parametrize(
    ("stopped_by_slack", "stops"),
    [
        (False, True),  # stopped here, its running step closed as the turn ends
        (True, False),  # Slack stopped it for the click: no call, only the record
    ],
)
def test_a_person_stops_the_turn(stopped_by_slack: bool, stops: bool) -> None:
    reply = running_stream()
    stream = reply.layout.stream()
    assert stream is not None

    stop = reply.halt({"1.1"} if stopped_by_slack else set(), "error", "No result.")

    if stops:
        assert stop is not None
        assert stop[0] is stream
        assert [(c["id"], c["status"], c["output"]) for c in stop[1].steps] == [
            ("c1", "error", "No result.")
        ]
    else:
        assert stop is None
        assert not stream.streaming
    assert reply.halted
    assert reply.pacer.queue == []  # what waited is dropped


def test_a_person_stops_the_turn_after_a_result_the_stopped_task_holds() -> None:
    # Seeds 899, 1820, 2449, 5002: the result came after the checkpoint the stop continues;
    # the task CancelTask answered with holds it, so the step finishes at it, not "No result".
    reply = running_stream()

    stop = reply.halt(set(), "error", "No result.", [StepFinished("c1", "search", True, "ok")])

    assert stop is not None
    assert [(c["id"], c["status"], c.get("output")) for c in stop[1].steps] == [
        ("c1", "complete", "ok")
    ]
    assert reply.steps.steps["c1"]["status"] == "complete"


def test_a_person_stops_a_turn_with_no_stream_open() -> None:
    reply = streaming(TextAppended("Queued.\n"))

    assert reply.halt(set(), "error", "No result.") is None
    assert (reply.halted, reply.pacer.queue) == (True, [])


def test_falling_back_continues_the_steps_not_shown_final_as_cards_in_their_order() -> None:
    reply = running_stream()  # c1 shows running
    reply.take(StepStarted("c2", "fetch", {"u": "v"}))  # queued, never shown
    stream = reply.layout.stream()
    assert stream is not None

    moved = reply.fall_back()
    stop = reply.pacer.stop(stream.ts, output=CONTINUED_BELOW)
    stream.streaming = False
    reply.place_cards(moved)

    assert reply.fallback
    assert reply.pacer.queue == []
    assert [c["id"] for c in stop.steps] == ["c1"]  # closed as continued below
    assert [[k for k, _ in m.cards] for m in reply.layout.messages] == [[], ["c1", "c2"]]
    assert not reply.layout.messages[1].streamed


def test_a_posted_message_takes_its_ts_and_ends_the_status_line() -> None:
    reply = ReplyState(LIMITS, streams=False)
    reply.take(TextAppended("Hello.\n"))
    reply.status_at = NOW - 5

    (write,) = reply.writes(NOW)
    reply.wrote(write, "5.5", NOW)

    assert [m.ts for m in reply.layout.messages] == ["5.5"]
    assert reply.status_at is None
    assert reply.writes(NOW + 5) == []  # written: nothing new to show


@dataclass(frozen=True)
class Dates:
    start_at: float = 1010.0
    budgeted: bool = True
    open_until: float | None = 1060.0
    shared_at: float = 995.0


def test_the_timetable_reads_the_reply_and_its_budget() -> None:
    reply = running_stream()

    times = reply.times(Dates())

    assert (times.streaming, times.posted, times.fallback) == (True, True, False)
    assert times.send_at == NOW + LIMITS.stream_interval
    assert times.roll_over_at == NOW + LIMITS.stream_seconds
    assert (times.start_at, times.budgeted, times.open_until, times.shared_at) == (
        1010.0,
        True,
        1060.0,
        995.0,
    )


def test_a_checkpoint_continues_the_same_reply() -> None:
    reply = running_stream()

    again = ReplyState.from_state(reply.to_state(), LIMITS)

    assert again.to_state() == reply.to_state()
    assert again.resume({}) is Then.NOTHING
    assert queued_text(again) == "Queued.\n"


@pytest.mark.parametrize(
    ("fallback", "written_now"),
    [
        (False, ["1.1"]),  # the stopped stream at once; the open one when it stops
        (True, []),  # the fallback writes every message anyway
    ],
)
def test_a_reply_taken_over_writes_its_stopped_streams_whole_again(
    fallback: bool, written_now: list[str]
) -> None:
    reply = streaming(TextAppended("First.\n"))
    stream = sent_all(reply, ts="1.1")
    reply.pacer.roll_over(stream)
    stream.streaming = False
    reply.take(TextAppended("Second.\n"))
    sent_all(reply, ts="2.2")
    reply.fallback = fallback

    again = ReplyState.from_state(reply.to_state(), LIMITS)

    assert [m.ts for m in again.written_again()] == written_now
    assert [m.rewrite for m in again.layout.messages] == [True, True]


def test_a_reply_taken_over_adopts_a_message_the_function_before_posted_after_its_checkpoint() -> (
    None
):
    # Seed 946: the checkpoint holds a stream and a step running in it; the function
    # before fell back, posted the step's card and more text in a new message, and
    # was stopped (or died) before its next checkpoint named that message.
    reply = running_stream()
    again = ReplyState.from_state(reply.to_state(), LIMITS)
    again.resume({})

    assert again.adopt(["2.2"], [], {}) == []  # no stream to stop: its function stopped 1.1

    stream, posted = again.layout.messages
    assert again.fallback and again.pacer.queue == []  # it fell back, as that function did
    assert (stream.ts, stream.streaming) == ("1.1", False)
    assert (posted.ts, posted.streamed, [key for key, _ in posted.cards]) == ("2.2", False, ["c1"])
    written, adopted = again.writes(NOW)  # each message written whole, none posted
    assert (written.message.ts, written.fields) == ("1.1", {"markdown_text": "Hi.\n"})
    assert adopted.message.ts == "2.2"
    assert "Queued." in adopted.payload and '"task_id": "c1"' in adopted.payload


def test_a_fallback_taken_over_fills_its_message_not_posted_yet_with_the_one_posted() -> None:
    reply = ReplyState(LIMITS, streams=False)
    reply.take(TextAppended("Posted.\n"))
    reply.writes(NOW)  # laid out, and its function died before Slack answered
    again = ReplyState.from_state(reply.to_state(), LIMITS)

    assert again.adopt(["3.3"], [], {}) == []

    (message,) = again.layout.messages
    (write,) = again.writes(NOW)
    assert (message.ts, write.message is message, write.fields["text"]) == (
        "3.3",
        True,
        "Posted.\n",
    )


def test_an_adopted_message_with_nothing_of_the_reply_to_show_shows_that_it_holds_none() -> None:
    reply = streaming(TextAppended("Hi.\n"))
    sent_all(reply)
    again = ReplyState.from_state(reply.to_state(), LIMITS)

    again.adopt(["2.2"], [], {})

    writes = again.writes(NOW)
    assert [(w.message.ts, w.fields) for w in writes] == [
        ("1.1", {"markdown_text": "Hi.\n"}),
        ("2.2", {"blocks": [{"type": "markdown", "text": EMPTIED}], "text": EMPTIED}),
    ]


def test_an_adopted_posted_message_keeps_the_cards_shown_final_in_it() -> None:
    # Seed 5066: a stop's function adopted a posted message, wrote its steps' cards final
    # there (recorded first) and died; the next one, from the same checkpoint, adopted it
    # again and wrote it whole without those cards: the steps showed final nowhere.
    reply = streaming(TextAppended("Hi.\n"))
    sent_all(reply)
    again = ReplyState.from_state(reply.to_state(), LIMITS)
    shown = {"c1": shown_at("2.2", "c1", "error", "no result")}
    again.resume(shown)

    again.adopt(["2.2"], [], shown)

    writes = {w.message.ts: w.fields for w in again.writes(NOW)}
    cards = [b for b in writes["2.2"]["blocks"] if b["type"] == "task_card"]
    assert [(b["task_id"], b["status"]) for b in cards] == [("c1", "error")]


def shown_at(ts: str, call_id: str, status: str, output: str | None = None) -> Shown:
    """What ``keep_shown_steps`` records: step ``call_id`` shown in message ``ts`` as ``status``."""
    update = {"type": "task_update", "id": call_id, "title": "search", "status": status}
    return Shown(ts, {**update, **({"output": output} if output else {})})


def test_a_reply_taken_over_adopts_a_stream_the_function_before_started_after_its_checkpoint() -> (
    None
):
    # Seeds 3713, 3418: the checkpoint holds a stream; the function before rolled it over
    # into a new stream (recorded as it started: ``Turn.started_streams``), which shows a
    # step done and one running, and died, or a person's stop took the turn from it,
    # before a checkpoint named that stream. It may stream still.
    reply = streaming(TextAppended("Hi.\n"))
    sent_all(reply)
    reply.take(TextAppended("More.\n"))
    again = ReplyState.from_state(reply.to_state(), LIMITS)
    shown = {
        "c1": shown_at("2.2", "c1", "complete", "ok"),
        "c2": shown_at("2.2", "c2", "in_progress"),
    }
    again.resume(shown)

    (left_open,) = again.adopt([], ["2.2"], shown)  # 1.1 was stopped as it rolled over

    stream, stop = left_open
    assert (stream.ts, stream.streamed, stream.streaming) == ("2.2", True, False)
    assert [(c["id"], c["status"], c.get("output")) for c in stop.chunks] == [
        ("c1", "complete", "ok"),  # shown again as it was (the call may not have been made)
        ("c2", "complete", CONTINUED_BELOW),  # running: it goes on as a card below
    ]
    first, _adopted, below = again.layout.messages
    assert again.fallback and (first.ts, first.streaming) == ("1.1", False)
    assert (below.ts, below.streamed, [key for key, _ in below.cards]) == ("", False, ["c2"])
    writes = {w.message.ts: w.fields for w in again.writes(NOW)}
    assert writes["1.1"] == {"markdown_text": "Hi.\n"}  # each written whole, the text once
    assert writes["2.2"] == {"markdown_text": "More.\n"}
    assert [b["task_id"] for b in writes[""]["blocks"] if b["type"] == "task_card"] == ["c2"]


@pytest.mark.parametrize(
    ("recorded_in", "placed"),
    [
        ("2.2", ["c1"]),  # the posted message the checkpoint names
        ("", []),  # a message not posted yet: the next layout places the step
        ("9.9", []),  # a message the checkpoint does not name (``adopt``'s)
    ],
)
def test_a_step_shown_final_in_a_named_posted_message_after_the_checkpoint_keeps_its_card(
    recorded_in: str, placed: list[str]
) -> None:
    reply = ReplyState(LIMITS, streams=False)
    reply.take(TextAppended("Posted.\n"))
    (write,) = reply.writes(NOW)
    reply.wrote(write, "2.2", NOW)
    again = ReplyState.from_state(reply.to_state(), LIMITS)
    update = {"type": "task_update", "id": "c1", "title": "search", "status": "complete"}

    assert again.resume({"c1": Shown(recorded_in, update)}) is Then.NOTHING

    (message,) = again.layout.messages
    assert [key for key, _ in message.cards] == placed
    assert again.steps.steps["c1"]["status"] == "complete"  # as it showed, settled


@pytest.mark.parametrize(
    ("posted", "streamed", "stopped"),
    [
        # Seed 18734: a function started stream 0.5 and died before its first checkpoint;
        # the next began afresh and streamed on in 5.5, which its checkpoint holds open.
        ([], ["0.5"], ["0.5", "5.5"]),
        ([], ["0.5", "7.7"], ["0.5", "7.7"]),  # the checkpoint's stopped when 7.7 started
        (["0.7"], [], ["5.5"]),
        (["7.7"], [], []),  # its function stopped 5.5 to fall back and post
        ([], ["7.7"], ["7.7"]),  # or to roll over
    ],
)
def test_a_reply_taken_over_stops_every_stream_it_cannot_tell_is_stopped(
    posted: list[str], streamed: list[str], stopped: list[str]
) -> None:
    reply = streaming(TextAppended("Hi.\n"))
    sent_all(reply, ts="5.5")
    again = ReplyState.from_state(reply.to_state(), LIMITS)
    again.resume({})

    stops = again.adopt(posted, streamed, {})

    assert [stream.ts for stream, _ in stops] == stopped
    assert again.layout.stream() is None  # every message is written whole from now
    in_order = sorted(["5.5", *posted, *streamed], key=float)  # the answer reads on down
    assert [message.ts for message in again.layout.messages] == in_order


def test_a_stream_adopted_before_a_message_posted_after_it_is_stopped_too() -> None:
    # The function before stopped its stream to fall back (the running step closed to
    # continue below) and posted the step's card. The reply cannot tell that stream from
    # one a function left open when it died before its first checkpoint (seed 18734),
    # so it is stopped again: Slack refuses, which changes nothing.
    reply = streaming(TextAppended("Hi.\n"))
    sent_all(reply)
    again = ReplyState.from_state(reply.to_state(), LIMITS)
    shown = {"c2": shown_at("2.2", "c2", "complete", CONTINUED_BELOW)}
    again.resume(shown)

    stops = again.adopt(["3.3"], ["2.2"], shown)

    ((stream, stop),) = stops
    assert stream.ts == "2.2"
    assert [(c["id"], c["output"]) for c in stop.chunks] == [("c2", CONTINUED_BELOW)]  # as shown
    assert [(m.ts, m.streamed) for m in again.layout.messages] == [
        ("1.1", True),
        ("2.2", True),
        ("3.3", False),
    ]
    assert [key for key, _ in again.layout.messages[-1].cards] == ["c2"]


@pytest.mark.parametrize(
    ("status", "output", "then"),
    [
        ("in_progress", None, Then.NOTHING),  # shown running: closed when the stream stops
        ("complete", "done", Then.NOTHING),
        # The function that died closed it to go on elsewhere: it stopped the stream.
        ("complete", CONTINUED, Then.ROLL_OVER),
        ("complete", CONTINUED_BELOW, Then.FALL_BACK),
    ],
)
def test_a_reply_taken_over_does_what_the_function_before_did(
    status: str, output: str | None, then: Then
) -> None:
    reply = running_stream()
    update = {"type": "task_update", "id": "c1", "title": "search", "status": status}
    if output is not None:
        update["output"] = output

    again = ReplyState.from_state(reply.to_state(), LIMITS)

    assert again.resume({"c1": Shown("1.1", update)}) is then


def test_the_end_of_a_streamed_answer() -> None:
    open_stream = running_stream()
    waiting = streaming(TextAppended("Queued, no stream may start.\n"))
    done = streaming()

    assert (open_stream.end(), waiting.end(), done.end()) == (
        Then.STOP,
        Then.FALL_BACK,
        Then.NOTHING,
    )


def test_a_complete_answer_queues_the_markdown_held_back_for_what_follows() -> None:
    reply = streaming(TextAppended("Intro.\n| a | b |"))  # a table row, maybe not the last
    assert queued_text(reply) == "Intro.\n"

    reply.complete()

    assert queued_text(reply) == "Intro.\n| a | b |"
