"""A turn has an upper bound: past its Binding's maxTurnDuration the task is cancelled, truthfully."""

from __future__ import annotations

from shared.core import notices
from tests.faults.agent import Script, Text, ToolCall

from .conftest import BOUNDED_CHANNEL, MAX_TURN, Faults, read_reply


def test_a_task_that_stays_working_past_the_longest_turn_is_cancelled_and_the_thread_told(
    faults: Faults,
) -> None:
    # The agent stays working far longer than the Binding allows a turn; it
    # refuses CancelTask (-32002), as kagent does, so the thread hears that
    # the task could not be stopped, and the thread is free again.
    pieces = [Text("Looking into it. "), ToolCall("call-slow", "slow_tool", seconds=6 * MAX_TURN)]
    faults.agent.use(Script(pieces=pieces))
    posted = faults.standin.say(BOUNDED_CHANNEL, "watch the rollout")
    assert posted.statuses == [200]

    turn_id = f"{BOUNDED_CHANNEL}-{posted.ts}"

    turn = faults.ended_turn(turn_id)
    assert turn.outcome == "too_long"
    shown = read_reply([m for m in faults.standin.thread(BOUNDED_CHANNEL, posted.ts) if m.is_bot])
    assert shown.answer == "Looking into it. "
    assert shown.notices == [notices.TURN_TOO_LONG.not_stopped]
    [task] = faults.agent.tasks_of(turn.message_id)
    assert [c.params["id"] for c in faults.agent.calls("CancelTask")][:1] == [task.id]
