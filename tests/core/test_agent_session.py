"""The agent session's status and title from the turn, and who may stop a turn, decision by decision."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from shared.core import agent_session
from shared.core.agent_session import SessionStatus, StatusUpdate

AT = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("update", "expected"),
    [
        # A person's turn is sent or streams: processing, for them, titled by what they wrote.
        (
            agent_session.working("U0ALICE", "why is checkout failing?"),
            StatusUpdate(SessionStatus.PROCESSING, "U0ALICE", "why is checkout failing?"),
        ),
        # An alert's turn: no person wrote it, so no initiator.
        (
            agent_session.working(None, "An alert fired"),
            StatusUpdate(SessionStatus.PROCESSING, None, "An alert fired"),
        ),
        (agent_session.working("", ""), StatusUpdate(SessionStatus.PROCESSING, None, None)),
        # Waiting on a question or an approval.
        (agent_session.waiting(), StatusUpdate(SessionStatus.SUSPENDED)),
        # Ended: idle and ready for the next message, whatever the outcome...
        (agent_session.ended("completed"), StatusUpdate(SessionStatus.ACTIVE)),
        (agent_session.ended("failed"), StatusUpdate(SessionStatus.ACTIVE)),
        (agent_session.ended("stopped"), StatusUpdate(SessionStatus.ACTIVE)),
        (agent_session.ended("session_gone"), StatusUpdate(SessionStatus.ACTIVE)),
        (agent_session.ended("question_timed_out"), StatusUpdate(SessionStatus.ACTIVE)),
        # ...unless the thread can take no more: its Binding is gone.
        (agent_session.ended("binding_gone"), StatusUpdate(SessionStatus.CLOSED)),
    ],
)
def test_the_status_follows_the_turn(update: StatusUpdate, expected: StatusUpdate) -> None:
    assert update == expected


@pytest.mark.parametrize(
    ("status", "line"),
    [
        (SessionStatus.PROCESSING, "is working…"),
        (SessionStatus.SUSPENDED, ""),
        (SessionStatus.ACTIVE, ""),
        (SessionStatus.CLOSED, ""),
    ],
)
def test_where_agent_sessions_are_refused_the_status_line_stands_for_processing(
    status: SessionStatus, line: str
) -> None:
    assert StatusUpdate(status).legacy_line == line


@pytest.mark.parametrize(
    ("text", "title"),
    [
        ("  why is   checkout\n failing? ", "why is checkout failing?"),
        ("<@U0KOURIER> restart <@U0BOB|bob> please", "restart please"),
        ("tell <!here> and <!subteam^S1|@oncall> now", "tell and now"),
        (
            "see <#C0123|ops> and <https://grafana.example/d/1|the dashboard>",
            "see #ops and the dashboard",
        ),
        ("open <https://example.com/x>", "open https://example.com/x"),
        ("<@U0KOURIER>", None),
        ("", None),
    ],
)
def test_a_title_is_the_text_on_one_line_without_mentions(text: str, title: str | None) -> None:
    assert agent_session.title_for(text) == title


def test_a_title_shows_no_secret() -> None:
    title = agent_session.title_for("deploy with token xoxb-123456789012-abcdefghijklmnop now")
    assert title is not None
    assert "xoxb-" not in title and "abcdefghijklmnop" not in title
    assert title.startswith("deploy with token [redacted")


def test_a_long_title_is_cut_at_a_word_to_slacks_limit() -> None:
    title = agent_session.title_for("word " * 100)
    assert title is not None
    assert len(title) <= agent_session.MAX_TITLE_CHARS
    assert title.endswith("word…")
    unbroken = agent_session.title_for("x" * 500)
    assert unbroken == "x" * 199 + "…"


@pytest.mark.parametrize(
    ("person", "author", "approvers", "allowed"),
    [
        ("U0ALICE", "U0ALICE", [], True),  # who wrote the message
        ("U0APPROVER", "U0ALICE", ["U0APPROVER"], True),  # an approver of the Binding
        ("U0BOB", "U0ALICE", ["U0APPROVER"], False),  # anyone else
        ("U0BOB", "U0ALICE", [], False),
        ("U0BOB", None, [], True),  # an alert's turn: no one wrote it, anyone may stop it
        ("U0BOB", "", ["U0APPROVER"], True),
    ],
)
def test_who_may_stop_a_turn(
    person: str, author: str | None, approvers: list[str], allowed: bool
) -> None:
    assert agent_session.may_stop(person, author, approvers) is allowed


EARLIER = agent_session.CarriedTurn(AT - timedelta(seconds=60), ["1.100"])
"""The turn the thread carried before, whose reply streamed in message 1.100."""
FOR = agent_session.StopFor


@pytest.mark.parametrize(
    ("started", "streams", "stopped", "earlier", "target"),
    [
        (AT - timedelta(seconds=30), [], [], [EARLIER], FOR.THIS_TURN),  # running well before
        (AT + timedelta(seconds=30), [], [], [EARLIER], FOR.AN_EARLIER_TURN),  # began well after
        # pressed as the next turn began: its function's clock cannot tell which came first
        (AT - timedelta(seconds=0.3), [], [], [EARLIER], FOR.CANNOT_TELL),
        (AT + timedelta(seconds=0.3), [], [], [EARLIER], FOR.CANNOT_TELL),
        # Slack stopped the earlier turn's stream: the click was while that one streamed
        (AT - timedelta(seconds=0.3), [], ["1.100"], [EARLIER], FOR.AN_EARLIER_TURN),
        # ... unless this turn ran well before the press (the earlier one left its stream open)
        (AT - timedelta(seconds=3), [], ["1.100"], [EARLIER], FOR.THIS_TURN),
        # Slack stopped this turn's stream, however its clock reads
        (AT + timedelta(seconds=3), ["2.200"], ["2.200"], [EARLIER], FOR.THIS_TURN),
        (AT + timedelta(seconds=3), ["2.200"], ["1.100", "2.200"], [EARLIER], FOR.THIS_TURN),
        # a stream no turn recorded yet (just started): the clocks tell
        (AT - timedelta(seconds=3), [], ["2.200"], [EARLIER], FOR.THIS_TURN),
        # the thread's first turn: no turn before it the press could be for
        (AT + timedelta(seconds=0.3), [], [], [], FOR.THIS_TURN),
        (None, [], [], [], FOR.THIS_TURN),
        # not carried yet: the button showed for the turn before it
        (None, [], [], [EARLIER], FOR.AN_EARLIER_TURN),
    ],
)
def test_a_stop_is_for_the_turn_running_when_it_was_pressed(
    started: datetime | None,
    streams: list[str],
    stopped: list[str],
    earlier: list[agent_session.CarriedTurn],
    target: agent_session.StopFor,
) -> None:
    turn = agent_session.CarriedTurn(started, streams)
    assert agent_session.stop_target(AT, stopped, turn, earlier) is target


@pytest.mark.parametrize(
    ("trigger", "title", "renamed"),
    [
        ("pagerduty", "Checkout is down <@U1>", "Checkout is down"),
        ("pagerduty", None, None),
        ("pagerduty", "<@U1>", None),  # nothing left of it
        (None, "Checkout is down", None),  # a person's thread keeps its title
    ],
)
def test_a_thread_an_alert_began_is_named_after_it(
    trigger: str | None, title: str | None, renamed: str | None
) -> None:
    assert agent_session.alert_title(trigger, title) == renamed
