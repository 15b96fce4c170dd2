"""Session identity: a thread's conversation stays with the agent that made it.

A session is bound to the backend's incarnation before its first send
(``shared.core.incarnation``). A session written before sessions were bound,
and one whose agent has changed since, carry no new turn into their old
context: the thread is told, and the turn starts a new conversation.
"""

from __future__ import annotations

import uuid

from google.cloud import firestore

from shared.core import notices
from shared.store import SESSIONS
from tests.faults.agent import DEFAULT_PIECES, Received, Script
from tests.faults.test_leases import approval
from tests.hitl_e2e.agent import HitlAgent, Say, Stage, hitl_pause
from tests.hitl_e2e.conftest import Thread

from .conftest import HITL_CHANNEL, Faults, expected_reply, read_reply


def _session_id(faults: Faults, thread_ts: str) -> str:
    return f"{faults.binding}-{faults.channel}-{thread_ts}"


def _second_send(faults: Faults, ts: str) -> Received:
    [send] = faults.agent.sends(faults.message_id(ts))
    return send


def test_a_session_written_before_sessions_were_bound_starts_a_new_conversation(
    either_version: Faults,
) -> None:
    faults = either_version
    first = faults.say("a conversation from before")
    faults.wait_until_answered(first.ts)
    session_id = _session_id(faults, first.ts)
    old = faults.store.session(session_id)
    assert old is not None and old.context_id and old.incarnation
    # As a document written by a version that knew no binding: no such field at all.
    faults.db.collection(SESSIONS).document(session_id).update(
        {"incarnation": firestore.DELETE_FIELD}
    )
    faults.agent.use(Script())

    second = faults.say("a turn in an old thread", thread_ts=first.ts)
    messages = faults.wait_until_answered(first.ts, first.ts, second.ts)

    later = [m for m in messages if float(m.ts) > float(second.ts)]
    assert read_reply(later) == expected_reply(DEFAULT_PIECES, notices.UNBOUND_CONVERSATION)
    assert "contextId" not in _second_send(faults, second.ts).message
    new = faults.store.session(session_id)
    assert new is not None and new.incarnation == old.incarnation
    assert new.context_id and new.context_id != old.context_id


def test_a_thread_whose_agent_changed_starts_a_new_conversation(either_version: Faults) -> None:
    faults = either_version
    first = faults.say("a conversation with the first agent")
    faults.wait_until_answered(first.ts)
    old = faults.store.session(_session_id(faults, first.ts))
    assert old is not None and old.context_id
    try:
        faults.agent.name = "another agent at the same URL"
        faults.stack.restart("turn_send")  # a fresh process reads the card again

        second = faults.say("a turn after the agent changed", thread_ts=first.ts)
        messages = faults.wait_until_answered(first.ts, first.ts, second.ts)
        third = faults.say("and the next turn", thread_ts=first.ts)
        messages = faults.wait_until_answered(first.ts, first.ts, third.ts)
    finally:
        faults.agent.name = "faulty"
        faults.stack.restart("turn_send")

    second_reply = [m for m in messages if float(second.ts) < float(m.ts) < float(third.ts)]
    assert read_reply(second_reply) == expected_reply(DEFAULT_PIECES, notices.AGENT_CHANGED)
    assert "contextId" not in _second_send(faults, second.ts).message
    new = faults.store.session(_session_id(faults, first.ts))
    assert new is not None and new.incarnation != old.incarnation
    assert new.context_id and new.context_id != old.context_id
    # The new conversation goes on, and the thread is not told again.
    assert _second_send(faults, third.ts).message["contextId"] == new.context_id
    third_reply = [m for m in messages if float(m.ts) > float(third.ts)]
    assert read_reply(third_reply) == expected_reply(DEFAULT_PIECES)


def test_an_approval_asked_by_an_agent_that_changed_is_no_longer_answerable(
    faults: Faults, hitl_agent: HitlAgent
) -> None:
    token = f"identity-approval-{uuid.uuid4().hex[:8]}"
    conversation = hitl_agent.expect(
        token,
        Stage(pause=hitl_pause(approval("t1"))),
        Stage(pieces=(Say("Deleted."),)),
    )
    posted = faults.standin.say(HITL_CHANNEL, token)
    thread = Thread(faults.standin, HITL_CHANNEL, posted)
    prompt = thread.prompt()
    try:
        hitl_agent.name = "another agent at the same URL"
        faults.stack.restart("stream_follow")  # where answers are sent: reads the card again

        thread.click(prompt, "approve:0")

        thread.notice(notices.QUESTION_WITHDRAWN)
        shown = thread.updated(prompt, notices.SHOWN_NO_LONGER_ANSWERABLE)
    finally:
        hitl_agent.name = "hitl-scripted"
        faults.stack.restart("stream_follow")
    assert not shown.action_ids(), "no button is left to click"
    assert conversation.answers() == [], "the answer never reached the agent"
    assert faults.ended_turn(f"{HITL_CHANNEL}-{posted.ts}").outcome == "agent_changed"
