"""Slack's agent sessions: the status follows the turn, the stop button stops it, feedback counts.

Each test drives the local stack through the Slack stand-in as a person
would: it writes, presses the session's stop button, clicks 👍 or 👎, and
reads what the thread, the session, the agent and Firestore show.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from local.feedback import report
from local.slack_standin.models import Message
from shared.core import notices
from shared.core.feedback import ACTION_ID, Rating
from shared.feedback import FEEDBACK, tally_of
from shared.firestore import FirestoreDocuments
from tests.faults.agent import CANCELED, WORKING, Script, canonical_answer
from tests.hitl_e2e.agent import HitlAgent, Say, Stage, text_pause
from tests.hitl_e2e.conftest import Thread

from .conftest import HITL_CHANNEL, TURN_WAIT, Faults, read_reply
from .test_leases import logged

ALICE, BOB = "U0ALICE", "U0BOB"


def _stopped_notice(who: str, *, cancelled: bool) -> str:
    return notices.STOPPED.after(cancelled).replace("{who}", f"<@{who}>")


def _streaming(faults: Faults, thread_ts: str) -> Message:
    """The bot's message that streams in the thread, once it does."""

    def found() -> Message | None:
        return next((m for m in faults.bot_messages(thread_ts) if m.stream == "streaming"), None)

    return faults.standin.wait_for(found, timeout=TURN_WAIT)


@pytest.fixture
def sessions_refused(faults: Faults) -> Iterator[Faults]:
    """The workspace does not allow agent sessions (agents.sessions.* answer feature_disabled)."""
    faults.standin.configure(agent_sessions=False)
    try:
        yield faults
    finally:
        faults.standin.configure(agent_sessions=True)


def test_the_status_follows_a_turn_through_a_question(
    faults: Faults, hitl_agent: HitlAgent
) -> None:
    token = f"status-{uuid.uuid4().hex[:8]}"
    hitl_agent.expect(
        token,
        Stage(pause=text_pause("Which environment?")),
        Stage(pieces=(Say("Deployed to staging."),)),
    )
    posted = faults.standin.say(HITL_CHANNEL, f"<@U0BOB> deploy {token} with xoxb-12345-abcdef")
    thread = Thread(faults.standin, HITL_CHANNEL, posted)
    thread.prompt()
    suspended = faults.standin.wait_for(
        lambda: (
            getattr(faults.standin.agent_session(HITL_CHANNEL, posted.ts), "status", "")
            == "suspended"
        ),
        timeout=TURN_WAIT,
    )
    assert suspended

    thread.reply("staging")
    thread.answer("Deployed to staging.")

    def idle() -> bool:
        turn = faults.store.turn(f"{HITL_CHANNEL}-{posted.ts}")
        session = faults.standin.agent_session(HITL_CHANNEL, posted.ts)
        return bool(turn and turn.status == "done" and session and session.status == "active")

    faults.standin.wait_for(idle, timeout=TURN_WAIT)
    session = faults.standin.agent_session(HITL_CHANNEL, posted.ts)
    assert session is not None
    assert session.statuses == ["processing", "suspended", "processing", "active"]
    assert session.initiator_user_id == ALICE
    # The first turn names the session: no mention, no secret.
    assert session.title is not None and token in session.title
    assert "U0BOB" not in session.title and "xoxb-12345-abcdef" not in session.title


def test_the_stop_button_stops_a_streaming_turn_once_and_the_next_turn_runs(
    faults: Faults,
) -> None:
    script = faults.agent.use(Script(stays_in=[WORKING], hold_send_after=3, cancelable=True))
    first = faults.say("a long investigation")
    assert script.reached.wait(60)
    streaming = _streaming(faults, first.ts)
    queued = faults.say("and then a summary", thread_ts=first.ts)

    pressed = faults.standin.press_stop(faults.channel, first.ts, user=ALICE)
    assert pressed.streaming_message_ts == [streaming.ts]
    stopped = faults.standin.wait_for(
        lambda: getattr(faults.turn(first.ts), "outcome", None) == "stopped", timeout=TURN_WAIT
    )
    assert stopped
    script.released.set()  # the queued turn's stream is held too
    messages = faults.wait_until_answered(first.ts, first.ts, queued.ts)

    told = _stopped_notice(ALICE, cancelled=True)
    assert [m.text for m in messages].count(told) == 1
    [task] = faults.agent.tasks_of(faults.message_id(first.ts))
    assert task.state == CANCELED
    assert len(faults.agent.calls("CancelTask")) == 1
    # The queued turn ran after the stop, in full, and the session is idle.
    after = messages[[m.text for m in messages].index(told) + 1 :]
    assert canonical_answer(script.pieces) in "".join(m.text for m in after)
    second = faults.turn(queued.ts)
    assert second is not None and second.outcome == "completed"
    session = faults.standin.agent_session(faults.channel, first.ts)
    assert session is not None and session.status == "active"

    # Slack retries the event: nothing changes.
    faults.standin.resend(pressed.event_id)
    assert faults.bot_messages(first.ts) == messages
    assert len(faults.agent.calls("CancelTask")) == 1
    assert (
        logged(faults, "chat_ingress", "stop_requested")[-1]["turn"]
        == f"{faults.channel}-{first.ts}"
    )
    assert (
        len(
            [
                r
                for r in logged(faults, "stream_follow", "turn_stopped")
                if r["turn"] == f"{faults.channel}-{first.ts}"
            ]
        )
        == 1
    )


def test_a_person_who_may_not_stop_the_turn_is_told_and_it_goes_on(faults: Faults) -> None:
    script = faults.agent.use(Script(hold_send_after=3))
    posted = faults.say("an answer Bob may not stop")
    assert script.reached.wait(60)
    _streaming(faults, posted.ts)

    faults.standin.press_stop(faults.channel, posted.ts, user=BOB)
    script.released.set()
    messages = faults.wait_until_answered(posted.ts)

    assert read_reply(messages).answer == canonical_answer(script.pieces)
    assert [e.text for e in faults.standin.ephemerals(faults.channel, BOB)][-1:] == [
        notices.NOT_ALLOWED_TO_STOP
    ]
    assert faults.agent.calls("CancelTask") == []
    turn = faults.turn(posted.ts)
    assert turn is not None and turn.outcome == "completed"


def test_feedback_is_one_record_per_person_and_answer_and_the_last_click_wins(
    faults: Faults,
) -> None:
    posted = faults.say("an answer to rate")
    [*_, last] = faults.wait_until_answered(posted.ts)
    [block] = [b for b in last.blocks if b.get("type") == "context_actions"]
    assert block["elements"][0]["type"] == "feedback_buttons"

    faults.standin.click(faults.channel, last.ts, ACTION_ID, user=ALICE, value="positive")
    faults.standin.click(faults.channel, last.ts, ACTION_ID, user=ALICE, value="negative")
    faults.standin.click(faults.channel, last.ts, ACTION_ID, user=BOB, value="positive")
    faults.standin.click(faults.channel, last.ts, ACTION_ID, user=BOB, value="positive")

    turn_id = f"{faults.channel}-{posted.ts}"
    records = [
        doc.to_dict() or {}
        for doc in faults.db.collection(FEEDBACK).stream()
        if (doc.to_dict() or {}).get("turn_id") == turn_id
    ]
    assert sorted((r["user"], r["rating"]) for r in records) == [
        (ALICE, Rating.DOWN.value),
        (BOB, Rating.UP.value),
    ]
    assert {r["backend"] for r in records} == {"faulty"}
    tally = tally_of(FirestoreDocuments(faults.db), "faulty")
    assert turn_id in [record.turn_id for record in tally.disliked]
    # What `kourier feedback faulty` prints: the tally, then Alice's 👎 on this answer.
    printed = report(tally, limit=50).splitlines()
    assert printed[0] == f"Feedback on faulty's answers: {tally.up} 👍, {tally.down} 👎"
    assert any(f"by {ALICE}" in line and f"(turn {turn_id})" in line for line in printed)
    recorded = [
        r for r in logged(faults, "chat_ingress", "feedback_recorded") if r["turn"] == turn_id
    ]
    # Alice's up, then down; Bob's up: his second click on it changed no rating.
    assert [r["rating"] for r in recorded] == ["up", "down", "up"]


def test_the_older_status_line_shows_where_agent_sessions_are_refused(
    sessions_refused: Faults,
) -> None:
    faults = sessions_refused
    posted = faults.say("hello from a workspace without agent sessions")
    messages = faults.wait_until_answered(posted.ts)

    assert read_reply(messages).answer == canonical_answer(faults.agent.script.pieces)
    assert faults.standin.agent_session(faults.channel, posted.ts) is None
    lines = [
        call.params.get("status")
        for call in faults.standin.calls("assistant.threads.setStatus")
        if call.params.get("thread_ts") == posted.ts
    ]
    assert "is working…" in lines
    assert logged(faults, "turn_send", "agent_sessions_unavailable")
