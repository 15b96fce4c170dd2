"""Following the agent: each call's events through the turn machine, and into the reply.

Theory of operation: ``TurnRun`` asks the follower to carry out the
machine's calls to the agent (``read_card``, ``follow`` a send or a
subscription, ``read_task``, ``look_up``) and gets back the machine's next
actions. Every event the machine admits goes, in arrival order, to the
machine, to ``TaskView`` (what the run knows of the task), and to the pure
``ReplyAssembler``, whose changes ``ThreadReply`` shows in Slack; an event
the machine does not admit (another task's, an ignored Message) is ignored
everywhere. Two things are kept before anything can fail after them: a
task named for the first time is checkpointed at once, with all of the
event that named it taken in, before the reply's Slack calls (a function
taking over reads the task, never sends the turn again, and shows what the
event changed), and a new context is written to the session before the
thread is told of it (at most once).
Before the turn's first send the card is read and the session's binding
checked (``shared.core.incarnation``): a changed agent starts a new
conversation, and an answer goes only to the agent that asked.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import partial

import structlog

from shared.a2a.errors import AgentError
from shared.core import incarnation, notices
from shared.core import session as sessions
from shared.core.answers import answer_message
from shared.core.incarnation import Bound
from shared.core.model import OutgoingMessage, StreamEvent, Task
from shared.core.questions import OpenQuestion
from shared.core.session import Bind, LearnContext
from shared.core.turn_machine import (
    Action,
    CallFailed,
    CardRead,
    Event,
    LookedUp,
    Phase,
    StreamClosed,
    StreamEventSeen,
    TaskRead,
)
from shared.slack.people import actor_for, turn_text
from shared.turn_carrier import Carrier
from shared.turn_ending import TurnEnding

log = structlog.get_logger()


class StreamFollower:
    """The run's calls to the agent, and what their events change."""

    def __init__(self, carrier: Carrier, ending: TurnEnding) -> None:
        self.carried, self.claim, self.client = carrier.carried, carrier.claim, carrier.client
        self.turn, self.binding, self.backend = carrier.turn, carrier.binding, carrier.backend
        self.questions, self.chat, self.deadline = carrier.questions, carrier.chat, carrier.deadline
        self.store, self.clock, self.ids = carrier.deps.store, carrier.deps.clock, carrier.deps.ids
        self.ending = ending
        """Ends the turn whose answer its agent can no longer take (``withdraw``)."""

    def read_card(self) -> list[Action]:
        """The card says which protocol is on the wire, and which agent this is.

        Before the turn's first send the session's binding is checked
        (``shared.core.incarnation``): a session bound to another agent, or
        never bound, does not carry the turn into its old context.
        """
        try:
            card = self.client.card()
        except AgentError as error:
            return self.failed(error)
        assert card.protocol_version is not None  # a usable card has one
        if not self.check_binding(card.identity):
            return []  # an answer its agent can no longer take: the turn has ended
        return self.handle(
            CardRead(card.protocol_version, has_context=self.claim.session.context_id is not None)
        )

    def check_binding(self, agent_identity: str) -> bool:
        """Whether the send may go on: a turn binds the session to the agent it talks to (a
        changed agent starts a new conversation); an answer goes only to the agent that asked."""
        current = incarnation.incarnation(
            self.binding.name, self.backend.dialect, self.backend.endpoint, agent_identity
        )
        bound = incarnation.check(
            self.claim.session.incarnation, self.claim.session.context_id is not None, current
        )
        if bound is Bound.SAME:
            return True
        if self.carried.answering is not None:
            self.withdraw(self.carried.answering, current)
            return False
        if bound is Bound.NEW:
            # No conversation to lose: bound with the context the agent names (one write).
            self.carried.binds_to = current
            return True
        # Bound before the thread is told: a function taking over finds the session
        # bound and does not tell it again (at most once, as a context change).
        was = self.claim.session.incarnation
        self.claim.change_session(Bind(current))
        log.warning(
            "session_rebound",
            session=self.claim.session.id,
            turn=self.turn.id,
            bound=bound.value,
            was=was,
            now=current,
        )
        self.carried.reply.notice(
            notices.AGENT_CHANGED if bound is Bound.CHANGED else notices.UNBOUND_CONVERSATION
        )
        return True

    def withdraw(self, question: OpenQuestion, current: str) -> None:
        """The agent that asked is gone: the question closes unanswered, the turn ends."""
        log.warning("answer_withdrawn", turn=self.turn.id, question=question.key, now=current)
        self.carried.answering = self.questions.withdraw(question) or self.carried.answering
        self.claim.change_session(Bind(current))
        self.carried.reply.notice(notices.QUESTION_WITHDRAWN)
        self.ending.finish_turn("agent_changed")

    def failed(self, error: AgentError) -> list[Action]:
        """A call to the agent failed: what the machine does next."""
        return self.handle(CallFailed(error.failure, error.retry_after, error.reason))

    def handle(self, event: Event) -> list[Action]:
        return self.carried.machine.handle(event, self.clock.time(), self.ids.random())

    def send(self) -> list[Action]:
        """Send the turn's message (or the answer) and follow the stream it opens.

        The message is made first: it may wait on Slack (the author's name, behind a
        429's Retry-After), and the turn must still be this function's when it goes
        (seed 4979: a stop took the turn, and the next turn went, during that wait).
        """
        message = self.message()
        self.claim.fence.confirm()  # never sent again by a carrier a stop took it from
        return self.follow(lambda: self.client.send(message, until=self.deadline), send=True)

    def subscribe(self) -> list[Action]:
        """Follow the task's stream again (after a hand-over, a drop or a poll)."""
        subscription = partial(self.client.subscribe, self.task_id(), until=self.deadline)
        return self.follow(subscription, reads_task=True)

    def follow(
        self,
        open_stream: Callable[[], Iterator[StreamEvent]],
        *,
        send: bool = False,
        reads_task: bool = False,
    ) -> list[Action]:
        """Follow one stream to its end, its failure or the deadline.

        When the stream is the send's and it ends or fails, the tool results
        still waiting for their call are shown (contract, Tool calls and
        results); not at a deadline cut, where the stream goes on in another
        function. ``reads_task``: the stream's Tasks are reads of the persisted
        task (a subscription's snapshot), not live events.
        """
        actions: list[Action] = []
        try:
            for event in open_stream():
                actions.extend(
                    self.observe(event, persisted=reads_task and isinstance(event, Task))
                )
                if self.carried.machine.state.phase == Phase.DONE:
                    return actions  # ended with the stream still open (the longest turn)
                self.claim.save(self.carried, force=False)
            if self.clock.monotonic() >= self.deadline:
                return actions  # cut at the deadline: ``_run`` hands over
        except AgentError as error:
            log.info(
                "a2a_call_failed", turn=self.turn.id, error=type(error).__name__, detail=str(error)
            )
            if send:
                self.carried.reply.show(self.carried.assembler.finish())
            return actions + self.failed(error)
        if send:
            self.carried.reply.show(self.carried.assembler.finish())
        return actions + self.handle(StreamClosed())

    def observe(self, event: StreamEvent, persisted: bool = False) -> list[Action]:
        """Show what an event changes, learn its ids, and tell the machine.

        An event the machine does not admit (another task's, an ignored
        Message) is ignored everywhere: nothing of it is shown or learnt.
        """
        seen = StreamEventSeen.of(event)
        if not self.carried.machine.admits(seen):
            log.info(
                "a2a_event_ignored",
                turn=self.turn.id,
                kind=type(event).__name__,
                task=seen.task_id,
                followed=self.carried.machine.state.task_id,
            )
            return []
        self.carried.task.saw(event, self.clock.time(), persisted=persisted)
        actions = self.handle(seen)
        # A task named for the first time is saved before any call that can fail (Slack,
        # the context's write): a function taking over reads this task, never sends the
        # turn again. The checkpoint holds the event whole, its changes to the reply too
        # (``show``'s ``first``): that function shows them (seed 6649).
        named = self._named_task_just_now()
        self.carried.reply.show(
            self.carried.assembler.feed(event),
            first=partial(self.claim.save, self.carried, force=True) if named else None,
        )
        self.learn_context(event.context_id)
        return actions

    def _named_task_just_now(self) -> bool:
        task_id = self.carried.machine.state.task_id
        return bool(task_id) and sessions.follow(self.claim.session, task_id)

    def read_task(self) -> list[Action]:
        try:
            task = self.client.get_task(self.task_id())
        except AgentError as error:
            return self.failed(error)
        changed = self.carried.task.read(task, self.clock.time())
        self.carried.reply.show(self.carried.assembler.feed(task))
        self.learn_context(task.context_id)
        self.claim.save(self.carried, force=False)
        return self.handle(TaskRead(task.status.state, changed))

    def look_up(self) -> list[Action]:
        context_id = self.claim.session.context_id
        if not context_id:
            return self.handle(LookedUp(None))
        try:
            task = self.client.task_holding_message(context_id, self.message().message_id)
        except AgentError as error:
            return self.failed(error)
        return self.handle(LookedUp(task.id if task else None))

    def learn_context(self, context_id: str | None) -> None:
        if not context_id or context_id == self.claim.session.context_id:
            return
        changed = self.claim.session.context_id is not None
        # Kept before the thread is told: a function taking over finds the new
        # context and does not tell it again (at most once: a function dying
        # between the two loses the notice rather than show it twice).
        self.claim.change_session(LearnContext(context_id, self.carried.binds_to))
        self.carried.binds_to = None
        if changed:
            self.carried.reply.tell(notices.CONTEXT_CHANGED_NOTICE)

    def task_of_the_message(self) -> str | None:
        """The task holding the turn's message, when the agent never named it to us (or None)."""
        context_id = self.claim.session.context_id
        if not self.turn.attempted or not context_id:
            return None
        try:
            task = self.client.task_holding_message(context_id, self.message().message_id)
        except AgentError:
            return None
        return task.id if task else None

    def message(self) -> OutgoingMessage:
        if self.carried.answering is not None:
            return answer_message(
                self.carried.answering.current, self.carried.answering.answer_message_id
            )
        if self.turn.trigger:
            # A turn a trigger started: no person wrote it, so no actor and no prefix.
            return OutgoingMessage(
                message_id=self.turn.message_id,
                text=self.turn.text,
                context_id=self.claim.session.context_id,
            )
        actor = actor_for(self.store, self.chat, self.turn.user)
        return OutgoingMessage(
            message_id=self.turn.message_id,
            text=turn_text(actor, self.turn.text, mentioned=self.turn.mentioned),
            context_id=self.claim.session.context_id,
            actor=actor,
        )

    def task_id(self) -> str:
        task_id = self.carried.machine.state.task_id
        assert task_id is not None
        return task_id
