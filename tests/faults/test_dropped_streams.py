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


def sends_of(faults: Faults, ts: str) -> list[dict[str, object]]:
    """The messages the agent received for the turn of chat message ``ts``."""
    turn = faults.turn(ts)
    assert turn is not None
    return [s.message for s in faults.agent.sends() if s.message.get("messageId") == turn.message_id]


@pytest.mark.parametrize("events_before_drop", range(1, RUN_EVENTS + 1))
def test_a_stream_dropped_after_any_event_shows_the_answer_once(faults: Faults, events_before_drop: int) -> None:
    faults.agent.use(Script(drop_send_after=events_before_drop))
    posted = faults.say(f"dropped after {events_before_drop} events")

    replies = faults.wait_until_answered(posted.ts)

    assert read_reply(replies) == expected_reply(DEFAULT_PIECES)
    [sent] = sends_of(faults, posted.ts)
    [task] = faults.agent.tasks_of(str(sent["messageId"]))
    followed = faults.agent.calls("GetTask") + faults.agent.calls("SubscribeToTask")
    assert followed and {call.params["id"] for call in followed} == {task.id}


def test_a_send_failing_with_5xx_is_sent_again_with_the_same_message_id(faults: Faults) -> None:
    faults.agent.use(Script(failed_sends=2))
    posted = faults.say("answered 500 twice")

    replies = faults.wait_until_answered(posted.ts)

    assert read_reply(replies) == expected_reply(DEFAULT_PIECES)
    sent = sends_of(faults, posted.ts)
    assert len(sent) == 3 and len({str(message["messageId"]) for message in sent}) == 1
    assert all("contextId" not in message for message in sent)
    assert len(faults.agent.tasks_of(str(sent[0]["messageId"]))) == 1
    assert not faults.agent.calls("ListTasks")  # a first turn has no context to look in


def test_a_turn_the_agent_took_before_the_connection_dropped_is_not_sent_again(faults: Faults) -> None:
    first = faults.say("first turn of the thread")
    faults.wait_until_answered(first.ts)
    [first_send] = sends_of(faults, first.ts)
    [first_task] = faults.agent.tasks_of(str(first_send["messageId"]))
    second_pieces = [Text("Second answer, "), ToolCall("call-2", "check_again"), Text("found and followed.")]
    faults.agent.use(Script(pieces=second_pieces, taken_then_dropped=True))

    second = faults.say("second turn, dropped before any event", thread_ts=first.ts)
    replies = faults.wait_until_answered(first.ts, first.ts, second.ts)

    assert read_reply(replies) == expected_reply(DEFAULT_PIECES + second_pieces)
    [second_send] = sends_of(faults, second.ts)
    assert second_send["contextId"] == first_task.context_id
    [second_task] = faults.agent.tasks_of(str(second_send["messageId"]))
    assert [call.params["contextId"] for call in faults.agent.calls("ListTasks")] == [first_task.context_id]
    assert faults.turn(second.ts).task_id == second_task.id


def test_an_agent_without_subscribe_is_polled_until_its_task_ends(faults: Faults) -> None:
    pieces = [Text("Polled, "), ToolCall("call-poll", "slow_tool", seconds=2.0), Text("and finished.")]
    faults.agent.use(Script(pieces=pieces, gap=0.5, drop_send_after=3, can_subscribe=False))
    posted = faults.say("no subscribe here")

    replies = faults.wait_until_answered(posted.ts)

    assert read_reply(replies) == expected_reply(pieces)
    assert len(sends_of(faults, posted.ts)) == 1
    assert len(faults.agent.calls("SubscribeToTask")) == 1  # refused once, then never asked again
    assert len(faults.agent.calls("GetTask")) >= 2
