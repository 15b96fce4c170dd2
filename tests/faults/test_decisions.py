"""What a person decides on a prompt stands: kept, audited and sent, whatever Slack answers."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from google.cloud import firestore

from shared.core import notices
from shared.core.model import HITL_EXTENSION
from shared.core.session import Session
from shared.questions import AUDIT, PROMPT_ATTEMPTS
from shared.store import SESSIONS
from tests.hitl_e2e.agent import Conversation, HitlAgent, Say, Stage, hitl_pause
from tests.hitl_e2e.conftest import Thread

from .conftest import APPROVER, HITL_BINDING, HITL_CHANNEL, TURN_WAIT, Faults
from .test_leases import approval


def paused(faults: Faults, agent: HitlAgent, *stages: Stage) -> tuple[Conversation, Thread]:
    """Alice mentions the bot on the HITL Binding; its agent plays ``stages``."""
    token = f"decision-{uuid.uuid4().hex[:8]}"
    conversation = agent.expect(token, *stages)
    posted = faults.standin.say(HITL_CHANNEL, token)
    assert posted.statuses == [200]
    return conversation, Thread(faults.standin, HITL_CHANNEL, posted)


def audit(faults: Faults, task_id: str | None) -> list[dict[str, Any]]:
    """The audit records of a task's decisions."""
    found = (
        faults.db.collection(AUDIT)
        .where(filter=firestore.FieldFilter("task_id", "==", task_id))
        .get()
    )
    return [doc.to_dict() or {} for doc in found]


def test_a_decision_slack_fails_to_show_is_kept_audited_and_sent(
    faults: Faults, hitl_agent: HitlAgent
) -> None:
    # Slack does not retry a click: when chat.update fails (5xx, ratelimited
    # past the SDK's retries), the decision the click made must still count.
    conversation, thread = paused(
        faults,
        hitl_agent,
        Stage(pause=hitl_pause(approval("t1"))),
        Stage(pieces=(Say("Deleted /tmp/t1."),)),
    )
    prompt = thread.prompt()
    faults.standin.fail("chat.update", times=PROMPT_ATTEMPTS)
    try:
        thread.click(prompt, "approve:0")  # answered 200, not a 500
    finally:
        faults.standin.clear_failures("chat.update")

    thread.answer("Deleted /tmp/t1.")
    [answer] = conversation.answers()
    assert answer.message["metadata"][HITL_EXTENSION]["approvals"] == [
        {"id": "t1", "approved": True}
    ]
    [record] = audit(faults, conversation.task_id)
    assert (record["tool_id"], record["approved"], record["actor"]["id"]) == ("t1", True, APPROVER)


def test_a_prompt_whose_thread_no_longer_waits_on_it_decides_nothing(
    faults: Faults, hitl_agent: HitlAgent
) -> None:
    # An operator deletes a stuck thread's session document: the prompt's
    # buttons stay in Slack, but no answer could reach the agent any more.
    conversation, thread = paused(
        faults, hitl_agent, Stage(pause=hitl_pause(approval("t1"))), Stage(pieces=(Say("no"),))
    )
    prompt = thread.prompt()
    faults.db.collection(SESSIONS).document(session_of(thread)).delete()

    thread.click(prompt, "approve:0")

    assert refusals(thread) == [notices.QUESTION_CLOSED]
    assert not audit(faults, conversation.task_id)
    assert not conversation.answers()


def test_a_turn_that_ends_while_its_prompt_waits_closes_the_prompt(
    faults: Faults, hitl_agent: HitlAgent
) -> None:
    conversation, thread = paused(
        faults, hitl_agent, Stage(pause=hitl_pause(approval("t1"))), Stage(pieces=(Say("no"),))
    )
    prompt = thread.prompt()
    conversation.state = "TASK_STATE_FAILED"  # the agent lost the task while it waited
    # The function that paused died before it set the question's timer: its
    # lease runs out, and the sweep takes the turn over.
    faults.store.change_session(session_of(thread), _lease_ended)

    thread.notice(notices.task_failed(None))
    faults.standin.wait_for(lambda: _ended(faults, thread), timeout=TURN_WAIT)
    thread.click(prompt, "approve:0")

    assert refusals(thread) == [notices.QUESTION_CLOSED]
    assert not audit(faults, conversation.task_id)
    assert len(conversation.sends()) == 1, "the paused turn's message is never sent again"


def refusals(thread: Thread) -> list[str]:
    """What only the approver was told in this thread."""
    return [e.text for e in thread.ephemerals(APPROVER) if e.thread_ts == thread.ts]


def session_of(thread: Thread) -> str:
    """The session of a thread on the HITL Binding."""
    return f"{HITL_BINDING}-{HITL_CHANNEL}-{thread.ts}"


def _ended(faults: Faults, thread: Thread) -> bool:
    turn = faults.store.turn(f"{HITL_CHANNEL}-{thread.ts}")
    return turn is not None and turn.status == "done"


def _lease_ended(current: Session | None) -> Session | None:
    assert current is not None
    current.lease_until = datetime.now(UTC) - timedelta(seconds=1)
    return current
