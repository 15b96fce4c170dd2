"""The timers a turn sets, typed: which wait of a turn, or which question's.

Theory of operation: a turn that waits longer than a function may stay
sets a timer (a Cloud Task to ``timeout``) and stops. A timer says what it
ends: the turn's ``attempt``-th wait (a backoff or a poll, see
``TurnMachine``: a timer of an earlier wait does nothing), or the wait of a
question for people (see ``shared.core.questions``). The core decides with
these types only; ``shared.handoff`` names them on the wire.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class WaitTimer:
    """The turn's ``attempt``-th wait (a backoff or a poll) ends."""

    attempt: int


@dataclass(frozen=True)
class QuestionTimer:
    """The question stored under ``key`` waited for people long enough."""

    key: str


Timer = WaitTimer | QuestionTimer
