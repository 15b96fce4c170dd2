"""What a run holds of the turn it carries, shared by the run's parts.

``TurnRun`` and its parts (``shared.turn_stream``'s follower, the pause
side) act on one ``Carried``, their ``Carrier``'s (``shared.turn_carrier``):
a part replaces a member (a restored checkpoint's machine, an answer's new
reply) and the others see it at once. It is what the checkpoint keeps
(``checkpoint``; written by the claim, ``TurnClaim.save``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from shared.bootstrap import Deps
from shared.checkpoint import Checkpoint
from shared.core.questions import OpenQuestion
from shared.core.reply import ReplyAssembler
from shared.core.reply_course import reply_mark
from shared.core.task_view import TaskView
from shared.core.telling import Telling
from shared.core.turn_machine import TurnMachine, TurnState, TurnTimings
from shared.ports import Chat
from shared.slack.left_behind import LeftBehind
from shared.slack.reply import ThreadReply
from shared.slack.session_status import ThreadStatus
from shared.store import Turn


@dataclass
class Carried:
    """The turn as this function carries it."""

    reply: ThreadReply
    machine: TurnMachine
    """A new turn's machine, until a checkpoint is restored or the turn begins."""
    assembler: ReplyAssembler = field(default_factory=ReplyAssembler)
    task: TaskView = field(default_factory=TaskView)
    """What this run knows of the agent's task (see ``shared.core.task_view``)."""
    telling: Telling = field(default_factory=Telling)
    """What the thread was told of the turn's end (see ``shared.core.telling``)."""
    answering: OpenQuestion | None = None
    """The question whose answer this run sends (None for the turn itself)."""
    binds_to: str | None = None
    """The incarnation a session with no context is bound to with the context it learns
    (one write for both; checkpointed until then)."""

    def restore(
        self,
        checkpoint: Checkpoint,
        answering: OpenQuestion | None,
        timings: TurnTimings,
        left: LeftBehind,
    ) -> None:
        """Carry on from ``checkpoint``: the same machine, delivery, Slack messages and task view.

        ``left``: what the function that wrote ``checkpoint`` may have shown
        of the reply after it (``ThreadReply.restore``).
        """
        self.answering = answering
        self.machine = TurnMachine(TurnState.from_dict(checkpoint.machine), timings)
        self.assembler = ReplyAssembler.from_state(checkpoint.reply)
        self.reply.restore(checkpoint.slack, left)
        self.task = TaskView.restored(
            checkpoint.snapshot, checkpoint.observed_at, checkpoint.caught_up
        )
        self.binds_to = checkpoint.binds_to

    def checkpoint(self, reconcile_every: float) -> Checkpoint:
        """What a function taking the turn over continues from."""
        return Checkpoint(
            machine=self.machine.state.to_dict(),
            reply=self.assembler.to_state(),
            slack=self.reply.to_state(),
            snapshot=self.task.snapshot,
            answering=self.answering.key if self.answering else None,
            told=self.telling.told,
            notice=self.telling.notice,
            notice_who=self.telling.who,
            observed_at=self.task.observed_at,
            caught_up=self.task.caught_up,
            reconcile_every=reconcile_every,
            binds_to=self.binds_to,
        )


def new_reply(
    deps: Deps,
    turn: Turn,
    chat: Chat,
    status: ThreadStatus,
    keep_shown_steps: Callable[[dict[str, Any]], None] | None = None,
    keep_posting: Callable[[], None] | None = None,
    answering: str | None = None,
    keep_stream: Callable[[str, dict[str, Any]], None] | None = None,
) -> ThreadReply:
    """A new reply of ``turn`` in its thread, through ``chat``.

    Without ``keep_shown_steps`` the reply keeps no record of the steps it
    shows (a turn whose Binding is gone closes its reply and shows no step),
    nor, without ``keep_posting`` and ``keep_stream``, that it posts or which
    streams it starts. ``answering``: the question whose answer it shows (its
    messages' mark, ``reply_course.reply_mark``).
    """
    return ThreadReply(
        chat,
        turn.channel,
        turn.thread_ts,
        turn.user,
        turn.team,
        clock=deps.clock,
        runtime=deps.runtime,
        keep_shown_steps=keep_shown_steps,
        keep_posting=keep_posting,
        keep_stream=keep_stream,
        mark=reply_mark(turn.id, answering),
        status=status,
        budget=deps.slack_budget,
    )


def thread_status(deps: Deps, turn: Turn, chat: Chat) -> ThreadStatus:
    """The agent session of ``turn``'s thread in Slack, shown through ``chat``."""
    return ThreadStatus(
        chat,
        turn.channel,
        turn.thread_ts,
        deps.agent_sessions,
        budget=deps.slack_budget,
        team=turn.team,
    )
