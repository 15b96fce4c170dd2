"""The agent's Markdown, as Slack renders it, whole or as it streams.

Theory of operation: Slack renders standard Markdown in ``markdown_text``
and in markdown blocks (docs.slack.dev, "Markdown block": bold, italics,
links, lists, headings shown bold, quotes, inline code and code blocks; an
image becomes its link text), but not tables. So a pipe table (a run of
lines starting with ``|`` whose second line is a delimiter row such as
``|---|:--:|``) becomes a code block with its columns aligned; everything
else passes unchanged, and nothing inside a code block is touched.

``MarkdownStream`` converts text as it arrives and never takes back what it
gave out: a line that may be a code fence or a table row is held until it
is whole, and a table until its last row, so the output for any cut of the
input is the same as ``to_slack_markdown`` of the whole. What it holds is
plain JSON, so a function that takes a reply over continues the same
stream. ``open_code_block``, ``seam`` and ``cut_point`` let a reply spread
one text over several messages, closing a code block at the end of one and
opening it again at the start of the next.

Agent text must not command Slack. Slack reads ``<!here>``, ``<!channel>``,
``<!everyone>``, ``<!subteam^…>``, ``<@U…>`` and ``<#C…>`` as mentions
that notify people, and ``<url|label>`` as a link whose label hides its
address; it documents this for mrkdwn and says nothing for standard
Markdown, where ``<@U…>`` is observed to mention (research,
slack-agent-sessions §7). So every such ``<`` in the output is followed by
a word joiner (U+2060): the text reads the same and commands nothing
(``neutralise``). The stream holds a ``<`` until what follows it decides.
A notification's fallback ``text`` is mrkdwn, where Slack's documented rule
applies: ``&``, ``<`` and ``>`` are sent as entities (``escape_mrkdwn``).
"""

from __future__ import annotations

import re
from typing import Any

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})([^\n]*)$")
_DELIMITER_ROW = re.compile(r"^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$")
_CELL_SEPARATOR = re.compile(r"(?<!\\)\|")

WORD_JOINER = "\u2060"
_SLACK_COMMAND = re.compile(
    r"<(?=!(?i:here|channel|everyone|subteam\^)|[@#]|[A-Za-z][A-Za-z0-9+.-]*:[^\s<>|]*\|)"
)
"""A ``<`` that Slack would read as the start of a mention or a labelled link."""
_KEYWORDS = ("!here", "!channel", "!everyone", "!subteam^")
_MAYBE_LINK = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*(?::[^\s<>|]*)?")


def neutralise(text: str) -> str:
    """``text`` with every Slack mention or labelled link made plain text (see above)."""
    return _SLACK_COMMAND.sub("<" + WORD_JOINER, text)


def escape_mrkdwn(text: str) -> str:
    """``text`` for a mrkdwn field (a fallback ``text``): shown as written, commanding nothing."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _undecided_tail(text: str) -> int:
    """Where the part of ``text`` whose neutralising depends on what follows starts."""
    start = text.rfind("<")
    if start < 0:
        return len(text)
    tail = text[start + 1 :]
    could_command = (
        not tail
        or any(
            keyword.startswith(tail.lower()) and keyword != tail.lower() for keyword in _KEYWORDS
        )
        or _MAYBE_LINK.fullmatch(tail) is not None
    )
    return start if could_command else len(text)


def to_slack_markdown(text: str) -> str:
    """The whole of ``text``, rewritten where Slack would not render it."""
    stream = MarkdownStream()
    return stream.feed(text) + stream.flush()


class MarkdownStream:
    """Converts Markdown as it streams in, holding only what is still undecided."""

    def __init__(self) -> None:
        """Start at the beginning of a text."""
        self._held = ""
        """Input from the start of a line that cannot be given out yet."""
        self._mid_line = False
        """Whether the current line was already given out in part (as plain text)."""
        self._fence: str | None = None
        """The opening fence line of the code block the output is in, if any."""
        self._undecided = ""
        """Output that ends with a ``<`` whose neutralising is not decided yet."""

    def feed(self, text: str) -> str:
        """Take more input; return the output that is decided."""
        self._held += text
        return self._neutralised(self._drain(final=False), final=False)

    def flush(self) -> str:
        """The input has ended (for now): give out everything held."""
        return self._neutralised(self._drain(final=True), final=True)

    def to_state(self) -> dict[str, Any]:
        """A JSON-able form, read back by ``from_state``."""
        return {
            "held": self._held,
            "mid_line": self._mid_line,
            "fence": self._fence,
            "undecided": self._undecided,
        }

    @classmethod
    def from_state(cls, state: dict[str, Any]) -> MarkdownStream:
        """The stream ``to_state`` wrote."""
        stream = cls()
        stream._held, stream._mid_line, stream._fence = (
            state["held"],
            state["mid_line"],
            state["fence"],
        )
        stream._undecided = state.get("undecided", "")
        return stream

    def _neutralised(self, output: str, final: bool) -> str:
        output = self._undecided + output
        cut = len(output) if final else _undecided_tail(output)
        self._undecided = output[cut:]
        return neutralise(output[:cut])

    def _drain(self, final: bool) -> str:
        out: list[str] = []
        while self._held:
            if self._mid_line:
                out.append(self._take_plain())
                continue
            kind = self._line_kind(final)
            if kind == "undecided":
                break
            if kind == "plain":
                out.append(self._take_plain())
            elif kind == "fence":
                line, self._held = _split_line(self._held)
                self._fence = _next_fence_state(self._fence, line)
                out.append(line)
            else:
                table = self._take_table(final)
                if table is None:
                    break
                out.append(table)
        return "".join(out)

    def _line_kind(self, final: bool) -> str:
        """What the held line is: plain, fence, table (or undecided yet)."""
        line_end = self._held.find("\n")
        start = self._held if line_end < 0 else self._held[:line_end]
        stripped = start.lstrip(" ")
        if not stripped and line_end < 0 and len(start) < 4 and not final:
            return "undecided"
        if stripped[:1] in ("`", "~") and len(start) - len(stripped) < 4:
            if line_end < 0 and not final:
                return "undecided"
            return "fence" if _next_fence_state(self._fence, start) != self._fence else "plain"
        if stripped[:1] == "|" and self._fence is None and len(start) - len(stripped) < 4:
            return "table"
        return "plain"

    def _take_plain(self) -> str:
        """Give out the held text up to the end of its line."""
        line_end = self._held.find("\n")
        if line_end < 0:
            text, self._held = self._held, ""
            self._mid_line = True
            return text
        text, self._held = self._held[: line_end + 1], self._held[line_end + 1 :]
        self._mid_line = False
        return text

    def _take_table(self, final: bool) -> str | None:
        """A run of ``|`` lines: a table once its end is seen, else plain lines.

        Returns None while the run may still be a table and its end is not in
        the held text yet.
        """
        lines = self._held.split("\n")
        run: list[str] = []
        for index, line in enumerate(lines):
            is_last_piece = index == len(lines) - 1
            indent = len(line) - len(line.lstrip(" "))
            is_row = indent < 4 and line.lstrip(" ").startswith("|")
            if is_last_piece and not final and (is_row or (indent < 4 and not line.strip(" "))):
                return None  # the next line has not started, or may be a row still arriving
            if not is_row or (is_last_piece and line == ""):
                break  # a line indented four spaces is code, never a row
            run.append(line)
            if len(run) == 2 and not _DELIMITER_ROW.match(run[1]):
                break
        if len(run) < 2 or not _DELIMITER_ROW.match(run[1]):
            return self._take_plain()
        consumed = sum(len(line) + 1 for line in run)
        ends_with_newline = consumed <= len(self._held)
        self._held = self._held[consumed:] if ends_with_newline else ""
        return _render_table(run, ends_with_newline)


def open_code_block(text: str) -> str | None:
    """The opening fence line of the code block still open at the end of ``text``."""
    fence: str | None = None
    for line in text.split("\n"):
        fence = _next_fence_state(fence, line)
    return fence


def seam(text_before: str) -> tuple[str, str]:
    """What closes a message that ends with ``text_before``, and what opens the next.

    Both are empty unless a code block is open at that point: then the first
    closes it and the second opens it again with the same fence line.
    """
    fence = open_code_block(text_before)
    if fence is None:
        return "", ""
    marker = re.match(r"^ {0,3}(`{3,}|~{3,})", fence)
    assert marker is not None
    newline = "" if text_before.endswith("\n") or not text_before else "\n"
    return f"{newline}{marker.group(1)}", f"{fence.strip()}\n"


def cut_point(text: str, room: int, used: int = 0) -> int:
    """How much of ``text`` to put in a message of ``room`` characters that holds ``used``.

    All of it when it fits; else up to the end of a line in the second half
    of the message, so a message rarely ends mid-sentence; else nothing when
    the message is already half full (the rest starts a new one); else as
    much as fits.
    """
    left = room - used
    if len(text) <= left:
        return len(text)
    line_end = text.rfind("\n", 0, left)
    if line_end >= 0 and used + line_end + 1 > room // 2:
        return line_end + 1
    return 0 if used > room // 2 else left


def _split_line(text: str) -> tuple[str, str]:
    line_end = text.find("\n")
    return (text, "") if line_end < 0 else (text[: line_end + 1], text[line_end + 1 :])


def _next_fence_state(fence: str | None, line: str) -> str | None:
    """The open fence after ``line`` (without its newline), given the one before."""
    match = _FENCE.match(line.rstrip("\n"))
    if match is None:
        return fence
    marker, info = match.groups()
    if fence is None:
        if marker[0] == "`" and "`" in info:
            return None  # not a fence: an inline code span
        return line.rstrip("\n")
    opening = re.match(r"^ {0,3}(`{3,}|~{3,})", fence)
    assert opening is not None
    opener = opening.group(1)
    closes = marker[0] == opener[0] and len(marker) >= len(opener) and not info.strip()
    return None if closes else fence


def _render_table(rows: list[str], ends_with_newline: bool) -> str:
    """A pipe table as a code block, columns aligned, the delimiter row redrawn."""
    cells = [_cells(row) for index, row in enumerate(rows) if index != 1]
    columns = max(len(row) for row in cells)
    cells = [row + [""] * (columns - len(row)) for row in cells]
    widths = [max(len(row[column]) for row in cells) for column in range(columns)]
    lines = [
        " | ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in cells
    ]
    lines.insert(1, "-+-".join("-" * width for width in widths))
    return "```\n" + "\n".join(lines) + "\n```" + ("\n" if ends_with_newline else "")


def _cells(row: str) -> list[str]:
    inner = row.strip()
    inner = inner.removeprefix("|")
    inner = inner[:-1] if inner.endswith("|") and not inner.endswith("\\|") else inner
    return [cell.strip().replace("\\|", "|") for cell in _CELL_SEPARATOR.split(inner)]
