"""Table tests of a reply's step cards (pure, no I/O): what each card shows.

Each row plays a sequence of step events (``start``, ``finish``, ``close``)
on a fresh ``StepCards`` and names the steps after it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest

from shared.core.step_cards import (
    CONTINUED,
    CONTINUED_BELOW,
    RUNNING,
    Shown,
    StepCards,
    is_final,
    read_shown,
    shown_json,
    summarize,
    task_update,
)

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


# Across a take-over -------------------------------------------------------------


SHOWN_FINAL = {
    "type": "task_update",
    "id": "c1",
    "title": "search",
    "status": "error",
    "output": "A",
}
SHOWN_RUNNING = {"type": "task_update", "id": "c2", "title": "fetch", "status": RUNNING}


def test_a_step_a_function_that_died_showed_final_keeps_that_state() -> None:
    record = {
        "c1": {"ts": "1.0", "update": SHOWN_FINAL},
        "c2": {"ts": "1.0", "update": SHOWN_RUNNING},
        "c3": "0.5",  # the record of the release before: the ts alone
    }
    shown = read_shown(json.loads(json.dumps(record)))
    assert shown == {
        "c1": Shown("1.0", SHOWN_FINAL),
        "c2": Shown("1.0", SHOWN_RUNNING),
        "c3": Shown("0.5"),
    }
    assert [shown[key].final for key in ("c1", "c2", "c3")] == [True, False, True]
    assert read_shown(shown_json(shown)) == {**shown, "c3": Shown("0.5", None)}
    cards = StepCards()
    cards.start("c1", "search", "")
    cards.taken_over(shown)
    assert task_update("c1", cards.steps["c1"]) == SHOWN_FINAL
    assert not cards.finish("c1", "search", True, "B")  # its first result was the one shown
    assert not cards.start("c1", "search", "")  # nor is it shown running again
    assert task_update("c1", cards.steps["c1"]) == SHOWN_FINAL
    # Running, unknown to the checkpoint: it runs here too, so the reply closes it at its end.
    assert cards.steps["c2"] == {"title": "fetch", "status": RUNNING, "details": None}
    assert cards.start("c2", "fetch", "")  # its call shows it again when it comes
    cards.close_unfinished("error", "none")
    assert cards.steps["c2"]["status"] == "error"


def test_a_step_closed_to_continue_elsewhere_is_not_final() -> None:
    closed = {**SHOWN_RUNNING, "status": "complete", "output": CONTINUED}
    assert not is_final(closed)
    assert not is_final({**closed, "output": CONTINUED_BELOW})
    assert is_final(SHOWN_FINAL)
