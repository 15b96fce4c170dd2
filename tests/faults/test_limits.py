"""An agent that sends more than Kourier reads: the turn fails at once, and says why.

A Cloud Function instance has 512 MiB, and a delivery that fails is made
again: an event read whole past the limit would fail the same way on every
takeover.
"""

from __future__ import annotations

from shared.core import notices
from tests.faults.agent import Script, Text

from .conftest import MAX_AGENT_RESPONSE_BYTES, Faults, read_reply


def test_an_event_larger_than_the_limit_fails_the_turn_with_a_notice_and_is_not_read_again(
    faults: Faults,
) -> None:
    faults.agent.use(
        Script(pieces=[Text("A start.\n"), Text("x" * (MAX_AGENT_RESPONSE_BYTES + 1024))])
    )
    posted = faults.say("answer with too much")

    replies = faults.wait_until_answered(posted.ts)

    seen = read_reply(replies)
    assert seen.notices == [notices.turn_failed(notices.RESPONSE_TOO_LARGE)]
    assert "xxxxxxxx" not in seen.answer
    assert not faults.agent.calls("GetTask"), "a response too large is not read again"
    assert len(faults.agent.sends()) == 1
