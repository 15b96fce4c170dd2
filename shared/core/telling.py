"""Telling the thread a turn's notices exactly once, whichever function tells them.

Theory of operation: a function can die between any two of its calls, and
the function that takes the turn over continues from the last checkpoint.
Posting a notice and recording it cannot be one step, so the end's notice
is recorded as being told *before* it is posted (with its text), and posted
with Slack message metadata naming the turn and the notice (``mark``). A
function that takes over from a checkpoint that says the end was being told
reads the thread back (``conversations.replies``) and posts the notice only
if no message carries its mark: exactly once. When Slack cannot be read,
it posts it (at least once: a notice told twice is better than one lost).
``Telling`` decides, for each notice, what is recorded first:

- A notice in the middle of the turn (the agent is busy) was marked told by
  the turn machine when it decided on it: ``Tell.IN_TURN``, checkpoint the
  machine, then post.
- The first notice of the turn's end (its ``ending`` is known: it cancels,
  notifies, finishes or is stopped): ``Tell.END``. The rest of the answer
  is shown first, so a taker has nothing left to show; then the checkpoint
  says the end is being ``told`` (and what), then the notice is posted,
  marked. A function that takes over from that checkpoint ends the turn,
  telling it only if the thread does not show it. When Slack answers that
  it did not post the notice, ``not_shown`` withdraws ``told`` so that the
  taker tells it.
- Any later notice of an end already told by this function: ``Tell.AGAIN``,
  just posted (there is nothing more to record).

A turn that kept failing, or whose Binding is gone, is ended outside the
machine (``shared.engine``), told the same way: the attempt past the limit,
or the outcome ``binding_gone`` on a turn not yet done, recorded, says its
end is being told; its notice is marked with that outcome, and a taker
after that record posts it only if the thread does not show it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any

NOTICE_EVENT = "kourier_notice"
"""The ``event_type`` of the metadata of a turn's end's notice."""


class Tell(Enum):
    """What is recorded before a notice is posted."""

    IN_TURN = "in_turn"
    """Checkpoint the machine (which marked the notice told), then post."""
    END = "end"
    """Show all of the answer, checkpoint the end as told, then post."""
    AGAIN = "again"
    """Post: the end is recorded as told already."""


@dataclass
class Telling:
    """What a turn's carrier knows of telling the turn's end."""

    ending: str | None = None
    """The outcome the turn ends with, once its end is being told."""
    told: str | None = None
    """That outcome, once a checkpoint says so (a taker then tells it only if not shown)."""
    notice: str | None = None
    """The end's notice being told (its text, ``{who}`` unfilled)."""
    who: str | None = None
    """The person the end's notice mentions (the stop's), if any."""

    def ends_with(self, outcome: str | None) -> None:
        """The turn ends with ``outcome`` (the first outcome named is kept; None: not yet)."""
        self.ending = self.ending or outcome

    def tell(self, notice: str, who: str | None = None) -> Tell:
        """``notice`` (mentioning ``who``) is to be posted now: what to record first."""
        if self.ending is None:
            return Tell.IN_TURN
        if self.told is not None:
            return Tell.AGAIN
        self.told, self.notice, self.who = self.ending, notice, who
        return Tell.END

    def taken_over(self, told: str) -> None:
        """A function taking over found the end ``told`` being told (its checkpoint says so)."""
        self.told = told

    def not_shown(self) -> None:
        """Slack answered that it did not post the end's notice: the taker tells it."""
        self.told = None


def mark(turn_id: str, outcome: str) -> dict[str, Any]:
    """The Slack message metadata of the notice that tells ``turn_id`` ended with ``outcome``."""
    return {"event_type": NOTICE_EVENT, "event_payload": {"turn": turn_id, "notice": outcome}}


def untold(thread: Iterable[Mapping[str, Any]] | None, wanted: Mapping[str, Any]) -> bool:
    """Whether a taker posts the end's notice marked ``wanted``, having read back ``thread``.

    ``thread`` is the thread's messages as Slack's API shows them, or None
    when Slack could not be read: then the notice is posted (at least once).
    """
    return thread is None or not any(message.get("metadata") == wanted for message in thread)
