"""The agent's Markdown as Slack will render it, whole or streamed in any pieces."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from shared.slack.markdown import (
    WORD_JOINER,
    MarkdownStream,
    cut_point,
    escape_mrkdwn,
    neutralise,
    open_code_block,
    seam,
    to_slack_markdown,
)

TABLE = "| Name | Words |\n|:-----|------:|\n| short | 2 |\n| a longer name | 12 |\n"
TABLE_AS_CODE = (
    "```\n"
    "Name          | Words\n"
    "--------------+------\n"
    "short         | 2\n"
    "a longer name | 12\n"
    "```\n"
)

# Lines that exercise every decision: tables, fences of both kinds, pipes and
# backticks that are neither, indentation, blank lines.
LINES = st.sampled_from(
    [
        "plain text with a | pipe",
        "| a | b |",
        "|---|---|",
        "| 1 | 2 |",
        "```",
        "```python",
        "~~~",
        "`inline` code",
        "```not a fence```",
        "    | indented, not a table",
        "  ```",
        "# Heading",
        "![a chart](https://example.com/chart.png)",
        "ping <!here> and <@U0BOB> at <https://evil.example|this page>, List<int>",
        "<!channel",
        "<",
        "",
    ]
)


def test_a_table_becomes_an_aligned_code_block_and_the_rest_is_kept() -> None:
    text = f"# Results\nThe counts:\n{TABLE}That is all | really."

    assert (
        to_slack_markdown(text) == f"# Results\nThe counts:\n{TABLE_AS_CODE}That is all | really."
    )


def test_nothing_inside_a_code_block_is_rewritten() -> None:
    text = f"```\n{TABLE}```\n~~~md\n{TABLE}~~~\n"

    assert to_slack_markdown(text) == text


def test_pipe_lines_without_a_delimiter_row_are_not_a_table() -> None:
    text = "| not | a table |\n| just | pipes |\n"

    assert to_slack_markdown(text) == text


@settings(max_examples=400)
@given(st.lists(LINES, max_size=10), st.booleans(), st.data())
def test_streamed_in_any_pieces_the_output_is_the_same_as_for_the_whole(
    lines: list[str], ends_a_line: bool, data: st.DataObject
) -> None:
    text = "\n".join(lines) + ("\n" if ends_a_line else "")
    cuts = sorted(data.draw(st.lists(st.integers(0, len(text)), max_size=12)))
    pieces = [text[start:end] for start, end in zip([0, *cuts], [*cuts, len(text)])]

    stream = MarkdownStream()
    streamed = "".join(stream.feed(piece) for piece in pieces) + stream.flush()

    assert streamed == to_slack_markdown(text)


def test_a_line_indented_four_spaces_ends_a_table_wherever_the_stream_is_cut() -> None:
    # Found by the property above: the whole text and a stream cut inside the
    # indentation read the indented line differently.
    text = "| a | b |\n|---|---|\n    | indented, not a table"
    for cut in range(len(text) + 1):
        stream = MarkdownStream()
        streamed = stream.feed(text[:cut]) + stream.feed(text[cut:]) + stream.flush()
        assert streamed == to_slack_markdown(text), cut
    assert to_slack_markdown(text).endswith("```\n    | indented, not a table")


def test_a_fence_line_cut_in_two_still_opens_a_code_block() -> None:
    stream = MarkdownStream()
    pieces = ["``", "`python\n| a | b |\n|---|", "---|\n"]

    streamed = "".join(stream.feed(piece) for piece in pieces) + stream.flush()

    assert streamed == "```python\n| a | b |\n|---|---|\n"


@given(st.lists(LINES, max_size=14), st.data())
def test_a_stream_carried_over_in_its_state_gives_the_same_output(
    lines: list[str], data: st.DataObject
) -> None:
    text = "\n".join(lines)
    cut = data.draw(st.integers(0, len(text)))

    first = MarkdownStream()
    before = first.feed(text[:cut])
    second = MarkdownStream.from_state(first.to_state())

    assert before + second.feed(text[cut:]) + second.flush() == to_slack_markdown(text)


def test_the_open_code_block_is_closed_at_a_seam_and_opened_again_after_it() -> None:
    assert open_code_block("text\n```python\nx = 1\n") == "```python"
    assert open_code_block("```python\nx = 1\n```\n") is None
    assert seam("intro\n````js\nlet a\n") == ("````", "````js\n")
    assert seam("intro\n~~~\nmid-line") == ("\n~~~", "~~~\n")
    assert seam("no code here\n") == ("", "")


def test_a_cut_falls_at_a_line_end_in_the_second_half_of_the_message() -> None:
    text = "a" * 30 + "\n" + "b" * 30 + "\n" + "c" * 60

    assert cut_point(text, 100) == 62
    assert cut_point(text, 100, used=50) == 31
    assert cut_point("x" * 80, 100, used=60) == 0, "better a new message than a cut word"
    assert cut_point("x" * 80, 100, used=20) == 80
    assert cut_point("x" * 200, 100) == 100


def test_mentions_and_labelled_links_are_broken_and_other_angle_brackets_kept() -> None:
    text = "<!here> <!Channel|c> <!everyone> <!subteam^S1> <@U1> <#C1> <mailto:a@b.c|mail> "
    text += "<https://x.example> a<b List<int> <!-- note --> <!date^1|d>"

    assert neutralise(text) == (
        "<\u2060!here> <\u2060!Channel|c> <\u2060!everyone> <\u2060!subteam^S1> <\u2060@U1>"
        " <\u2060#C1> <\u2060mailto:a@b.c|mail> <https://x.example> a<b List<int> <!-- note -->"
        " <!date^1|d>"
    )
    assert to_slack_markdown("```\n<!here>\n```\n") == f"```\n<{WORD_JOINER}!here>\n```\n"


def test_a_fallback_text_is_sent_with_slacks_entities() -> None:
    assert escape_mrkdwn("a <!here> & <b>") == "a &lt;!here&gt; &amp; &lt;b&gt;"


def test_a_less_than_sign_at_the_end_of_a_piece_waits_for_what_follows() -> None:
    stream = MarkdownStream()

    assert stream.feed("ping <") == "ping "
    assert stream.feed("!he") == ""
    assert stream.feed("re> now") == f"<{WORD_JOINER}!here> now"
    assert stream.feed(" <") + stream.flush() == " <"
