"""The answer text: one test per rule of the agent contract's "Replies"."""

from __future__ import annotations

from shared.core.model import DataPart, FilePart, Message, Role, StreamEvent, TaskState
from shared.core.reply import ReplyAssembler, TextAppended, TextReplaced
from tests.core.reply_builders import (
    agent_message,
    answer_after,
    artifact,
    call,
    chunk,
    feed_all,
    snapshot,
    status,
    text,
    texts_of,
    user_message,
)


def test_an_update_with_append_true_adds_to_that_artifacts_text() -> None:
    assert (
        answer_after(chunk("a", text("Hello")), chunk("a", text(", world"), append=True))
        == "Hello, world"
    )


def test_any_other_update_replaces_the_artifacts_text() -> None:
    assert answer_after(chunk("a", text("draft")), chunk("a", text("final"))) == "final"


def test_last_chunk_is_not_read() -> None:
    events: list[StreamEvent] = [
        chunk("a", text("one"), last_chunk=True),
        chunk("a", text(" two"), append=True, last_chunk=True),
        chunk("a", text(" three"), append=True, last_chunk=False),
    ]
    assert answer_after(*events) == "one two three"


def test_an_update_with_no_text_part_leaves_the_artifacts_text_as_it_was() -> None:
    not_text = DataPart({"progress": 50})
    assert answer_after(chunk("a", text("kept")), chunk("a", not_text)) == "kept"
    assert answer_after(chunk("a", text("kept")), chunk("a", not_text, append=True)) == "kept"


def test_a_replace_with_no_text_part_shows_the_artifacts_beginning_so_appends_to_it_are_shown() -> (
    None
):
    assert (
        answer_after(chunk("a", call("c1")), chunk("a", text("Found it."), append=True))
        == "Found it."
    )


def test_to_take_text_back_replace_it_with_an_empty_text_part() -> None:
    assert answer_after(chunk("a", text("oops")), chunk("a", text(""))) == ""


def test_an_artifact_whose_text_is_empty_is_left_out_of_the_message() -> None:
    events: list[StreamEvent] = [
        chunk("a", text("first")),
        chunk("b", call("c1")),
        chunk("c", text("")),
        chunk("d", text("last")),
    ]
    assert answer_after(*events) == "first\n\nlast"


def test_the_answer_is_the_artifacts_text_in_artifact_order() -> None:
    events: list[StreamEvent] = [
        chunk("a", text("one")),
        chunk("b", text("two")),
        chunk("a", text(" more"), append=True),
    ]
    assert answer_after(*events) == "one more\n\ntwo"


def test_a_snapshot_whose_text_is_a_prefix_of_the_text_received_is_older_and_skipped() -> None:
    received = [chunk("a", text("Hello")), chunk("a", text(", world"), append=True)]
    assert answer_after(*received, snapshot(artifact("a", text("Hello")))) == "Hello, world"
    assert answer_after(*received, snapshot(artifact("a", text("Hello, world")))) == "Hello, world"


def test_a_take_back_missed_when_the_stream_drops_is_not_applied() -> None:
    # The agent took "secret" back with an empty text part while the stream was down.
    assert answer_after(chunk("a", text("secret")), snapshot(artifact("a", text("")))) == "secret"


def test_a_snapshot_that_is_not_a_prefix_replaces_the_provisional_text() -> None:
    received = [chunk("a", text("Hel")), chunk("a", text("lo"), append=True)]
    assert answer_after(*received, snapshot(artifact("a", text("Goodbye")))) == "Goodbye"
    assert (
        answer_after(chunk("a", text("Hel")), snapshot(artifact("a", text("Hello there"))))
        == "Hello there"
    )


def test_a_snapshot_brings_artifacts_the_stream_missed_in_the_tasks_order() -> None:
    events: list[StreamEvent] = [
        chunk("b", text("second")),
        snapshot(artifact("a", text("first")), artifact("b", text("second"))),
    ]
    assert answer_after(*events) == "first\n\nsecond"


def test_an_append_to_an_artifact_whose_beginning_was_never_seen_is_held() -> None:
    assembler = ReplyAssembler()
    held = feed_all(assembler, [chunk("a", text(" world"), append=True)])
    assert held == [] and assembler.answer_text == ""
    changes = assembler.feed(snapshot(artifact("a", text("Hello world"))))
    assert changes == [TextAppended("Hello world")]
    feed_all(assembler, [chunk("a", text("!"), append=True)])
    assert assembler.answer_text == "Hello world!"


def test_a_message_reply_is_the_whole_turn_its_text_parts_joined() -> None:
    reply = Message(Role.AGENT, (text("Hi "), DataPart({"x": 1}), text("there")), message_id="r-1")
    assembler = ReplyAssembler()
    assert assembler.feed(reply) == [TextAppended("Hi there")]
    assert assembler.answer_text == "Hi there"


def test_a_message_reply_with_no_text_leaves_the_answer_empty() -> None:
    assembler = ReplyAssembler()
    assert assembler.feed(Message(Role.AGENT, (), message_id="r-1")) == []
    assert assembler.answer_text == ""


def test_text_in_the_status_message_is_not_shown() -> None:
    assert answer_after(status(text("Thinking about it"))) == ""
    assert answer_after(snapshot(status_message=agent_message(text("Thinking")))) == ""


def test_text_in_history_is_not_shown() -> None:
    history = [user_message(), agent_message(text("an earlier reply"))]
    assert answer_after(snapshot(history=history, state=TaskState.COMPLETED)) == ""


def test_file_parts_are_never_shown() -> None:
    assert answer_after(chunk("a", text("see file"), FilePart({"name": "x.png"}))) == "see file"


def test_data_parts_other_than_tool_calls_and_results_are_not_shown() -> None:
    events: list[StreamEvent] = [chunk("a", DataPart({"chart": [1, 2]}), text("done"), call("c1"))]
    assert answer_after(*events) == "done"


def test_growing_text_is_an_appended_delta_and_changed_text_a_replacement() -> None:
    assembler = ReplyAssembler()
    changes = feed_all(
        assembler,
        [
            chunk("a", text("Hel")),
            chunk("a", text("lo"), append=True),
            chunk("a", text("Help")),
            chunk("b", text("more")),
            chunk("a", text(" me"), append=True),
        ],
    )
    assert texts_of(changes) == [
        TextAppended("Hel"),
        TextAppended("lo"),
        TextReplaced("Help"),
        TextAppended("\n\nmore"),
        TextReplaced("Help me\n\nmore"),
    ]


def test_the_paused_turns_text_is_not_shown_again_in_the_answer() -> None:
    paused = snapshot(artifact("a", text("Which file?")), state=TaskState.INPUT_REQUIRED)
    assembler = ReplyAssembler.for_answer(paused)
    changes = feed_all(
        assembler, [chunk("a", text(" Deleted notes.txt."), append=True), chunk("b", text("Done."))]
    )
    assert texts_of(changes) == [TextAppended(" Deleted notes.txt."), TextAppended("\n\nDone.")]
    assembler.feed(
        snapshot(
            artifact("a", text("Which file? Deleted notes.txt.")), artifact("b", text("Done."))
        )
    )
    assert assembler.answer_text == " Deleted notes.txt.\n\nDone."


def test_a_paused_turns_artifact_replaced_with_other_text_is_shown_whole() -> None:
    paused = snapshot(artifact("a", text("Which file?")), state=TaskState.INPUT_REQUIRED)
    assembler = ReplyAssembler.for_answer(paused)
    feed_all(assembler, [chunk("a", text("Deleted notes.txt."))])
    assert assembler.answer_text == "Deleted notes.txt."


def test_an_answer_to_a_task_that_could_not_be_read_waits_for_the_canonical_text() -> None:
    assembler = ReplyAssembler.for_answer(None)
    feed_all(assembler, [chunk("a", text(" Deleted."), append=True)])
    assert assembler.answer_text == ""
    assembler.feed(snapshot(artifact("a", text("Which file? Deleted."))))
    assert assembler.answer_text == "Which file? Deleted."
