"""Which parts are tool calls and results: the first rules of "Tool calls and results"."""

from __future__ import annotations

from typing import Any

import pytest

from shared.core.model import DataPart, FilePart, TextPart
from shared.core.tool_parts import TOOL_PART_KEYS, ToolPart, ToolPartKind, read_tool_part


@pytest.mark.parametrize("key", TOOL_PART_KEYS)
@pytest.mark.parametrize("kind", ["function_call", "function_response"])
def test_a_data_part_is_a_tool_part_when_its_metadata_holds_exactly_one_of_the_keys(
    key: str, kind: str
) -> None:
    part = read_tool_part(DataPart({"name": "search", "id": "c1"}, {key: kind, "other": "kept"}))
    assert part is not None and part.kind is ToolPartKind(kind)


def test_a_part_that_holds_two_of_the_keys_stays_unread() -> None:
    metadata = {"adk_type": "function_call", "kagent_type": "function_call"}
    assert read_tool_part(DataPart({"name": "search"}, metadata)) is None


@pytest.mark.parametrize(
    "value", ["tool_call", "tool_response", "executable_code", "code_execution_result"]
)
def test_adks_other_types_stay_unread(value: str) -> None:
    assert read_tool_part(DataPart({"name": "search"}, {"adk_type": value})) is None


@pytest.mark.parametrize(
    "value", [True, ["function_call"], {"type": "function_call"}, "FUNCTION_CALL"]
)
def test_the_key_must_hold_the_string_function_call_or_function_response(value: Any) -> None:
    assert read_tool_part(DataPart({"name": "search"}, {"adk_type": value})) is None


@pytest.mark.parametrize(
    "data", [{}, {"name": ""}, {"name": 7}, {"name": None}, ["search"], "search", None]
)
def test_the_data_must_be_an_object_with_a_non_empty_string_name(data: Any) -> None:
    assert read_tool_part(DataPart(data, {"adk_type": "function_call"})) is None


def test_only_data_parts_are_tool_parts() -> None:
    assert read_tool_part(TextPart("search", {"adk_type": "function_call"})) is None
    assert read_tool_part(FilePart({"adk_type": "function_call"})) is None


def test_its_id_is_the_calls_id_and_a_calls_args_and_a_results_response_are_read() -> None:
    tool_call = read_tool_part(
        DataPart({"name": "search", "id": "c1", "args": {"q": "x"}}, {"adk_type": "function_call"})
    )
    tool_result = read_tool_part(
        DataPart(
            {"name": "search", "id": "c1", "response": {"hits": 3}},
            {"kagent_type": "function_response"},
        )
    )
    assert tool_call is not None and (tool_call.call_id, tool_call.name, tool_call.args) == (
        "c1",
        "search",
        {"q": "x"},
    )
    assert tool_result is not None and (tool_result.call_id, tool_result.response) == (
        "c1",
        {"hits": 3},
    )


@pytest.mark.parametrize("call_id", [None, "", 12])
def test_a_part_without_a_string_id_has_no_call_id(call_id: Any) -> None:
    part = read_tool_part(
        DataPart({"name": "search", "id": call_id}, {"adk_type": "function_call"})
    )
    assert part is not None and part.call_id is None


@pytest.mark.parametrize(
    ("response", "failed"),
    [
        ({"error": "disk full"}, True),
        ({"error": {"code": 5}}, True),
        ({"isError": True, "content": []}, True),
        ({"error": ""}, False),
        ({"error": None}, False),
        ({"error": {}}, False),
        ({"isError": False}, False),
        ({"isError": "true"}, False),
        ({"result": "ok"}, False),
        ("error", False),
        (None, False),
    ],
)
def test_a_result_fails_when_it_has_an_error_that_holds_something_or_is_error_true(
    response: Any, failed: bool
) -> None:
    part = ToolPart(ToolPartKind.RESULT, {"name": "search", "id": "c1", "response": response})
    assert part.failed is failed


def test_parts_that_say_the_same_share_a_fingerprint_even_when_a_store_made_numbers_floats() -> (
    None
):
    streamed = ToolPart(
        ToolPartKind.CALL, {"name": "add", "id": "c1", "args": {"a": 1, "b": [2, 3.5]}}
    )
    stored = ToolPart(
        ToolPartKind.CALL, {"args": {"b": [2.0, 3.5], "a": 1.0}, "id": "c1", "name": "add"}
    )
    other = ToolPart(
        ToolPartKind.CALL, {"name": "add", "id": "c1", "args": {"a": 2, "b": [2, 3.5]}}
    )
    assert streamed.fingerprint == stored.fingerprint != other.fingerprint
    assert ToolPart(ToolPartKind.RESULT, streamed.data).fingerprint != streamed.fingerprint
