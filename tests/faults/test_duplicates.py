"""Pub/Sub and Cloud Tasks deliver at least once: a second delivery changes nothing.

A turn message is published again while its turn runs and after it ended.
A hand-over to ``stream_follow`` and a timer to ``timeout`` are delivered
twice: the queue is paused while the real task waits in it, a twin identical
but for its name is created beside it, and the queue resumes, so both are
dispatched together. The thread and the agent see each part and each send once.
"""

from __future__ import annotations

from local.slack_standin.models import Posted
from shared.core import notices
from tests.faults.agent import DEFAULT_PIECES, Piece, Script, Text, ToolCall

from .conftest import BUSY_NOTICE, TURN_WAIT, Faults, expected_reply, read_reply


def test_a_turn_published_again_during_and_after_its_run_is_carried_once(faults: Faults) -> None:
    faults.agent.use(Script(gap=0.4))
    first = faults.say("published three times")
    faults.standin.wait_for(lambda: faults.agent.sends(), timeout=TURN_WAIT)  # the turn runs
    faults.publish_turn(first.ts, first.ts)
    faults.publish_turn(first.ts, first.ts)
    faults.wait_until_answered(first.ts)
    faults.publish_turn(first.ts, first.ts)

    second = faults.say("the next turn", thread_ts=first.ts)  # published after the duplicate
    replies = faults.wait_until_answered(first.ts, first.ts, second.ts)

    assert read_reply(replies) == expected_reply(DEFAULT_PIECES * 2)
    sent = [s.message["messageId"] for s in faults.agent.sends()]
    assert sent == [faults.message_id(first.ts), faults.message_id(second.ts)]


def say_with_every_task_doubled(faults: Faults, queue: str, text: str) -> tuple[Posted, list[str]]:
    """Say ``text`` and, until its turn is done, deliver every task of ``queue`` twice.

    The queue is paused; each task that waits in it gets a twin, then both
    go at once and the queue is paused again. Returns the message and the
    names of the tasks doubled.
    """
    path = faults.queue_path(queue)
    doubled: list[str] = []
    faults.tasks.pause_queue(name=path)
    try:
        posted = faults.say(text)

        def turn_done() -> bool:
            waiting = faults.pending_tasks(queue)
            if waiting:
                for task in waiting:
                    faults.create_twin(task)
                    doubled.append(task.name)
                faults.tasks.resume_queue(name=path)
                faults.standin.wait_for(lambda: not faults.pending_tasks(queue), timeout=TURN_WAIT)
                faults.tasks.pause_queue(name=path)
            return getattr(faults.turn(posted.ts), "status", None) == "done"

        faults.standin.wait_for(turn_done, timeout=TURN_WAIT, interval=0.2)
    finally:
        faults.tasks.resume_queue(name=path)
    return posted, doubled


def test_hand_overs_delivered_twice_are_followed_once(faults: Faults) -> None:
    pieces: list[Piece] = [Text(f"Chunk {n} of a long answer. ") for n in range(1, 11)]
    pieces.insert(4, ToolCall("call-twice", "slow_tool", seconds=3.0))
    faults.agent.use(Script(pieces=pieces, gap=1.0))
    posted, doubled = say_with_every_task_doubled(
        faults, faults.settings.follow_queue, "handed over twice"
    )
    replies = faults.wait_until_answered(posted.ts)

    assert len(doubled) >= 2
    assert read_reply(replies) == expected_reply(pieces)
    [send] = faults.agent.sends()
    assert send.message["messageId"] == faults.message_id(posted.ts)
    assert len(faults.agent.tasks_of(faults.message_id(posted.ts))) == 1


def test_timers_delivered_twice_fire_once(faults: Faults) -> None:
    faults.agent.use(Script(busy_for=BUSY_NOTICE + 6))
    posted, doubled = say_with_every_task_doubled(
        faults, faults.settings.timers_queue, "busy, timers twice"
    )
    replies = faults.wait_until_answered(posted.ts)

    assert len(doubled) >= 2
    assert read_reply(replies) == expected_reply(DEFAULT_PIECES, notices.AGENT_BUSY)
    sends = faults.agent.sends()
    assert {s.message["messageId"] for s in sends} == {faults.message_id(posted.ts)}
    assert len(faults.agent.tasks_of(faults.message_id(posted.ts))) == 1
