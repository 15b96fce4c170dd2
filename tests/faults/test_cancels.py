"""Cancels tell the thread the truth: the task was cancelled, or it could not be stopped.

CancelTask is tried a few times; when it still fails the task is read with
GetTask (contract, Methods), and the thread hears what happened. Each test
runs on both A2A versions.
"""

from __future__ import annotations

from shared.core import notices
from tests.faults.agent import AUTH_REQUIRED, WORKING, Received, Script, canonical_answer

from .conftest import Faults, expected_reply, read_reply


def _after_last_cancel(calls: list[Received]) -> list[str]:
    """The methods called after the last CancelTask."""
    last = max(i for i, call in enumerate(calls) if call.method == "CancelTask")
    return [call.method for call in calls[last + 1 :]]


def test_a_task_with_no_sign_of_life_that_cannot_be_cancelled_is_reported_still_running(
    either_version: Faults,
) -> None:
    faults = either_version
    # The send's stream drops, the task goes quiet for ever, and every cancel is refused.
    script = faults.agent.use(Script(stays_in=[WORKING], drop_send_after=3, can_subscribe=False))
    posted = faults.say("a task that goes quiet")

    seen = read_reply(faults.wait_until_answered(posted.ts))

    assert seen == expected_reply(script.pieces, notices.NO_SIGN_OF_LIFE.not_stopped)
    calls = faults.agent.received
    assert [c.method for c in calls].count("CancelTask") == 3
    assert _after_last_cancel(calls) == ["GetTask"]
    turn = faults.turn(posted.ts)
    assert turn is not None and turn.outcome == "no_sign_of_life"


def test_a_task_with_no_sign_of_life_that_is_cancelled_is_reported_cancelled(
    either_version: Faults,
) -> None:
    faults = either_version
    script = faults.agent.use(
        Script(stays_in=[WORKING], drop_send_after=3, can_subscribe=False, cancelable=True)
    )
    posted = faults.say("a task that goes quiet and can be cancelled")

    seen = read_reply(faults.wait_until_answered(posted.ts))

    assert seen == expected_reply(script.pieces, notices.NO_SIGN_OF_LIFE.stopped)
    assert len(faults.agent.calls("CancelTask")) == 1
    [task] = faults.agent.tasks_of(faults.message_id(posted.ts))
    assert task.state == "TASK_STATE_CANCELED"


def test_auth_required_is_cancelled_then_told_and_the_queued_reply_is_sent(
    either_version: Faults,
) -> None:
    faults = either_version
    script = faults.agent.use(Script(stays_in=[AUTH_REQUIRED], hold_send_after=2))
    first = faults.say("a task that will ask to sign in")
    assert script.reached.wait(60)
    queued = faults.say("a reply queued behind it", thread_ts=first.ts)
    faults.standin.wait_for(
        lambda: getattr(faults.turn(queued.ts), "status", None) == "received", timeout=60
    )
    script.released.set()

    messages = faults.wait_until_answered(first.ts, first.ts, queued.ts)

    # Both answers in full, and one notice, after the first.
    assert read_reply(messages) == expected_reply(
        script.pieces * 2, notices.UNUSABLE_PAUSE.not_stopped
    )
    told = next(i for i, m in enumerate(messages) if m.text == notices.UNUSABLE_PAUSE.not_stopped)
    assert canonical_answer(script.pieces) in "".join(m.text for m in messages[told + 1 :])
    calls = faults.agent.received
    assert [c.method for c in calls].count("CancelTask") == 3
    # Tried, read, told; then the reply queued behind it is sent.
    assert _after_last_cancel(calls)[:2] == ["GetTask", "SendStreamingMessage"]
    assert calls[-1].method != "CancelTask"
    first_turn = faults.turn(first.ts)
    assert first_turn is not None and first_turn.outcome == "auth_required"
