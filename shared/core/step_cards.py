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
checkpoint.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from shared.core.redaction import redact

Step = dict[str, Any]
"""A step as a card shows it: ``title``, ``status``, and maybe ``details`` and ``output``."""
TaskUpdate = dict[str, Any]
"""A step as a ``task_update`` chunk of a streamed message."""

RUNNING = "in_progress"
"""Slack's status of a step that has no result yet."""
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


class StepCards:
    """The steps of one reply, by call ID, as their cards show them."""

    def __init__(self, steps: Mapping[str, Step] | None = None) -> None:
        self.steps: dict[str, Step] = {key: dict(step) for key, step in (steps or {}).items()}

    def start(self, call_id: str, title: str, details: str) -> None:
        """A tool call began: its step shows running."""
        self.steps[call_id] = {"title": title, "status": RUNNING, "details": details or None}

    def finish(self, call_id: str, title: str, ok: bool, output: str) -> None:
        """A tool call returned (or failed): its step is done (one never started, too)."""
        step = self.steps.setdefault(call_id, {"title": title, "details": None})
        step.update(status="complete" if ok else "error", output=output or None)

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
