"""The Cloud Tasks that carry a turn on in a later function: its hand-over and its timers.

Theory of operation: a run that stops before its turn ends leaves one task
behind. Near its function's deadline it hands over to ``stream_follow``,
which resumes from the checkpoint; for a long wait (a backoff, a poll, a
question) it sets a timer, a task to ``timeout`` scheduled at the wake-up
time. Each task's name is made of the turn, the claim's ``generation`` and,
for a timer, the timer's wire name (``shared.handoff.timer_name``), so a
hand-over or timer made twice runs once; its body carries that generation,
so a delivery whose generation is not the session's current one is stale
and does nothing. A run names each task under a generation it has just
claimed: only a stale task can hold such a name (a session deleted and made
anew restarts its generations), so a refused name is an error
(``TaskNameRefused``), never a silent skip.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import structlog

from shared.core.timers import Timer
from shared.errors import TaskNameRefused
from shared.handoff import timer_name
from shared.ports import TaskQueue, TaskTarget

log = structlog.get_logger()


class TurnTasks:
    """Schedules the tasks that carry one turn of one session on."""

    def __init__(self, tasks: TaskQueue, session_id: str, turn_id: str) -> None:
        self._tasks = tasks
        self._session_id = session_id
        self._turn_id = turn_id

    def follow(self, generation: int) -> None:
        """Let ``stream_follow`` continue the turn now, for the claim of ``generation``."""
        self._schedule("stream_follow", self._body(generation), f"follow-{generation}")

    def wake(self, timer: Timer, generation: int, at: datetime) -> None:
        """Let ``timeout`` wake the turn at ``at`` with ``timer``, for the claim of ``generation``."""
        name = timer_name(timer)
        body = {**self._body(generation), "timer": name}
        self._schedule("timeout", body, f"{name}-{generation}", at)

    def _schedule(
        self, target: TaskTarget, body: dict[str, Any], suffix: str, at: datetime | None = None
    ) -> None:
        name = f"{_task_name(self._turn_id)}-{suffix}"
        if not self._tasks.schedule(target, body, name=name, at=at):
            log.error("task_name_refused", target=target, name=name)
            raise TaskNameRefused(name)

    def _body(self, generation: int) -> dict[str, Any]:
        return {"session_id": self._session_id, "turn_id": self._turn_id, "generation": generation}


def _task_name(turn_id: str) -> str:
    """A Cloud Tasks name may hold letters, digits, - and _ only."""
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in turn_id)
