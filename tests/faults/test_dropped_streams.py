"""Streams that drop, sends whose outcome is unknown: each part shown once, each turn sent once.

The scripted run is ``DEFAULT_PIECES``: eight events (the task, working, a
text chunk, a tool call, its result, two text chunks, completed). Whatever
event the send's stream drops after, the task runs on at the agent, and the
thread ends up with the canonical answer and the step, each once.
"""

from __future__ import annotations

import pytest

from tests.faults.agent import DEFAULT_PIECES, Script, Text, ToolCall

from .conftest import Faults, expected_reply, read_reply

RUN_EVENTS = 8


@pytest.mark.parametrize("events_before_drop", range(1, RUN_EVENTS + 1))
def test_a_stream_dropped_after_any_event_shows_the_answer_once(
    faults: Faults, events_before_drop: int
) -> None:
    faults.agent.use(Script(drop_send_after=events_before_drop))
    posted = faults.say(f"dropped after {events_before_drop} events")

    replies = faults.wait_until_answered(posted.ts)

    assert read_reply(replies) == expected_reply(DEFAULT_PIECES)
    [send] = faults.agent.sends()
    assert send.message["messageId"] == faults.message_id(posted.ts)
    [task] = faults.agent.tasks_of(faults.message_id(posted.ts))
    followed = faults.agent.calls("GetTask") + faults.agent.calls("SubscribeToTask")
    assert followed and {call.params["id"] for call in followed} == {task.id}


def test_a_send_failing_with_5xx_is_sent_again_with_the_same_message_id(faults: Faults) -> None:
    faults.agent.use(Script(failed_sends=2))
    posted = faults.say("answered 500 twice")

    replies = faults.wait_until_answered(posted.ts)

    assert read_reply(replies) == expected_reply(DEFAULT_PIECES)
    sends = faults.agent.sends()
    assert [s.message["messageId"] for s in sends] == [faults.message_id(posted.ts)] * 3
    assert all("contextId" not in s.message for s in sends)
    assert len(faults.agent.tasks_of(faults.message_id(posted.ts))) == 1
    assert not faults.agent.calls("ListTasks")  # a first turn has no context to look in


def test_a_turn_the_agent_took_before_the_connection_dropped_is_not_sent_again(
    faults: Faults,
) -> None:
    first = faults.say("first turn of the thread")
    faults.wait_until_answered(first.ts)
    [first_task] = faults.agent.tasks_of(faults.message_id(first.ts))
    second_pieces = [
        Text("Second answer, "),
        ToolCall("call-2", "check_again"),
        Text("found and followed."),
    ]
    faults.agent.use(Script(pieces=second_pieces, taken_then_dropped=True))

    second = faults.say("second turn, dropped before any event", thread_ts=first.ts)
    replies = faults.wait_until_answered(first.ts, first.ts, second.ts)

    assert read_reply(replies) == expected_reply(DEFAULT_PIECES + second_pieces)
    [second_send] = faults.agent.sends(faults.message_id(second.ts))  # taken once, never sent again
    assert second_send.message["contextId"] == first_task.context_id
    assert "taskId" not in second_send.message
    looked_up = [call.params["contextId"] for call in faults.agent.calls("ListTasks")]
    assert looked_up == [first_task.context_id]
    [second_task] = faults.agent.tasks_of(faults.message_id(second.ts))
    assert getattr(faults.turn(second.ts), "task_id", None) == second_task.id


def test_an_agent_without_subscribe_is_polled_until_its_task_ends(faults: Faults) -> None:
    pieces = [
        Text("Polled, "),
        ToolCall("call-poll", "slow_tool", seconds=2.0),
        Text("and finished."),
    ]
    faults.agent.use(Script(pieces=pieces, gap=0.5, drop_send_after=3, can_subscribe=False))
    posted = faults.say("no subscribe here")

    replies = faults.wait_until_answered(posted.ts)

    assert read_reply(replies) == expected_reply(pieces)
    assert len(faults.agent.sends(faults.message_id(posted.ts))) == 1
    assert len(faults.agent.calls("SubscribeToTask")) == 1  # refused once, then never asked again
    assert len(faults.agent.calls("GetTask")) >= 2
