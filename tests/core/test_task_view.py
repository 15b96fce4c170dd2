"""Table tests of the carrier's view of the agent's task (pure, no I/O).

Each row feeds a fresh ``TaskView`` a sequence of sightings at given times
(a live event, a read of the persisted task from a subscription, or a
GetTask) and names, after each, what a GetTask would report as changed and
the freshness a checkpoint keeps.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from shared.core.model import (
    Artifact,
    ArtifactUpdate,
    Message,
    Role,
    StatusUpdate,
    StreamEvent,
    Task,
    TaskState,
    TaskStatus,
    TextPart,
)
from shared.core.task_view import TaskView, fingerprint

WORKING = TaskStatus(TaskState.WORKING, timestamp="t1")
PAUSED = TaskStatus(TaskState.INPUT_REQUIRED, timestamp="t2")
TASK = Task("task-1", "ctx", WORKING)
GREW = Task("task-1", "ctx", WORKING, artifacts=(Artifact("a", (TextPart("Hi"),)),))
LIVE_STATUS = StatusUpdate("task-1", "ctx", PAUSED)
LIVE_TEXT = ArtifactUpdate("task-1", "ctx", Artifact("a", (TextPart("Hi"),)))


@dataclass(frozen=True)
class Seen:
    """A sighting at ``at``: ``how`` is "live", "persisted" (a subscription's snapshot) or "read"."""

    how: str
    event: StreamEvent
    at: float


@dataclass(frozen=True)
class Row:
    name: str
    seen: tuple[Seen, ...]
    expected: tuple[tuple[bool | None, float | None, bool], ...]
    """After each sighting: a read's ``changed`` (None for no read), observed_at, caught_up."""


ROWS = [
    Row(
        "a first read changes and catches up; the same snapshot again is no sign of life",
        (Seen("read", TASK, 10.0), Seen("read", TASK, 20.0)),
        ((True, 10.0, True), (False, 20.0, True)),
    ),
    Row(
        "a read that differs is a sign of life",
        (Seen("read", TASK, 10.0), Seen("read", GREW, 20.0)),
        ((True, 10.0, True), (True, 20.0, True)),
    ),
    Row(
        "a live event is newer than the last read: not caught up, observed_at kept",
        (Seen("read", TASK, 10.0), Seen("live", LIVE_TEXT, 15.0)),
        ((True, 10.0, True), (None, 10.0, False)),
    ),
    Row(
        "a subscription's snapshot is a read of the persisted task",
        (Seen("live", LIVE_TEXT, 5.0), Seen("persisted", TASK, 8.0)),
        ((None, None, False), (None, 8.0, True)),
    ),
    Row(
        "a live Task (the send's own stream) names the snapshot without catching up",
        (Seen("live", TASK, 5.0), Seen("read", TASK, 9.0)),
        ((None, None, False), (False, 9.0, True)),
    ),
]


@pytest.mark.parametrize("row", ROWS, ids=[row.name for row in ROWS])
def test_what_a_carrier_knows_of_its_task(row: Row) -> None:
    view = TaskView()
    after: list[tuple[bool | None, float | None, bool]] = []
    for seen in row.seen:
        changed: bool | None = None
        if seen.how == "read":
            assert isinstance(seen.event, Task)
            changed = view.read(seen.event, seen.at)
        else:
            view.saw(seen.event, seen.at, persisted=seen.how == "persisted")
        after.append((changed, view.observed_at, view.caught_up))
    assert tuple(after) == row.expected


def test_the_last_status_seen_is_kept_whichever_way_it_came() -> None:
    view = TaskView()
    view.saw(LIVE_TEXT, 1.0, persisted=False)
    assert view.status is None  # an artifact carries no status
    view.saw(LIVE_STATUS, 2.0, persisted=False)
    assert view.status == PAUSED
    view.read(TASK, 3.0)
    assert view.status == WORKING


def test_a_restored_view_is_caught_up_only_after_a_read() -> None:
    assert TaskView.restored("fp", None, caught_up=True).caught_up is False
    restored = TaskView.restored(fingerprint(TASK), 7.0, caught_up=True)
    assert (restored.caught_up, restored.observed_at, restored.status) == (True, 7.0, None)
    assert restored.read(TASK, 9.0) is False  # the checkpoint's snapshot counts


def test_what_makes_two_snapshots_differ() -> None:
    history = Task("task-1", "ctx", WORKING, history=(Message(Role.USER),))
    later = Task("task-1", "ctx", TaskStatus(TaskState.WORKING, timestamp="t9"))
    prints = {fingerprint(task) for task in (TASK, GREW, history, later)}
    assert len(prints) == 4
    assert fingerprint(Task("other", None, WORKING)) == fingerprint(TASK)  # ids do not count
