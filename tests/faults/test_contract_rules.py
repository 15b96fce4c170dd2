"""Rules of the agent contract that worked without a test, each shown end to end.

Contexts (Replies: "Create a contextId ... and keep it"; "With no contextId
the context already recorded is kept"; a Message reply's contextId is kept),
the notices of tasks that end without an answer (Task states, Errors), and a
session the agent lost (-32001). Each runs on both A2A versions.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from local.slack_standin.models import Message
from shared.core import notices
from shared.core.session import Session
from tests.faults.agent import (
    CANCELED,
    DEFAULT_PIECES,
    FAILED,
    REJECTED,
    Piece,
    Received,
    Script,
)

from .conftest import Faults, expected_reply, read_reply


def _session(faults: Faults, thread_ts: str) -> Session:
    session = faults.store.session(f"{faults.binding}-{faults.channel}-{thread_ts}")
    assert session is not None
    return session


def _after(messages: list[Message], ts: str) -> list[Message]:
    return [m for m in messages if float(m.ts) > float(ts)]


def _send_of(faults: Faults, ts: str) -> Received:
    [send] = faults.agent.sends(faults.message_id(ts))
    return send


def _turn_in_thread(faults: Faults, thread_ts: str, text: str) -> tuple[str, list[Message]]:
    posted = faults.say(text, thread_ts=thread_ts)
    messages = faults.wait_until_answered(thread_ts, thread_ts, posted.ts)
    return posted.ts, _after(messages, posted.ts)


def test_a_different_context_tells_the_thread_and_the_new_one_is_kept(
    either_version: Faults,
) -> None:
    faults = either_version
    first = faults.say("a conversation the agent will lose")
    faults.wait_until_answered(first.ts)
    old = _session(faults, first.ts).context_id
    faults.agent.use(Script(new_context=True))

    second, reply = _turn_in_thread(faults, first.ts, "the agent answers in another context")

    assert read_reply(reply) == expected_reply(DEFAULT_PIECES, notices.CONTEXT_CHANGED_NOTICE)
    kept = _session(faults, first.ts).context_id
    assert kept and kept != old
    assert _send_of(faults, second).message["contextId"] == old
    faults.agent.use(Script())
    third, reply = _turn_in_thread(faults, first.ts, "and the thread goes on")
    assert _send_of(faults, third).message["contextId"] == kept
    assert read_reply(reply) == expected_reply(DEFAULT_PIECES)


def test_events_without_a_context_keep_the_one_recorded(either_version: Faults) -> None:
    faults = either_version
    first = faults.say("a conversation with a context")
    faults.wait_until_answered(first.ts)
    recorded = _session(faults, first.ts).context_id
    faults.agent.use(Script(omit_context=True))

    _, reply = _turn_in_thread(faults, first.ts, "an answer that names no context")

    assert read_reply(reply) == expected_reply(DEFAULT_PIECES)
    assert _session(faults, first.ts).context_id == recorded
    faults.agent.use(Script())
    third, _ = _turn_in_thread(faults, first.ts, "the next turn")
    assert _send_of(faults, third).message["contextId"] == recorded


def test_a_first_turn_answered_without_a_context_leaves_the_next_to_start_one(
    either_version: Faults,
) -> None:
    faults = either_version
    faults.agent.use(Script(omit_context=True))
    first = faults.say("a first turn, answered with no context")
    faults.wait_until_answered(first.ts)
    assert _session(faults, first.ts).context_id is None
    faults.agent.use(Script())

    second, reply = _turn_in_thread(faults, first.ts, "the next turn")

    assert "contextId" not in _send_of(faults, second).message
    assert read_reply(reply) == expected_reply(DEFAULT_PIECES)


def test_a_message_replys_context_carries_over_to_the_next_turn(either_version: Faults) -> None:
    faults = either_version
    faults.agent.use(Script(message_reply="All good, nothing to do."))
    first = faults.say("a question answered with one Message")
    seen = read_reply(faults.wait_until_answered(first.ts))
    assert (seen.answer, seen.steps, seen.notices) == ("All good, nothing to do.", [], [])
    context = _session(faults, first.ts).context_id
    assert context
    faults.agent.use(Script())

    second, _ = _turn_in_thread(faults, first.ts, "the next turn")

    assert _send_of(faults, second).message["contextId"] == context


ENDINGS: dict[str, tuple[dict[str, Any], list[Piece], str]] = {
    "failed, with a category": (
        {"stays_in": [FAILED], "status_text": "429 Too Many Requests: rate limit exceeded"},
        DEFAULT_PIECES,
        "The agent's task failed. (rate limit)",
    ),
    "failed": (
        {"stays_in": [FAILED], "status_text": "it broke"},
        DEFAULT_PIECES,
        "The agent's task failed.",
    ),
    "rejected": ({"stays_in": [REJECTED]}, DEFAULT_PIECES, "The agent rejected this request."),
    "canceled": ({"stays_in": [CANCELED]}, DEFAULT_PIECES, "The agent's task was canceled."),
    "completed without text": ({"pieces": []}, [], "The agent finished without any output."),
}
"""Each way to end without an answer: the script, what the thread shows, and its notice."""


@pytest.mark.parametrize("ending", list(ENDINGS))
def test_a_task_that_ends_without_an_answer_tells_the_thread_why(
    either_version: Faults, ending: str
) -> None:
    faults = either_version
    script, pieces, told = ENDINGS[ending]
    faults.agent.use(Script(**copy.deepcopy(script)))
    posted = faults.say(f"a task that ends: {ending}")

    seen = read_reply(faults.wait_until_answered(posted.ts))

    assert seen == expected_reply(pieces, told)


def test_a_session_the_agent_lost_is_told_and_the_next_turn_starts_a_new_context(
    either_version: Faults,
) -> None:
    faults = either_version
    first = faults.say("a conversation the agent will forget")
    faults.wait_until_answered(first.ts)
    assert _session(faults, first.ts).context_id
    # The send's stream drops, and the agent answers -32001 for the task it was running.
    faults.agent.use(Script(drop_send_after=3, tasks_forgotten=True))

    _, reply = _turn_in_thread(faults, first.ts, "the agent forgets its task")

    assert notices.SESSION_GONE in read_reply(reply).notices
    assert _session(faults, first.ts).context_id is None
    faults.agent.use(Script())
    third, reply = _turn_in_thread(faults, first.ts, "a new conversation")
    assert "contextId" not in _send_of(faults, third).message
    assert read_reply(reply) == expected_reply(DEFAULT_PIECES)
