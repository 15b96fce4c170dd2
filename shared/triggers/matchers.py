"""Label matchers in Alertmanager's syntax: ``name=value``, ``!=``, ``=~`` and ``!~``.

A trigger's matchers keep the alerts whose labels match every one of them;
a label an alert lacks reads as the empty string, and a regular expression
must match the whole value, as in Alertmanager.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

_MATCHER = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(=~|!~|!=|=)\s*(.*?)\s*$")

Operator = Literal["=", "!=", "=~", "!~"]
_OPERATORS: dict[str, Operator] = {"=": "=", "!=": "!=", "=~": "=~", "!~": "!~"}


@dataclass(frozen=True)
class Matcher:
    """One condition on one label."""

    label: str
    operator: Operator
    value: str

    def matches(self, labels: Mapping[str, str]) -> bool:
        """Whether ``labels`` satisfy this condition."""
        actual = labels.get(self.label, "")
        if self.operator == "=":
            return actual == self.value
        if self.operator == "!=":
            return actual != self.value
        found = re.fullmatch(self.value, actual) is not None
        return found if self.operator == "=~" else not found


def parse_matcher(text: str) -> Matcher:
    """``severity=~critical|warning`` -> Matcher; ValueError naming what is wrong."""
    match = _MATCHER.match(text)
    if match is None:
        raise ValueError(
            f"{text!r} is not a matcher like severity=critical, env!=dev or team=~db|web"
        )
    label, operator, value = match.groups()
    if len(value) >= 2 and value[0] == value[-1] == '"':
        value = value[1:-1]
    if operator in ("=~", "!~"):
        try:
            re.compile(value)
        except re.error as error:
            raise ValueError(f"{text!r}: not a regular expression: {error}") from None
    return Matcher(label, _OPERATORS[operator], value)


def all_match(matchers: tuple[Matcher, ...], labels: Mapping[str, str]) -> bool:
    """Whether ``labels`` satisfy every matcher (no matchers: always)."""
    return all(m.matches(labels) for m in matchers)
