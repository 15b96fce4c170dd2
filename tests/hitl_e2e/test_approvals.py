"""Tool approvals through the whole stack: decided in Slack, answered as the contract says."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from local.slack_standin.callbacks import encode_payload_form, signature_headers
from local.stack import DEFAULT_SIGNING_SECRET, Stack
from shared.core import notices
from shared.core.model import HITL_EXTENSION
from shared.core.redaction import mark
from shared.questions import QUESTIONS, QUESTIONS_KEPT
from tests.hitl_e2e.agent import HITL_TEXT, Call, Result, Say, Stage, hitl_pause
from tests.hitl_e2e.conftest import ALICE, BOB, Hitl, channel

DIALECTS = ["a2a", "kagent-v1"]
KOURIER = {"id": "agent-kourier", "platform": "slack"}
NOT_ALLOWED = "denied by agent-kourier: this Binding does not allow tool approvals"


def tool(tool_id: str, name: str = "delete_file", **args: Any) -> dict[str, Any]:
    """One tool of a tool_approval_request."""
    return {
        "id": tool_id,
        "call_id": f"call-{tool_id}",
        "name": name,
        "args": args or {"path": "/tmp/x"},
    }


def approval(*tools: dict[str, Any], hint: str | None = None) -> dict[str, Any]:
    """A tool_approval_request payload."""
    payload: dict[str, Any] = {"type": "tool_approval_request", "tools": list(tools)}
    if hint is not None:
        payload["hint"] = hint
    return payload


def answer_to(
    task_id: str, context_id: str, text: str, payload: dict[str, Any], actor: dict[str, str]
) -> dict[str, Any]:
    """The answer message the contract gives, all but its messageId."""
    return {
        "role": "ROLE_USER",
        "parts": [{"text": text}],
        "taskId": task_id,
        "contextId": context_id,
        "metadata": {HITL_EXTENSION: payload, "agentkourier.dev/actor": actor},
        "extensions": [HITL_EXTENSION],
    }


def without_id(message: dict[str, Any]) -> dict[str, Any]:
    """A message as sent, all but its messageId (which must be there)."""
    assert message["messageId"]
    return {k: v for k, v in message.items() if k != "messageId"}


@pytest.mark.parametrize("dialect", DIALECTS)
def test_an_approved_tool_call_resumes_the_task_with_the_approval(hitl: Hitl, dialect: str) -> None:
    conversation, thread = hitl.start(
        channel(dialect),
        f"approve-{dialect}",
        Stage(
            pause=hitl_pause(
                approval(
                    tool("t1", "delete_file", path="/var/log/old.log"), hint="Delete the old log?"
                )
            )
        ),
        Stage(pieces=(Say("Deleted /var/log/old.log."),)),
        text="clean up the logs",
    )

    prompt = thread.prompt()
    assert prompt.rendered.startswith(
        'Delete the old log?\ndelete_file{\n  "path": "/var/log/old.log"\n}'
    )
    assert "[Approve] [Reject]" in prompt.rendered
    assert hitl.standin.thread_status(thread.channel, thread.ts) is None, (
        "no one is working while it waits"
    )
    thread.click(prompt, "approve:0")

    updated = thread.updated(prompt, f"Approved by <@{ALICE}>")
    assert not updated.action_ids()
    thread.answer("Deleted /var/log/old.log.")
    [answer] = conversation.answers()
    assert without_id(answer.message) == answer_to(
        conversation.task_id or "",
        conversation.context_id or "",
        "approved",
        {"type": "tool_approval_response", "approvals": [{"id": "t1", "approved": True}]},
        {"id": ALICE, "platform": "slack"},
    )
    assert answer.headers["a2a-extensions"] == HITL_EXTENSION
    assert answer.headers["x-user-id"] == "kourier-hitl"
    # The pause's stream ends with a status update, so the task is read; it
    # is read once more before the answer, whose stream is read after too.
    assert [r.method for r in conversation.received] == [
        "SendStreamingMessage",
        "GetTask",
        "GetTask",
        "SendStreamingMessage",
        "GetTask",
    ]
    assert not [m for m in thread.bot_messages() if HITL_TEXT in m.rendered], (
        "the text beside the payload is not shown"
    )
    [record] = hitl.audit(conversation.task_id or "")
    assert (record["tool"], record["approved"], record["actor"]) == (
        "delete_file",
        True,
        {"id": ALICE, "platform": "slack"},
    )


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_rejected_tool_is_denied_with_the_approvers_reason_and_the_others_decided_in_order(
    hitl: Hitl, dialect: str
) -> None:
    tools = [
        tool("t1", "read_file"),
        tool("t2", "delete_file"),
        tool("t3", "restart_service", service="db"),
    ]
    conversation, thread = hitl.start(
        channel(dialect),
        f"reject-{dialect}",
        Stage(pause=hitl_pause(approval(*tools))),
        Stage(pieces=(Say("Did what you allowed."),)),
    )

    prompt = thread.prompt()
    assert prompt.rendered.startswith(notices.NEEDS_APPROVAL + "\n")
    assert "[Approve all] [Reject all]" in prompt.rendered
    thread.click(prompt, "reject:1")
    partly = thread.updated(prompt, f"Rejected by <@{ALICE}>")
    thread.click(partly, "approve_all")

    decided = thread.updated(prompt, f"Approved by <@{ALICE}>")
    assert not decided.action_ids()
    assert decided.rendered.count(f"Approved by <@{ALICE}>") == 2
    thread.answer("Did what you allowed.")
    [answer] = conversation.answers()
    assert without_id(answer.message) == answer_to(
        conversation.task_id or "",
        conversation.context_id or "",
        "rejected",
        {
            "type": "tool_approval_response",
            "approvals": [
                {"id": "t1", "approved": True},
                {
                    "id": "t2",
                    "approved": False,
                    "rejection_reason": "denied by an approver in chat",
                },
                {"id": "t3", "approved": True},
            ],
        },
        {"id": ALICE, "platform": "slack"},
    )
    audit = hitl.audit(conversation.task_id or "")
    assert len(audit) == 3 and audit[0]["tool_id"] == "t2"
    assert {r["tool_id"]: (r["approved"], r["reason"], r["actor"]["id"]) for r in audit} == {
        "t1": (True, None, ALICE),
        "t2": (False, "denied by an approver in chat", ALICE),
        "t3": (True, None, ALICE),
    }
    logged = [
        r
        for r in hitl.logged("chat_ingress", "approval_decided")
        if r["task_id"] == conversation.task_id
    ]
    assert [r["tool_id"] for r in logged] == ["t2", "t1", "t3"]
    fields = ("tool_id", "tool", "args", "approved", "reason", "actor", "pause", "binding")
    assert {r["tool_id"]: [r[f] for f in fields] for r in logged} == {
        r["tool_id"]: [r[f] for f in fields] for r in audit
    }
    assert logged[0]["args"] == '{\n  "path": "/tmp/x"\n}'


def test_a_click_by_someone_who_is_not_an_approver_is_refused_to_them_alone_and_changes_nothing(
    hitl: Hitl,
) -> None:
    conversation, thread = hitl.start(
        channel("kagent-v1"),
        "not-an-approver",
        Stage(pause=hitl_pause(approval(tool("t1")))),
        Stage(pieces=(Say("Deleted."),)),
    )
    prompt = thread.prompt()

    thread.click(prompt, "approve:0", user=BOB)

    [refusal] = hitl.wait_for(lambda: thread.ephemerals(BOB), "refused")
    assert (refusal.text, refusal.thread_ts) == (notices.NOT_AN_APPROVER, thread.ts)
    assert thread.bot_messages()[-1] == prompt, "the prompt did not change"
    assert not conversation.answers()
    # Alice decides after Bob: the agent gets her decision, and only hers.
    thread.click(prompt, "approve:0")
    thread.answer("Deleted.")
    [answer] = conversation.answers()
    assert answer.message["metadata"]["agentkourier.dev/actor"] == {
        "id": ALICE,
        "platform": "slack",
    }
    assert [r["actor"]["id"] for r in hitl.audit(conversation.task_id or "")] == [ALICE]
    assert not thread.ephemerals(ALICE)


@pytest.mark.parametrize("dialect", DIALECTS)
def test_an_approval_no_one_decides_in_time_is_denied_by_agent_kourier(
    hitl: Hitl, dialect: str
) -> None:
    conversation, thread = hitl.start(
        channel(dialect, "hasty"),
        f"approval-timeout-{dialect}",
        Stage(pause=hitl_pause(approval(tool("t1"), tool("t2", "drop_table", table="users")))),
        Stage(pieces=(Say("Nothing was done."),)),
    )
    prompt = thread.prompt()

    denied = thread.updated(prompt, notices.SHOWN_DENIED_TIMEOUT)

    assert denied.rendered.count(notices.SHOWN_DENIED_TIMEOUT) == 2
    assert not denied.action_ids()
    thread.answer("Nothing was done.")
    [answer] = conversation.answers()
    reason = "denied by agent-kourier: no one decided in time"
    assert without_id(answer.message) == answer_to(
        conversation.task_id or "",
        conversation.context_id or "",
        "rejected",
        {
            "type": "tool_approval_response",
            "approvals": [
                {"id": "t1", "approved": False, "rejection_reason": reason},
                {"id": "t2", "approved": False, "rejection_reason": reason},
            ],
        },
        KOURIER,
    )
    assert not conversation.cancels()


@pytest.mark.parametrize("dialect", DIALECTS)
def test_on_a_binding_without_tool_approvals_the_tools_are_denied_at_once(
    hitl: Hitl, dialect: str
) -> None:
    conversation, thread = hitl.start(
        channel(dialect, "plain"),
        f"approval-not-allowed-{dialect}",
        Stage(pause=hitl_pause(approval(tool("t1")))),
        Stage(pieces=(Say("I will not delete it."),)),
    )

    thread.answer("I will not delete it.")

    prompt = thread.prompt()
    assert notices.SHOWN_DENIED_NOT_ALLOWED in prompt.rendered
    assert not prompt.action_ids()
    [answer] = conversation.answers()
    assert without_id(answer.message) == answer_to(
        conversation.task_id or "",
        conversation.context_id or "",
        "rejected",
        {
            "type": "tool_approval_response",
            "approvals": [
                {
                    "id": "t1",
                    "approved": False,
                    "rejection_reason": NOT_ALLOWED,
                }
            ],
        },
        KOURIER,
    )
    [record] = hitl.audit(conversation.task_id or "")
    assert record["actor"] == KOURIER and record["approved"] is False


def test_an_agent_whose_card_lists_no_extension_is_asked_for_it_only_in_the_answer(
    hitl: Hitl,
) -> None:
    conversation, thread = hitl.start(
        channel("a2a-unlisted"),
        "unlisted-card",
        Stage(pause=hitl_pause(approval(tool("t1")))),
        Stage(pieces=(Say("Deleted."),)),
    )
    thread.click(thread.prompt(), "approve:0")
    thread.answer("Deleted.")

    turn, answer = conversation.sends()
    cards = [r for r in hitl.agent.card_fetches if r.path.startswith("/a2a-unlisted")]
    assert cards and all(card.headers["x-user-id"] == "kourier-hitl" for card in cards)
    assert "a2a-extensions" not in turn.headers
    assert answer.headers["a2a-extensions"] == HITL_EXTENSION
    assert answer.message["extensions"] == [HITL_EXTENSION]


def test_an_answer_the_agent_refuses_with_32603_cancels_the_task_and_tells_the_thread(
    hitl: Hitl,
) -> None:
    conversation, thread = hitl.start(
        channel("kagent-v1"),
        "answer-refused",
        Stage(pause=hitl_pause(approval(tool("t1")))),
        Stage(refuse=-32603),
    )
    thread.click(thread.prompt(), "approve:0")

    thread.notice(notices.ANSWER_REJECTED.stopped)

    hitl.wait_for(conversation.cancels, "cancelled")
    assert [r.method for r in conversation.received if r.method != "GetTask"] == [
        "SendStreamingMessage",
        "SendStreamingMessage",
        "CancelTask",
    ]
    [cancel] = conversation.cancels()
    assert cancel.params["id"] == conversation.task_id


@pytest.mark.parametrize("dialect", DIALECTS)
def test_the_steps_of_the_paused_turn_are_not_shown_again_after_the_answer(
    hitl: Hitl, dialect: str
) -> None:
    _, thread = hitl.start(
        channel(dialect),
        f"steps-once-{dialect}",
        Stage(
            pieces=(
                Say("Reading the runbook. "),
                Call("c1", "read_runbook"),
                Result("c1", "read_runbook"),
                Call("c2", "delete_file", {"path": "/tmp/x"}),
            ),
            pause=hitl_pause(approval(tool("t1"))),
        ),
        Stage(pieces=(Result("c2", "delete_file"), Say("The file is gone."))),
    )
    thread.click(thread.prompt(), "approve:0")

    answer = thread.answer("The file is gone.")

    # The answer shows its own step: the gated call, taken from the paused
    # task where it was made, then its result, before the text (and its
    # feedback buttons).
    assert answer.rendered == (
        '[x] delete_file - {"path": "/tmp/x"} -> {"ok": true}\nThe file is gone.\n[👍] [👎]'
    )
    steps = [card.title for m in thread.bot_messages() for card in m.tasks]
    assert steps.count("read_runbook") == 1
    text = "\n".join(m.text for m in thread.bot_messages())
    assert text.count("Reading the runbook.") == 1


def test_an_action_the_prompt_does_not_have_changes_nothing(hitl: Hitl, stack: Stack) -> None:
    conversation, thread = hitl.start(
        channel("a2a"),
        "foreign-actions",
        Stage(pause=hitl_pause(approval(tool("t1")))),
        Stage(pieces=(Say("Deleted."),)),
    )
    prompt = thread.prompt()
    key = prompt.action_ids()[0].split(":")[1]

    # Signed as Slack signs, but naming what an approval has not:
    # a modal, a choice, a tool past its last.
    for action in ("write", "choose:0:0", "approve:5"):
        payload = {
            "type": "block_actions",
            "user": {"id": ALICE},
            "trigger_id": "1.2.forged",
            "container": {"type": "message", "channel_id": thread.channel, "message_ts": prompt.ts},
            "actions": [{"action_id": f"hitl:{key}:{action}", "type": "button"}],
        }
        body = encode_payload_form(payload)
        headers = {
            **signature_headers(DEFAULT_SIGNING_SECRET, body, "valid"),
            "Content-Type": "application/x-www-form-urlencoded",
        }
        answered = httpx.post(
            stack.ingress_url + "slack/interactivity", content=body, headers=headers, timeout=30
        )
        assert answered.status_code == 200, answered.text

    assert thread.bot_messages()[-1] == prompt
    assert not [v for v in hitl.standin.views() if key in str(v.view)], "no modal was opened"
    thread.click(prompt, "approve:0")
    thread.answer("Deleted.")
    [answer] = conversation.answers()
    assert answer.message["metadata"][HITL_EXTENSION]["approvals"] == [
        {"id": "t1", "approved": True}
    ]


def test_an_approvals_secret_is_shown_marked_and_never_stored_and_the_question_expires(
    hitl: Hitl,
) -> None:
    secret = "sk-live-abcdefghijklmnopqrstuvwxyz"
    conversation, thread = hitl.start(
        channel("kagent-v1"),
        "approval-secret",
        Stage(pause=hitl_pause(approval(tool("t1", "rotate", path="/etc/app", api_key=secret)))),
        Stage(pieces=(Say("Rotated."),)),
    )
    prompt = thread.prompt()

    assert secret not in prompt.rendered and f'"api_key": "{mark(secret)}"' in prompt.rendered
    # Firestore keeps what the approver saw, and its TTL policy deletes it later.
    [stored] = [
        question
        for question in (doc.to_dict() or {} for doc in hitl.db.collection(QUESTIONS).stream())
        if question["progress"]["pause"]["task"]["task_id"] == conversation.task_id
    ]
    assert secret not in json.dumps(stored, default=str)
    kept = stored["expire_at"] - datetime.now(UTC)
    assert timedelta(days=29) < kept <= QUESTIONS_KEPT
    thread.click(prompt, "approve:0")
    thread.answer("Rotated.")
    [record] = hitl.audit(conversation.task_id or "")
    assert secret not in record["args"] and mark(secret) in record["args"]
