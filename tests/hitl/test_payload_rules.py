"""The payload rules of "Structured questions and tool approvals" and its notes for an agent author."""

from __future__ import annotations

from typing import Any

import pytest

from shared.core import notices
from shared.core.pauses import MAX_CHOICE_TEXT, MAX_ITEM_TEXT, Question
from tests.hitl.builders import approval, ask, question, read_approval, read_ask, tool, unusable

ADK_HINT = (
    "Please approve or reject the tool call publish_note() by responding with a FunctionResponse "
    "with an expected ToolConfirmation payload."
)


# --- a tool approval: 1 to 20 tools, each with an id --------------------------------


@pytest.mark.parametrize("count", [1, 20])
def test_a_tool_approval_holds_1_to_20_tools(count: int) -> None:
    pause = read_approval(approval(*(tool(f"t{i}") for i in range(count))))
    assert [t.id for t in pause.tools] == [f"t{i}" for i in range(count)]


@pytest.mark.parametrize("count", [0, 21])
def test_a_tool_approval_with_no_tools_or_more_than_20_is_unusable(count: int) -> None:
    assert unusable(
        {"type": "tool_approval_request", "tools": [tool(f"t{i}") for i in range(count)]}
    )


@pytest.mark.parametrize("tools", [None, "t1", {"id": "t1"}])
def test_a_tool_approval_whose_tools_are_not_a_list_is_unusable(tools: Any) -> None:
    assert unusable({"type": "tool_approval_request", "tools": tools})


@pytest.mark.parametrize("tool_id", [None, "", 7])
def test_each_tool_needs_an_id(tool_id: Any) -> None:
    assert unusable(approval(tool("t1"), {**tool(), "id": tool_id}))


def test_each_tools_id_must_be_unique_within_the_request() -> None:
    assert unusable(approval(tool("t1", "a"), tool("t1", "b")))


@pytest.mark.parametrize("name", [None, "", 7])
def test_each_tool_needs_a_name(name: Any) -> None:
    assert unusable(approval({**tool(), "name": name}))


def test_call_id_is_optional_and_kept_with_the_request() -> None:
    pause = read_approval(approval(tool("t1", call_id="call-9"), tool("t2")))
    assert [t.call_id for t in pause.tools] == ["call-9", None]


@pytest.mark.parametrize("args", [{}, None])
def test_a_tool_without_arguments_shows_an_empty_object(args: Any) -> None:
    payload = approval({"id": "t1", "name": "ping"} if args is None else tool(args=args))
    assert read_approval(payload).tools[0].shown_args == "{}"


@pytest.mark.parametrize("args", [["a", 1], "a string", 3, True, {"deep": {"er": [{"x": None}]}}])
def test_arguments_may_be_any_json_value_nested(args: Any) -> None:
    assert read_approval(approval(tool(args=args))).tools[0].args == args


# --- questions: an id, 1 to 20 questions, at most 100 choices --------------------------


@pytest.mark.parametrize("request_id", [None, "", 3])
def test_questions_need_an_id(request_id: Any) -> None:
    assert unusable({"type": "ask_user_request", "id": request_id, "questions": [question()]})


@pytest.mark.parametrize("count", [1, 20])
def test_questions_hold_1_to_20_questions(count: int) -> None:
    assert len(read_ask(ask(*(question(f"Q{i}?") for i in range(count)))).questions) == count


@pytest.mark.parametrize("count", [0, 21])
def test_questions_with_none_or_more_than_20_are_unusable(count: int) -> None:
    assert unusable(
        {
            "type": "ask_user_request",
            "id": "a",
            "questions": [question(f"Q{i}?") for i in range(count)],
        }
    )


def test_a_question_holds_at_most_100_choices() -> None:
    assert (
        len(read_ask(ask(question(choices=[f"c{i}" for i in range(100)]))).questions[0].choices)
        == 100
    )
    assert unusable(ask(question(choices=[f"c{i}" for i in range(101)])))


@pytest.mark.parametrize(
    "entry",
    [
        {"question": "Which?", "choices": []},
        {"question": "Which?"},
        {"question": "Which?", "choices": None},
    ],
)
def test_no_choices_asks_for_free_text(entry: dict[str, Any]) -> None:
    assert read_ask(ask(entry)).questions == (Question("Which?"),)


def test_multiple_lets_a_question_take_several_of_its_choices() -> None:
    pause = read_ask(ask(question(choices=["a", "b"], multiple=True), question(choices=["a", "b"])))
    assert [q.multiple for q in pause.questions] == [True, False]


@pytest.mark.parametrize(
    "entry",
    [
        {"choices": ["a"]},
        {"question": "  ", "choices": ["a"]},
        {"question": 5},
        question(choices="a, b"),  # type: ignore[arg-type]
        question(choices=["a", ""]),
        question(choices=["a", 3]),  # type: ignore[list-item]
        {"question": "Which?", "choices": ["a"], "multiple": "yes"},
    ],
)
def test_a_question_without_text_or_with_choices_that_are_not_texts_is_unusable(entry: Any) -> None:
    assert unusable(ask(entry))


def test_a_question_or_choice_too_long_to_show_whole_is_unusable() -> None:
    assert read_ask(ask(question("q" * MAX_ITEM_TEXT, choices=["c" * MAX_CHOICE_TEXT])))
    assert unusable(ask(question("q" * (MAX_ITEM_TEXT + 1))))
    assert unusable(ask(question(choices=["c" * (MAX_CHOICE_TEXT + 1)])))


def test_a_question_or_choice_with_a_control_character_is_unusable() -> None:
    assert unusable(ask(question("Which\x1b[31m region?")))
    assert unusable(ask(question(choices=["eu\x00"])))


# --- nested pauses ------------------------------------------------------------------


def nested(tools: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {
        "subagent_name": "k8s-agent",
        "task_id": "child-task",
        "context_id": "child-ctx",
        "tools": tools,
        **extra,
    }


def test_a_nested_approval_decides_the_nested_tools() -> None:
    pause = read_approval(
        approval(
            tool("outer", "k8s-agent"),
            nested=nested([tool("n1", "kubectl_delete"), tool("n2", "kubectl_apply")]),
        )
    )
    assert [t.id for t in pause.tools] == ["n1", "n2"]
    assert pause.nested is not None and (pause.nested.name, pause.nested.task_id) == (
        "k8s-agent",
        "child-task",
    )


@pytest.mark.parametrize("outer", [[], [tool("o1"), tool("o2")], [{"name": "k8s-agent"}]])
def test_a_nested_approval_needs_exactly_one_outer_tool_with_an_id(
    outer: list[dict[str, Any]],
) -> None:
    assert unusable(
        {"type": "tool_approval_request", "tools": outer, "nested": nested([tool("n1")])}
    )


@pytest.mark.parametrize(
    "nested_tools",
    [[], [tool("n1"), tool("n1", "other")], [{"name": "kubectl"}], [tool("n1", "bad\x07")]],
)
def test_the_nested_tools_follow_the_rules_of_tools(nested_tools: list[dict[str, Any]]) -> None:
    assert unusable(approval(tool("outer"), nested=nested(nested_tools)))


@pytest.mark.parametrize("field", ["subagent_name", "task_id"])
def test_a_nested_pause_names_its_sub_agent_and_task(field: str) -> None:
    assert unusable(approval(tool("outer"), nested=nested([tool("n1")], **{field: ""})))
    assert unusable(ask(nested=nested([{"id": "n1", "name": "ask_user"}], **{field: None})))


def test_a_nested_question_echoes_its_one_nested_ask_user_tools_id() -> None:
    pause = read_ask(
        ask(
            request_id="outer-call",
            nested=nested([{"id": "child-ask", "name": "ask_user", "args": {}}]),
        )
    )
    assert (pause.id, pause.answer_id) == ("outer-call", "child-ask")


def test_a_question_that_is_not_nested_echoes_its_own_id() -> None:
    assert read_ask(ask(request_id="ask-7")).answer_id == "ask-7"


@pytest.mark.parametrize(
    "nested_tools",
    [
        [],
        [{"id": "n1", "name": "ask_user"}, {"id": "n2", "name": "ask_user"}],
        [{"id": "n1", "name": "kubectl"}],
        [{"name": "ask_user"}],
    ],
)
def test_a_nested_question_needs_exactly_one_nested_tool_named_ask_user_with_an_id(
    nested_tools: list[Any],
) -> None:
    assert unusable(ask(nested=nested(nested_tools)))


# --- the hint -----------------------------------------------------------------------


def test_the_hint_is_the_prompts_heading() -> None:
    assert read_approval(approval(hint="Delete /tmp/x?")).heading == "Delete /tmp/x?"
    assert read_ask(ask(hint="A few questions")).heading == "A few questions"


@pytest.mark.parametrize("hint", [None, "", "   "])
def test_without_a_hint_the_heading_is_the_default(hint: str | None) -> None:
    extra = {} if hint is None else {"hint": hint}
    assert (
        read_approval(approval(**extra)).heading
        == notices.NEEDS_APPROVAL
        == "The agent needs your approval"
    )
    assert read_ask(ask(**extra)).heading == notices.NEEDS_INPUT == "The agent needs your input"


def test_the_adk_hint_naming_tool_confirmation_is_dropped() -> None:
    assert read_approval(approval(hint=ADK_HINT)).heading == notices.NEEDS_APPROVAL


def test_a_hint_that_starts_like_adks_but_does_not_name_tool_confirmation_is_kept() -> None:
    hint = "Please approve or reject the tool call delete_file() before noon."
    assert read_approval(approval(hint=hint)).heading == hint


def test_the_hint_is_kept_to_one_line() -> None:
    assert read_approval(approval(hint="Delete\nthe  file?\x07")).heading == "Delete the file?"


def test_a_hint_that_is_not_text_is_unusable() -> None:
    assert unusable(approval(hint=["Delete?"]))
