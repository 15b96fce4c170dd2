"""Session identity: the incarnation a session is bound to, and the check before each send."""

from __future__ import annotations

import pytest

from shared.core.incarnation import Bound, check, incarnation

NOW = incarnation("sre", "kagent-v1", "http://kagent/agents/k8s/sre", "card-a")


@pytest.mark.parametrize(
    "changed",
    [
        ("ops", "kagent-v1", "http://kagent/agents/k8s/sre", "card-a"),
        ("sre", "a2a", "http://kagent/agents/k8s/sre", "card-a"),
        ("sre", "kagent-v1", "http://kagent/agents/k8s/ops", "card-a"),
        ("sre", "kagent-v1", "http://kagent/agents/k8s/sre", "card-b"),
    ],
    ids=["binding", "dialect", "endpoint", "agent"],
)
def test_each_part_of_the_incarnation_names_another_one(changed: tuple[str, ...]) -> None:
    assert incarnation(*changed) != NOW


def test_the_parts_cannot_be_shifted_into_one_another() -> None:
    assert incarnation("a|b", "c", "d", "e") != incarnation("a", "b|c", "d", "e")


@pytest.mark.parametrize(
    ("bound_to", "has_context", "expected"),
    [
        (NOW, True, Bound.SAME),
        (NOW, False, Bound.SAME),
        (None, False, Bound.NEW),
        ("another", False, Bound.NEW),  # no conversation to lose
        ("another", True, Bound.CHANGED),
        (None, True, Bound.LEGACY),  # written before sessions were bound
    ],
)
def test_how_a_session_stands_to_the_current_incarnation(
    bound_to: str | None, has_context: bool, expected: Bound
) -> None:
    assert check(bound_to, has_context, NOW) is expected
