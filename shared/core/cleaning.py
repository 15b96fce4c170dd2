"""Whether a tool call can be shown to an approver exactly, and how it is written.

Theory of operation. An approver decides on what a tool will run, so a tool
call is shown exactly as the agent sent it, apart from redacted secrets, or
the pause is unusable (agent contract, notes for an agent author). Each kind
of text has its own rule:

- A *name* (a tool's, a sub-agent's) or a *key* (of an object anywhere in
  the arguments) must already be clean: cleaning must leave it unchanged.
  Cleaning is Unicode NFC, then dropping format characters (category Cf:
  zero-width spaces and joiners, bidirectional controls, the byte order
  mark, soft hyphens), then turning every run of whitespace (any Unicode
  space, tab or line end) into one space, then trimming. So a name or key
  with leading, trailing or repeated spaces, a tab, a line end, a no-break
  space, a zero-width or bidirectional character, or a decomposed accent is
  unusable. A name must also be printable ASCII, 300 characters at most,
  which the audit log writes whole.
- A *string* (any text: names, keys, argument values, questions, choices)
  must hold no control character other than tab, line feed and carriage
  return (category Cc), and no lone surrogate, which cannot be sent on.
- A *number* must be finite, and below 2^53 in magnitude: JSON readers that
  use doubles (the agent's SDK, the approver's Slack client) would show or
  run another integer.

Arguments are shown as indented JSON. Characters an approver could not see
(format characters, spaces other than U+0020, line and paragraph separators,
private-use and unassigned code points) are written there as JSON escapes
such as ``\\u200b``, so what is shown is exact. Lengths are counted as Slack
counts them, in UTF-16 code units.
"""

from __future__ import annotations

import json
import math
import unicodedata
from collections.abc import Mapping
from typing import Any

MAX_NAME_CHARS = 300
"""The longest name the audit log writes whole."""
MAX_SAFE_INTEGER = 2**53
"""The first integer a double cannot tell from its neighbour."""
MAX_DEPTH = 64
"""Arguments nested deeper than this cannot be shown in one message anyway."""

_LINE_CONTROLS = frozenset("\t\n\r")
_INVISIBLE_CATEGORIES = frozenset({"Cf", "Zl", "Zp", "Co", "Cn"})


def slack_length(text: str) -> int:
    """The length of ``text`` as Slack counts it (UTF-16 code units)."""
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def cleaned(text: str) -> str:
    """``text`` after cleaning: NFC, no format characters, single spaces, trimmed."""
    visible = "".join(ch for ch in text if unicodedata.category(ch) != "Cf")
    return " ".join(unicodedata.normalize("NFC", visible).split())


def one_line(text: str) -> str:
    """Display text for a heading: cleaned, with control characters and surrogates dropped."""
    kept = "".join(
        ch for ch in text if ch.isspace() or unicodedata.category(ch) not in ("Cc", "Cs")
    )
    return cleaned(kept)


def string_problem(text: str) -> str | None:
    """Why ``text`` cannot be shown exactly, or None."""
    for ch in text:
        category = unicodedata.category(ch)
        if category == "Cc" and ch not in _LINE_CONTROLS:
            return f"a control character U+{ord(ch):04X}"
        if category == "Cs":
            return f"a lone surrogate U+{ord(ch):04X}"
    return None


def key_problem(key: str) -> str | None:
    """Why an object key cannot be shown exactly, or None."""
    return string_problem(key) or (
        "characters or spacing that cleaning would change" if cleaned(key) != key else None
    )


def name_problem(name: str) -> str | None:
    """Why a tool's or sub-agent's name cannot be shown and audited exactly, or None."""
    if not name:
        return "no name"
    problem = key_problem(name)
    if problem is not None:
        return problem
    if not name.isascii():
        return "characters outside ASCII"
    if len(name) > MAX_NAME_CHARS:
        return f"more than {MAX_NAME_CHARS} characters"
    return None


def value_problem(value: Any, where: str, depth: int = 0) -> str | None:
    """Why a JSON value (arguments) cannot be shown exactly, or None.

    Args:
        value: Any JSON value, nested.
        where: Its path, for the reason (e.g. ``tools[0].args``).
        depth: How deep ``value`` sits in the arguments.

    Returns:
        The first problem found, naming the path but never the value.
    """
    if depth > MAX_DEPTH:
        return f"{where}: nested more than {MAX_DEPTH} levels deep"
    if isinstance(value, Mapping):
        for key, item in value.items():
            if not isinstance(key, str):
                return f"{where}: a key that is not a string"
            problem = key_problem(key)
            if problem is not None:
                return f"{where}: a key with {problem}"
            problem = value_problem(item, f"{where}.{key}", depth + 1)
            if problem is not None:
                return problem
        return None
    if isinstance(value, list | tuple):
        for index, item in enumerate(value):
            problem = value_problem(item, f"{where}[{index}]", depth + 1)
            if problem is not None:
                return problem
        return None
    if isinstance(value, str):
        problem = string_problem(value)
        return None if problem is None else f"{where}: a string with {problem}"
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        if isinstance(value, float) and not math.isfinite(value):
            return f"{where}: a number that is not finite"
        if abs(value) >= MAX_SAFE_INTEGER:
            return f"{where}: an integer of magnitude 2^53 or more"
        return None
    return f"{where}: a value that is not JSON"


def shown_json(value: Any) -> str:
    """``value`` as indented JSON, with every invisible character written as an escape."""
    text = json.dumps(value, indent=2, ensure_ascii=False)
    return "".join(_escaped(ch) if _invisible(ch) else ch for ch in text)


def _invisible(ch: str) -> bool:
    category = unicodedata.category(ch)
    return category in _INVISIBLE_CATEGORIES or (category == "Zs" and ch != " ")


def _escaped(ch: str) -> str:
    code = ord(ch)
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
