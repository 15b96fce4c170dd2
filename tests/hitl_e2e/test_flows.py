"""Longer ways through a pause: answers not taken, pauses in a row, replies that wait."""

from __future__ import annotations

from typing import Any

from local.stack import Stack
from shared.core import notices
from shared.core.model import HITL_EXTENSION
from tests.hitl_e2e.agent import HITL_TEXT, Say, Stage, hitl_pause, text_pause
from tests.hitl_e2e.conftest import ALICE, BOB, Hitl, channel, function_stopped


def approval(*tool_ids: str, **extra: Any) -> dict[str, Any]:
    """A tool_approval_request for delete_file calls with these ids."""
    tools = [
        {"id": tool_id, "name": "delete_file", "args": {"path": f"/tmp/{tool_id}"}}
        for tool_id in tool_ids
    ]
    return {"type": "tool_approval_request", "tools": tools, **extra}


def ask(request_id: str, *questions: tuple[str, list[str]]) -> dict[str, Any]:
    """An ask_user_request of single-choice (or, with no choices, free-text) questions."""
    asked = [
        {"question": text, "choices": choices, "multiple": False} for text, choices in questions
    ]
    return {"type": "ask_user_request", "id": request_id, "questions": asked}


def test_an_answer_replied_to_with_a_message_alone_leaves_the_question_open_for_another_answer(
    hitl: Hitl,
) -> None:
    conversation, thread = hitl.start(
        channel("a2a"),
        "message-reply",
        Stage(pause=hitl_pause(approval("t1"))),
        Stage(message_reply="Thanks, noted."),
        Stage(pieces=(Say("Deleted /tmp/t1."),)),
    )
    prompt = thread.prompt()
    thread.click(prompt, "approve:0")

    thread.notice(notices.REQUEST_FAILED)
    reopened = thread.updated(prompt, "[Approve] [Reject]")
    thread.click(reopened, "approve:0")

    thread.answer("Deleted /tmp/t1.")
    first, second = conversation.answers()
    assert first.message["messageId"] != second.message["messageId"]
    assert {k: v for k, v in first.message.items() if k != "messageId"} == {
        k: v for k, v in second.message.items() if k != "messageId"
    }
    assert second.message["metadata"][HITL_EXTENSION]["approvals"] == [
        {"id": "t1", "approved": True}
    ]
    assert not [m for m in thread.bot_messages() if "Thanks, noted." in m.text]
    assert not conversation.cancels()


def test_a_task_that_pauses_again_after_an_answer_gets_a_new_prompt(hitl: Hitl) -> None:
    conversation, thread = hitl.start(
        channel("kagent-v1"),
        "pauses-twice",
        Stage(pause=hitl_pause(approval("t1"))),
        Stage(
            pieces=(Say("Deleted. "),),
            pause=hitl_pause(ask("ask-9", ("Restart the service?", ["yes", "no"]))),
        ),
        Stage(pieces=(Say("Restarted."),)),
    )
    first = thread.prompt()
    thread.click(first, "approve:0")
    thread.updated(first, f"Approved by <@{ALICE}>")

    second = thread.wait_for_message(
        lambda m: "Restart the service?" in m.rendered, "the second prompt"
    )
    assert second.ts != first.ts
    thread.click(second, "choose:0:0")

    thread.answer("Restarted.")
    approved, answered = conversation.answers()
    assert approved.message["taskId"] == answered.message["taskId"] == conversation.task_id
    assert answered.message["metadata"][HITL_EXTENSION] == {
        "type": "ask_user_response",
        "id": "ask-9",
        "answers": [{"answer": ["yes"]}],
    }
    assert answered.message["parts"] == [{"text": "yes"}]


def test_a_second_text_question_is_answered_by_the_next_reply(hitl: Hitl) -> None:
    conversation, thread = hitl.start(
        channel("a2a"),
        "two-text-questions",
        Stage(pause=text_pause("Which region?")),
        Stage(pause=text_pause("Which zone?")),
        Stage(pieces=(Say("Deploying to eu-west-1b."),)),
    )
    first = thread.prompt()
    thread.reply("eu-west-1")
    thread.updated(first, f"Answered by <@{ALICE}>")
    second = thread.wait_for_message(
        lambda m: m.rendered.startswith("Which zone?"), "the second question"
    )

    thread.reply("b")

    thread.updated(second, f"Answered by <@{ALICE}>")
    thread.answer("Deploying to eu-west-1b.")
    assert [a.message["parts"] for a in conversation.answers()] == [
        [{"text": "eu-west-1"}],
        [{"text": "b"}],
    ]


def test_a_reply_that_answers_no_question_waits_and_is_sent_as_a_turn_after_the_task(
    hitl: Hitl,
) -> None:
    conversation, thread = hitl.start(
        channel("a2a"),
        "reply-waits",
        Stage(pause=hitl_pause(ask("ask-10", ("Which region?", ["eu", "us"])))),
        Stage(pieces=(Say("Deployed to eu."),)),
    )
    follow_up = hitl.agent.expect(
        "follow-up-after-choice", Stage(pieces=(Say("The disk is fine."),))
    )
    prompt = thread.prompt()

    thread.reply("follow-up-after-choice and check the disk")
    thread.click(prompt, "choose:0:0")

    thread.answer("The disk is fine.")
    [answer] = conversation.answers()
    assert answer.message["parts"] == [{"text": "eu"}]
    [turn] = follow_up.sends()
    assert "taskId" not in turn.message
    assert turn.message["contextId"] == conversation.context_id
    assert "follow-up-after-choice and check the disk" in turn.message["parts"][0]["text"]


def test_a_free_text_question_is_answered_by_a_reply_in_the_thread(hitl: Hitl) -> None:
    conversation, thread = hitl.start(
        channel("kagent-v1"),
        "free-text-reply",
        Stage(
            pause=hitl_pause(
                ask("ask-11", ("Which region?", ["eu", "us"]), ("Any note for the team?", []))
            )
        ),
        Stage(pieces=(Say("Done."),)),
    )
    prompt = thread.prompt()

    thread.reply("ship it on Monday")
    thread.updated(prompt, f"Answered by <@{ALICE}> ship it on Monday")
    thread.click(prompt, "choose:0:1", user=BOB)

    thread.answer("Done.")
    [answer] = conversation.answers()
    assert answer.message["metadata"][HITL_EXTENSION] == {
        "type": "ask_user_response",
        "id": "ask-11",
        "answers": [{"answer": ["us"]}, {"answer": ["ship it on Monday"]}],
    }
    assert answer.message["parts"] == [{"text": "us;ship it on Monday"}]
    assert answer.message["metadata"]["agentkourier.dev/actor"] == {"id": BOB, "platform": "slack"}


def test_a_sub_agents_tool_approval_decides_its_nested_tools(hitl: Hitl) -> None:
    outer = [{"id": "outer-1", "name": "k8s_agent", "args": {"request": "clean up"}}]
    nested = {
        "subagent_name": "k8s-agent",
        "task_id": "sub-task-2",
        "context_id": "sub-ctx-2",
        "tools": approval("n1", "n2")["tools"],
    }
    conversation, thread = hitl.start(
        channel("kagent-v1"),
        "nested-approval",
        Stage(
            pause=hitl_pause({"type": "tool_approval_request", "tools": outer, "nested": nested})
        ),
        Stage(pieces=(Say("The sub-agent went on."),)),
    )
    prompt = thread.prompt()
    assert "Asked by the sub-agent k8s-agent" in prompt.rendered
    assert "/tmp/n2" in prompt.rendered and "k8s_agent" not in prompt.rendered

    thread.click(prompt, "reject_all")

    thread.answer("The sub-agent went on.")
    [answer] = conversation.answers()
    reason = "denied by an approver in chat"
    assert answer.message["metadata"][HITL_EXTENSION] == {
        "type": "tool_approval_response",
        "approvals": [
            {"id": "n1", "approved": False, "rejection_reason": reason},
            {"id": "n2", "approved": False, "rejection_reason": reason},
        ],
    }
    assert answer.message["parts"] == [{"text": "rejected"}]


def test_a_text_question_no_one_answers_in_time_cancels_the_task(hitl: Hitl) -> None:
    conversation, thread = hitl.start(
        channel("a2a", "hasty"), "text-question-timeout", Stage(pause=text_pause("Which region?"))
    )
    prompt = thread.prompt()

    thread.updated(prompt, notices.SHOWN_QUESTION_TIMED_OUT)

    thread.notice(notices.QUESTION_TIMED_OUT.stopped)
    [cancel] = hitl.wait_for(conversation.cancels, "cancelled")
    assert cancel.params["id"] == conversation.task_id
    assert not conversation.answers()


def test_an_approval_decided_just_before_its_timer_fires_is_sent_by_the_timer(
    hitl: Hitl, stack: Stack
) -> None:
    conversation, thread = hitl.start(
        channel("a2a", "deadline"),
        "decided-at-the-deadline",
        Stage(pause=hitl_pause(approval("t1"))),
        Stage(pieces=(Say("Deleted /tmp/t1."),)),
    )
    prompt = thread.prompt()
    # stream_follow, which the decision asks to send the answer, does not
    # answer until the timer has fired: the timer takes the session first.
    with function_stopped(stack, "stream_follow"):
        thread.click(prompt, "approve:0")
        thread.updated(prompt, f"Approved by <@{ALICE}>")
        thread.answer("Deleted /tmp/t1.")

    [answer] = conversation.answers()
    assert answer.message["metadata"][HITL_EXTENSION]["approvals"] == [
        {"id": "t1", "approved": True}
    ]
    assert answer.message["metadata"]["agentkourier.dev/actor"] == {
        "id": ALICE,
        "platform": "slack",
    }
    shown = next(m for m in thread.bot_messages() if m.ts == prompt.ts)
    assert notices.SHOWN_DENIED_TIMEOUT not in shown.rendered


def test_a_payload_whose_message_names_no_extension_is_read_on_kagent_v1_and_is_text_on_a2a(
    hitl: Hitl,
) -> None:
    payload = ask("ask-13", ("Which region?", ["eu", "us"]))
    kagent, kagent_thread = hitl.start(
        channel("kagent-v1"),
        "unnamed-kagent",
        Stage(pause=hitl_pause(payload, names_extension=False)),
        Stage(pieces=(Say("Going to eu."),)),
    )
    a2a, a2a_thread = hitl.start(
        channel("a2a"),
        "unnamed-a2a",
        Stage(pause=hitl_pause(payload, names_extension=False)),
        Stage(pieces=(Say("Going by text."),)),
    )

    kagent_thread.click(kagent_thread.prompt(), "choose:0:0")
    text_prompt = a2a_thread.prompt()
    assert text_prompt.rendered == f"{HITL_TEXT}\n{notices.REPLY_TO_ANSWER}"
    a2a_thread.reply("eu, please")

    kagent_thread.answer("Going to eu.")
    a2a_thread.answer("Going by text.")
    [structured] = kagent.answers()
    assert structured.message["metadata"][HITL_EXTENSION]["answers"] == [{"answer": ["eu"]}]
    [text] = a2a.answers()
    assert text.message["parts"] == [{"text": "eu, please"}]
    assert HITL_EXTENSION not in text.message["metadata"]
