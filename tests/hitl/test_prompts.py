"""Asking in Slack: the prompts' blocks, their later forms, and the clicks read back."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest

from shared.core import notices
from shared.core.answers import (
    AnswerSheet,
    ApprovalLedger,
    Denial,
    RefusedClick,
    answer_message,
    progress_for,
    progress_from_dict,
)
from shared.core.pauses import MAX_ITEM_TEXT, Unusable
from shared.slack.prompts import (
    MAX_HEADER_TEXT,
    AnswerFormOpened,
    ChoiceChosen,
    ChoicesPicked,
    ChoicesSubmitted,
    Prompt,
    TextsWritten,
    ToolDecided,
    answer_modal,
    apply_interaction,
    modal_errors,
    parse_interaction,
    render_prompt,
    render_stopped,
)
from tests.hitl.builders import (
    ADA,
    APPROVERS,
    AT,
    approval,
    ask,
    ledger,
    question,
    read_text,
    sheet,
    tool,
)
from tests.hitl.slack_workspace import (
    CHANNEL,
    Slack,
    action_ids,
    buttons,
    check_blocks,
    dumped,
)


def rendered(progress: ApprovalLedger | AnswerSheet) -> Prompt:
    prompt = render_prompt(progress)
    assert isinstance(prompt, Prompt), prompt
    return prompt


def act(slack: Slack, progress: ApprovalLedger | AnswerSheet, payload: dict[str, Any]) -> bool:
    interaction = parse_interaction(payload)
    assert interaction is not None
    return apply_interaction(progress, interaction, AT, APPROVERS).changed


# --- a tool approval ---------------------------------------------------------------------


def test_a_tool_approval_shows_the_heading_and_each_tools_name_and_arguments() -> None:
    progress = ledger(
        approval(
            tool("t1", "delete_file", {"path": "/tmp/x"}),
            tool("t2", "restart", {}),
            hint="Clean up?",
        )
    )
    seen = Slack().post(rendered(progress))
    assert seen.splitlines()[0] == "Clean up?"
    assert "delete_file" in seen and '"path": "/tmp/x"' in seen and "restart" in seen


def test_the_heading_is_the_default_without_a_hint_and_is_the_notifications_text() -> None:
    prompt = rendered(ledger(approval()))
    assert prompt.blocks[0]["text"]["text"] == prompt.text == "The agent needs your approval"


def test_a_long_hint_is_shown_cut_on_one_line() -> None:
    prompt = rendered(ledger(approval(hint="Delete " + "very " * 100 + "old files?")))
    heading = prompt.blocks[0]["text"]["text"]
    assert (
        len(heading) == MAX_HEADER_TEXT
        and heading.endswith("…")
        and heading.startswith("Delete very")
    )


def test_the_hint_stays_on_the_prompt_after_it_ends() -> None:
    progress = ledger(approval(tool("t1"), hint="Clean up?"))
    progress.deny_undecided(Denial.TIMEOUT, "slack", AT)
    assert Slack().post(rendered(progress)).splitlines()[0] == "Clean up?"


def test_call_id_is_kept_with_the_request_and_not_shown() -> None:
    progress = ledger(approval(tool("t1", call_id="call-secret-id-42")))
    assert progress.pause.tools[0].call_id == "call-secret-id-42"
    assert "call-secret-id-42" not in dumped(rendered(progress).blocks)


def test_each_tool_has_buttons_labelled_approve_and_reject() -> None:
    assert buttons(rendered(ledger(approval(tool("t1")))).blocks) == ["Approve", "Reject"]


def test_several_tools_also_get_approve_all_and_reject_all() -> None:
    labels = buttons(rendered(ledger(approval(tool("t1"), tool("t2")))).blocks)
    assert labels == ["Approve", "Reject", "Approve", "Reject", "Approve all", "Reject all"]


def test_redacted_secrets_are_absent_from_the_blocks() -> None:
    args = {
        "db": "postgres://app:pa55word@db:5432/x",
        "api_key": "k-123456",
        "auth": "Bearer eyJhbGciOi.eyJzdWIi.sig",
    }
    prompt = rendered(ledger(approval(tool(args=args))))
    sent = dumped(prompt.blocks)
    assert "pa55word" not in sent and "k-123456" not in sent and "eyJhbGciOi" not in sent
    assert "[redacted, " in Slack().post(prompt)


def test_a_nested_approval_says_which_sub_agent_asks() -> None:
    nested = {
        "subagent_name": "k8s-agent",
        "task_id": "child",
        "tools": [tool("n1", "kubectl_delete")],
    }
    seen = Slack().post(rendered(ledger(approval(tool("outer", "call_k8s_agent"), nested=nested))))
    assert (
        "Asked by the sub-agent k8s-agent" in seen
        and "kubectl_delete" in seen
        and "call_k8s_agent" not in seen
    )


def test_the_prompt_updates_to_show_who_decided_what() -> None:
    slack = Slack()
    progress = ledger(approval(tool("t1", "a"), tool("t2", "b"), tool("t3", "c")))
    slack.post(rendered(progress))
    assert act(
        slack, progress, slack.click(action_ids(rendered(progress).blocks)["Reject"], user="U0BOB")
    )
    seen = slack.update(rendered(progress))
    assert "Rejected by <@U0BOB>" in seen
    assert buttons(rendered(progress).blocks) == [
        "Approve",
        "Reject",
        "Approve",
        "Reject",
        "Approve all",
        "Reject all",
    ]
    assert act(slack, progress, slack.click(action_ids(rendered(progress).blocks)["Approve all"]))
    seen = slack.update(rendered(progress))
    assert seen.count("Approved by <@U0ADA>") == 2 and buttons(rendered(progress).blocks) == []
    assert answer_message(progress, "answer-1").text == "rejected"


def test_after_a_timeout_the_prompt_shows_the_outcome_for_each_open_tool() -> None:
    progress = ledger(approval(tool("t1"), tool("t2")))
    progress.decide(0, True, ADA, AT, APPROVERS)
    progress.deny_undecided(Denial.TIMEOUT, "slack", AT + timedelta(minutes=15))
    seen = Slack().post(rendered(progress))
    assert "Approved by <@U0ADA>" in seen and "Denied: no one decided in time" in seen
    assert buttons(rendered(progress).blocks) == []


def test_a_binding_without_approvals_shows_every_tool_denied() -> None:
    progress = ledger(approval(tool("t1")))
    progress.deny_undecided(Denial.NOT_ALLOWED, "slack", AT)
    seen = Slack().post(rendered(progress))
    assert (
        "Denied: this Binding does not allow tool approvals" in seen
        and buttons(rendered(progress).blocks) == []
    )


def test_a_click_from_someone_who_is_not_an_approver_is_refused_and_changes_nothing() -> None:
    slack = Slack()
    progress = ledger(approval(tool("t1")))
    slack.post(rendered(progress))
    interaction = parse_interaction(
        slack.click(action_ids(rendered(progress).blocks)["Approve"], user="U0EVE")
    )
    assert interaction == ToolDecided(progress.pause.key, "U0EVE", 0, True)
    with pytest.raises(RefusedClick) as refused:
        apply_interaction(progress, interaction, AT, APPROVERS)
    assert str(refused.value) == notices.NOT_AN_APPROVER
    assert progress.decisions == (None,)


def test_a_decision_is_returned_for_the_audit_log() -> None:
    slack = Slack()
    progress = ledger(approval(tool("t1"), tool("t2")))
    slack.post(rendered(progress))
    interaction = parse_interaction(
        slack.click(action_ids(rendered(progress).blocks)["Reject all"])
    )
    assert interaction is not None
    applied = apply_interaction(progress, interaction, AT, APPROVERS)
    assert [(d.tool_id, d.approved, d.denial) for d in applied.decisions] == [
        ("t1", False, Denial.APPROVER),
        ("t2", False, Denial.APPROVER),
    ]
    assert not apply_interaction(progress, interaction, AT, APPROVERS).changed


# --- questions ------------------------------------------------------------------------------


def test_a_single_choice_question_has_one_button_per_choice_labelled_with_its_text() -> None:
    slack = Slack()
    progress = sheet(ask(question("Region?", ["eu-west-1", "us-east-1 (N. Virginia)"])))
    seen = slack.post(rendered(progress))
    assert "Region?" in seen and buttons(rendered(progress).blocks) == [
        "eu-west-1",
        "us-east-1 (N. Virginia)",
    ]
    interaction = parse_interaction(
        slack.click(action_ids(rendered(progress).blocks)["us-east-1 (N. Virginia)"])
    )
    assert interaction == ChoiceChosen(progress.pause.key, "U0ADA", 0, 1)
    assert apply_interaction(progress, interaction, AT, ()).changed
    assert answer_message(progress, "answer-1").text == "us-east-1 (N. Virginia)"
    assert "Answered by <@U0ADA>" in slack.update(rendered(progress))


def test_many_choices_are_buttons_across_several_action_blocks() -> None:
    choices = [f"choice {i}" for i in range(100)]
    prompt = rendered(sheet(ask(question("Pick?", choices))))
    check_blocks(prompt.blocks)
    assert buttons(prompt.blocks) == choices


def test_a_multiple_choice_question_has_checkboxes_and_a_submit_button() -> None:
    slack = Slack()
    progress = sheet(ask(question("Features?", ["logs", "metrics", "traces"], multiple=True)))
    slack.post(rendered(progress))
    picker = rendered(progress).blocks[1]["accessory"]
    assert picker["type"] == "checkboxes" and [o["text"]["text"] for o in picker["options"]] == [
        "logs",
        "metrics",
        "traces",
    ]
    assert buttons(rendered(progress).blocks) == ["Submit"]
    picked = parse_interaction(slack.click(picker["action_id"], values=["0", "2"]))
    assert picked == ChoicesPicked(progress.pause.key, "U0ADA", 0, (0, 2))
    assert apply_interaction(progress, picked, AT, ()).changed
    slack.update(rendered(progress))
    kept = rendered(progress).blocks[1]["accessory"]["initial_options"]
    assert [o["text"]["text"] for o in kept] == ["logs", "traces"]
    submitted = parse_interaction(
        slack.click(action_ids(rendered(progress).blocks)["Submit"], user="U0BOB")
    )
    assert submitted == ChoicesSubmitted(progress.pause.key, "U0BOB", 0)
    assert apply_interaction(progress, submitted, AT, ()).changed
    assert answer_message(progress, "answer-1").text == "logs,traces"
    assert "Answered by <@U0BOB>" in slack.update(rendered(progress))


def test_more_than_ten_choices_for_several_are_a_multi_select() -> None:
    choices = [f"c{i}" for i in range(11)]
    picker = rendered(sheet(ask(question("Which?", choices, multiple=True)))).blocks[1]["accessory"]
    assert picker["type"] == "multi_static_select" and len(picker["options"]) == 11


def test_a_free_text_question_has_a_button_that_opens_a_modal_and_a_note_that_a_reply_answers_too() -> (
    None
):
    slack = Slack()
    progress = sheet(ask(question("Name?"), question("Region?", ["eu"]), question("Why?")))
    seen = slack.post(rendered(progress))
    assert notices.REPLY_ALSO_ANSWERS in seen and buttons(rendered(progress).blocks) == [
        "eu",
        "Answer",
    ]
    opened = parse_interaction(slack.click(action_ids(rendered(progress).blocks)["Answer"]))
    assert isinstance(opened, AnswerFormOpened) and opened.trigger_id
    assert not apply_interaction(progress, opened, AT, ()).changed
    modal = answer_modal(progress)
    assert modal is not None
    inputs = [b["element"] for b in modal["blocks"] if b["type"] == "input"]
    assert [i["type"] for i in inputs] == ["plain_text_input", "plain_text_input"]
    values = {inputs[0]["action_id"]: "api", inputs[1]["action_id"]: "because"}
    written = parse_interaction(slack.submit_modal(modal, values, user="U0BOB"))
    assert written == TextsWritten(progress.pause.key, "U0BOB", {0: "api", 2: "because"})
    assert apply_interaction(progress, written, AT, ()).changed
    assert answer_modal(progress) is None and buttons(rendered(progress).blocks) == ["eu"]
    assert notices.REPLY_ALSO_ANSWERS not in slack.update(rendered(progress))


def test_the_modal_asks_only_the_free_text_questions_still_open() -> None:
    progress = sheet(ask(question("Name?"), question("Why?")))
    progress.reply("api", ADA, AT)
    modal = answer_modal(progress)
    assert modal is not None
    assert [b["block_id"] for b in modal["blocks"] if b["type"] == "input"] == ["q1"]


def test_a_blank_modal_answer_keeps_the_modal_open_with_an_error_under_it() -> None:
    progress = sheet(ask(question("Name?"), question("Why?")))
    with pytest.raises(RefusedClick) as refused:
        progress.write({0: "api", 1: " "}, ADA, AT)
    assert modal_errors({0: "api", 1: " "}, str(refused.value)) == {
        "response_action": "errors",
        "errors": {"q1": notices.ANSWER_BLANK},
    }


def test_an_answered_free_text_question_shows_who_answered_and_the_answer_cut() -> None:
    progress = sheet(ask(question("Why?")))
    progress.reply("x" * 500, ADA, AT)
    seen = Slack().post(rendered(progress))
    assert "Answered by <@U0ADA>" in seen and "x" * 149 + "…" in seen and "x" * 151 not in seen


def test_after_a_timeout_the_questions_say_the_task_was_cancelled_and_take_no_clicks() -> None:
    progress = sheet(ask(question("Region?", ["eu"]), question("Why?")))
    progress.time_out(AT)
    prompt = rendered(progress)
    assert notices.SHOWN_QUESTION_TIMED_OUT in Slack().post(prompt) and buttons(prompt.blocks) == []


@pytest.mark.parametrize(
    "progress",
    [
        ledger(approval(tool("t1"), tool("t2"))),
        sheet(ask(question("Region?", ["eu"]), question("Why?"))),
    ],
    ids=["approval", "questions"],
)
def test_a_prompt_whose_turn_was_stopped_says_who_stopped_it_and_takes_no_clicks(
    progress: ApprovalLedger | AnswerSheet,
) -> None:
    prompt = render_stopped(progress, "U0BOB")
    assert isinstance(prompt, Prompt)
    seen = Slack().post(prompt)
    assert "Stopped by <@U0BOB>" in seen
    assert buttons(prompt.blocks) == [] and action_ids(prompt.blocks) == {}
    assert notices.REPLY_ALSO_ANSWERS not in seen and notices.REPLY_TO_ANSWER not in seen
    check_blocks(prompt.blocks)


def test_a_nested_question_says_which_sub_agent_asks() -> None:
    nested = {
        "subagent_name": "k8s-agent",
        "task_id": "child",
        "tools": [{"id": "child-ask", "name": "ask_user"}],
    }
    assert "Asked by the sub-agent k8s-agent" in Slack().post(rendered(sheet(ask(nested=nested))))


# --- a text question ---------------------------------------------------------------------------


def test_a_text_question_is_posted_as_text_in_the_thread_with_a_note_that_a_reply_answers() -> None:
    progress = progress_for(read_text("Which **region** should I use?"))
    prompt = rendered(progress)
    seen = Slack().post(prompt)
    assert "Which **region** should I use?" in seen and notices.REPLY_TO_ANSWER in seen
    assert buttons(prompt.blocks) == [] and prompt.text == "Which **region** should I use?"


def test_an_agents_question_or_hint_notifies_no_one_and_hides_no_link() -> None:
    # Slack reads <!here>, <@U…>, <url|label> in a fallback text (mrkdwn) and
    # in a markdown block as mentions and disguised links.
    commanding = "Ping <!channel> and <@U0BOB>: <https://evil.example|approve here>?"
    for progress in (
        progress_for(read_text(commanding)),
        ledger(approval(hint=commanding)),
        sheet(ask(hint=commanding)),
    ):
        slack = Slack()
        slack.post(rendered(progress))
        [message] = slack.workspace.history(CHANNEL)
        assert message.commands == [], message


def test_a_text_question_too_long_for_one_message_is_unusable() -> None:
    assert isinstance(render_prompt(progress_for(read_text("Which region? " * 600))), Prompt)
    assert isinstance(render_prompt(progress_for(read_text("Which region? " * 900))), Unusable)


def test_a_text_question_shows_who_answered_or_that_it_timed_out() -> None:
    answered, timed_out = progress_for(read_text("Which?")), progress_for(read_text("Which?"))
    assert isinstance(answered, AnswerSheet) and isinstance(timed_out, AnswerSheet)
    answered.reply("eu", ADA, AT)
    timed_out.time_out(AT)
    assert "Answered by <@U0ADA>" in Slack().post(rendered(answered))
    assert notices.SHOWN_QUESTION_TIMED_OUT in Slack().post(rendered(timed_out))


# --- fitting in one message -----------------------------------------------------------------


def biggest_args(name: str) -> dict[str, Any]:
    return {"content": "x" * (MAX_ITEM_TEXT - len(name) - 20)}


def test_a_prompt_that_cannot_fit_in_one_message_is_unusable_rather_than_cut() -> None:
    tools = [tool(f"t{i}", "write_file", biggest_args("write_file")) for i in range(5)]
    assert isinstance(render_prompt(ledger(approval(*tools))), Unusable)


def test_questions_that_need_more_than_50_blocks_are_unusable() -> None:
    questions = [question(f"Q{i}?", [f"c{j}" for j in range(26)]) for i in range(17)]
    result = render_prompt(sheet(ask(*questions)))
    assert isinstance(result, Unusable) and "blocks" in result.reason


def largest_that_fits(
    make: Callable[[int], ApprovalLedger | AnswerSheet],
) -> ApprovalLedger | AnswerSheet:
    """The progress of the largest prompt ``make`` builds that still fits, growing its text by 20 characters."""
    fitting = None
    for size in range(20, MAX_ITEM_TEXT, 20):
        progress = make(size)
        if isinstance(render_prompt(progress), Unusable):
            assert fitting is not None
            return fitting
        fitting = progress
    raise AssertionError("never reached the limit")


def test_the_largest_approval_that_fits_still_fits_after_every_decision_and_the_timeout() -> None:
    slack = Slack()
    progress = largest_that_fits(
        lambda n: ledger(approval(*(tool(f"t{i}", "write", {"k": "v" * n}) for i in range(20))))
    )
    assert isinstance(progress, ApprovalLedger)
    slack.post(rendered(progress))
    progress.decide(0, True, ADA, AT, APPROVERS)
    slack.update(rendered(progress))
    progress.deny_undecided(Denial.TIMEOUT, "slack", AT)
    slack.update(rendered(progress))


def test_the_largest_questions_that_fit_still_fit_after_every_answer_and_the_timeout() -> None:
    slack = Slack()
    progress = largest_that_fits(lambda n: sheet(ask(*(question("q" * n) for i in range(20)))))
    assert isinstance(progress, AnswerSheet)
    slack.post(rendered(progress))
    progress.write({i: "a" * 3000 for i in range(10)}, ADA, AT)
    slack.update(rendered(progress))
    progress.time_out(AT)
    slack.update(rendered(progress))


def test_the_largest_choices_that_fit_still_fit_after_every_pick_and_answer() -> None:
    slack = Slack()

    def make(n: int) -> AnswerSheet:
        choices = [f"{j}" * 40 for j in range(10)]
        return sheet(ask(*(question("q" * n, choices, multiple=True) for i in range(10))))

    progress = largest_that_fits(make)
    assert isinstance(progress, AnswerSheet)
    slack.post(rendered(progress))
    for index in range(10):
        progress.pick(index, list(range(10)))
        slack.update(rendered(progress))
    for index in range(10):
        progress.submit(index, ADA, AT)
        slack.update(rendered(progress))


# --- reading clicks back ---------------------------------------------------------------------


def test_a_click_on_something_that_is_not_a_prompt_is_not_an_interaction() -> None:
    assert (
        parse_interaction(
            {"type": "block_actions", "user": {"id": "U0ADA"}, "actions": [{"action_id": "stop"}]}
        )
        is None
    )
    assert (
        parse_interaction(
            {"type": "view_submission", "user": {"id": "U0ADA"}, "view": {"callback_id": "x"}}
        )
        is None
    )
    assert parse_interaction({"type": "shortcut", "user": {"id": "U0ADA"}}) is None
    bad_number = {
        "type": "block_actions",
        "user": {"id": "U0ADA"},
        "actions": [{"action_id": "hitl:k:approve:-1"}],
    }
    assert parse_interaction(bad_number) is None


def test_an_interaction_is_applied_only_to_the_prompt_it_names() -> None:
    first, second = ledger(approval(tool("t1"))), ledger(approval(tool("t2")))
    with pytest.raises(ValueError):
        apply_interaction(second, ToolDecided(first.pause.key, "U0ADA", 0, True), AT, APPROVERS)


def test_action_ids_and_values_stay_within_slacks_limits() -> None:
    progress = sheet(
        ask(*(question(f"Q{i}?", [f"c{j}" for j in range(20)], multiple=True) for i in range(2)))
    )
    for block in rendered(progress).blocks:
        for element in [block.get("accessory"), *block.get("elements", [])]:
            if isinstance(element, dict) and "action_id" in element:
                assert len(element["action_id"]) <= 255
                assert all(len(option["value"]) <= 150 for option in element.get("options", []))


# --- withdrawn: the agent that asked has changed (session identity) -----------------------


def test_a_withdrawn_approval_keeps_its_decisions_shows_why_and_takes_no_clicks() -> None:
    progress = ledger(approval(tool("t1"), tool("t2")))
    progress.decide(0, True, ADA, AT, APPROVERS)
    assert progress.withdraw(AT) and not progress.withdraw(AT)
    assert progress.closed and progress.decide(1, True, ADA, AT, APPROVERS) == []
    restored = progress_from_dict(progress.to_dict())
    assert isinstance(restored, ApprovalLedger) and restored.withdrawn_at == AT
    seen = Slack().post(rendered(restored))
    assert "Approved by <@U0ADA>" in seen and notices.SHOWN_NO_LONGER_ANSWERABLE in seen
    assert buttons(rendered(restored).blocks) == []


def test_a_decided_approval_whose_answer_was_not_sent_says_it_is_no_longer_answerable() -> None:
    progress = ledger(approval(tool("t1")))
    progress.decide(0, True, ADA, AT, APPROVERS)
    assert progress.withdraw(AT)
    seen = Slack().post(rendered(progress))
    assert "Approved by <@U0ADA>" in seen and notices.SHOWN_NO_LONGER_ANSWERABLE in seen


def test_withdrawn_questions_show_why_and_take_no_clicks() -> None:
    for progress in (sheet(ask(question("Region?", ["eu"]), question("Why?"))),):
        assert progress.withdraw(AT) and progress.closed
        restored = progress_from_dict(progress.to_dict())
        assert isinstance(restored, AnswerSheet) and restored.withdrawn_at == AT
        prompt = rendered(restored)
        assert notices.SHOWN_NO_LONGER_ANSWERABLE in Slack().post(prompt)
        assert buttons(prompt.blocks) == []
    text = progress_for(read_text("Which?"))
    assert isinstance(text, AnswerSheet) and text.withdraw(AT)
    seen = Slack().post(rendered(text))
    assert notices.SHOWN_NO_LONGER_ANSWERABLE in seen and notices.REPLY_TO_ANSWER not in seen


def test_timed_out_questions_are_not_withdrawn_after() -> None:
    progress = sheet(ask(question("Region?", ["eu"])))
    progress.time_out(AT)
    assert not progress.withdraw(AT)
