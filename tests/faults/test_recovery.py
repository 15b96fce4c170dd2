"""Recovery lookups: a turn that may be in the agent's context is looked up, not re-sent.

When a send's outcome is unknown on a 1.0 agent, the turn is looked up with
ListTasks (contract, Methods: ListTasks "on recovery after a restart"). A
lookup cut at its page limit is incomplete, not "absent": it is retried and
never sends the turn again. A function that takes over a turn whose carrier
died, and cannot read the agent's card at first, reads the card again until
it can, and only then looks the turn up (1.0) or sends it again (0.3, which
has no ListTasks).
"""

from __future__ import annotations

from tests.faults.agent import DEFAULT_PIECES, Script
from tests.faults.test_leases import logged

from .conftest import TURN_WAIT, Faults, expected_reply, read_reply


def test_a_lookup_cut_at_its_page_limit_is_retried_and_never_taken_for_absent(
    faults: Faults,
) -> None:
    first = faults.say("a thread with a context")
    faults.wait_until_answered(first.ts)
    faults.agent.forget()
    script = faults.agent.use(Script(taken_then_dropped=True, endless_list=True))
    second = faults.say("taken, then the connection dropped", thread_ts=first.ts)
    message_id = faults.message_id(second.ts)

    # Two lookups cut at 100 pages each: whether the agent has the turn is unknown.
    faults.standin.wait_for(lambda: len(faults.agent.calls("ListTasks")) >= 200, timeout=TURN_WAIT)
    assert len(faults.agent.sends(message_id)) == 1, "an incomplete lookup is not 'absent'"
    script.endless_list = False

    messages = faults.wait_until_answered(first.ts, first.ts, second.ts)
    answers = [m for m in messages if float(m.ts) > float(second.ts)]
    assert read_reply(answers) == expected_reply(DEFAULT_PIECES)
    assert len(faults.agent.sends(message_id)) == 1
    incomplete = [
        record
        for function in ("turn_send", "timeout")
        for record in logged(faults, function, "list_tasks_incomplete")
    ]
    assert incomplete and incomplete[0]["pages"] == 100


def test_a_restarted_turn_is_looked_up_once_the_card_can_be_read(either_version: Faults) -> None:
    faults = either_version
    first = faults.say("a thread with a context")
    faults.wait_until_answered(first.ts)
    faults.agent.forget()
    script = faults.agent.use(Script(hold_send_after=0))
    second = faults.say("killed before its first checkpoint", thread_ts=first.ts)
    assert script.reached.wait(TURN_WAIT), "the agent took the message"

    script.failed_cards = 1  # the fresh process cannot read the card at first
    faults.stack.restart("turn_send")
    script.released.set()

    messages = faults.wait_until_answered(first.ts, first.ts, second.ts)
    answers = [m for m in messages if float(m.ts) > float(second.ts)]
    assert read_reply(answers) == expected_reply(DEFAULT_PIECES)
    assert script.failed_cards == 0, "the card was read again after it failed"
    message_id = faults.message_id(second.ts)
    if faults.version == "1.0":
        # Looked up: the agent's task is followed, the message never sent again.
        assert len(faults.agent.sends(message_id)) == 1
        assert faults.agent.calls("ListTasks")
    else:
        assert len(faults.agent.sends(message_id)) == 2
        assert not faults.agent.calls("ListTasks")
