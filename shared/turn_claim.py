"""This function's claim on the turn it carries: fenced writes, the lease, the checkpoint.

Theory of operation: a function carries a turn under the session's
``generation`` at its claim, its fencing token (``shared.fence``). Every
write it makes goes through ``TurnClaim``: the turn's document under that
token (``write_turn``, with a question the turn asks in the same commit), the session only while it still carries the turn
at that generation (``change_session``), and a new generation when the
run stops before the turn ends (``advance_generation``: a hand-over, a
timer, a question), which also lengthens the lease the fence counts on.
Near the deadline it hands over (``hand_over``: a new generation, a
checkpoint, and a Cloud Task to ``stream_follow``), and for a long wait it
sets a timer (``sleep_until``; see ``shared.turn_tasks``). The checkpoint
is written here too (``save``): at once when forced or when the reply has
posted a Slack message the last checkpoint does not know (a function taking
over must continue that message, not post another), else at most every
``checkpoint_seconds``; with it the lease is renewed, but written only when
less than half of it is left (a renewal's check, that the turn is still
ours, is made either way).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import structlog

from shared.bootstrap import Deps
from shared.checkpoint import Checkpoint, CheckpointStore, Stored
from shared.core import session as sessions
from shared.core.session import Session
from shared.core.timers import WaitTimer
from shared.errors import Superseded
from shared.fence import Fence
from shared.ports import Write
from shared.store import Turn
from shared.turn_carried import Carried
from shared.turn_tasks import TurnTasks

log = structlog.get_logger()


class TurnClaim:
    """The session and turn this function holds, and every write it makes to them."""

    def __init__(self, deps: Deps, session: Session, turn: Turn, deadline: float) -> None:
        self.store, self.session, self.turn = deps.store, session, turn
        self.clock, self.settings = deps.clock, deps.settings
        self.fence = Fence(
            deps.clock,
            deadline - deps.settings.follow_budget_seconds,
            deps.settings.lease,
            still_ours=self.still_ours,
        )
        """Claimed just now: the lease this function may act within (see ``shared.fence``)."""
        self.tasks = TurnTasks(deps.tasks, session.id, turn.id)
        """The hand-over and timers that carry the turn on later (see ``shared.turn_tasks``)."""
        self.checkpoints = CheckpointStore(deps.documents, deps.clock)
        self._stored: Stored | None = None
        """Where this function's last checkpoint went."""
        self._last_checkpoint = 0.0
        self._checkpointed_posts: list[str] = []
        """The reply's Slack messages the last checkpoint knows."""

    def write_turn(self, along: Sequence[Write] = (), **fields: Any) -> dict[str, Any]:
        """Write the turn's document under this function's fencing token, in one commit with
        the writes ``along`` (a question it asks); the turn's fields as written."""
        return self.store.write_turn(self.turn.id, self.session.generation, along=along, **fields)

    def keep_shown_steps(self, shown: dict[str, Any]) -> None:
        """Write the tool steps the turn's reply has shown (``ThreadReply``'s ``keep_shown_steps``)."""
        self.write_turn(shown_steps=shown)

    def keep_stream(self, ts: str, shown: dict[str, Any]) -> None:
        """Write that the turn's reply started stream ``ts``, with the steps it shows
        there (``ThreadReply``'s ``keep_stream``): one write per stream."""
        started = [*self.turn.started_streams, ts]
        self.write_turn(started_streams=started, shown_steps=shown)
        self.turn.started_streams = started

    def keep_posting(self) -> None:
        """Write that the turn's reply posts messages (``ThreadReply``'s ``keep_posting``)."""
        self.write_turn(posting=True)
        self.turn.posting = True

    def change_session(self, edit: sessions.Edit) -> None:
        """Change the session while it carries this turn at this function's generation.

        Raises:
            Superseded: Another function carries the turn now.
        """
        turn_id, generation = self.turn.id, self.session.generation
        written = self.store.change_session(
            self.session.id,
            lambda current: sessions.carried(current, turn_id, generation, edit),
        )
        assert written is not None
        # The task this run named stays known: the stored one is written at hand-overs only
        # (a run that forgot it would checkpoint the same task again, as if named anew).
        sessions.follow(written, self.session.task_id)
        self.session = written

    def advance_generation(self, lease: timedelta, open_question: str | None = None) -> int:
        """Claim the turn anew for a later function, with ``lease``; the new generation."""
        since, until = self.clock.monotonic(), self.clock.now() + lease
        turn_id, generation, task_id = self.turn.id, self.session.generation, self.session.task_id
        written = self.store.change_session(
            self.session.id,
            lambda current: sessions.advance(
                current, turn_id, generation, until, task_id, open_question
            ),
        )
        assert written is not None
        self.session = written
        self.fence.renewed(since, lease)
        return written.generation

    def hand_over(self, carried: Carried) -> None:
        """Near the deadline: checkpoint and let ``stream_follow`` continue."""
        carried.machine.hand_over()
        carried.reply.suspend()
        generation = self.advance_generation(lease=self.settings.lease)
        self.save(carried, force=True)
        self.tasks.follow(generation)
        log.info("turn_handed_over", turn=self.turn.id, generation=generation)

    def sleep_until(self, at: float, timer: WaitTimer, carried: Carried) -> None:
        """A long wait: checkpoint and let ``timeout`` wake the turn at ``at``."""
        carried.reply.suspend()
        wake = datetime.fromtimestamp(at, UTC)
        generation = self.advance_generation(lease=wake - self.clock.now() + self.settings.lease)
        self.save(carried, force=True)
        self.tasks.wake(timer, generation, wake)

    def still_ours(self) -> None:
        """Raise Superseded unless the session still carries the turn at this function's claim."""
        session = self.store.session(self.session.id)
        if not sessions.carries(session, self.turn.id, self.session.generation):
            raise Superseded(
                f"turn {self.turn.id} moved on from generation {self.session.generation}"
            )

    def load(self) -> Checkpoint | None:
        """The turn's last checkpoint (None: the turn was never checkpointed)."""
        stored = Stored(self.turn.checkpoint, self.turn.checkpoint_parts)
        return self.checkpoints.load(self.turn.id, stored)

    def save(self, carried: Carried, force: bool, renew: bool = True) -> None:
        """Checkpoint ``carried`` if ``force``d or due, then renew the lease (unless not ``renew``).

        A Slack message of the reply that the last checkpoint does not know
        makes the write due.
        """
        posted = carried.reply.posted
        if posted != self._checkpointed_posts:
            force = True  # a function taking over must continue this message, not post another
        if (
            not force
            and self.clock.monotonic() - self._last_checkpoint < self.settings.checkpoint_seconds
        ):
            return
        self._last_checkpoint = self.clock.monotonic()
        self._checkpointed_posts = posted
        checkpoint = carried.checkpoint(reconcile_every=self.settings.follow_budget_seconds)
        self._stored = self.checkpoints.save(
            self.turn.id, self.session.generation, checkpoint, self._stored
        )
        written = self.write_turn(**self._stored.fields())
        if written.get("stop") and self.turn.stop is None:
            # A person stopped the turn this function carries: the stop's function takes it
            # (``engine.on_stop``) and tells its end. This one stops before its next Slack
            # call: the stop's read-back of the thread could come before a notice this
            # function was about to post (told twice).
            raise Superseded(f"turn {self.turn.id} was stopped")
        if not renew:
            return
        if not self.fence.renewal_due():
            # What a renewal checks, without its write. While its lease runs, a carrier loses
            # its session only to a stop, recorded on the turn first: a turn just written under
            # a precondition with no stop recorded was still this function's then.
            if written.get("stop"):
                self.still_ours()
            return
        since = self.clock.monotonic()
        self.store.renew_lease(
            self.session.id, self.turn.id, self.session.generation, self.settings.lease
        )
        self.fence.renewed(since)
