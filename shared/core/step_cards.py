"""A reply's tool steps as their cards show them: decided without I/O.

Theory of operation. Each step of a reply (``shared.core.tool_steps``) is a
card keyed by its call ID, whose state is a ``Step``: its title, its status
(running, ``complete`` or ``error``), and maybe details (a one-line summary
of the call's arguments, ``summarize``) and output (of its result).
``StepCards`` holds them: a step shows running once its call arrives
(``start``) and final at its first result (``finish``; a later one changes
nothing); when the reply ends, every step still running is closed
(``close_unfinished``). A streamed message shows a step as its
``task_update``; a posted one as a ``task_card`` (``shared.slack.layout``).
The adapter makes the titles, details and outputs safe for Slack before it
hands them in.

The steps are plain JSON (``to_state``/``from_state``), part of the reply's
checkpoint. Before each Slack call that shows a step, the reply keeps on the
turn where and as which update (``Shown``; ``Turn.shown_steps``), so that a
function taking over from one that died after the call, before its next
checkpoint, knows what that one showed (``shared.slack.pacing``). A step it
showed final keeps that state there (``taken_over``): it was the step's
first result, and one read again changes nothing. A record written by the
release before this one is a ts alone: shown final there, state unknown.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from shared.core.redaction import redact

Step = dict[str, Any]
"""A step as a card shows it: ``title``, ``status``, and maybe ``details`` and ``output``."""
TaskUpdate = dict[str, Any]
"""A step as a ``task_update`` chunk of a streamed message."""

RUNNING = "in_progress"
"""Slack's status of a step that has no result yet."""
FINAL = ("complete", "error")
CONTINUED = "continued in the next message"
"""A running step's output in a streamed message a rollover stopped."""
CONTINUED_BELOW = "continued below"
"""A running step's output in the stream stopped when the reply fell back to posted messages."""
SUMMARY_CHARS = 200


def summarize(value: Any, limit: int = SUMMARY_CHARS) -> str:
    """A short one-line summary of a tool's arguments or result, secrets redacted."""
    if value is None:
        return ""
    shown = redact(value)
    text = shown if isinstance(shown, str) else json.dumps(shown, ensure_ascii=False)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def task_update(call_id: str, step: Step) -> TaskUpdate:
    """The ``task_update`` chunk that shows ``step`` in a streamed message."""
    chunk = {"type": "task_update", "id": call_id, "title": step["title"], "status": step["status"]}
    for key in ("details", "output"):
        if step.get(key):
            chunk[key] = step[key]
    return chunk


@dataclass(frozen=True)
class Shown:
    """Where a step's card shows, and in which state (a record of ``Turn.shown_steps``)."""

    ts: str
    """The message's ts (``NEW_MESSAGE``, "", while Slack has not answered it)."""
    update: TaskUpdate | None = None
    """The ``task_update`` it shows; None in a record of the release before this one."""

    @property
    def final(self) -> bool:
        """Whether it shows the step final (a record of the release before: always)."""
        return self.update is None or is_final(self.update)

    def to_json(self) -> dict[str, Any]:
        """Plain JSON (a record of the release before this one was the ts alone)."""
        return {"ts": self.ts, "update": self.update}


def read_shown(record: Mapping[str, Any]) -> dict[str, Shown]:
    """The steps a record says are shown: call ID to ``Shown`` (or to a ts alone: final)."""
    return {
        key: Shown(value) if isinstance(value, str) else Shown(value["ts"], value.get("update"))
        for key, value in record.items()
    }


def shown_json(shown: Mapping[str, Shown]) -> dict[str, Any]:
    """The record of ``shown``, to keep durably (``read_shown`` reads it back)."""
    return {key: value.to_json() for key, value in shown.items()}


def is_final(update: TaskUpdate) -> bool:
    """A step's ``task_update`` in its final state (not closed to continue elsewhere)."""
    return (
        update["type"] == "task_update"
        and update["status"] in FINAL
        and update.get("output") not in (CONTINUED, CONTINUED_BELOW)
    )


class StepCards:
    """The steps of one reply, by call ID, as their cards show them."""

    def __init__(self, steps: Mapping[str, Step] | None = None) -> None:
        self.steps: dict[str, Step] = {key: dict(step) for key, step in (steps or {}).items()}
        self.settled: set[str] = set()
        """Steps a function that died showed final (``taken_over``): nothing changes them."""

    def start(self, call_id: str, title: str, details: str) -> bool:
        """A tool call began: its step shows running. False: it shows final already (taken over)."""
        if call_id in self.settled:
            return False
        self.steps[call_id] = {"title": title, "status": RUNNING, "details": details or None}
        return True

    def finish(self, call_id: str, title: str, ok: bool, output: str) -> bool:
        """A tool call returned (or failed): its step is done (one never started, too).

        False when a function that died showed it final already: a step shows its
        first result (in one function, ``shared.core.tool_steps`` finishes it once).
        """
        if call_id in self.settled:
            return False
        step = self.steps.setdefault(call_id, {"title": title, "details": None})
        step.update(status="complete" if ok else "error", output=output or None)
        return True

    def taken_over(self, shown: Mapping[str, Shown]) -> None:
        """A function that died showed these steps: each keeps the state it showed.

        A step shown final keeps it: that was the step's first result; one read
        again later changes nothing. A step shown running (or closed to
        continue elsewhere) that the checkpoint does not know runs here too, so
        that the reply closes it when it ends (seeds 93, 741: a stop ended the
        reply with it closed only "continued below").
        """
        for key, where in shown.items():
            if where.update is not None and not where.final and key not in self.steps:
                update = where.update
                self.steps[key] = {
                    "title": update["title"],
                    "status": RUNNING,
                    "details": update.get("details"),
                }
            if where.update is not None and where.final:
                update = where.update
                self.settled.add(key)
                self.steps[key] = {
                    "title": update["title"],
                    "status": update["status"],
                    "details": update.get("details"),
                    "output": update.get("output"),
                }

    def running(self, call_id: str) -> bool:
        """Whether the step shows running: it has no result yet."""
        step = self.steps.get(call_id)
        return step is not None and step["status"] == RUNNING

    def close_unfinished(self, status: str, output: str) -> None:
        """Each step still running ends as ``status``, with ``output`` (the reply ends)."""
        for step in self.steps.values():
            if step["status"] == RUNNING:
                step.update(status=status, output=output)

    def to_state(self) -> dict[str, Step]:
        """Plain JSON (the reply's checkpoint key ``steps``)."""
        return {key: dict(step) for key, step in self.steps.items()}

    @classmethod
    def from_state(cls, state: Mapping[str, Step]) -> StepCards:
        """Back from ``to_state``."""
        return cls(state)
