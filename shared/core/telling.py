"""Telling the thread a turn's notices at most once, whichever function tells them.

Theory of operation: a function can die between any two of its calls, and
the function that takes the turn over continues from the last checkpoint.
So what the thread was told must be in the checkpoint *before* it is told,
never after: a function dying between the two loses the notice (as the
contract accepts for an answer that arrived and was not yet posted) rather
than show it twice. ``Telling`` decides, for each notice, what is recorded
first:

- A notice in the middle of the turn (the agent is busy) was marked told by
  the turn machine when it decided on it: ``Tell.IN_TURN``, checkpoint the
  machine, then post.
- The first notice of the turn's end (its ``ending`` is known: it cancels,
  notifies or finishes): ``Tell.END``. The rest of the answer is shown
  first, so a taker has nothing left to show; then the checkpoint says the
  end is ``told``, then the notice is posted. A function that takes over
  from that checkpoint ends the turn without telling it again. When Slack answers that it did not post the notice,
  ``not_shown`` withdraws ``told`` so that the taker tells it.
- Any later notice of an end already told by this function: ``Tell.AGAIN``,
  just posted (there is nothing more to record).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


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
    """That outcome, once a checkpoint says so (a taker then does not tell it again)."""

    def ends_with(self, outcome: str | None) -> None:
        """The turn ends with ``outcome`` (the first outcome named is kept; None: not yet)."""
        self.ending = self.ending or outcome

    def tell(self) -> Tell:
        """A notice is to be posted now: what to record first."""
        if self.ending is None:
            return Tell.IN_TURN
        if self.told is not None:
            return Tell.AGAIN
        self.told = self.ending
        return Tell.END

    def not_shown(self) -> None:
        """Slack answered that it did not post the end's notice: the taker tells it."""
        self.told = None
