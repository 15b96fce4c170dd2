"""Which messages of a thread are Kourier's: every one after the mention that began it."""

from __future__ import annotations

from tests.faults.agent import DEFAULT_PIECES
from tests.hitl_e2e.conftest import function_stopped

from .conftest import CHANNEL, Faults, expected_reply, read_reply


def test_a_reply_written_before_the_first_turn_is_claimed_is_carried_after_it(
    faults: Faults,
) -> None:
    # Pub/Sub reaches a cold or busy turn_send seconds, or minutes, after the
    # ingress published the turn; meanwhile the person goes on writing.
    with function_stopped(faults.stack, "turn_send"):
        first = faults.say("check the payments errors")
        reply = faults.standin.say(
            CHANNEL, "since 14:00 UTC please", thread_ts=first.ts, as_mention=False
        )
        assert reply.statuses == [200]

    replies = faults.wait_until_answered(first.ts, first.ts, reply.ts)

    assert read_reply(replies) == expected_reply(DEFAULT_PIECES * 2)
    sends = faults.agent.sends()
    assert [s.message["messageId"] for s in sends] == [
        faults.message_id(first.ts),
        faults.message_id(reply.ts),
    ]
    assert "since 14:00 UTC please" in sends[1].message["parts"][0]["text"]


def test_a_thread_without_a_mention_is_not_kourier_s(faults: Faults) -> None:
    root = faults.standin.say(CHANNEL, "lunch, anyone?", as_mention=False)
    reply = faults.standin.say(CHANNEL, "yes please", thread_ts=root.ts, as_mention=False)
    assert root.statuses == reply.statuses == [200]

    assert faults.turn(root.ts) is None and faults.turn(reply.ts) is None
    assert not faults.agent.sends()
