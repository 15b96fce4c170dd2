"""Questions through the whole stack: answered in Slack, sent to the agent as the contract says."""

from __future__ import annotations

from typing import Any

import pytest

from shared.core import notices
from shared.core.model import HITL_EXTENSION
from tests.hitl_e2e.agent import Say, Stage, hitl_pause, text_pause
from tests.hitl_e2e.conftest import ALICE, BOB, Hitl, channel

DIALECTS = ["a2a", "kagent-v1"]


def question(text: str, *choices: str, multiple: bool = False) -> dict[str, Any]:
    """One question of an ask_user_request; no choices asks for free text."""
    return {"question": text, "choices": list(choices), "multiple": multiple}


def ask(request_id: str, *questions: dict[str, Any], **extra: Any) -> dict[str, Any]:
    """An ask_user_request payload."""
    return {"type": "ask_user_request", "id": request_id, "questions": list(questions), **extra}


def answer_to(
    task_id: str | None, context_id: str | None, text: str, payload: dict[str, Any], user: str
) -> dict[str, Any]:
    """The answer message the contract gives, all but its messageId."""
    return {
        "role": "ROLE_USER",
        "parts": [{"text": text}],
        "taskId": task_id,
        "contextId": context_id,
        "metadata": {
            HITL_EXTENSION: payload,
            "agentkourier.dev/actor": {"id": user, "platform": "slack"},
        },
        "extensions": [HITL_EXTENSION],
    }


def without_id(message: dict[str, Any]) -> dict[str, Any]:
    """A message as sent, all but its messageId (which must be there)."""
    assert message["messageId"]
    return {k: v for k, v in message.items() if k != "messageId"}


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_single_choice_question_is_answered_by_a_click_on_the_choice(
    hitl: Hitl, dialect: str
) -> None:
    conversation, thread = hitl.start(
        channel(dialect),
        f"single-{dialect}",
        Stage(pause=hitl_pause(ask("ask-1", question("Which region?", "eu-west-1", "us-east-1")))),
        Stage(pieces=(Say("Deploying to us-east-1."),)),
    )
    prompt = thread.prompt()
    assert prompt.rendered == f"{notices.NEEDS_INPUT}\nWhich region?\n[eu-west-1] [us-east-1]"

    thread.click(prompt, "choose:0:1", user=BOB)  # anyone in the thread may answer

    answered = thread.updated(prompt, f"Answered by <@{BOB}> us-east-1")
    assert not answered.action_ids()
    thread.answer("Deploying to us-east-1.")
    [answer] = conversation.answers()
    assert without_id(answer.message) == answer_to(
        conversation.task_id,
        conversation.context_id,
        "us-east-1",
        {"type": "ask_user_response", "id": "ask-1", "answers": [{"answer": ["us-east-1"]}]},
        BOB,
    )
    assert answer.headers["a2a-extensions"] == HITL_EXTENSION


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_multiple_choice_question_is_answered_by_picking_then_submitting(
    hitl: Hitl, dialect: str
) -> None:
    payload = ask(
        "ask-2",
        question("What should I collect?", "logs", "metrics", "traces", multiple=True),
        question("Compress them?", "yes", "no"),
        hint="Collecting diagnostics",
    )
    conversation, thread = hitl.start(
        channel(dialect),
        f"multiple-{dialect}",
        Stage(pause=hitl_pause(payload)),
        Stage(pieces=(Say("Collected."),)),
    )
    prompt = thread.prompt()
    assert prompt.rendered.startswith("Collecting diagnostics\nWhat should I collect?\n")
    assert prompt.rendered.endswith("[Submit]\nCompress them?\n[yes] [no]")
    [checkboxes] = [b["accessory"] for b in prompt.blocks if "accessory" in b]
    assert checkboxes["type"] == "checkboxes"
    assert [o["text"]["text"] for o in checkboxes["options"]] == ["logs", "metrics", "traces"]

    thread.click(prompt, "pick:0", values=["0", "2"])
    thread.click(prompt, "submit:0")
    picked = thread.updated(prompt, f"Answered by <@{ALICE}> logs, traces")
    thread.click(picked, "choose:1:0")

    answered = thread.updated(prompt, f"Answered by <@{ALICE}> yes")
    assert not answered.action_ids()
    thread.answer("Collected.")
    [answer] = conversation.answers()
    assert without_id(answer.message) == answer_to(
        conversation.task_id,
        conversation.context_id,
        "logs,traces;yes",
        {
            "type": "ask_user_response",
            "id": "ask-2",
            "answers": [{"answer": ["logs", "traces"]}, {"answer": ["yes"]}],
        },
        ALICE,
    )


@pytest.mark.parametrize("dialect", DIALECTS)
def test_free_text_questions_are_answered_in_a_modal_opened_from_the_prompt(
    hitl: Hitl, dialect: str
) -> None:
    payload = ask("ask-3", question("Which service?"), question("Why now?"))
    conversation, thread = hitl.start(
        channel(dialect),
        f"free-text-{dialect}",
        Stage(pause=hitl_pause(payload)),
        Stage(pieces=(Say("Noted."),)),
    )
    prompt = thread.prompt()
    assert notices.REPLY_ALSO_ANSWERS in prompt.rendered

    thread.click(prompt, "write")
    [modal] = hitl.wait_for(
        lambda: [v for v in hitl.standin.views() if v.user == ALICE and v.open], "opened"
    )
    inputs = [b["element"]["action_id"] for b in modal.view["blocks"] if b["type"] == "input"]
    assert len(inputs) == 2
    blank = hitl.standin.submit(modal.id, {inputs[0]: "checkout", inputs[1]: "  "})
    assert blank.view_open and blank.errors == {"q1": notices.ANSWER_BLANK}
    sent = hitl.standin.submit(
        modal.id, {inputs[0]: "checkout", inputs[1]: "the error rate, again"}
    )
    assert not sent.view_open

    answered = thread.updated(prompt, f"Answered by <@{ALICE}> the error rate, again")
    assert not answered.action_ids()
    thread.answer("Noted.")
    [answer] = conversation.answers()
    assert without_id(answer.message) == answer_to(
        conversation.task_id,
        conversation.context_id,
        "checkout;the error rate, again",
        {
            "type": "ask_user_response",
            "id": "ask-3",
            "answers": [{"answer": ["checkout"]}, {"answer": ["the error rate, again"]}],
        },
        ALICE,
    )


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_sub_agents_question_is_answered_with_its_nested_tools_id(
    hitl: Hitl, dialect: str
) -> None:
    nested = {
        "subagent_name": "k8s-agent",
        "task_id": "sub-task-1",
        "context_id": "sub-ctx-1",
        "tools": [{"id": "ask-tool-7", "name": "ask_user", "args": {"questions": []}}],
    }
    payload = ask("ask-4", question("Which namespace?", "default", "prod"), nested=nested)
    conversation, thread = hitl.start(
        channel(dialect),
        f"nested-{dialect}",
        Stage(pause=hitl_pause(payload)),
        Stage(pieces=(Say("Using prod."),)),
    )
    prompt = thread.prompt()
    assert "Asked by the sub-agent k8s-agent" in prompt.rendered

    thread.click(prompt, "choose:0:1")

    thread.updated(prompt, f"Answered by <@{ALICE}> prod")
    thread.answer("Using prod.")
    [answer] = conversation.answers()
    assert without_id(answer.message) == answer_to(
        conversation.task_id,
        conversation.context_id,
        "prod",
        {"type": "ask_user_response", "id": "ask-tool-7", "answers": [{"answer": ["prod"]}]},
        ALICE,
    )


def test_a_text_question_on_a2a_is_answered_by_the_next_reply_in_the_thread(hitl: Hitl) -> None:
    conversation, thread = hitl.start(
        channel("a2a"),
        "text-question",
        Stage(pause=text_pause("Which environment ", "should I deploy to?")),
        Stage(pieces=(Say("Deploying to staging."),)),
    )
    prompt = thread.prompt()
    assert prompt.rendered == f"Which environment should I deploy to?\n{notices.REPLY_TO_ANSWER}"

    thread.reply("staging")

    thread.updated(prompt, f"Answered by <@{ALICE}>")
    thread.answer("Deploying to staging.")
    _, answer = conversation.sends()  # the turn, then the answer: the reply is no turn
    assert without_id(answer.message) == {
        "role": "ROLE_USER",
        "parts": [{"text": "staging"}],
        "taskId": conversation.task_id,
        "contextId": conversation.context_id,
        "metadata": {"agentkourier.dev/actor": {"id": ALICE, "platform": "slack"}},
    }
    # The paused task is read with GetTask before the typed answer is sent (contract, Methods).
    received = conversation.received
    just_before = received[received.index(answer) - 1]
    assert (just_before.method, just_before.params["id"]) == ("GetTask", conversation.task_id)


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_question_on_a_binding_that_allows_none_cancels_the_task(
    hitl: Hitl, dialect: str
) -> None:
    conversation, thread = hitl.start(
        channel(dialect, "plain"),
        f"question-not-allowed-{dialect}",
        Stage(pause=hitl_pause(ask("ask-5", question("Which region?", "eu", "us")))),
    )

    thread.notice(notices.QUESTIONS_NOT_ALLOWED.stopped)

    [cancel] = hitl.wait_for(conversation.cancels, "cancelled")
    assert cancel.params["id"] == conversation.task_id
    assert not conversation.answers()
    assert not [m for m in thread.bot_messages() if m.action_ids()], "no prompt was posted"


def test_a_question_no_one_answers_in_time_cancels_the_task(hitl: Hitl) -> None:
    conversation, thread = hitl.start(
        channel("kagent-v1", "hasty"),
        "question-timeout",
        Stage(pause=hitl_pause(ask("ask-6", question("Which region?", "eu", "us")))),
    )
    prompt = thread.prompt()

    timed_out = thread.updated(prompt, notices.SHOWN_QUESTION_TIMED_OUT)

    assert not timed_out.action_ids()
    thread.notice(notices.QUESTION_TIMED_OUT.stopped)
    [cancel] = hitl.wait_for(conversation.cancels, "cancelled")
    assert cancel.params["id"] == conversation.task_id
    assert not conversation.answers()


def test_a_reply_that_mentions_the_bot_answers_a_text_question_once_and_is_no_turn(
    hitl: Hitl,
) -> None:
    conversation, thread = hitl.start(
        channel("a2a"),
        "mention-answer",
        Stage(pause=text_pause("Which environment?")),
        Stage(pieces=(Say("Deploying to production."),)),
    )
    prompt = thread.prompt()

    # Slack sends a mention in a thread twice: app_mention, and its message twin.
    reply = hitl.standin.say(thread.channel, "production", thread_ts=thread.ts, both_events=True)
    assert reply.statuses == [200, 200]

    thread.updated(prompt, f"Answered by <@{ALICE}>")
    thread.answer("Deploying to production.")
    [answer] = conversation.answers()
    assert answer.message["parts"] == [{"text": "production"}]
    follow_up = hitl.agent.expect("a-later-turn", Stage(pieces=(Say("Later."),)))
    thread.reply(
        "a-later-turn"
    )  # sent once the thread is free: anything queued before it was sent first
    thread.answer("Later.")
    assert len(follow_up.sends()) == 1
    assert len(conversation.sends()) == 2
    assert not [s for s in hitl.agent.strays if "production" in str(s.params)]


def test_a_multiple_choice_question_of_more_than_ten_choices_is_a_multi_select(hitl: Hitl) -> None:
    regions = [f"region-{n}" for n in range(12)]
    conversation, thread = hitl.start(
        channel("a2a"),
        "multi-select",
        Stage(pause=hitl_pause(ask("ask-12", question("Where?", *regions, multiple=True)))),
        Stage(pieces=(Say("Spread out."),)),
    )
    prompt = thread.prompt()
    [select] = [b["accessory"] for b in prompt.blocks if "accessory" in b]
    assert select["type"] == "multi_static_select"

    thread.click(prompt, "pick:0", values=["11", "3"])
    thread.click(prompt, "submit:0")

    thread.updated(prompt, f"Answered by <@{ALICE}> region-3, region-11")
    thread.answer("Spread out.")
    [answer] = conversation.answers()
    assert answer.message["metadata"][HITL_EXTENSION]["answers"] == [
        {"answer": ["region-3", "region-11"]}
    ]
    assert answer.message["parts"] == [{"text": "region-3,region-11"}]


def test_a_text_question_without_a_message_id_is_named_by_its_status_timestamp(hitl: Hitl) -> None:
    unnamed = {**text_pause("Which cluster?"), "messageId": ""}
    conversation, thread = hitl.start(
        channel("a2a"),
        "text-question-no-id",
        Stage(pause=unnamed),
        Stage(pieces=(Say("Using blue."),)),
    )
    prompt = thread.prompt()

    thread.reply("blue")

    thread.updated(prompt, f"Answered by <@{ALICE}>")
    thread.answer("Using blue.")
    [answer] = conversation.answers()
    assert answer.message["parts"] == [{"text": "blue"}]
