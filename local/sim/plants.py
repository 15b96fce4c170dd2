"""Planted bugs: plausible mistakes, each planted alone, that the simulator must catch.

Theory of operation. A plant is a one-line change to one function of the
shell or the core, written as the text to find and the text to put in its
place. ``planted`` reads the function's source, makes the change, compiles
it in the function's own module and swaps it in (for a method, on its
class), and puts the original back afterwards. A plant whose text is no
longer in the code fails loudly: the code moved, and the plant must follow
it. A plant is *caught* by a seed when the planted run breaks a rule that
the same seed without the plant does not (runs are deterministic, so any
new broken rule is the plant's doing).
"""

from __future__ import annotations
import __future__

import importlib
import inspect
import sys
import textwrap
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, cast

ANNOTATIONS = __future__.annotations.compiler_flag


@dataclass(frozen=True)
class Plant:
    """One bug: where it goes and what it changes."""

    id: str
    what: str
    module: str
    function: str
    """The function's qualified name in ``module`` (``Class.method`` for a method)."""
    old: str
    new: str


PLANTS = (
    Plant(
        "P01",
        "a hand-over or timer resumes the turn without comparing the session's generation",
        "shared.core.session",
        "resume",
        "if current is None or not carries(current, turn_id, generation):",
        "if current is None or current.active_turn != turn_id:",
    ),
    Plant(
        "P02",
        "the claim takes a session over without checking that its lease ran out",
        "shared.core.session",
        "claim",
        "        if not current.lease_expired(at):\n            return None\n",
        "",
    ),
    Plant(
        "P03",
        "a session is written without its precondition on the update time",
        "shared.store",
        "Store._update",
        "if_updated_at=snapshot.update_time",
        "if_updated_at=None",
    ),
    Plant(
        "P04",
        "a turn found stored is written again (a Slack retry or the twin resets it)",
        "shared.store",
        "Store.record_event_turn",
        "            stored = self.turn(turn.id)\n",
        "            self._documents.set(TURNS, turn.id, _fields(turn))\n"
        "            stored = self.turn(turn.id)\n",
    ),
    Plant(
        "P05",
        "a turn is sent with a messageId that is not its fixed one",
        "shared.store",
        "Turn.message_id",
        'return f"slack-{self.channel}-{self.ts}"',
        'return f"slack-{self.channel}-{self.ts}-{int(self.attempted)}"',
    ),
    Plant(
        "P06",
        "the next turn claimed is the newest waiting one, not the oldest",
        "shared.engine",
        "claim_next_turn",
        "return waiting[0].id if waiting else None",
        "return waiting[-1].id if waiting else None",
    ),
    Plant(
        "P07",
        "the busy notice is told at every backoff (busy_told ignored)",
        "shared.core.turn_machine",
        "TurnMachine._busy_notice_at",
        "if s.busy_since is None or s.busy_told or s.task_id is not None:",
        "if s.busy_since is None or s.task_id is not None:",
    ),
    Plant(
        "P08",
        "a Message after the agent named a task is taken as the whole reply",
        "shared.core.turn_machine",
        "TurnMachine.admits",
        "                and s.task_id is None\n",
        "",
    ),
    Plant(
        "P09",
        "a completed task without text posts no notice",
        "shared.core.outcome",
        "final_notice",
        "return None if has_answer_text else notices.NO_OUTPUT",
        "return None",
    ),
    Plant(
        "P10",
        "a failed tool call shows as complete",
        "shared.core.step_cards",
        "StepCards.finish",
        'status="complete" if ok else "error"',
        'status="complete"',
    ),
    Plant(
        "P11",
        "an empty text part does not take text back",
        "shared.core.artifacts",
        "ArtifactText.apply_chunk",
        "        elif chunk_text is not None:",
        "        elif chunk_text:",
    ),
    Plant(
        "P12",
        "a result that arrives before its call is lost",
        "shared.core.tool_steps",
        "StepBook._result",
        "        if all(waiting.call_id != key for waiting in self._waiting):\n            self._waiting.append(result)\n",
        "",
    ),
    Plant(
        "P13",
        "a later result of a call changes its step (a step finishes at its last result)",
        "shared.core.tool_steps",
        "StepBook._result",
        "        if key in self._finished:\n            return []\n        if key in self._started:",
        "        if key in self._started:",
    ),
    Plant(
        "P14",
        "a Slack retry after a failed hand-off does not hand the turn off again",
        "shared.store",
        "Store.record_event_turn",
        '            return stored is not None and stored.status == "received" and self.event_seen(event_id)\n',
        "            return False\n",
    ),
    Plant(
        "P15",
        "anyone may approve a tool call (the approver check skipped)",
        "shared.core.answers",
        "ApprovalLedger.decide",
        "        if actor.id not in approvers:",
        "        if False:",
    ),
    Plant(
        "P16",
        "a step with no result when the turn ends shows as complete",
        "shared.core.reply_course",
        "closing",
        'return "error", notices.STEP_NO_RESULT',
        'return "complete", None',
    ),
    Plant(
        "P17",
        "a step a function that died showed final takes the result read again (its first is lost)",
        "shared.core.step_cards",
        "StepCards.finish",
        "        if call_id in self.settled:\n            return False\n        step =",
        "        step =",
    ),
)


def plant(plant_id: str) -> Plant:
    """The plant with this id."""
    return next(p for p in PLANTS if p.id == plant_id)


@contextmanager
def planted(bug: Plant) -> Iterator[None]:
    """Run the body with ``bug`` planted; the code is restored afterwards.

    Raises:
        LookupError: The plant's text is not in the function any more.
    """
    module = importlib.import_module(bug.module)
    owner: Any = module
    *path, name = bug.function.split(".")
    for part in path:
        owner = getattr(owner, part)
    original = owner.__dict__[name]
    target = cast(Callable[..., Any], original.fget if isinstance(original, property) else original)
    source = inspect.getsource(target)
    if bug.old not in source:
        raise LookupError(f"{bug.id}: {bug.function} no longer holds {bug.old!r}")
    changed = textwrap.dedent(source.replace(bug.old, bug.new, 1))
    lines = changed.splitlines()
    while lines and lines[0].startswith("@"):
        lines.pop(0)  # the decorators (property, staticmethod) are put back below
    code = compile(
        "\n".join(lines), f"<plant {bug.id}>", "exec", flags=ANNOTATIONS, dont_inherit=True
    )
    namespace: dict[str, Any] = {}
    exec(code, module.__dict__, namespace)  # noqa: S102
    replacement: Any = namespace[target.__name__]
    if isinstance(original, property):
        replacement = property(replacement)
    elif isinstance(original, staticmethod | classmethod):
        replacement = type(original)(replacement)
    # A module-level function is also bound wherever it was imported by name.
    holders = [owner]
    if owner is module:
        holders += [
            other
            for key, other in sorted(sys.modules.items())
            if key.startswith("shared.")
            and other is not module
            and getattr(other, name, None) is original
        ]
    for holder in holders:
        setattr(holder, name, replacement)
    try:
        yield
    finally:
        for holder in holders:
            setattr(holder, name, original)
