"""One task per context: turns queue in order; a busy agent gets the same message again."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from local.slack_standin.models import Ephemeral
from shared.core import notices
from tests.faults.agent import DEFAULT_PIECES, Script

from .conftest import (
    BUSY_NOTICE,
    QUEUED_PER_THREAD,
    QUEUED_PER_USER,
    TURN_WAIT,
    Faults,
    expected_reply,
    read_reply,
)


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


def told_in(faults: Faults, thread_ts: str) -> list[Ephemeral]:
    """What Alice alone was told in a thread."""
    shown = faults.standin.ephemerals(channel=faults.channel, user="U0ALICE")
    return [ephemeral for ephemeral in shown if ephemeral.thread_ts == thread_ts]


# Any member of a channel can write as fast as they like, and every binding
# shares one pool of function instances (turn_send, stream_follow).
def test_a_message_past_the_threads_queue_is_not_carried_and_its_author_alone_is_told(
    faults: Faults,
) -> None:
    script = faults.agent.use(Script(hold_send_after=2))
    first = faults.say("queue 0")
    assert script.reached.wait(TURN_WAIT)
    queued = [faults.say(f"queue {n}", thread_ts=first.ts) for n in range(1, QUEUED_PER_THREAD + 1)]

    refused = faults.say("one too many", thread_ts=first.ts)

    [told] = faults.standin.wait_for(lambda: told_in(faults, first.ts), timeout=30)
    assert told.text == notices.THREAD_QUEUE_FULL.format(count=QUEUED_PER_THREAD)
    script.released.set()
    faults.wait_until_answered(first.ts, first.ts, *(p.ts for p in queued))
    sent = [s.message["messageId"] for s in faults.agent.sends()]
    assert faults.message_id(refused.ts) not in sent and len(sent) == QUEUED_PER_THREAD + 1
    assert not [m for m in faults.bot_messages(first.ts) if "too many" in m.text]


def test_a_message_past_its_authors_queue_is_not_carried_whatever_its_thread(
    faults: Faults,
) -> None:
    script = faults.agent.use(Script(hold_send_after=2))
    threads = []
    for name in ("a", "b"):
        first = faults.say(f"thread {name}")
        assert faults.standin.wait_for(
            lambda ts=first.ts: [
                s for s in faults.agent.sends() if s.message["messageId"] == faults.message_id(ts)
            ],
            timeout=TURN_WAIT,
        )
        queued = [
            faults.say(f"thread {name} queue {n}", thread_ts=first.ts)
            for n in range(QUEUED_PER_USER // 2)
        ]
        threads.append((first, queued))

    refused = faults.say("one too many for Alice", thread_ts=threads[1][0].ts)

    [told] = faults.standin.wait_for(lambda: told_in(faults, threads[1][0].ts), timeout=30)
    assert told.text == notices.USER_QUEUE_FULL.format(count=QUEUED_PER_USER)
    script.released.set()
    for first, queued in threads:
        faults.wait_until_answered(first.ts, first.ts, *(p.ts for p in queued))
    assert faults.message_id(refused.ts) not in [
        s.message["messageId"] for s in faults.agent.sends()
    ]
