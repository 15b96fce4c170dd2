"""Each keyword of the demo agent, through the whole local stack, answered with ``./kourier say``."""

from __future__ import annotations

import json
from typing import Any

import pytest

from local.demo_agent import hitl
from local.demo_agent.behaviours import BEHAVIOURS, ESSAY_PARAGRAPHS, RIDDLE, menu
from local.stack import DEMO_APPROVER
from shared.core import notices
from shared.core.notices import FailureCategory
from tests.demo.conftest import FOLLOW_BUDGET_SECONDS, Kourier

BOB = "U0BOB"
"""The stand-in's other user, who is no approver."""


def last_answer(kourier: Kourier) -> dict[str, Any]:
    """The message of the newest send to a paused task."""
    answers: list[dict[str, Any]] = [
        r["params"]["message"]
        for r in kourier.received()
        if r["method"] == "SendStreamingMessage" and r["params"]["message"].get("taskId")
    ]
    assert answers, "the agent received no answer"
    return answers[-1]


def payload(message: dict[str, Any]) -> dict[str, Any]:
    """The human-in-the-loop payload of an answer."""
    assert message.get("extensions") == [hitl.HITL_EXTENSION]
    found: dict[str, Any] = message["metadata"][hitl.HITL_EXTENSION]
    return found


def test_hello_lists_every_keyword(kourier: Kourier) -> None:
    said = kourier.say("hello, what can you do?")

    assert "This is turn 1 in this conversation." in said.stdout
    for behaviour in BEHAVIOURS:
        if behaviour.run is not menu:
            assert f"- `{behaviour.example}`: {behaviour.shows}" in said.stdout
    assert f'continue: ./kourier say --thread {said.thread} "your reply"' in said.stdout


def test_an_approver_approves_one_tool_and_the_agent_resumes_with_what_it_received(
    kourier: Kourier,
) -> None:
    asked = kourier.say("approve")
    assert "Restart the checkout service?\n    restart_service{" in asked.stdout
    assert "[Approve] [Reject]" in asked.stdout
    assert f"→ ./kourier say --thread {asked.thread} --click Approve" in asked.stdout

    refused = kourier.say("--thread", asked.thread, "--click", "Approve", "--user", BOB)
    assert f"(only {BOB} sees) {notices.NOT_AN_APPROVER}" in refused.stdout
    assert "[Approve] [Reject]" in refused.stdout, "the prompt is still open"

    approved = kourier.say("--thread", asked.thread, "--click", "Approve")

    assert f"Approved by <@{DEMO_APPROVER}>" in approved.stdout
    assert "- `restart_service`: approved, so it ran." in approved.stdout
    [resumed] = [m for m in kourier.bot_messages(asked.thread) if "so it ran" in m.text]
    [step] = resumed.tasks
    assert (step.title, step.status) == ("restart_service", "complete")
    answer = last_answer(kourier)
    [decision] = payload(answer)["approvals"]
    assert decision == {"id": decision["id"], "approved": True}
    assert decision["id"] in approved.stdout, "the agent says what it received"
    assert answer["metadata"]["agentkourier.dev/actor"] == {
        "id": DEMO_APPROVER,
        "platform": "slack",
    }


def test_several_tools_are_decided_one_by_one_then_all_at_once(kourier: Kourier) -> None:
    asked = kourier.say("approvals")
    assert f"{notices.NEEDS_APPROVAL}\n    read_logs{{" in asked.stdout, "ADK's hint is dropped"
    assert "[Approve all] [Reject all]" in asked.stdout

    rejected = kourier.say("--thread", asked.thread, "--click", "Reject")
    assert f"Rejected by <@{DEMO_APPROVER}>" in rejected.stdout
    assert "[Approve all] [Reject all]" in rejected.stdout, "two tools are still open"

    done = kourier.say("--thread", asked.thread, "--click", "Approve all")

    assert "- `read_logs`: rejected (denied by an approver in chat), so it did not run." in (
        done.stdout
    )
    assert "- `scale_deployment`: approved, so it ran." in done.stdout
    assert "- `delete_pod`: approved, so it ran." in done.stdout
    decided = payload(last_answer(kourier))["approvals"]
    ids = [entry["id"] for entry in decided]
    assert len(set(ids)) == 3
    assert decided == [
        {"id": ids[0], "approved": False, "rejection_reason": notices.DENIED_BY_APPROVER},
        {"id": ids[1], "approved": True},
        {"id": ids[2], "approved": True},
    ]
    [resumed] = [m for m in kourier.bot_messages(asked.thread) if "so it ran" in m.text]
    assert [(s.title, s.status) for s in resumed.tasks] == [
        ("read_logs", "error"),
        ("scale_deployment", "complete"),
        ("delete_pod", "complete"),
    ]


@pytest.mark.parametrize(
    ("keyword", "answer", "answers", "says"),
    [
        (
            "choose",
            ["--choose", "production"],
            ["production"],
            "So I deploy to production.",
        ),
        (
            "checkboxes",
            ["--choose", "logs", "--choose", "traces"],
            ["logs", "traces"],
            "So I collect logs and traces.",
        ),
        (
            "freetext",
            ["--text", "Checkout is slow"],
            ["Checkout is slow"],
            "So the incident is called “Checkout is slow”.",
        ),
    ],
)
def test_a_question_is_answered_and_the_agent_resumes_with_the_answer(
    kourier: Kourier, keyword: str, answer: list[str], answers: list[str], says: str
) -> None:
    asked = kourier.say(keyword)
    assert notices.NEEDS_INPUT in asked.stdout
    assert f"→ ./kourier say --thread {asked.thread} --" in asked.stdout

    answered = kourier.say("--thread", asked.thread, *answer)

    assert f"Answered by <@{DEMO_APPROVER}> {', '.join(answers)}" in answered.stdout
    assert says in answered.stdout
    sent = payload(last_answer(kourier))
    assert sent == {"type": "ask_user_response", "id": sent["id"], "answers": [{"answer": answers}]}
    assert sent["id"] in answered.stdout, "the agent took the answer for its request's"


def test_a_plain_text_question_is_answered_by_a_reply_in_the_thread(kourier: Kourier) -> None:
    asked = kourier.say("riddle")
    assert f"{RIDDLE}\n    {notices.REPLY_TO_ANSWER}" in asked.stdout

    answered = kourier.say("--thread", asked.thread, "--text", "a piano")

    assert f"{DEMO_APPROVER} answered “a piano” in plain text. That is right!" in answered.stdout
    message = last_answer(kourier)
    assert message["parts"] == [{"text": "a piano"}]
    assert "extensions" not in message


def test_a_long_tool_run_is_handed_over_to_stream_follow(kourier: Kourier) -> None:
    seconds = FOLLOW_BUDGET_SECONDS + 10
    said = kourier.say(f"long {seconds}")

    assert "Agent Kourier handed this answer over" in said.stdout
    assert "That is all for this turn." in said.stdout
    [answer] = [m for m in kourier.bot_messages(said.thread) if "That is all" in m.text]
    assert [(s.title, s.status) for s in answer.tasks] == [("count_words", "complete")]
    assert "turn_handed_over" in kourier.log("turn_send")
    [send] = kourier.sends_containing(f"long {seconds}")
    subscribes = [r for r in kourier.received() if r["method"] == "SubscribeToTask"]
    assert subscribes, "stream_follow subscribed to the task"
    assert send["headers"]["x-user-id"] == subscribes[-1]["headers"]["x-user-id"]


def test_a_failed_task_shows_its_category_and_never_the_agents_words(kourier: Kourier) -> None:
    said = kourier.say("fail")

    assert notices.task_failed(FailureCategory.RATE_LIMIT) in said.stdout
    assert "quota exceeded" not in said.stdout
    thread = "\n".join(m.rendered for m in kourier.bot_messages(said.thread))
    assert "quota" not in thread and "8f2c41" not in thread


def test_text_the_agent_takes_back_is_gone_from_the_thread(kourier: Kourier) -> None:
    said = kourier.say("takeback")

    assert "On second thought, I take that back" in said.stdout
    assert "My first guess" not in said.stdout
    shown = [
        call
        for call in kourier.standin.calls()
        if "My first guess" in json.dumps(call.params)
        and call.params.get("channel") == "C0123456789"
    ]
    assert shown, "the guess was shown before it was taken back"
    [answer] = [m for m in kourier.bot_messages(said.thread) if "second thought" in m.text]
    assert "My first guess" not in answer.rendered


def test_a_busy_agent_is_sent_the_message_again_until_it_takes_it(kourier: Kourier) -> None:
    said = kourier.say("busy 12")

    assert notices.AGENT_BUSY in said.stdout
    assert "I was busy for 12 seconds and refused your message" in said.stdout
    sends = kourier.sends_containing("busy 12")
    assert len(sends) >= 2
    assert len({s["params"]["message"]["messageId"] for s in sends}) == 1


def test_a_long_answer_rolls_over_to_a_continuation_message(kourier: Kourier) -> None:
    said = kourier.say("essay")

    answer = [m for m in kourier.bot_messages(said.thread) if "**" in m.text or "essay" in m.text]
    assert len(answer) >= 2, "the answer took more than one message"
    text = "".join(m.text for m in answer)
    positions = [text.find(f"**{n}.**") for n in range(1, ESSAY_PARAGRAPHS + 1)]
    assert all(p >= 0 for p in positions) and positions == sorted(positions)
    assert all(text.count(f"**{n}.**") == 1 for n in range(1, ESSAY_PARAGRAPHS + 1))
    assert "That is the end of the essay." in said.stdout
