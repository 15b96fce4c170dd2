"""The reference assembler reads the contract's "Replies" rules, independently of shared.core."""

from __future__ import annotations

from typing import Any

from local.sim.reference import ReferenceReply


def chunk(artifact: str, text: str | None, append: bool) -> dict[str, Any]:
    parts = [] if text is None else [{"text": text}]
    return {"kind": "artifact", "artifact_id": artifact, "parts": parts, "append": append}


def snapshot(*artifacts: tuple[str, str]) -> dict[str, Any]:
    return {
        "kind": "task",
        "artifacts": [{"artifactId": key, "parts": [{"text": text}]} for key, text in artifacts],
    }


def answer(*events: dict[str, Any], answers_pause: bool = False) -> str:
    reply = ReferenceReply(answers_pause=answers_pause)
    for event in events:
        reply.feed(event)
    return reply.answer


def test_appends_add_and_other_chunks_replace() -> None:
    assert answer(chunk("a", "one ", False), chunk("a", "two", True)) == "one two"
    assert answer(chunk("a", "one ", False), chunk("a", "two", False)) == "two"


def test_an_empty_text_part_takes_text_back_and_no_text_part_changes_nothing() -> None:
    assert answer(chunk("a", "one", False), chunk("a", "", False)) == ""
    assert answer(chunk("a", "one", False), chunk("a", None, False)) == "one"


def test_an_append_to_an_artifact_never_seen_waits_for_a_snapshot() -> None:
    assert answer(chunk("a", "late", True)) == ""
    assert answer(chunk("a", "late", True), snapshot(("a", "early late"))) == "early late"


def test_a_snapshot_that_is_a_prefix_of_what_arrived_is_older_and_skipped() -> None:
    assert answer(chunk("a", "one two", False), snapshot(("a", "one"))) == "one two"
    assert answer(chunk("a", "one two", False), snapshot(("a", "three"))) == "three"


def test_artifacts_in_snapshot_order_joined_by_a_blank_line_empty_ones_left_out() -> None:
    events = [chunk("b", "bee", False), chunk("a", "ay", False), chunk("c", "", False)]
    assert answer(*events) == "bee\n\nay"
    assert answer(*events, snapshot(("a", "ay"), ("b", "bee"))) == "ay\n\nbee"


def test_one_message_without_a_task_is_the_whole_turn_and_other_messages_are_ignored() -> None:
    reply = {"kind": "message", "message": {"role": "agent", "parts": [{"text": "hi"}]}}
    named = {
        "kind": "message",
        "message": {"role": "agent", "taskId": "t", "parts": [{"text": "x"}]},
    }
    assert answer(reply) == "hi"
    assert answer(named) == ""
    assert answer(chunk("a", "text", False), reply) == "text"
    assert answer(reply, answers_pause=True) == ""
