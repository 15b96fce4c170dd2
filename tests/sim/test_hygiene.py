"""Hygiene at quiescence: once every turn has ended, no question is left open or answering,
and no session still holds a turn (a sweep releases one whose carrier died)."""

from __future__ import annotations

import pytest

from local.sim.run import run_seed


def test_a_history_whose_questions_are_never_closed_breaks_the_hygiene_rule(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from shared.questions import QuestionStore

    assert not [v for v in run_seed(1).violations if v.code == "L hygiene"]
    monkeypatch.setattr(QuestionStore, "close_all", lambda self, turn_id: None)
    monkeypatch.setattr(QuestionStore, "close", lambda self, key: None)
    left = [v.detail for v in run_seed(1).violations if v.code == "L hygiene"]
    assert left
    assert all(detail.startswith("question ") for detail in left)
