"""One task per context: turns queue in order; a busy agent gets the same message again."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from shared.core import notices
from tests.faults.agent import DEFAULT_PIECES, Script

from .conftest import BUSY_NOTICE, TURN_WAIT, Faults, expected_reply, read_reply


def test_five_messages_at_once_reach_the_agent_one_at_a_time_in_order(faults: Faults) -> None:
    script = faults.agent.use(
        Script(hold_send_after=2)
    )  # the first turn runs until all five are in
    first = faults.say("message 1 of 5")
    assert script.reached.wait(TURN_WAIT)
    with ThreadPoolExecutor(4) as pool:  # the other four at once, while the first runs
        others = list(
            pool.map(lambda n: faults.say(f"message {n} of 5", thread_ts=first.ts), range(2, 6))
        )
    others.sort(key=lambda posted: float(posted.ts))
    script.released.set()

    posted = [first, *others]
    replies = faults.wait_until_answered(first.ts, *(p.ts for p in posted))

    assert read_reply(replies) == expected_reply(DEFAULT_PIECES * 5)
    sends = faults.agent.sends()
    assert [s.message["messageId"] for s in sends] == [faults.message_id(p.ts) for p in posted]
    tasks = [task for p in posted for task in faults.agent.tasks_of(faults.message_id(p.ts))]
    assert len(tasks) == 5
    assert "contextId" not in sends[0].message
    assert {s.message["contextId"] for s in sends[1:]} == {tasks[0].context_id}
    assert not faults.agent.overlaps
    for earlier, later in zip(tasks, sends[1:]):
        assert earlier.ended_at is not None and later.at >= earlier.ended_at


def test_a_busy_agent_gets_the_same_message_again_and_the_thread_hears_once(faults: Faults) -> None:
    faults.agent.use(Script(busy_for=BUSY_NOTICE + 6))
    posted = faults.say("the agent is busy")

    replies = faults.wait_until_answered(posted.ts)

    assert read_reply(replies) == expected_reply(DEFAULT_PIECES, notices.AGENT_BUSY)
    sends = faults.agent.sends()
    assert len(sends) >= 3
    assert {s.message["messageId"] for s in sends} == {faults.message_id(posted.ts)}
    assert len(faults.agent.tasks_of(faults.message_id(posted.ts))) == 1
    [notice] = [m for m in replies if m.text == notices.AGENT_BUSY]
    assert float(notice.ts) >= sends[0].at + BUSY_NOTICE  # told at the busy-notice time, not before
    assert replies.index(notice) == 0  # before the answer
