"""Leases: a turn that waits on a person holds its thread until the wait is over.

A claim on a session is a lease; the sweep takes over a turn whose lease ran
out, as it must when the function carrying it died. A turn that waits on a
question longer than a lease is not dead: its lease runs to the question's
timeout (plus a lease), and no checkpoint may cut it back.
"""

from __future__ import annotations

import json
import uuid
from datetime import timedelta
from typing import Any

from shared.core import notices
from shared.core.model import HITL_EXTENSION
from shared.core.session import Session
from shared.store import SESSIONS
from tests.hitl_e2e.agent import HitlAgent, Say, Stage, hitl_pause
from tests.hitl_e2e.conftest import Thread

from .conftest import BINDING, CHANNEL, HITL_CHANNEL, Faults

TIMEOUT_REASON = "denied by agent-kourier: no one decided in time"


def approval(*tool_ids: str) -> dict[str, Any]:
    """A tool_approval_request for ``delete_file`` on each tool id."""
    tools = [
        {"id": t, "call_id": f"call-{t}", "name": "delete_file", "args": {"path": f"/tmp/{t}"}}
        for t in tool_ids
    ]
    return {"type": "tool_approval_request", "tools": tools}


def logged(faults: Faults, function: str, event: str) -> list[dict[str, Any]]:
    """The structured lines ``function`` logged for ``event``, oldest first."""
    lines = (faults.stack.log_dir / f"{function}.log").read_text().splitlines()
    records = [json.loads(line) for line in lines if line.startswith("{")]
    return [record for record in records if record.get("message") == event]


def test_a_renewal_never_shortens_a_lease(faults: Faults) -> None:
    # Firestore keeps what the last write says: a checkpoint's renewal, written
    # while a turn waits on a 15-minute question, must not bring its lease nearer.
    session_id = f"{BINDING}-lease-{uuid.uuid4().hex}"
    until = faults.store.now() + timedelta(minutes=15)
    session = Session(
        id=session_id,
        binding=BINDING,
        channel=CHANNEL,
        thread_ts="1.000001",
        active_turn=f"{CHANNEL}-1.000001",
        lease_until=until,
    )
    faults.store.change_session(session_id, lambda _: session)
    try:
        faults.store.renew_lease(
            session_id, session.active_turn or "", session.generation, timedelta(seconds=540)
        )
        renewed = faults.store.session(session_id)
        assert renewed is not None and renewed.lease_until == until

        faults.store.renew_lease(
            session_id, session.active_turn or "", session.generation, timedelta(minutes=30)
        )
        extended = faults.store.session(session_id)
        assert extended is not None and extended.lease_until is not None
        assert extended.lease_until > until
    finally:
        faults.db.collection(SESSIONS).document(session_id).delete()


def test_an_approval_waiting_longer_than_a_lease_is_denied_at_its_timeout(
    faults: Faults, hitl_agent: HitlAgent
) -> None:
    # The sweep runs every 1.5 s and the lease is 10 s; the prompt waits 20 s.
    token = f"lease-approval-{uuid.uuid4().hex[:8]}"
    conversation = hitl_agent.expect(
        token,
        Stage(pause=hitl_pause(approval("t1"))),
        Stage(pieces=(Say("Nothing was deleted."),)),
    )
    posted = faults.standin.say(HITL_CHANNEL, token)
    thread = Thread(faults.standin, HITL_CHANNEL, posted)
    prompt = thread.prompt()

    thread.updated(prompt, notices.SHOWN_DENIED_TIMEOUT)

    thread.answer("Nothing was deleted.")
    [answer] = conversation.answers()
    assert answer.message["metadata"][HITL_EXTENSION]["approvals"] == [
        {"id": "t1", "approved": False, "rejection_reason": TIMEOUT_REASON}
    ]
    assert len(conversation.sends()) == 2, "the turn once, its answer once"
    turn_id = f"{HITL_CHANNEL}-{posted.ts}"
    assert not [r for r in logged(faults, "turn_send", "turn_taken_over") if r["turn"] == turn_id]
