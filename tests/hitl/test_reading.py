"""Reading a pause: the agent contract's "Task states" (input-required) and the extension's first rows."""

from __future__ import annotations

from typing import Any

import pytest

from shared.core.model import Message, Role, TaskState, TaskStatus, TextPart
from shared.core.pauses import (
    AskUserRequest,
    TextQuestion,
    ToolApprovalRequest,
    Unusable,
    read_pause,
)
from tests.hitl.builders import (
    CONTEXT_ID,
    TASK_ID,
    TIMESTAMP,
    approval,
    ask,
    data_part,
    paused,
    read,
    read_text,
    tool,
)


def test_on_kagent_v1_the_question_is_the_payload_in_the_status_messages_metadata() -> None:
    pause = read(paused(approval(), names_extension=False), "kagent-v1")
    assert isinstance(pause, ToolApprovalRequest)
    assert pause.task.task_id == TASK_ID and pause.task.context_id == CONTEXT_ID


def test_on_kagent_v1_a_pause_without_the_payload_is_unusable() -> None:
    assert isinstance(read(paused(), "kagent-v1"), Unusable)


def test_on_a2a_a_status_message_that_names_the_extension_and_carries_the_payload_is_read_the_same_way() -> (
    None
):
    assert isinstance(read(paused(ask())), AskUserRequest)


def test_on_a2a_a_payload_the_message_does_not_name_is_read_as_a_text_question_if_its_parts_are_text() -> (
    None
):
    pause = read(paused(approval(), names_extension=False))
    assert isinstance(pause, TextQuestion)
    assert pause.text == "Human input is required before the agent can continue."


def test_on_a2a_a_pause_that_does_not_name_the_extension_is_unusable_when_a_part_is_not_text() -> (
    None
):
    parts = (TextPart("Approve?"), data_part({"name": "adk_request_confirmation", "id": "c1"}))
    assert isinstance(read(paused(approval(), names_extension=False, parts=parts)), Unusable)


def test_any_other_question_on_a2a_is_a_status_message_whose_parts_are_all_text_joined() -> None:
    pause = read(paused(parts=(TextPart("Which "), TextPart("region?"))))
    assert isinstance(pause, TextQuestion) and pause.text == "Which region?"


@pytest.mark.parametrize("parts", [(), (TextPart(""),), (TextPart("  "), TextPart("\n\t"))])
def test_a_text_question_whose_text_is_blank_once_joined_and_trimmed_is_unusable(
    parts: tuple[TextPart, ...],
) -> None:
    assert isinstance(read(paused(parts=parts)), Unusable)


@pytest.mark.parametrize("dialect", ["a2a", "kagent-v1"])
@pytest.mark.parametrize("task_id", [None, ""])
def test_a_pause_on_a_task_without_an_id_is_unusable(dialect: str, task_id: str | None) -> None:
    assert isinstance(read(paused(approval()), dialect, task_id=task_id), Unusable)  # type: ignore[arg-type]
    assert isinstance(read(paused(), dialect, task_id=task_id), Unusable)  # type: ignore[arg-type]


def test_a_pause_without_a_status_message_is_unusable() -> None:
    assert isinstance(read(TaskStatus(TaskState.INPUT_REQUIRED, None, TIMESTAMP)), Unusable)


def test_reading_a_status_that_is_not_input_required_is_a_mistake_of_the_caller() -> None:
    with pytest.raises(ValueError):
        read(TaskStatus(TaskState.WORKING, Message(Role.AGENT, (TextPart("hi"),), "m1")))


def test_the_task_id_with_the_messages_messageid_names_the_question() -> None:
    first = read(
        paused(
            parts=(TextPart("Which region?"),), message_id="m1", timestamp="2026-01-01T00:00:00Z"
        )
    )
    later = read(
        paused(
            parts=(TextPart("Which region?"),), message_id="m1", timestamp="2026-01-01T00:09:00Z"
        )
    )
    other = read(paused(parts=(TextPart("Which region?"),), message_id="m2"))
    assert (
        isinstance(first, TextQuestion)
        and isinstance(later, TextQuestion)
        and isinstance(other, TextQuestion)
    )
    assert first.name == later.name != other.name
    assert TASK_ID in first.name and "m1" in first.name


def test_the_status_timestamp_names_the_question_when_it_has_no_messageid() -> None:
    first = read(
        paused(
            parts=(TextPart("Which region?"),), message_id=None, timestamp="2026-01-01T00:00:00Z"
        )
    )
    other = read(
        paused(
            parts=(TextPart("Which region?"),), message_id=None, timestamp="2026-01-01T00:09:00Z"
        )
    )
    assert isinstance(first, TextQuestion) and isinstance(other, TextQuestion)
    assert first.name != other.name and "2026-01-01T00:00:00Z" in first.name


def test_a_question_with_neither_messageid_nor_timestamp_has_no_name_and_is_unusable() -> None:
    assert isinstance(
        read(paused(parts=(TextPart("Which region?"),), message_id=None, timestamp=None)), Unusable
    )


def test_the_same_name_with_the_same_text_is_the_same_question() -> None:
    first, again = read_text("Which region?"), read_text("Which region?")
    assert (first.name, first.fingerprint) == (again.name, again.fingerprint)


def test_a_different_question_under_a_used_name_is_told_apart_by_its_fingerprint() -> None:
    first, changed = read_text("Which region?"), read_text("Which zone?")
    assert first.name == changed.name and first.fingerprint != changed.fingerprint


def test_a_tool_approval_is_told_apart_by_its_task_and_tool_ids_not_its_message() -> None:
    first = read(paused(approval(tool("t1")), message_id="m1"))
    replayed = read(paused(approval(tool("t1")), message_id="m9"))
    new_pause = read(paused(approval(tool("t2")), message_id="m1"))
    assert isinstance(first, ToolApprovalRequest) and isinstance(replayed, ToolApprovalRequest)
    assert isinstance(new_pause, ToolApprovalRequest)
    assert first.name == replayed.name != new_pause.name
    assert first.key == replayed.key != new_pause.key


def test_questions_are_told_apart_by_their_task_and_request_id() -> None:
    first, same, new_pause = (
        read(paused(ask())),
        read(paused(ask())),
        read(paused(ask(request_id="ask-2"))),
    )
    assert isinstance(first, AskUserRequest) and isinstance(same, AskUserRequest)
    assert isinstance(new_pause, AskUserRequest)
    assert first.name == same.name != new_pause.name and first.fingerprint == same.fingerprint


def test_the_same_tool_ids_with_other_arguments_have_the_same_name_and_another_fingerprint() -> (
    None
):
    first = read(paused(approval(tool("t1", args={"path": "/a"}))))
    changed = read(paused(approval(tool("t1", args={"path": "/b"}))))
    assert isinstance(first, ToolApprovalRequest) and isinstance(changed, ToolApprovalRequest)
    assert first.name == changed.name and first.fingerprint != changed.fingerprint


@pytest.mark.parametrize(
    "payload",
    [approval(tool("t1")), ask(), None],
    ids=["tool approval", "ask_user", "text question"],
)
def test_the_same_pause_in_two_sessions_has_a_key_in_each(payload: dict[str, Any] | None) -> None:
    # Agents choose task ids: two threads (or Bindings) whose tasks share an
    # id and a pause must not share a prompt, an answer or a Cloud Task name.
    status = paused(payload, parts=(TextPart("Which region?"),))
    here = read_pause("a2a", TASK_ID, CONTEXT_ID, status, session="sre-C1-1.0")
    there = read_pause("a2a", TASK_ID, CONTEXT_ID, status, session="ops-C2-2.0")
    assert not isinstance(here, Unusable) and not isinstance(there, Unusable)
    assert here.name == there.name and here.key != there.key
    again = read_pause("a2a", TASK_ID, CONTEXT_ID, status, session="sre-C1-1.0")
    assert not isinstance(again, Unusable) and again.key == here.key


def test_the_prompt_key_is_short_enough_for_slack_action_ids() -> None:
    pause = read(paused(approval(tool("x" * 2000))))
    assert isinstance(pause, ToolApprovalRequest) and len(pause.key) == 24 and ":" not in pause.key


@pytest.mark.parametrize(
    "payload", [["not", "an", "object"], "text", {"type": "confirm"}, {"tools": [tool()]}]
)
def test_a_payload_that_is_neither_request_type_is_unusable(payload: object) -> None:
    assert isinstance(read(paused(payload)), Unusable)
    assert isinstance(read(paused(payload), "kagent-v1"), Unusable)


def test_text_parts_beside_the_payload_are_not_shown_the_prompt_is_built_from_the_payload() -> None:
    pause = read(paused(approval(hint="Delete it?"), parts=(TextPart("Some other words"),)))
    assert isinstance(pause, ToolApprovalRequest) and pause.heading == "Delete it?"


def test_an_unusable_pause_says_why_for_the_logs_without_the_agents_values() -> None:
    pause = read(paused(approval(tool(args={"note": "hunter2\x07"}))))
    assert isinstance(pause, Unusable)
    assert "tools[0].args.note" in pause.reason and "control character" in pause.reason
    assert "hunter2" not in pause.reason
