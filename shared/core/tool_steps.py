"""Steps: what a person sees of the tool parts delivered for one reply.

Theory of operation. Each delivered call starts a step, keyed by its call ID;
a call with none is a step of its own, under a stand-in key, and a result
with none finishes the oldest open step of its tool that has none either. A
step finishes at its first result: a later result, or another call part with
the same ID, changes nothing. A result is shown after its call. When its
call has not been delivered in this reply, the call is taken from the paused
task read before an answer was sent, if it is there (only that call, never
that task's results); otherwise the result waits, and a call delivered later
releases it. ``flush``, when the send ends or fails, delivers the results
still waiting as steps whose call was never seen. So every step starts once,
finishes at most once, and never finishes before it starts.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from shared.core.tool_parts import ToolPart, ToolPartKind

ANONYMOUS_CALL_PREFIX = "anonymous-call-"
"""The stand-in key of a call without an ID is this prefix and a number."""


@dataclass(frozen=True)
class StepStarted:
    """A tool call: a step begins."""

    call_id: str
    """The call's ID, or a stand-in key for a call without one."""
    name: str
    args: Any
    """The call's arguments; None when the call was never seen."""


@dataclass(frozen=True)
class StepFinished:
    """A step's first result: the step is done, well or failed."""

    call_id: str
    name: str
    ok: bool
    """False when the result has a non-empty ``error`` or ``isError: true``."""
    response: Any


StepEvent = StepStarted | StepFinished


class StepBook:
    """The steps of one reply, from the tool parts delivered to it."""

    def __init__(self, paused_calls: Iterable[ToolPart] = ()) -> None:
        """Start a reply's steps.

        Args:
            paused_calls: Tool parts of the paused task read before an answer
                was sent; its calls are taken from it for results that arrive
                without their call. Results among them are ignored.
        """
        self._started: dict[str, str] = {}
        """Step key to tool name, in the order the steps started."""
        self._finished: set[str] = set()
        self._anonymous_calls = 0
        self._waiting: list[ToolPart] = []
        self._paused_calls: dict[str, ToolPart] = {}
        for part in paused_calls:
            if part.kind is ToolPartKind.CALL and part.call_id is not None:
                self._paused_calls.setdefault(part.call_id, part)

    def deliver(self, parts: Iterable[ToolPart]) -> list[StepEvent]:
        """The step events for newly delivered tool parts, in order."""
        events: list[StepEvent] = []
        for part in parts:
            events += self._call(part) if part.kind is ToolPartKind.CALL else self._result(part)
        return events

    def flush(self) -> list[StepEvent]:
        """Deliver the results still waiting for a call: the send has ended or failed."""
        events: list[StepEvent] = []
        for result in self._waiting:
            key = result.call_id or self._anonymous_key()
            events += [self._start(key, result.name, None), self._finish(key, result)]
        self._waiting = []
        return events

    def _call(self, call: ToolPart) -> list[StepEvent]:
        if call.call_id in self._started:
            return []
        key = call.call_id or self._anonymous_key()
        events: list[StepEvent] = [self._start(key, call.name, call.args)]
        waiting = next((result for result in self._waiting if _answers(result, call)), None)
        if waiting is not None:
            events.append(self._finish(key, waiting))
            self._waiting = [
                result
                for result in self._waiting
                if result is not waiting
                and (call.call_id is None or result.call_id != call.call_id)
            ]
        return events

    def _result(self, result: ToolPart) -> list[StepEvent]:
        key = result.call_id
        if key is None:
            key = next(
                (
                    started
                    for started, name in self._started.items()
                    if name == result.name
                    and started.startswith(ANONYMOUS_CALL_PREFIX)
                    and started not in self._finished
                ),
                None,
            )
            if key is None:
                self._waiting.append(result)
                return []
        if key in self._finished:
            return []
        if key in self._started:
            return [self._finish(key, result)]
        paused_call = self._paused_calls.pop(key, None)
        if paused_call is not None:
            return [self._start(key, paused_call.name, paused_call.args), self._finish(key, result)]
        if all(waiting.call_id != key for waiting in self._waiting):
            self._waiting.append(result)
        return []

    def _anonymous_key(self) -> str:
        self._anonymous_calls += 1
        return f"{ANONYMOUS_CALL_PREFIX}{self._anonymous_calls}"

    def _start(self, key: str, name: str, args: Any) -> StepStarted:
        self._started[key] = name
        return StepStarted(call_id=key, name=name, args=args)

    def _finish(self, key: str, result: ToolPart) -> StepFinished:
        self._finished.add(key)
        return StepFinished(
            call_id=key, name=self._started[key], ok=not result.failed, response=result.response
        )

    def to_state(self) -> dict[str, Any]:
        """A JSON-able form, read back by ``from_state``."""
        return {
            "started": [[key, name] for key, name in self._started.items()],
            "finished": sorted(self._finished),
            "anonymous_calls": self._anonymous_calls,
            "waiting": [result.to_dict() for result in self._waiting],
            "paused_calls": [call.to_dict() for call in self._paused_calls.values()],
        }

    @classmethod
    def from_state(cls, state: Mapping[str, Any]) -> StepBook:
        """The book ``to_state`` wrote."""
        book = cls(ToolPart.from_dict(call) for call in state["paused_calls"])
        book._started = {key: name for key, name in state["started"]}
        book._finished = set(state["finished"])
        book._anonymous_calls = state["anonymous_calls"]
        book._waiting = [ToolPart.from_dict(result) for result in state["waiting"]]
        return book


def _answers(result: ToolPart, call: ToolPart) -> bool:
    """Whether a waiting ``result`` is for ``call``."""
    if call.call_id is None:
        return result.call_id is None and result.name == call.name
    return result.call_id == call.call_id
