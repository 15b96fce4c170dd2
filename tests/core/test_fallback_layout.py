"""The fallback's layout of an answer over a reply's messages, decision by decision.

No Slack here: each test lays an answer out with ``FallbackLayout`` at a
given instant, reads which messages it would write and when, and says what
Slack took, as ``ThreadReply`` does. (``tests/replies/test_thread_reply.py``
shows the same layouts in a thread of the Slack stand-in.)
"""

from __future__ import annotations

from typing import Any

import pytest

from shared.slack.layout import (
    EMPTIED,
    MAX_CARDS_PER_MESSAGE,
    FallbackLayout,
    Message,
    Step,
    Write,
)
from shared.slack.pacing import SEAM_ROOM, ReplyLimits

LIMITS = ReplyLimits(update_interval=1.0)
ROOM = 11_000
SMALL_ROOM = SEAM_ROOM + 20
"""Twenty characters of text a message."""


def step(title: str, status: str = "in_progress", **more: str) -> Step:
    return {"title": title, "status": status, "details": None, **more}


def kinds(write: Write) -> list[str]:
    return [block["type"] for block in write.fields["blocks"]]


def markdown(write: Write) -> list[str]:
    return [block["text"] for block in write.fields["blocks"] if block["type"] == "markdown"]


def take(layout: FallbackLayout, writes: list[Write], now: float) -> None:
    """Slack took every write at ``now``; posts get ts 1, 2, ..."""
    for write in writes:
        ts = write.message.ts or str(len([m for m in layout.messages if m.ts]) + 1)
        layout.wrote(write, ts, now)


def test_an_answer_with_no_messages_yet_is_posted_at_once() -> None:
    layout = FallbackLayout(LIMITS)
    [write] = layout.plan("Hello", {}, ROOM, now=5.0)
    assert write.ready_at == 0.0 and write.message.ts == ""
    assert write.fields == {"blocks": [{"type": "markdown", "text": "Hello"}], "text": "Hello"}
    assert layout.laid_out_at == 5.0 and layout.layout_at() == 6.0


def test_nothing_to_show_writes_nothing() -> None:
    layout = FallbackLayout(LIMITS)
    assert layout.plan("", {}, ROOM, now=0.0) == []
    assert [message.ts for message in layout.messages] == [""]  # laid out, never posted
    assert not layout.posted()


@pytest.mark.parametrize(
    ("written_at", "answer", "now", "ready_at"),
    [
        (10.0, "Hello, world", 10.2, 11.0),  # edited at most once per interval after its write
        (10.0, "Hello, world", 12.0, 11.0),  # ready by now: the caller writes it at once
        (10.0, "Hello", 10.2, None),  # the same payload: nothing to write
    ],
)
def test_an_edit_waits_one_interval_after_the_message_was_written(
    written_at: float, answer: str, now: float, ready_at: float | None
) -> None:
    layout = FallbackLayout(LIMITS)
    take(layout, layout.plan("Hello", {}, ROOM, now=written_at), now=written_at)
    writes = layout.plan(answer, {}, ROOM, now=now)
    assert [write.ready_at for write in writes] == ([] if ready_at is None else [ready_at])
    if writes:
        assert writes[0].message.ts == "1"


def test_a_long_answer_fills_messages_in_order_and_earlier_ones_keep_their_text() -> None:
    layout = FallbackLayout(LIMITS)
    first = "a" * 12 + "\n" + "b" * 12 + "\n"
    writes = layout.plan(first, {}, SMALL_ROOM, now=0.0)
    assert [markdown(write) for write in writes] == [["a" * 12 + "\n"], ["b" * 12 + "\n"]]
    take(layout, writes, now=0.0)
    # More text: the first message keeps its 13 characters, the second takes the rest.
    writes = layout.plan(first + "c" * 3, {}, SMALL_ROOM, now=2.0)
    assert [(write.message.ts, markdown(write)) for write in writes] == [
        ("2", ["b" * 12 + "\n" + "ccc"])
    ]
    assert [message.content for message in layout.messages] == [13, 16]


def test_a_code_block_cut_between_messages_is_closed_and_opened_again() -> None:
    layout = FallbackLayout(LIMITS)
    answer = "```py\n" + "x = 1\n" * 3
    first, second = layout.plan(answer, {}, SMALL_ROOM, now=0.0)
    assert markdown(first)[0].endswith("```") and markdown(first)[0].startswith("```py\n")
    assert markdown(second)[0].startswith("```py\n")


def test_a_card_shows_where_its_call_arrived_between_the_text() -> None:
    layout = FallbackLayout(LIMITS)
    steps = {"call-1": step("search", "complete", output="3 hits")}
    layout.place_card("call-1", "Looking. ", ROOM)
    layout.place_card("call-1", "Looking. More", ROOM)  # placed once: its new state shows
    [write] = layout.plan("Looking. Found it.", steps, ROOM, now=0.0)
    assert kinds(write) == ["markdown", "task_card", "markdown"]
    assert markdown(write) == ["Looking. ", "Found it."]
    card = write.fields["blocks"][1]
    assert (card["task_id"], card["title"], card["status"]) == ("call-1", "search", "complete")
    assert card["output"]["elements"][0]["elements"][0]["text"] == "3 hits"
    assert "details" not in card


def test_a_message_of_cards_only_is_summarised_by_their_titles() -> None:
    layout = FallbackLayout(LIMITS)
    steps = {"call-1": step("search"), "call-2": step("fetch")}
    layout.place_card("call-1", "", ROOM)
    layout.place_card("call-2", "", ROOM)
    [write] = layout.plan("", steps, ROOM, now=0.0)
    assert kinds(write) == ["task_card", "task_card"]
    assert write.fields["text"] == "search, fetch"


@pytest.mark.parametrize(
    ("last", "cards_before", "messages_after", "offset"),
    [
        (None, 0, 1, 2),  # no message yet: one is laid out for the card, after the text
        (Message(ts="9.0", streamed=True, text="Hi", content=2), 0, 2, 0),  # not in a stream
        (Message(ts="9.0", streamed=False, content=2), MAX_CARDS_PER_MESSAGE - 1, 1, 2),
        (Message(ts="9.0", streamed=False, content=2), MAX_CARDS_PER_MESSAGE, 2, 0),  # full
    ],
)
def test_a_card_goes_into_the_last_posted_message_while_it_has_room(
    last: Message | None, cards_before: int, messages_after: int, offset: int
) -> None:
    messages = [] if last is None else [last]
    if last is not None:
        last.cards = [(f"old-{i}", 0) for i in range(cards_before)]
    layout = FallbackLayout(LIMITS, messages)
    layout.place_card("call-1", "Hi", ROOM)
    assert len(layout.messages) == messages_after
    assert layout.messages[-1].cards[-1] == ("call-1", offset)


@pytest.mark.parametrize(
    ("shown", "answer", "rewrite", "fields"),
    [
        ("Hi", "Hi", False, None),  # shows it already
        ("Hi", "Hi", True, {"markdown_text": "Hi"}),  # may show more: written whole
        ("Hi there", "Hi", False, {"markdown_text": "Hi"}),  # taken back
        ("Hi", "", False, {"markdown_text": EMPTIED}),  # all taken back
    ],
)
def test_a_streamed_message_is_edited_with_markdown_text(
    shown: str, answer: str, rewrite: bool, fields: dict[str, Any] | None
) -> None:
    stream = Message(ts="1.0", streamed=True, text=shown, content=len(shown), rewrite=rewrite)
    layout = FallbackLayout(LIMITS, [stream])
    writes = layout.plan(answer, {}, ROOM, now=0.0)
    assert [write.fields for write in writes] == ([] if fields is None else [fields])
    take(layout, writes, now=0.0)
    assert stream.text == (shown if fields is None else fields["markdown_text"])
    assert not stream.rewrite or fields is None


def test_the_feedback_ends_the_last_message_only() -> None:
    layout = FallbackLayout(LIMITS)
    layout.feedback = [{"type": "actions", "elements": []}]
    writes = layout.plan("a" * 12 + "\n" + "b" * 12, {}, SMALL_ROOM, now=0.0)
    assert [kinds(write) for write in writes] == [["markdown"], ["markdown", "actions"]]


def test_a_posted_message_whose_text_is_all_taken_back_shows_it_holds_none() -> None:
    # Seed 2972: the posted draft kept showing once the agent took its whole text back.
    layout = FallbackLayout(LIMITS)
    take(layout, layout.plan("A draft.", {}, ROOM, now=0.0), now=0.0)
    [write] = layout.plan("", {}, ROOM, now=0.5)
    emptied = {"blocks": [{"type": "markdown", "text": EMPTIED}], "text": EMPTIED}
    assert write.message.ts == "1" and write.fields == emptied and write.ready_at == 1.0
    take(layout, [write], now=1.0)
    assert layout.plan("", {}, ROOM, now=3.0) == []  # written once


def test_a_shorter_answer_empties_the_later_messages_and_keeps_the_feedback() -> None:
    layout = FallbackLayout(LIMITS)
    take(layout, layout.plan("a" * 12 + "\n" + "b" * 12, {}, SMALL_ROOM, now=0.0), now=0.0)
    layout.feedback = [{"type": "actions", "elements": []}]
    writes = layout.plan("short", {}, SMALL_ROOM, now=2.0)
    assert [(write.message.ts, markdown(write), kinds(write)) for write in writes] == [
        ("1", ["short"], ["markdown"]),
        ("2", [EMPTIED], ["markdown", "actions"]),
    ]


def test_a_function_taking_over_writes_each_posted_message_whole_once_more() -> None:
    layout = FallbackLayout(LIMITS)
    take(layout, layout.plan("Hello", {}, ROOM, now=0.0), now=0.0)
    restored = FallbackLayout.from_state(layout.to_state(), LIMITS)
    assert restored.messages == layout.messages
    assert restored.plan("Hello", {}, ROOM, now=5.0) == []
    restored.taken_over()
    [write] = restored.plan("Hello", {}, ROOM, now=5.0)
    assert write.payload == layout.messages[0].written and write.ready_at == 1.0


def test_the_stream_is_the_last_message_while_it_streams() -> None:
    layout = FallbackLayout(LIMITS, [Message(ts="1.0", streamed=True, streaming=True)])
    assert layout.stream() is layout.messages[0] and layout.posted()
    layout.messages[0].streaming = False
    assert layout.stream() is None
