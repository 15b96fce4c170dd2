"""The answer the agent gets: the payloads of the contract, exactly, and every check before sending."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest

from shared.a2a.wire import send_params
from shared.core import notices
from shared.core.answers import (
    KOURIER_ACTOR_ID,
    AnswerSheet,
    ApprovalLedger,
    Denial,
    IncompleteAnswer,
    RefusedClick,
    answer_message,
    ask_user_response,
    audit_record,
    progress_for,
    progress_from_dict,
    tool_approval_response,
)
from shared.core.model import ACTOR_METADATA_KEY, HITL_EXTENSION, Actor
from tests.hitl.builders import (
    ADA,
    APPROVERS,
    AT,
    BOB,
    CONTEXT_ID,
    TASK_ID,
    approval,
    ask,
    ledger,
    question,
    read_text,
    sheet,
    tool,
)

THREE_TOOLS = approval(tool("t1", "a"), tool("t2", "b"), tool("t3", "c"))


def wire(progress: ApprovalLedger | AnswerSheet) -> dict[str, Any]:
    """The answer as sent on the A2A 1.0 wire."""
    return send_params(answer_message(progress, "answer-1"), "1.0")["message"]


# --- a tool approval ------------------------------------------------------------------------


def test_an_approval_answers_with_the_contracts_payload_one_entry_per_tool_in_the_requests_order() -> (
    None
):
    progress = ledger(THREE_TOOLS)
    progress.decide(2, True, ADA, AT, APPROVERS)
    progress.decide(0, True, BOB, AT, APPROVERS)
    progress.decide(1, True, ADA, AT, APPROVERS)
    assert json.dumps(tool_approval_response(progress)) == json.dumps(
        {
            "type": "tool_approval_response",
            "approvals": [
                {"id": "t1", "approved": True},
                {"id": "t2", "approved": True},
                {"id": "t3", "approved": True},
            ],
        }
    )


def test_a_persons_denial_is_denied_by_an_approver_in_chat() -> None:
    progress = ledger(approval(tool("t1"), tool("t2")))
    progress.decide(0, True, ADA, AT, APPROVERS)
    progress.decide(1, False, ADA, AT, APPROVERS)
    assert tool_approval_response(progress)["approvals"] == [
        {"id": "t1", "approved": True},
        {"id": "t2", "approved": False, "rejection_reason": "denied by an approver in chat"},
    ]


def test_at_the_timeout_the_open_tools_are_denied_by_agent_kourier_no_one_decided_in_time() -> None:
    progress = ledger(approval(tool("t1"), tool("t2")))
    progress.decide(0, True, ADA, AT, APPROVERS)
    progress.deny_undecided(Denial.TIMEOUT, "slack", AT + timedelta(minutes=15))
    assert tool_approval_response(progress)["approvals"] == [
        {"id": "t1", "approved": True},
        {
            "id": "t2",
            "approved": False,
            "rejection_reason": "denied by agent-kourier: no one decided in time",
        },
    ]


def test_without_interactions_tool_approvals_every_tool_is_denied_at_once_as_not_allowed() -> None:
    progress = ledger(approval(tool("t1"), tool("t2")))
    progress.deny_undecided(Denial.NOT_ALLOWED, "slack", AT)
    reason = "denied by agent-kourier: this Binding does not allow tool approvals"
    assert tool_approval_response(progress)["approvals"] == [
        {"id": "t1", "approved": False, "rejection_reason": reason},
        {"id": "t2", "approved": False, "rejection_reason": reason},
    ]


def test_the_three_rejection_reasons_are_the_contracts_sentences() -> None:
    assert [d.value for d in Denial] == [
        notices.DENIED_BY_APPROVER,
        notices.DENIED_TIMEOUT,
        notices.DENIED_NOT_ALLOWED,
    ]


def test_the_approvals_text_part_is_approved_when_every_tool_is_approved() -> None:
    progress = ledger(THREE_TOOLS)
    progress.decide(None, True, ADA, AT, APPROVERS)
    assert wire(progress)["parts"] == [{"text": "approved"}]


def test_the_approvals_text_part_is_rejected_when_any_tool_is_denied() -> None:
    progress = ledger(THREE_TOOLS)
    progress.decide(1, False, ADA, AT, APPROVERS)
    progress.decide(None, True, ADA, AT, APPROVERS)
    assert wire(progress)["parts"] == [{"text": "rejected"}]


def test_the_answer_goes_to_the_paused_task_and_context_naming_the_extension_with_the_payload() -> (
    None
):
    progress = ledger(approval())
    progress.decide(0, True, ADA, AT, APPROVERS)
    message = wire(progress)
    assert (message["taskId"], message["contextId"], message["messageId"]) == (
        TASK_ID,
        CONTEXT_ID,
        "answer-1",
    )
    assert message["extensions"] == [HITL_EXTENSION] and message["role"] == "ROLE_USER"
    assert message["metadata"][HITL_EXTENSION] == tool_approval_response(progress)


def test_an_answer_carries_the_deciding_persons_id_and_platform_and_no_name_or_email() -> None:
    progress = ledger(approval())
    progress.decide(0, True, ADA, AT, APPROVERS)
    assert wire(progress)["metadata"][ACTOR_METADATA_KEY] == {"id": "U0ADA", "platform": "slack"}


@pytest.mark.parametrize("denial", [Denial.TIMEOUT, Denial.NOT_ALLOWED])
def test_a_denial_agent_kourier_makes_itself_carries_agent_kourier_with_the_bindings_platform(
    denial: Denial,
) -> None:
    progress = ledger(approval())
    progress.deny_undecided(denial, "slack", AT)
    assert wire(progress)["metadata"][ACTOR_METADATA_KEY] == {
        "id": KOURIER_ACTOR_ID,
        "platform": "slack",
    }
    assert KOURIER_ACTOR_ID == "agent-kourier"


def test_the_text_part_is_not_prefixed_with_the_actor() -> None:
    progress = ledger(approval())
    progress.decide(0, True, ADA, AT, APPROVERS)
    assert not wire(progress)["parts"][0]["text"].startswith("[Slack")


def test_a_nested_approval_answers_for_the_nested_tools() -> None:
    nested = {"subagent_name": "k8s", "task_id": "child", "tools": [tool("n1"), tool("n2")]}
    progress = ledger(approval(tool("outer"), nested=nested))
    progress.decide(None, True, ADA, AT, APPROVERS)
    assert tool_approval_response(progress)["approvals"] == [
        {"id": "n1", "approved": True},
        {"id": "n2", "approved": True},
    ]


# --- the ledger: each tool decided once ----------------------------------------------------


def test_each_tool_is_decided_once_the_first_decision_stands() -> None:
    progress = ledger(approval(tool("t1"), tool("t2")))
    assert len(progress.decide(0, True, ADA, AT, APPROVERS)) == 1
    assert progress.decide(0, False, BOB, AT, APPROVERS) == []
    assert progress.decisions[0] is not None and progress.decisions[0].approved


def test_approve_all_decides_only_the_tools_still_open() -> None:
    progress = ledger(THREE_TOOLS)
    progress.decide(1, False, ADA, AT, APPROVERS)
    made = progress.decide(None, True, BOB, AT, APPROVERS)
    assert [d.tool_id for d in made] == ["t1", "t3"]
    assert [d.approved for d in progress.decisions if d] == [
        True,
        False,
        True,
    ] and progress.complete


def test_reject_all_denies_every_open_tool_as_the_persons_denial() -> None:
    progress = ledger(approval(tool("t1"), tool("t2")))
    made = progress.decide(None, False, ADA, AT, APPROVERS)
    assert [(d.approved, d.denial) for d in made] == [
        (False, Denial.APPROVER),
        (False, Denial.APPROVER),
    ]


def test_a_click_from_someone_who_is_not_an_approver_is_refused_and_changes_nothing() -> None:
    progress = ledger(approval())
    with pytest.raises(RefusedClick, match=notices.NOT_AN_APPROVER):
        progress.decide(0, True, Actor("U0EVE"), AT, APPROVERS)
    assert progress.decisions == (None,) and progress.actor is None


def test_the_timeout_leaves_the_decisions_people_made() -> None:
    progress = ledger(approval(tool("t1"), tool("t2")))
    progress.decide(1, False, ADA, AT, APPROVERS)
    assert [d.tool_id for d in progress.deny_undecided(Denial.TIMEOUT, "slack", AT)] == ["t1"]
    assert progress.deny_undecided(Denial.TIMEOUT, "slack", AT) == []


def test_an_approval_is_never_sent_before_every_tool_is_decided() -> None:
    progress = ledger(approval(tool("t1"), tool("t2")))
    progress.decide(0, True, ADA, AT, APPROVERS)
    with pytest.raises(IncompleteAnswer):
        answer_message(progress, "answer-1")


def test_nothing_is_sent_before_anyone_decided() -> None:
    with pytest.raises(IncompleteAnswer):
        answer_message(ledger(approval()), "answer-1")


# --- questions -----------------------------------------------------------------------------


def test_questions_answer_with_the_contracts_payload_echoing_the_id_one_entry_per_question_in_order() -> (
    None
):
    progress = sheet(
        ask(
            question("Region?", ["eu", "us"]),
            question("Features?", ["logs", "metrics", "traces"], multiple=True),
            question("Name?"),
            request_id="ask-42",
        )
    )
    progress.write({2: "api, v2"}, BOB, AT)
    progress.pick(1, [2, 0])
    progress.submit(1, ADA, AT)
    progress.choose(0, 1, ADA, AT)
    assert json.dumps(ask_user_response(progress)) == json.dumps(
        {
            "type": "ask_user_response",
            "id": "ask-42",
            "answers": [
                {"answer": ["us"]},
                {"answer": ["logs", "traces"]},
                {"answer": ["api, v2"]},
            ],
        }
    )


def test_the_questions_text_part_joins_each_questions_answers_with_commas_and_questions_with_semicolons() -> (
    None
):
    progress = sheet(
        ask(
            question("A?", ["x", "y", "z"], multiple=True),
            question("B?", ["p", "q"]),
            question("C?"),
        )
    )
    progress.pick(0, [0, 2])
    progress.submit(0, ADA, AT)
    progress.choose(1, 1, ADA, AT)
    progress.reply("free", ADA, AT)
    assert wire(progress)["parts"] == [{"text": "x,z;q;free"}]


def test_a_nested_questions_answer_echoes_the_nested_tools_id() -> None:
    nested = {
        "subagent_name": "k8s",
        "task_id": "child",
        "tools": [{"id": "child-ask", "name": "ask_user"}],
    }
    progress = sheet(ask(question("Namespace?"), request_id="outer-call", nested=nested))
    progress.reply("default", ADA, AT)
    assert ask_user_response(progress) == {
        "type": "ask_user_response",
        "id": "child-ask",
        "answers": [{"answer": ["default"]}],
    }


def test_a_question_answer_carries_the_extension_and_the_answering_persons_actor() -> None:
    progress = sheet(ask(question("Region?", ["eu"])))
    progress.choose(0, 0, ADA, AT)
    message = wire(progress)
    assert message["extensions"] == [HITL_EXTENSION] and message["taskId"] == TASK_ID
    assert message["metadata"][ACTOR_METADATA_KEY] == {"id": "U0ADA", "platform": "slack"}


def test_each_question_must_be_answered_before_the_answer_is_sent() -> None:
    progress = sheet(ask(question("A?", ["x"]), question("B?", ["y"])))
    progress.choose(0, 0, ADA, AT)
    with pytest.raises(IncompleteAnswer):
        answer_message(progress, "answer-1")


def test_each_answer_must_be_one_of_its_choices() -> None:
    progress = sheet(ask(question("A?", ["x", "y"])))
    progress.choose(0, 0, ADA, AT)
    stored = progress.to_dict()
    stored["answers"][0]["values"] = ["not a choice"]
    with pytest.raises(IncompleteAnswer):
        answer_message(progress_from_dict(stored), "answer-1")


def test_a_single_choice_question_takes_exactly_one_choice() -> None:
    progress = sheet(ask(question("A?", ["x", "y"])))
    progress.choose(0, 0, ADA, AT)
    stored = progress.to_dict()
    stored["answers"][0]["values"] = ["x", "y"]
    with pytest.raises(IncompleteAnswer):
        answer_message(progress_from_dict(stored), "answer-1")


def test_a_question_is_answered_once_by_anyone_in_the_thread() -> None:
    progress = sheet(ask(question("A?", ["x", "y"])))
    assert progress.choose(0, 1, Actor("U0EVE"), AT)
    assert not progress.choose(0, 0, ADA, AT)
    answer = progress.answer(0)
    assert answer is not None and answer.values == ("y",) and answer.actor.id == "U0EVE"


def test_submitting_a_multiple_choice_question_with_nothing_picked_is_refused() -> None:
    progress = sheet(ask(question("A?", ["x", "y"], multiple=True)))
    with pytest.raises(RefusedClick, match=notices.PICK_A_CHOICE):
        progress.submit(0, ADA, AT)
    assert progress.pick(0, [1]) and not progress.pick(0, [1])
    assert progress.submit(0, ADA, AT) and progress.answer(0) is not None


def test_a_blank_free_text_answer_is_refused() -> None:
    progress = sheet(ask(question("Name?")))
    with pytest.raises(RefusedClick, match=notices.ANSWER_BLANK):
        progress.write({0: "   "}, ADA, AT)
    assert not progress.reply("  \n", ADA, AT) and progress.answer(0) is None


def test_a_thread_reply_answers_the_first_free_text_question_still_open() -> None:
    progress = sheet(ask(question("A?", ["x"]), question("B?"), question("C?")))
    assert progress.reply("first", ADA, AT) and progress.reply("second", BOB, AT)
    assert [progress.answer(i) and progress.answer(i).values for i in range(3)] == [
        None,
        ("first",),
        ("second",),
    ]  # type: ignore[union-attr]
    assert not progress.reply("third", ADA, AT)


def test_a_question_that_timed_out_takes_no_more_answers() -> None:
    progress = sheet(ask(question("A?", ["x"])))
    assert progress.time_out(AT) and progress.closed and not progress.complete
    assert not progress.choose(0, 0, ADA, AT) and not progress.time_out(AT)


# --- a text question ------------------------------------------------------------------------


def test_a_text_questions_answer_is_one_text_part_to_the_paused_task_and_context() -> None:
    progress = progress_for(read_text("Which region?"))
    assert isinstance(progress, AnswerSheet)
    assert progress.reply("eu-west-1", ADA, AT)
    message = wire(progress)
    assert message["parts"] == [{"text": "eu-west-1"}]
    assert (message["taskId"], message["contextId"]) == (TASK_ID, CONTEXT_ID)
    assert "extensions" not in message and HITL_EXTENSION not in message["metadata"]
    assert message["metadata"][ACTOR_METADATA_KEY] == {"id": "U0ADA", "platform": "slack"}


# --- stored in Firestore, and audited ---------------------------------------------------------


def firestore_safe(value: Any, inside_list: bool = False) -> bool:
    """Firestore takes no array directly inside an array and no empty map key."""
    if isinstance(value, dict):
        return all(key != "" and firestore_safe(item) for key, item in value.items())
    if isinstance(value, list):
        return not inside_list and all(firestore_safe(item, inside_list=True) for item in value)
    return value is None or isinstance(value, str | int | float | bool)


def test_a_ledger_survives_firestore_as_plain_json() -> None:
    progress = ledger(approval(tool("t1", args={"": [[1, 2]], "x": {"y": []}}), tool("t2")))
    progress.decide(0, False, ADA, AT, APPROVERS)
    stored = progress.to_dict()
    assert firestore_safe(stored)
    again = progress_from_dict(json.loads(json.dumps(stored)))
    assert isinstance(again, ApprovalLedger)
    assert (
        again.pause == progress.pause
        and again.decisions == progress.decisions
        and again.actor == progress.actor
    )
    again.decide(1, True, BOB, AT, APPROVERS)
    assert wire(again)["parts"] == [{"text": "rejected"}]


@pytest.mark.parametrize("text_question", [False, True])
def test_an_answer_sheet_survives_firestore_as_plain_json(text_question: bool) -> None:
    pause = (
        read_text("Which?")
        if text_question
        else sheet(ask(question("A?", ["x", "y"], multiple=True), question("B?"))).pause
    )
    progress = progress_for(pause)
    assert isinstance(progress, AnswerSheet)
    if not text_question:
        progress.pick(0, [1])
    progress.reply("typed", ADA, AT)
    stored = progress.to_dict()
    assert firestore_safe(stored)
    again = progress_from_dict(json.loads(json.dumps(stored)))
    assert isinstance(again, AnswerSheet) and again.pause == progress.pause
    assert [again.answer(i) for i in range(len(again.questions))] == [
        progress.answer(i) for i in range(len(progress.questions))
    ]
    assert again.picked(0) == progress.picked(0) and again.actor == progress.actor


def test_each_decision_has_an_audit_record_who_which_tool_with_which_arguments_what_why_and_when() -> (
    None
):
    progress = ledger(
        approval(
            tool("t1", "drop_table", {"table": "users", "api_key": "sk-live-123"}, call_id="c1")
        )
    )
    [decision] = progress.decide(0, False, ADA, AT, APPROVERS)
    record = audit_record(progress.pause, decision)
    assert record == {
        "task_id": TASK_ID,
        "context_id": CONTEXT_ID,
        "pause": progress.pause.name,
        "subagent": None,
        "tool_id": "t1",
        "call_id": "c1",
        "tool": "drop_table",
        "args": '{\n  "table": "users",\n  "api_key": "[redacted, 11 chars]"\n}',
        "approved": False,
        "reason": "denied by an approver in chat",
        "actor": {"id": "U0ADA", "platform": "slack"},
        "at": "2026-11-30T05:10:00+00:00",
    }
    assert firestore_safe(record)
