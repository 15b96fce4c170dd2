"""One function as the carrier of a turn: what the run's parts share, assembled once.

``TurnRun`` and its parts (the follower, the ending, the pauses) act for one
function on one turn. The ``Carrier`` builds, from ``Deps``, the session,
the turn and the function's deadline, what they all reach: the claim and
its fence (``shared.turn_claim``), Slack through that fence, the thread's
agent session, the Binding with its agent's client and timings, the turn's
questions, and the turn as carried (``shared.turn_carried``). It also does
what more than one part does with them: show the thread as working, begin
a new reply or machine, and carry on from a checkpoint.
"""

from __future__ import annotations

from shared.a2a.client import AgentClient
from shared.bootstrap import Deps
from shared.checkpoint import Checkpoint
from shared.core import agent_session
from shared.core import session as sessions
from shared.core.session import Session
from shared.core.turn_machine import TurnMachine, TurnState, TurnTimings
from shared.errors import ConfigError
from shared.fence import FencedChat
from shared.questions import QuestionStore, TurnQuestions
from shared.slack.left_behind import Predecessor, read_left_behind
from shared.slack.reply import ThreadReply
from shared.store import Turn
from shared.turn_carried import Carried, new_reply, thread_status
from shared.turn_claim import TurnClaim


class Carrier:
    """This function, carrying ``turn``: its claim, its ports, and the turn as carried."""

    def __init__(self, deps: Deps, session: Session, turn: Turn, deadline: float) -> None:
        self.deps, self.turn, self.deadline = deps, turn, deadline
        self.claim = TurnClaim(deps, session, turn, deadline)
        """This function's claim: its fenced writes, lease, checkpoint (``shared.turn_claim``)."""
        self.chat = FencedChat(deps.chat, self.claim.fence)
        self.thread_status = thread_status(deps, turn, self.chat)
        """The thread's agent session in Slack (see ``shared.core.agent_session``)."""
        binding = deps.config.binding(turn.binding)
        if binding is None:  # the engine ends such turns before it carries them
            raise ConfigError(f"binding {turn.binding!r} is no longer configured")
        self.binding = binding
        settings = deps.settings
        self.timings = TurnTimings(
            backoff_start=settings.backoff_start_seconds,
            backoff_cap=settings.backoff_cap_seconds,
            poll_cap=settings.poll_cap_seconds,
            busy_notice_after=settings.busy_notice_seconds,
            give_up_after=settings.give_up_seconds,
            no_sign_of_life=settings.no_sign_of_life_seconds,
            reread_after_drop=settings.reread_after_drop_seconds,
            max_turn=binding.max_turn.total_seconds(),
        )
        """The machine's delays, from the settings, and the Binding's longest turn."""
        self.backend = deps.config.backend(binding.agent_backend)
        self.client = AgentClient(
            self.backend,
            binding,
            link=deps.agent_link,
            cards=deps.cards,
            clock=deps.clock,
            ids=deps.ids,
            max_response_bytes=settings.max_agent_response_bytes,
            call_seconds=settings.agent_call_seconds,
        )
        self.questions = TurnQuestions(
            QuestionStore(deps.documents, deps.clock),
            self.chat,
            deps.clock,
            binding.platform,
            self.claim.write_turn,
            self.stopped_by,
        )
        self.carried = Carried(reply=self.new_reply(), machine=self.new_machine())
        """The turn as this function carries it, shared with the parts (``shared.turn_carried``)."""

    def stopped_by(self) -> str | None:
        """Who stopped the turn, as stored now (None: no one)."""
        stored = self.deps.store.turn(self.turn.id)
        return stored.stopped_by if stored is not None else None

    def new_reply(self, answering: str | None = None) -> ThreadReply:
        """A new reply of the turn (to the question ``answering``), whose shown steps the claim keeps."""
        return new_reply(
            self.deps,
            self.turn,
            self.chat,
            self.thread_status,
            self.claim.keep_shown_steps,
            self.claim.keep_posting,
            answering,
            self.claim.keep_stream,
        )

    def new_machine(self) -> TurnMachine:
        """A new turn's machine, started now.

        The give-up clock starts when the turn is first carried, not when it
        began to wait behind another turn of the thread.
        """
        has_context = self.claim.session.context_id is not None
        state = TurnState(started_at=self.deps.clock.time(), has_context=has_context)
        return TurnMachine(state, self.timings)

    def show_working(self) -> None:
        """The thread's session is processing, for the person who wrote the turn."""
        turn = self.turn
        if turn.trigger:
            self.thread_status.show(agent_session.working(None, turn.title or ""))
        else:
            self.thread_status.show(agent_session.working(turn.user, turn.text))

    def adopt_left_before_checkpoint(self) -> None:
        """A turn begun afresh adopts what a function before left of its reply (seed 18734).

        That function died before the turn's first checkpoint, after it
        started a stream or posted (``Turn.started_streams``, ``Turn.posting``):
        the reply, still empty, adopts those messages (``ThreadReply.restore``),
        the streams stopped, and writes the answer into them, instead of
        showing it again below a stream left open until Slack cuts it.
        """
        if self.turn.started_streams or self.turn.posting:
            left = read_left_behind(self.chat, self.turn, None, Predecessor.DIED)
            self.carried.reply.restore(self.carried.reply.to_state(), left)

    def restore(
        self, checkpoint: Checkpoint | None, predecessor: Predecessor = Predecessor.HANDED_OVER
    ) -> None:
        """Carry on from ``checkpoint`` (None: nothing to carry on from), and its task.

        ``predecessor``: how the function that wrote it let the turn go, and
        so what it may have left of the reply after ``checkpoint``
        (``shared.slack.left_behind``: one that may have posted after it
        leaves the thread to read back, when the reply posted, and the
        streams it started, to adopt those no checkpoint names).
        """
        if checkpoint is None:
            return
        answering = self.questions.get(checkpoint.answering)
        left = read_left_behind(self.chat, self.turn, checkpoint.answering, predecessor)
        self.carried.restore(checkpoint, answering, self.timings, left)
        sessions.follow(self.claim.session, self.carried.machine.state.task_id)
