"""Alertmanager-style label matchers."""

from __future__ import annotations

import pytest

from shared.triggers.matchers import all_match, parse_matcher

LABELS = {"severity": "critical", "env": "prod", "team": "payments"}


@pytest.mark.parametrize(
    ("matcher", "matches"),
    [
        ("severity=critical", True),
        ("severity=warning", False),
        ("env!=dev", True),
        ("env!=prod", False),
        ("severity=~critical|warning", True),
        ("severity=~crit", False),  # the whole value must match
        ("team!~pay.*", False),
        ("region=", True),  # a missing label is the empty string
        ('team="payments"', True),
    ],
)
def test_a_matcher_reads_like_alertmanagers(matcher: str, matches: bool) -> None:
    assert parse_matcher(matcher).matches(LABELS) is matches


def test_every_matcher_must_match() -> None:
    matchers = (parse_matcher("env=prod"), parse_matcher("severity=warning"))
    assert not all_match(matchers, LABELS)
    assert all_match((), LABELS)


@pytest.mark.parametrize("text", ["severity", "=x", "se v=x", "a=~("])
def test_a_bad_matcher_is_refused_with_what_a_good_one_looks_like(text: str) -> None:
    with pytest.raises(ValueError, match="matcher|regular expression"):
        parse_matcher(text)
