"""Slack failing in the middle of a turn: the turn goes on elsewhere, sent once, shown once."""

from __future__ import annotations

from tests.faults.agent import DEFAULT_PIECES, Script

from .conftest import Faults, expected_reply, read_reply


def test_a_slack_error_on_the_first_event_does_not_send_the_turn_again(faults: Faults) -> None:
    # Slack answers the first message of the reply with a 5xx; the function
    # carrying the turn fails, and another takes it over once its lease ran
    # out. The agent named its task in that first event (its stream opens
    # with text), so the task must be read again, never the message re-sent:
    # the agent would run the turn, and its tools, twice.
    faults.agent.use(Script(opens_with_text=True))
    faults.standin.fail("chat.startStream")  # the reply falls back to ordinary messages,
    faults.standin.fail("chat.postMessage")  # and Slack refuses those too
    posted = faults.say("restart the payments deployment")

    replies = faults.wait_until_answered(posted.ts)

    assert read_reply(replies) == expected_reply(DEFAULT_PIECES)
    assert len(faults.agent.sends()) == 1
    assert len(faults.agent.tasks_of(faults.message_id(posted.ts))) == 1
