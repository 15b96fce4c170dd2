"""Tool steps: one test per rule of the agent contract's "Tool calls and results".

Where a rule is about parts (what is delivered), the ledger is asked directly;
where it is about what a person sees, the step events of the reply are.
"""

from __future__ import annotations

import json

from shared.core.model import Message, Part, Role, StreamEvent, TaskState
from shared.core.reply import ReplyAssembler
from shared.core.tool_ledger import ToolPartLedger
from shared.core.tool_parts import ToolPart, read_tool_part
from shared.core.tool_steps import StepFinished, StepStarted
from tests.core.reply_builders import (
    agent_message,
    artifact,
    call,
    chunk,
    feed_all,
    result,
    snapshot,
    status,
    steps_of,
    text,
    user_message,
)


def started(call_id: str, name: str = "search", args: object = "default") -> StepStarted:
    return StepStarted(call_id, name, {"q": call_id} if args == "default" else args)


def finished(
    call_id: str, name: str = "search", ok: bool = True, response: object = "default"
) -> StepFinished:
    return StepFinished(
        call_id, name, ok, {"answer": call_id} if response == "default" else response
    )


def parsed(*parts: Part) -> list[ToolPart]:
    return [tool_part for part in parts if (tool_part := read_tool_part(part)) is not None]


def steps_after(
    *events: StreamEvent, assembler: ReplyAssembler | None = None
) -> list[StepStarted | StepFinished]:
    return steps_of(feed_all(assembler or ReplyAssembler(), events))


# The three places.


def test_tool_parts_are_read_in_the_artifacts_in_every_chunk() -> None:
    events: list[StreamEvent] = [chunk("a", call("c1")), chunk("a", result("c1"), append=True)]
    assert steps_after(*events) == [started("c1"), finished("c1")]


def test_tool_parts_are_read_in_the_artifacts_of_every_task_snapshot() -> None:
    assert steps_after(snapshot(artifact("a", text("x"), call("c1"), result("c1")))) == [
        started("c1"),
        finished("c1"),
    ]


def test_a_status_message_is_read_when_it_is_the_agents_own_and_the_task_is_working() -> None:
    events: list[StreamEvent] = [
        status(call("c1"), message_id="m-1"),
        status(result("c1"), message_id="m-2"),
    ]
    assert steps_after(*events) == [started("c1"), finished("c1")]


def test_a_status_message_from_the_user_or_in_another_state_is_not_read() -> None:
    from_the_user = status(call("c1"), role=Role.USER)
    input_required = status(call("c2"), state=TaskState.INPUT_REQUIRED, message_id="m-2")
    completed = status(call("c3"), state=TaskState.COMPLETED, message_id="m-3")
    assert steps_after(from_the_user, input_required, completed) == []


def test_a_message_with_no_role_is_not_read_as_the_agents() -> None:
    roleless_status = status(call("c1"), role=Role.UNSPECIFIED)
    roleless_in_history = Message(Role.UNSPECIFIED, (call("c2"),), message_id="m-2")
    history = [user_message(), roleless_in_history]
    snapshot_of_it = snapshot(history=history, state=TaskState.COMPLETED)
    assert steps_after(roleless_status, snapshot_of_it) == []


def test_a_task_snapshots_status_message_is_read_on_the_same_terms() -> None:
    working = snapshot(status_message=agent_message(call("c1")))
    paused = snapshot(
        status_message=agent_message(call("c2"), message_id="m-2"), state=TaskState.INPUT_REQUIRED
    )
    assert steps_after(working, paused) == [started("c1")]


def test_the_agents_history_messages_since_the_users_last_message_are_read_whatever_the_state() -> (
    None
):
    history = [
        user_message(),
        agent_message(call("c1"), message_id="m-1"),
        agent_message(result("c1"), message_id="m-2"),
    ]
    assert steps_after(snapshot(history=history, state=TaskState.COMPLETED)) == [
        started("c1"),
        finished("c1"),
    ]


def test_the_messages_before_the_users_last_one_are_an_earlier_turns_and_are_not_read() -> None:
    history = [
        user_message("first", message_id="u-1"),
        agent_message(call("c0"), message_id="m-0"),
        user_message("second", message_id="u-2"),
        agent_message(call("c1"), message_id="m-1"),
    ]
    assert steps_after(snapshot(history=history, state=TaskState.COMPLETED)) == [started("c1")]


def test_a_pause_message_in_the_history_that_holds_a_marked_tool_part_shows_as_a_step() -> None:
    confirmation = call("c9", name="adk_request_confirmation", args={"hint": "approve?"})
    history = [
        user_message(),
        agent_message(confirmation, text("Please approve"), message_id="p-1"),
    ]
    assert steps_after(snapshot(history=history, state=TaskState.INPUT_REQUIRED)) == [
        started("c9", name="adk_request_confirmation", args={"hint": "approve?"})
    ]


# What counts as a repeat, in each place.


def test_each_part_of_an_append_chunk_is_new_even_though_its_index_restarts_at_0() -> None:
    ledger = ToolPartLedger()
    ledger.read_chunk(chunk("run", text("Let me look.")))
    assert ledger.read_chunk(chunk("run", call(None), append=True)) == parsed(call(None))
    assert ledger.read_chunk(chunk("run", call(None), append=True)) == parsed(call(None))
    assert (
        ledger.read_snapshot(
            snapshot(artifact("run", text("Let me look."), call(None), call(None)))
        )
        == []
    )


def test_a_replace_chunk_or_snapshot_delivers_a_part_only_past_the_number_that_say_the_same() -> (
    None
):
    ledger = ToolPartLedger()
    assert ledger.read_chunk(chunk("a", call("c1"))) == parsed(call("c1"))
    moved = chunk("a", call("c2"), text("x"), call("c1"))
    assert ledger.read_chunk(moved) == parsed(call("c2"))
    assert ledger.read_snapshot(
        snapshot(artifact("a", call("c1"), call("c2"), call("c2")))
    ) == parsed(call("c2"))


def test_two_calls_that_say_the_same_with_no_call_id_are_two_calls() -> None:
    assembler = ReplyAssembler()
    two = steps_after(snapshot(artifact("a", call(None), call(None))), assembler=assembler)
    assert [step.call_id for step in two] == ["anonymous-call-1", "anonymous-call-2"]
    again = steps_after(snapshot(artifact("a", call(None), call(None))), assembler=assembler)
    assert again == []


def test_in_a_status_message_a_part_is_its_messages_message_id_and_index() -> None:
    ledger = ToolPartLedger()
    assert ledger.read_status(status(call("c1"), message_id="m-1")) == parsed(call("c1"))
    assert ledger.read_status(status(call("c1"), message_id="m-1")) == []
    assert ledger.read_status(status(text("again"), call("c1"), message_id="m-1")) == parsed(
        call("c1")
    )
    assert ledger.read_status(status(call("c1"), message_id="m-2")) == parsed(call("c1"))


def test_a_status_message_with_no_message_id_is_told_by_what_it_says() -> None:
    ledger = ToolPartLedger()
    assert ledger.read_status(status(call("c1"), message_id=None)) == parsed(call("c1"))
    assert ledger.read_status(status(call("c1"), message_id=None)) == []
    assert ledger.read_status(status(text("now"), call("c1"), message_id=None)) == parsed(
        call("c1")
    )


def test_a_status_message_is_the_same_part_when_a_snapshot_holds_it_in_history() -> None:
    assembler = ReplyAssembler()
    steps_after(status(call("c1"), message_id="m-1"), assembler=assembler)
    history = [user_message(), agent_message(call("c1"), message_id="m-1")]
    assert steps_after(snapshot(history=history), assembler=assembler) == []


def test_a_part_found_in_an_artifact_and_again_in_a_message_is_one_part_when_it_says_the_same() -> (
    None
):
    ledger = ToolPartLedger()
    assert ledger.read_status(status(call("c1"), message_id="m-1")) == parsed(call("c1"))
    assert ledger.read_chunk(chunk("a", call("c1"))) == []
    assert ledger.read_chunk(chunk("b", result("c1"))) == parsed(result("c1"))
    history = [user_message(), agent_message(result("c1"), message_id="m-2")]
    assert ledger.read_snapshot(snapshot(history=history)) == []


def test_a_part_found_in_an_artifact_and_again_in_a_message_is_two_parts_when_it_does_not() -> None:
    ledger = ToolPartLedger()
    ledger.read_status(status(call("c1", args={"q": 1}), message_id="m-1"))
    assert ledger.read_chunk(chunk("a", call("c1", args={"q": 2}))) == parsed(
        call("c1", args={"q": 2})
    )


def test_another_part_with_the_same_call_id_leaves_the_card_to_the_first_result() -> None:
    events: list[StreamEvent] = [
        status(call("c1"), message_id="m-1"),
        status(result("c1", response={"v": 1}), message_id="m-2"),
        chunk("a", call("c1", args={"q": "other"})),
        chunk("b", result("c1", response={"v": 2})),
    ]
    assert steps_after(*events) == [started("c1"), finished("c1", response={"v": 1})]


def test_a_snapshots_result_is_ignored_when_the_stream_gave_one_for_that_call_from_its_source() -> (
    None
):
    ledger = ToolPartLedger()
    ledger.read_chunk(chunk("a", call("c1")))
    ledger.read_chunk(chunk("b", result("c1", response={"v": 1})))
    later = artifact("c", result("c1", response={"v": 2}))
    assert (
        ledger.read_snapshot(
            snapshot(
                artifact("a", call("c1")), artifact("b", result("c1", response={"v": 1})), later
            )
        )
        == []
    )
    from_messages = [user_message(), agent_message(result("c1", response={"v": 3}))]
    assert ledger.read_snapshot(snapshot(history=from_messages)) == parsed(
        result("c1", response={"v": 3})
    )


def test_of_several_results_of_one_call_in_a_snapshot_the_last_counts() -> None:
    results = artifact(
        "a", result("c1", response={"status": "pending"}), result("c1", response={"status": "done"})
    )
    events: list[StreamEvent] = [status(call("c1"), message_id="m-1"), snapshot(results)]
    assert steps_after(*events) == [started("c1"), finished("c1", response={"status": "done"})]


def test_before_an_answer_every_tool_part_of_the_paused_task_counts_as_delivered() -> None:
    paused = snapshot(
        artifact("a", call("c0"), result("c0")),
        history=[user_message(), agent_message(call("c8"), message_id="m-8")],
        status_message=agent_message(call("c9"), message_id="m-9"),
        state=TaskState.INPUT_REQUIRED,
    )
    assembler = ReplyAssembler.for_answer(paused)
    resumed = snapshot(
        artifact("a", call("c0"), result("c0"), call("c1")),
        history=[
            user_message(),
            agent_message(call("c8"), message_id="m-8"),
            agent_message(call("c9"), message_id="m-9"),
        ],
        state=TaskState.WORKING,
    )
    assert steps_after(resumed, assembler=assembler) == [started("c1")]


def test_an_answer_to_a_task_that_cannot_be_read_replays_the_paused_turns_artifact_steps() -> None:
    assembler = ReplyAssembler.for_answer(None)
    resumed = snapshot(
        artifact("a", call("c0"), result("c0"), call("c1")), history=[user_message("yes")]
    )
    assert steps_after(resumed, assembler=assembler) == [
        started("c0"),
        finished("c0"),
        started("c1"),
    ]


def test_two_artifacts_of_one_source_that_hold_the_same_call_are_two_calls() -> None:
    ledger = ToolPartLedger()
    assert ledger.read_snapshot(
        snapshot(artifact("partial", call("c1")), artifact("main", call("c1")))
    ) == parsed(call("c1"), call("c1"))
    assert steps_after(snapshot(artifact("partial", call(None)), artifact("main", call(None))))[
        1
    ].call_id == ("anonymous-call-2")


# Steps.


def test_a_step_finishes_at_the_first_result_of_its_call_and_a_later_result_changes_nothing() -> (
    None
):
    events: list[StreamEvent] = [
        chunk("a", call("c1")),
        chunk("a", result("c1", response={"v": 1}), append=True),
        chunk("a", result("c1", response={"v": 2}), append=True),
    ]
    assert steps_after(*events) == [started("c1"), finished("c1", response={"v": 1})]


def test_a_result_is_delivered_after_its_call() -> None:
    events: list[StreamEvent] = [chunk("b", result("c1")), status(text("thinking"))]
    assembler = ReplyAssembler()
    assert steps_after(*events, assembler=assembler) == []
    assert steps_after(chunk("a", call("c1")), assembler=assembler) == [
        started("c1"),
        finished("c1"),
    ]


def test_a_result_without_its_call_in_an_answer_takes_the_call_from_the_task_read_before() -> None:
    pause_error = result("c1", name="delete_file", response={"error": "requires approval"})
    paused = snapshot(
        artifact(
            "a",
            call("c1", name="delete_file", args={"path": "x"}),
            pause_error,
            call("c2", name="ls"),
        ),
        state=TaskState.INPUT_REQUIRED,
    )
    assembler = ReplyAssembler.for_answer(paused)
    events: list[StreamEvent] = [
        chunk("b", result("c1", name="delete_file", response={"deleted": True}))
    ]
    assert steps_after(*events, assembler=assembler) == [
        started("c1", name="delete_file", args={"path": "x"}),
        finished("c1", name="delete_file", response={"deleted": True}),
    ]
    assert assembler.finish() == []


def test_when_the_call_is_nowhere_the_result_waits_and_is_delivered_when_the_send_ends() -> None:
    assembler = ReplyAssembler()
    assert steps_after(chunk("a", result("c1")), assembler=assembler) == []
    assert assembler.finish() == [started("c1", args=None), finished("c1")]
    assert assembler.finish() == []
    assert steps_after(chunk("b", call("c1")), assembler=assembler) == []


def test_a_follow_that_delivers_a_result_again_keeps_the_first() -> None:
    sent = ReplyAssembler()
    steps_after(chunk("a", call("c1")), chunk("b", result("c1", response={"v": 1})), assembler=sent)
    follow = ReplyAssembler.from_state(json.loads(json.dumps(sent.to_state())))
    history = [user_message(), agent_message(result("c1", response={"v": 2}))]
    assert steps_after(snapshot(history=history), assembler=follow) == []


def test_a_stop_takes_only_the_results_the_stopped_task_holds_for_the_reply() -> None:
    # A person's stop ends the reply where it stands: of the task CancelTask answers with,
    # it takes the results a carrier may have read after the checkpoint, no text or call.
    assembler = ReplyAssembler()
    feed_all(assembler, [chunk("answer", text("Let me look. "), call("call-1"))])
    cancelled = snapshot(
        artifact(
            "answer", text("Let me look. Sunny."), call("call-1"), result("call-1"), call("c2")
        ),
        state=TaskState.CANCELED,
    )

    assert assembler.results_in(cancelled) == [finished("call-1")]


def test_a_step_fails_when_its_result_has_an_error_or_is_error_true() -> None:
    events: list[StreamEvent] = [
        chunk("a", call("c1"), call("c2"), call("c3")),
        chunk("a", result("c1", response={"error": "boom"}), append=True),
        chunk("a", result("c2", response={"isError": True, "content": []}), append=True),
        chunk("a", result("c3", response={"error": ""}), append=True),
    ]
    assert [step.ok for step in steps_after(*events) if isinstance(step, StepFinished)] == [
        False,
        False,
        True,
    ]


def test_a_result_with_no_call_id_finishes_the_oldest_open_step_of_its_tool_with_none() -> None:
    events: list[StreamEvent] = [
        chunk("a", call(None, name="ls"), call(None, name="ls"), call(None, name="cat")),
        chunk("a", result(None, name="ls", response={"n": 1}), append=True),
        chunk("a", result(None, name="cat", response={"n": 2}), append=True),
    ]
    assert steps_after(*events)[3:] == [
        StepFinished("anonymous-call-1", "ls", True, {"n": 1}),
        StepFinished("anonymous-call-3", "cat", True, {"n": 2}),
    ]


def test_a_result_with_no_call_id_waits_for_a_call_of_its_tool_with_none() -> None:
    events: list[StreamEvent] = [
        chunk("a", result(None, name="ls", response={"n": 1})),
        chunk("b", call(None, name="ls", args={})),
    ]
    assert steps_after(*events) == [
        StepStarted("anonymous-call-1", "ls", {}),
        StepFinished("anonymous-call-1", "ls", True, {"n": 1}),
    ]


def test_the_kagent_and_kagent_10_keys_are_read_in_every_place() -> None:
    events: list[StreamEvent] = [
        status(call("c1", key="kagent_type"), message_id="m-1"),
        chunk("a", result("c1", key="kagent.dev/a2a/part-type")),
    ]
    assert steps_after(*events) == [started("c1"), finished("c1")]
