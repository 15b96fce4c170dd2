"""Table tests of a reply's step cards (pure, no I/O): what each card shows.

Each row plays a sequence of step events (``start``, ``finish``, ``close``)
on a fresh ``StepCards`` and names the steps after it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest

from shared.core.step_cards import RUNNING, StepCards, summarize, task_update

Event = tuple[Any, ...]


@dataclass(frozen=True)
class Row:
    name: str
    events: tuple[Event, ...]
    expected: dict[str, dict[str, Any]]


def play(cards: StepCards, events: tuple[Event, ...]) -> None:
    for kind, *args in events:
        if kind == "start":
            cards.start(*args)
        elif kind == "finish":
            cards.finish(*args)
        else:
            cards.close_unfinished(*args)


ROWS = [
    Row(
        "a call shows its step running, with its arguments as details",
        (("start", "c1", "search", '{"q": "x"}'),),
        {"c1": {"title": "search", "status": RUNNING, "details": '{"q": "x"}'}},
    ),
    Row(
        "its result finishes it, well or failed",
        (("start", "c1", "search", ""), ("finish", "c1", "search", False, "boom")),
        {"c1": {"title": "search", "status": "error", "details": None, "output": "boom"}},
    ),
    Row(
        "a result whose call never came is a step of its own",
        (("finish", "c1", "search", True, ""),),
        {"c1": {"title": "search", "status": "complete", "details": None, "output": None}},
    ),
    Row(
        "the reply ends: a step still running is closed, a finished one stays",
        (
            ("start", "c1", "search", ""),
            ("start", "c2", "fetch", ""),
            ("finish", "c2", "fetch", True, "ok"),
            ("close", "error", "No result"),
        ),
        {
            "c1": {"title": "search", "status": "error", "details": None, "output": "No result"},
            "c2": {"title": "fetch", "status": "complete", "details": None, "output": "ok"},
        },
    ),
]


@pytest.mark.parametrize("row", ROWS, ids=[row.name for row in ROWS])
def test_step_cards(row: Row) -> None:
    cards = StepCards()
    play(cards, row.events)
    assert cards.steps == row.expected
    back = StepCards.from_state(json.loads(json.dumps(cards.to_state())))
    assert back.steps == row.expected


def test_a_task_update_carries_only_what_the_step_says() -> None:
    assert task_update("c1", {"title": "t", "status": RUNNING, "details": None}) == {
        "type": "task_update",
        "id": "c1",
        "title": "t",
        "status": RUNNING,
    }
    assert task_update("c1", {"title": "t", "status": "complete", "output": "done"})["output"] == (
        "done"
    )


def test_a_summary_is_one_short_line_without_secrets() -> None:
    assert summarize(None) == ""
    assert summarize("a\n  b") == "a b"
    assert summarize({"q": 1}) == '{"q": 1}'
    assert summarize("x" * 300, limit=10) == "x" * 9 + "…"
    assert "hunter2" not in summarize({"password": "hunter2"})
