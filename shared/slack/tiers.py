"""Slack's rate limits, shared by every stream of a workspace: decided without I/O.

Theory of operation. Slack limits its Web API per method, per app, per
workspace (tiers: Tier 2 about 20 calls a minute, Tier 3 about 50, Tier 4
about 100), so every answer streaming in a workspace draws on the same
budget, whichever function instance sends it. ``Budget`` is that budget as
plain JSON, kept in one place all instances share
(``shared.slack.workspace_budget``): the calls of each limited method in the
last minute, and the streams open now.

- *Stream starts and stops* (``chat.startStream``, ``chat.stopStream``,
  Tier 2) are the tightest. Each takes one slot of its method's sliding
  window (``take``); when the window is full, ``take`` says when the next
  slot frees. A reply that may not start its stream yet keeps its text
  queued (nothing is lost, the thread shows the agent working) and tries
  again then; an answer complete by then is posted whole, which costs no
  stream at all. A stop waits for its slot.
- *Session statuses* (``agents.sessions.setStatus``, Tier 3) while a turn
  works (processing, suspended) are best effort: when fewer than
  ``STATUS_KEPT`` slots are free the call is skipped (the answer itself
  shows the agent at work), so a turn's last status (active, closed),
  which must reach Slack, finds a slot or waits for one.
- *Appends* (``chat.appendStream``, Tier 4) are shared out: a stream appends
  at most once per ``append_interval`` seconds, the window's length times
  the streams open in the workspace, over the method's limit. Each append
  thus batches more text when more streams are open, and the workspace
  stays within the tier without a shared write per append.

Windows are ``WINDOW_SECONDS`` long plus ``MARGIN``: the time is read before
the call reaches Slack, and a call that arrives late must still fall
outside Slack's window. A stream not stopped (its function died) counts as
open until Slack would have cut it.

*Reservations* let one write count several calls of a turn
(``reserve``): a slot taken now for a call that will come later is dated
at the latest time the call may be made (``RESERVED_FOR`` ahead), so it
counts from now until that date plus the window, which holds the call
wherever it falls before the date; a call that comes later takes a slot
of its own. A reservation is made only while the method's window is at
most half full (``QUIET``): when the workspace is busy every call takes
its slot at its own time, as a reservation holds a slot up to
``RESERVED_FOR`` longer than the call needs it. A stream whose stop is
reserved counts as open until the stop's date (``opened``); one that
outlives it is counted again (``shared.slack.reply`` renews it).
"""

from __future__ import annotations

from bisect import insort
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

TIERS: Mapping[str, int] = {
    "chat.startStream": 20,
    "chat.stopStream": 20,
    "chat.appendStream": 100,
    "chat.update": 50,
    "chat.delete": 50,
    "agents.sessions.setStatus": 50,
}
"""Calls a minute per workspace: the published tiers (2: 20, 3: 50, 4: 100) of the limited
methods a reply calls most."""
WINDOWED = ("chat.startStream", "chat.stopStream", "agents.sessions.setStatus")
"""The methods whose every call takes a slot in the shared budget."""
STATUS_KEPT = 25
"""Session status slots a minute kept for a turn's last status (``active``, ``closed``): a
status while the turn works is skipped rather than take them."""
WINDOW_SECONDS = 60.0
MARGIN = 2.0
"""Seconds added to each window: the time is read before the call reaches Slack."""
STREAM_LIFETIME = 300.0
"""Slack cuts a stream after about five minutes: one not stopped by then no longer counts."""
RESERVED_FOR = 20.0
"""Seconds ahead a reservation is dated: a short turn makes its reserved calls within them."""
QUIET = 0.5
"""A method's window may hold at most this share of its limit for a reservation to be made."""


@dataclass
class Budget:
    """One workspace's budget: recent calls of each windowed method, and the open streams."""

    calls: dict[str, list[float]] = field(default_factory=dict)
    """Method to the times of its calls in the last window, oldest first (a reserved
    call: the latest time it may be made, which may be ahead)."""
    open_until: dict[str, float] = field(default_factory=dict)
    """Open streams: the key of each to when it stops counting as open."""

    def take(self, method: str, now: float, keep: int = 0) -> float | None:
        """One call of ``method`` now: None if it fits (and it counts), else when it will.

        ``keep`` slots stay free for calls that matter more (this one is then refused).
        """
        recent = self._recent(method, now)
        limit = TIERS[method] - keep
        if len(recent) >= limit:
            return recent[len(recent) - limit] + WINDOW_SECONDS + MARGIN
        insort(recent, now)
        return None

    def reserve(self, method: str, now: float) -> float | None:
        """A slot for a call of ``method`` made later, while the window is quiet.

        Returns:
            The latest time the call may be made on this slot (``RESERVED_FOR``
            from ``now``), or None: no reservation, the call takes its own slot.
        """
        recent = self._recent(method, now)
        if len(recent) + 1 > TIERS[method] * QUIET:
            return None
        until = now + RESERVED_FOR
        insort(recent, until)
        return until

    def _recent(self, method: str, now: float) -> list[float]:
        """The calls of ``method`` that count now (reserved ones included), oldest first."""
        window = WINDOW_SECONDS + MARGIN
        recent = [at for at in self.calls.get(method, []) if now - at < window]
        self.calls[method] = recent
        return recent

    def opened(self, stream: str, until: float) -> None:
        """A stream started (or will, on a reserved slot): it counts as open until ``until``."""
        self.open_until[stream] = until

    def closed(self, *streams: str) -> None:
        """Streams stopped."""
        for stream in streams:
            self.open_until.pop(stream, None)

    def open_streams(self, now: float) -> int:
        """How many streams are open (at least one: the caller's)."""
        self.open_until = {key: at for key, at in self.open_until.items() if at > now}
        return max(1, len(self.open_until))

    def to_state(self) -> dict[str, Any]:
        """Plain JSON."""
        return {
            "calls": {m: list(t) for m, t in self.calls.items()},
            "open_until": dict(self.open_until),
        }

    @classmethod
    def from_state(cls, state: Mapping[str, Any] | None) -> Budget:
        """Back from ``to_state`` (an empty budget from None)."""
        if not state:
            return cls()
        calls = {method: list(times) for method, times in (state.get("calls") or {}).items()}
        return cls(calls, dict(state.get("open_until") or {}))


def append_interval(open_streams: int, floor: float) -> float:
    """Seconds between one stream's appends, with ``open_streams`` sharing the tier (at least ``floor``)."""
    return max(floor, (WINDOW_SECONDS + MARGIN) * open_streams / TIERS["chat.appendStream"])
