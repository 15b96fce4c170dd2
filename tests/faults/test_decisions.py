"""What a person decides on a prompt stands: kept, audited and sent, whatever Slack answers."""

from __future__ import annotations

import uuid
from typing import Any

from google.cloud import firestore

from shared.core.model import HITL_EXTENSION
from shared.questions import AUDIT, PROMPT_ATTEMPTS
from tests.hitl_e2e.agent import Conversation, HitlAgent, Say, Stage, hitl_pause
from tests.hitl_e2e.conftest import Thread

from .conftest import APPROVER, HITL_CHANNEL, Faults
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
