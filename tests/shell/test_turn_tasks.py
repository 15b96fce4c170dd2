"""The tasks that carry a turn on: their names, bodies and a refused name (in-process).

The stack test ``tests/faults/test_task_names.py`` shows a refused name
against the Cloud Tasks emulator; these show the names and bodies the
``timeout`` and ``stream_follow`` functions read, on a queue that records.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

import pytest

from shared.core.timers import QuestionTimer, WaitTimer
from shared.errors import TaskNameRefused
from shared.ports import TaskTarget
from shared.turn_tasks import TurnTasks


class RecordingQueue:
    """Cloud Tasks' name de-duplication, and what was scheduled."""

    def __init__(self) -> None:
        self.scheduled: list[tuple[TaskTarget, dict[str, Any], str | None, datetime | None]] = []

    def schedule(
        self,
        target: TaskTarget,
        body: Mapping[str, Any],
        *,
        name: str | None = None,
        at: datetime | None = None,
    ) -> bool:
        if any(name == seen for _, _, seen, _ in self.scheduled):
            return False
        self.scheduled.append((target, dict(body), name, at))
        return True


AT = datetime(2026, 12, 2, 4, 0, tzinfo=UTC)


def test_a_hand_over_and_a_timer_are_named_by_the_turn_the_generation_and_the_timer() -> None:
    queue = RecordingQueue()
    tasks = TurnTasks(queue, "C1-100.1", "C1-100.2")
    tasks.follow(2)
    tasks.wake(WaitTimer(5), 3, AT)
    tasks.wake(QuestionTimer("q7"), 4, AT)
    body = {"session_id": "C1-100.1", "turn_id": "C1-100.2"}
    assert queue.scheduled == [
        ("stream_follow", {**body, "generation": 2}, "C1-100_2-follow-2", None),
        ("timeout", {**body, "generation": 3, "timer": "wait-5"}, "C1-100_2-wait-5-3", AT),
        (
            "timeout",
            {**body, "generation": 4, "timer": "question-q7"},
            "C1-100_2-question-q7-4",
            AT,
        ),
    ]


def test_a_name_a_task_holds_already_is_an_error_not_a_skip() -> None:
    queue = RecordingQueue()
    tasks = TurnTasks(queue, "C1-100.1", "C1-100.2")
    tasks.follow(2)
    with pytest.raises(TaskNameRefused):
        tasks.follow(2)
