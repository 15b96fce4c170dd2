"""What a turn's carrier knows of the agent's task, and how fresh it is.

Theory of operation: the carrier sees the task two ways. A *read* of the
persisted task (a GetTask, or the Task snapshot a SubscribeToTask starts
with) is the agent's stored truth; a *live* event (a status or artifact
update, a Task in the send's own stream) is newer than any read. The view
keeps the last status seen (a finished turn's notice and a pause are read
from it), the fingerprint of the last snapshot (two snapshots that differ
are a "sign of life" for the turn machine), and the freshness a checkpoint
keeps: ``observed_at``, the time of the last read (None before the first),
and ``caught_up``, true when nothing live was shown since that read (a
function that takes over resumes with a read, see ``shared.turn``). The
status is not checkpointed: a taker reads the task again before it needs it.
"""

from __future__ import annotations

from dataclasses import dataclass

from shared.core.model import StreamEvent, Task, TaskStatus


@dataclass
class TaskView:
    """The carrier's view of the agent's task."""

    status: TaskStatus | None = None
    """The last status seen (None: none yet in this function)."""
    snapshot: str | None = None
    """The fingerprint of the last Task seen whole (``fingerprint``)."""
    observed_at: float | None = None
    """When the persisted task was last read (GetTask, a subscription's snapshot)."""
    caught_up: bool = False
    """Whether nothing live was shown since that read."""

    @classmethod
    def restored(cls, snapshot: str | None, observed_at: float | None, caught_up: bool) -> TaskView:
        """The view a checkpoint kept (caught up only after a read)."""
        return cls(None, snapshot, observed_at, caught_up and observed_at is not None)

    def saw(self, event: StreamEvent, now: float, *, persisted: bool) -> None:
        """An event the turn follows, live, or a read of the persisted task (``persisted``)."""
        status = getattr(event, "status", None)
        if status is not None:
            self.status = status
        if isinstance(event, Task):
            self.snapshot = fingerprint(event)
        self._observed(now, persisted)

    def read(self, task: Task, now: float) -> bool:
        """A GetTask read ``task``: whether it differs from the last snapshot seen."""
        changed = fingerprint(task) != self.snapshot
        self.saw(task, now, persisted=True)
        return changed

    def _observed(self, now: float, persisted: bool) -> None:
        if persisted:
            self.observed_at, self.caught_up = now, True
        else:
            self.caught_up = False


def fingerprint(task: Task) -> str:
    """What makes two snapshots of a task differ, for "sign of life"."""
    parts = sum(len(a.parts) for a in task.artifacts)
    return f"{task.status.state}|{task.status.timestamp}|{len(task.artifacts)}|{parts}|{len(task.history)}"
