"""Pauses that cannot be shown: the task is cancelled and the thread told, by every rule.

Among them the real pauses of google-adk and kagent-adk 0.10, which ask for
approval in ADK's own format and not with kagent's extension.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from shared.core import notices
from tests.hitl_e2e.agent import (
    ADK_PEER,
    KAGENT_PEER,
    Conversation,
    HitlAgent,
    Stage,
    data_pause,
    hitl_pause,
    text_pause,
)
from tests.hitl_e2e.conftest import (
    ADK_CHANNEL,
    ADK_PEER_PORT,
    KAGENT_CHANNEL,
    KAGENT_PEER_PORT,
    Hitl,
    Thread,
    channel,
)
from tests.peers.launch import running_peer

DIALECTS = ["a2a", "kagent-v1"]


def tool(tool_id: str = "t1", name: str = "delete_file", args: Any = None) -> dict[str, Any]:
    """One tool of a tool_approval_request."""
    return {"id": tool_id, "name": name, "args": {"path": "/tmp/x"} if args is None else args}


def approval(*tools: dict[str, Any], **extra: Any) -> dict[str, Any]:
    """A tool_approval_request payload."""
    return {"type": "tool_approval_request", "tools": list(tools), **extra}


def ask(*questions: dict[str, Any], **extra: Any) -> dict[str, Any]:
    """An ask_user_request payload with id ask-1."""
    return {"type": "ask_user_request", "id": "ask-1", "questions": list(questions), **extra}


def question(text: str = "Which region?", choices: list[str] | None = None) -> dict[str, Any]:
    """One question."""
    return {"question": text, "choices": choices or [], "multiple": False}


def nested(*tools: dict[str, Any]) -> dict[str, Any]:
    """A sub-agent's nested part."""
    return {
        "subagent_name": "k8s-agent",
        "task_id": "sub-1",
        "context_id": "sub-ctx",
        "tools": list(tools),
    }


UNUSABLE_PAYLOADS: dict[str, dict[str, Any]] = {
    "a string with a control character": approval(tool(args={"path": "/tmp/\x1b[2Jx"})),
    "a name that cleaning would change": approval(tool(name="delete  file")),
    "a key that cleaning would change": approval(tool(args={"path\u200b": "/tmp/x"})),
    "a name over 300 ASCII characters": approval(tool(name="d" * 301)),
    "an integer of 2^53": approval(tool(args={"bytes": 2**53})),
    "arguments too long to show whole": approval(tool(args={"script": "x" * 3000})),
    "no tools": approval(),
    "21 tools": approval(*(tool(f"t{i}") for i in range(21))),
    "a tool without an id": approval({"name": "delete_file", "args": {}}),
    "two tools with one id": approval(tool("t1"), tool("t1", "drop_table")),
    "a nested approval with two outer tools": approval(
        tool("t1"), tool("t2"), nested=nested(tool("n1"))
    ),
    "a nested question whose tool is not ask_user": ask(
        question(), nested=nested(tool("n1", "delete_file"))
    ),
    "questions without an id": {"type": "ask_user_request", "questions": [question()]},
    "21 questions": ask(*(question(f"Question {i}?") for i in range(21))),
    "101 choices": ask(question(choices=[f"choice {i}" for i in range(101)])),
    "a question too long to show whole": ask(question("Why? " * 700)),
    "neither an approval nor a question": {"type": "tool_result", "tools": [tool()]},
}


def assert_cancelled_and_told(hitl: Hitl, thread: Thread, conversation: Conversation) -> None:
    """The thread says the pause cannot be shown and shows no prompt; the agent got CancelTask."""
    thread.notice(notices.UNUSABLE_PAUSE.stopped)
    [cancel] = hitl.wait_for(conversation.cancels, "cancelled")
    assert cancel.params["id"] == conversation.task_id
    assert not [m for m in thread.bot_messages() if m.action_ids()], "no prompt was posted"


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("rule", UNUSABLE_PAYLOADS)
def test_a_pause_that_breaks_a_rule_cancels_the_task_and_tells_the_thread(
    hitl: Hitl, rule: str, dialect: str
) -> None:
    conversation, thread = hitl.start(
        channel(dialect),
        f"unusable-{dialect}-{rule.replace(' ', '-')}",
        Stage(pause=hitl_pause(UNUSABLE_PAYLOADS[rule])),
    )

    assert_cancelled_and_told(hitl, thread, conversation)
    assert not conversation.answers()


def test_on_a2a_a_pause_with_a_data_part_and_no_extension_is_unusable(hitl: Hitl) -> None:
    conversation, thread = hitl.start(
        channel("a2a"),
        "unusable-data-part",
        Stage(pause=data_pause({"name": "adk_request_confirmation"})),
    )

    assert_cancelled_and_told(hitl, thread, conversation)


def test_on_kagent_v1_a_pause_in_plain_text_is_unusable(hitl: Hitl) -> None:
    conversation, thread = hitl.start(
        channel("kagent-v1"), "unusable-plain-text", Stage(pause=text_pause("Which region?"))
    )

    assert_cancelled_and_told(hitl, thread, conversation)


def test_a_different_question_under_a_name_already_used_is_unusable(hitl: Hitl) -> None:
    first = {"messageId": "question-1", **text_pause("Which region?")}
    again = {"messageId": "question-1", **text_pause("Which zone?")}
    conversation, thread = hitl.start(
        channel("a2a"), "unusable-name-reused", Stage(pause=first), Stage(pause=again)
    )
    thread.prompt()
    thread.reply("eu-west-1")

    assert_cancelled_and_told(hitl, thread, conversation)
    [answer] = conversation.answers()
    assert answer.message["parts"] == [{"text": "eu-west-1"}]


@pytest.fixture(scope="module")
def peers(agent: HitlAgent) -> Iterator[None]:
    """The real google-adk and kagent-adk peers, behind the agent's forwarding endpoints."""
    with (
        running_peer("adk-confirm", ADK_PEER_PORT) as adk,
        running_peer("kagent-confirm", KAGENT_PEER_PORT) as kagent,
    ):
        agent.forward(ADK_PEER, adk)
        agent.forward(KAGENT_PEER, kagent)
        yield


@pytest.mark.parametrize(
    ("peer", "peer_channel", "told"),
    [
        (ADK_PEER, ADK_CHANNEL, notices.UNUSABLE_PAUSE.stopped),
        # kagent-adk 0.10 answers every cancel with -32603: the task could not be stopped.
        (KAGENT_PEER, KAGENT_CHANNEL, notices.UNUSABLE_PAUSE.not_stopped),
    ],
)
def test_the_real_pause_of_an_adk_agent_is_unusable(
    hitl: Hitl, agent: HitlAgent, peers: None, peer: str, peer_channel: str, told: str
) -> None:
    posted = hitl.standin.say(peer_channel, "publish the release notes")
    thread = Thread(hitl.standin, peer_channel, posted)

    thread.notice(told)

    calls = agent.forwarded_to(peer)
    assert len([r for r in calls if r.method in ("SendStreamingMessage", "message/stream")]) == 1
    cancels = [r for r in calls if r.method in ("CancelTask", "tasks/cancel")]
    [task_id] = {cancel.params["id"] for cancel in cancels}
    assert task_id
    if told == notices.UNUSABLE_PAUSE.not_stopped:
        # Tried a few times, then the task read: it still waits for its approval.
        assert len(cancels) == 3
        last_cancel = calls.index(cancels[-1])
        assert [r.params["id"] for r in calls[last_cancel:] if r.method == "tasks/get"] == [task_id]
    assert not [m for m in thread.bot_messages() if m.action_ids()], "no prompt was posted"


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_task_that_pauses_in_auth_required_is_cancelled_and_the_thread_told(
    hitl: Hitl, dialect: str
) -> None:
    conversation, thread = hitl.start(
        channel(dialect),
        f"auth-required-{dialect}",
        Stage(
            pause=text_pause("Sign in at https://example.com/login"),
            pause_state="TASK_STATE_AUTH_REQUIRED",
        ),
    )

    assert_cancelled_and_told(hitl, thread, conversation)
