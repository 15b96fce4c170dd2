"""Pub/Sub and Cloud Tasks deliver at least once: a second delivery changes nothing.

A turn message is published again while its turn runs and after it ended.
A hand-over to ``stream_follow`` and a timer to ``timeout`` are delivered
twice: the queue is paused while the real task waits in it, a twin identical
but for its name is created beside it, and the queue resumes, so both are
dispatched together. The thread and the agent see each part and each send once.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from shared.core import notices
from tests.faults.agent import DEFAULT_PIECES, Piece, Script, Text, ToolCall

from .conftest import BUSY_NOTICE, TURN_WAIT, Faults, expected_reply, read_reply


def test_a_turn_published_again_during_and_after_its_run_is_carried_once(faults: Faults) -> None:
    faults.agent.use(Script(gap=0.4))
    first = faults.say("published three times")
    faults.standin.wait_for(lambda: faults.agent.sends("published three times"), timeout=TURN_WAIT)
    faults.publish_turn(first.ts, first.ts)
    faults.publish_turn(first.ts, first.ts)
    faults.wait_until_answered(first.ts)
    faults.publish_turn(first.ts, first.ts)

    second = faults.say("the next turn", thread_ts=first.ts)  # published after the duplicate
    replies = faults.wait_until_answered(first.ts, first.ts, second.ts)

    assert read_reply(replies) == expected_reply(DEFAULT_PIECES * 2)
    assert [s.message["messageId"] for s in faults.agent.sends()] == [
        faults.turn(first.ts).message_id,
        faults.turn(second.ts).message_id,
    ]


@contextmanager
def doubled(faults: Faults, queue: str) -> Iterator[list[str]]:
    """Deliver every task of ``queue`` twice while the block runs; yields the names doubled."""
    path = faults.queue_path(queue)
    doubled_names: list[str] = []
    faults.tasks.pause_queue(name=path)
    try:
        yield doubled_names
    finally:
        faults.tasks.resume_queue(name=path)


def double_pending(faults: Faults, queue: str, names: list[str]) -> bool:
    """If tasks wait in the paused ``queue``: create a twin of each and let both go. Returns whether it did."""
    waiting = faults.pending_tasks(queue)
    if not waiting:
        return False
    for task in waiting:
        faults.create_twin(task, "twin")
        names.append(task.name)
    path = faults.queue_path(queue)
    faults.tasks.resume_queue(name=path)
    faults.standin.wait_for(lambda: not faults.pending_tasks(queue), timeout=TURN_WAIT)
    faults.tasks.pause_queue(name=path)
    return True


def test_hand_overs_delivered_twice_are_followed_once(faults: Faults) -> None:
    pieces: list[Piece] = [Text(f"Chunk {n} of a long answer. ") for n in range(1, 11)]
    pieces.insert(4, ToolCall("call-twice", "slow_tool", seconds=3.0))
    faults.agent.use(Script(pieces=pieces, gap=1.0))
    queue = faults.settings.follow_queue
    with doubled(faults, queue) as names:
        posted = faults.say("handed over, delivered twice")

        def turn_done() -> bool:
            double_pending(faults, queue, names)
            return getattr(faults.turn(posted.ts), "status", None) == "done"

        faults.standin.wait_for(turn_done, timeout=TURN_WAIT, interval=0.2)
    replies = faults.wait_until_answered(posted.ts)

    assert len(names) >= 2
    assert read_reply(replies) == expected_reply(pieces)
    [send] = faults.agent.sends()
    assert len(faults.agent.tasks_of(str(send.message["messageId"]))) == 1


def test_timers_delivered_twice_fire_once(faults: Faults) -> None:
    faults.agent.use(Script(busy_for=BUSY_NOTICE + 6))
    queue = faults.settings.timers_queue
    with doubled(faults, queue) as names:
        posted = faults.say("busy, with every timer delivered twice")

        def turn_done() -> bool:
            double_pending(faults, queue, names)
            return getattr(faults.turn(posted.ts), "status", None) == "done"

        faults.standin.wait_for(turn_done, timeout=TURN_WAIT, interval=0.2)
    replies = faults.wait_until_answered(posted.ts)

    assert len(names) >= 2
    assert read_reply(replies) == expected_reply(DEFAULT_PIECES, notices.AGENT_BUSY)
    sends = faults.agent.sends()
    assert {s.message["messageId"] for s in sends} == {faults.turn(posted.ts).message_id}
    assert len(faults.agent.tasks_of(str(sends[0].message["messageId"]))) == 1
