"""A task that outlives three function deadlines is followed to its end, each part once."""

from __future__ import annotations

from tests.faults.agent import Piece, Script, Text, ToolCall

from .conftest import FOLLOW_BUDGET, Faults, expected_reply, read_reply


def test_a_task_outliving_three_deadlines_is_followed_to_its_end_with_each_part_once(
    faults: Faults,
) -> None:
    pieces: list[Piece] = [Text(f"Part {n} of the long answer. ") for n in range(1, 13)]
    pieces.insert(3, ToolCall("call-slow", "slow_tool", seconds=FOLLOW_BUDGET + 1))
    faults.agent.use(Script(pieces=pieces, gap=1.0))  # about 3.5 budgets long
    posted = faults.say("a long task")

    replies = faults.wait_until_answered(posted.ts)

    assert read_reply(replies) == expected_reply(pieces)
    [send] = faults.agent.sends()
    assert send.message["messageId"] == faults.message_id(posted.ts)
    [task] = faults.agent.tasks_of(faults.message_id(posted.ts))
    assert task.ended_at is not None and task.ended_at - task.started_at > 3 * FOLLOW_BUDGET
    subscriptions = faults.agent.calls("SubscribeToTask")
    assert len(subscriptions) >= 3  # each hand-over resumes the follow in a new function
    assert {s.params["id"] for s in subscriptions} == {task.id}
