"""Carrying one turn: send it, follow its stream, show the reply, settle it.

Theory of operation: the agent's events are fed, in arrival order, to the
pure ``ReplyAssembler``, which says what changed for the person (text
appended or replaced, steps started or finished); ``ThreadReply`` shows it.
The session learns the agent's contextId and task as soon as an event names
them. When the stream ends without a settled task, the task is read once
with GetTask and its snapshot fed the same way (a snapshot never repeats
what the stream showed). The turn ends with at most one notice, in the
contract's words, and never with an agent's own error message.
"""

from __future__ import annotations

import structlog

from shared.a2a.client import AgentClient
from shared.a2a.errors import (
    AgentError,
    CredentialsRejected,
    DiscoveryFailed,
    IdentityRefused,
    SessionGone,
)
from shared.config import load_config
from shared.core import notices
from shared.core.model import ArtifactUpdate, Message, OutgoingMessage, Role, StreamEvent, Task, TaskState, TaskStatus
from shared.core.outcome import failure_category
from shared.core.reply import ReplyAssembler, StepFinished, StepStarted, TextAppended, TextReplaced
from shared.settings import get_settings
from shared.slack.people import actor_for, turn_text
from shared.slack.reply import ThreadReply, summarize
from shared.slack.web import slack_client
from shared.store import Session, Store, Turn

log = structlog.get_logger()


def carry_turn(store: Store, session: Session, turn: Turn) -> None:
    """Send ``turn`` to the agent and show its reply in the thread."""
    config = load_config(get_settings().config_path)
    binding = config.binding(turn.binding)
    backend = config.backend(binding.agent_backend)
    actor = actor_for(store, turn.user)
    message = OutgoingMessage(
        message_id=turn.message_id,
        text=turn_text(actor, turn.text),
        context_id=session.context_id,
        actor=actor,
    )
    store.set_turn(turn.id, status="running")
    reply = ThreadReply(slack_client(), turn.channel, turn.thread_ts, turn.user, turn.team)
    reply.working()
    follower = _Follower(store, session, turn, reply)
    client = AgentClient(backend, binding)
    outcome = "failed"
    try:
        for event in client.send(message):
            follower.feed(event, snapshot=False)
        if follower.task_id and not follower.settled:
            follower.feed(client.get_task(follower.task_id), snapshot=True)
        outcome = follower.conclude()
    except (CredentialsRejected, IdentityRefused, DiscoveryFailed) as error:
        log.warning("turn_failed", turn=turn.id, error=type(error).__name__)
        reply.notice(notices.turn_failed(error.reason))
    except SessionGone:
        store.change_session(session.id, _forget_context)
        reply.notice(notices.SESSION_GONE)
    except AgentError as error:
        log.warning("turn_failed", turn=turn.id, error=type(error).__name__)
        reply.notice(notices.turn_failed(notices.UNREACHABLE))
    store.set_turn(turn.id, status="done", outcome=outcome, task_id=follower.task_id)


def _forget_context(current: Session | None) -> Session | None:
    if current is None:
        return None
    current.context_id = None
    return current


class _Follower:
    """Feeds one turn's events to the assembler and the thread."""

    def __init__(self, store: Store, session: Session, turn: Turn, reply: ThreadReply) -> None:
        self._store = store
        self._session = session
        self._turn = turn
        self._reply = reply
        self._assembler = ReplyAssembler()
        self.task_id: str | None = None
        self.state: TaskState | None = None
        self.status: TaskStatus | None = None
        self.message_reply = False

    @property
    def settled(self) -> bool:
        """Whether the turn has reached a state it can end in."""
        return self.message_reply or (self.state is not None and self.state.settles_stream)

    def feed(self, event: StreamEvent, snapshot: bool) -> None:
        if isinstance(event, Message):
            if event.role != Role.AGENT or event.task_id or self.task_id:
                return  # only a reply that is the whole turn counts
            self.message_reply = True
        else:
            task_id = event.id if isinstance(event, Task) else event.task_id
            if task_id and not self.task_id:
                self.task_id = task_id
            self.status = event.status if not isinstance(event, ArtifactUpdate) else self.status
            self.state = self.status.state if self.status else None
        self._learn_context(event.context_id)
        for change in self._assembler.feed(event, source="snapshot" if snapshot else "stream"):
            if isinstance(change, TextAppended):
                self._reply.append(change.text)
            elif isinstance(change, TextReplaced):
                self._reply.replace(change.text)
            elif isinstance(change, StepStarted):
                self._reply.step_started(change.call_id, change.name, summarize(change.args))
            elif isinstance(change, StepFinished):
                self._reply.step_finished(change.call_id, change.name, change.ok, summarize(change.response))

    def _learn_context(self, context_id: str | None) -> None:
        if not context_id or context_id == self._session.context_id:
            return
        if self._session.context_id is not None:
            self._reply.notice(notices.CONTEXT_CHANGED_NOTICE)
        self._session.context_id = context_id

        def keep(current: Session | None) -> Session | None:
            if current is None or current.active_turn != self._turn.id:
                return None
            current.context_id = context_id
            return current

        self._store.change_session(self._session.id, keep)

    def conclude(self) -> str:
        """Finish the reply with the notice the final state calls for; return the outcome."""
        has_text = bool(self._assembler.answer_text.strip())
        state = TaskState.COMPLETED if self.message_reply else self.state
        self._reply.finish()
        if state == TaskState.COMPLETED:
            if not has_text:
                self._reply.notice(notices.NO_OUTPUT)
            return "completed"
        if state is None or not self.task_id and not self.message_reply:
            self._reply.notice(notices.REQUEST_FAILED)
            return "unknown"
        if state == TaskState.REJECTED:
            self._reply.notice(notices.TASK_REJECTED)
        elif state == TaskState.CANCELED:
            self._reply.notice(notices.TASK_CANCELED)
        elif state in (TaskState.SUBMITTED, TaskState.WORKING):
            self._reply.notice(notices.REQUEST_FAILED)
            return "unsettled"
        elif state in (TaskState.INPUT_REQUIRED, TaskState.AUTH_REQUIRED):
            self._reply.notice(notices.UNUSABLE_PAUSE)
        else:
            self._reply.notice(notices.task_failed(failure_category(self.status)))
        return state.value
