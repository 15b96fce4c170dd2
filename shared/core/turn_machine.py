"""The lifecycle of one turn, as a pure state machine.

Theory of operation (rule 1, as in h11: everything that decides what happens
to a turn lives here; the functions only carry out its actions and report
what came back). A turn starts by being *sent*. What the agent and the
platform answer arrives as events: stream progress, a stream that closed or
failed, a task read with GetTask, a ListTasks lookup, a timer. Each event
yields the next actions, and the state records just enough to decide again
in another function after a restart (it is stored in the turn's checkpoint).

The rules, from the agent contract:

- A turn follows one task. An event of the stream that names another task,
  and a Message other than the one that is the whole turn (from the agent,
  naming no task, the first, before any event named a task: so never a
  reply to an answer, which goes to a task already named), is not the
  turn's: ``admits`` says so, and it is ignored everywhere. It changes no
  state, counts as no event of the stream, and the functions neither show
  it nor learn its contextId.
- Acceptance is not completion. A stream that ends before its task settles
  is treated as dropped: a second later the task is read with GetTask; still
  running, it is followed with SubscribeToTask, or polled with GetTask
  (backing off up to a minute) when the agent cannot subscribe. A normal
  close right after a settling status update gets one GetTask at once, taken
  as final.
- Nothing is sent or looked up before the agent's card said which protocol
  is on the wire (``ReadCard``; a card that cannot be read is retried as a
  send is).
- An unknown outcome (5xx or a drop before any event, a stream naming no
  task, ignored Messages alone) is, after a backoff, looked up with
  ListTasks on 1.0 when the session has a context, and otherwise the same
  message is sent again with the same messageId. When the protocol is not
  known yet (a restarted turn whose card could not be read), the card is
  read first and the lookup follows on 1.0: a turn that may already be in a
  context is never sent into it again unlooked.
- Busy (-32004) sends again after a growing, jittered backoff for as long as
  it takes; the thread is told once after two minutes (the turn wakes at
  that moment if the backoff would sleep past it, tells the thread, and
  waits on).
- Not sent (other 4xx), card failures and unknown outcomes are retried and
  the turn fails with "the agent could not be reached" once fifteen minutes
  passed without reaching the agent (since the turn started, or since the
  send that followed its last busy answer). Credentials rejected, identity
  refused and a card Kourier must refuse fail at once, with the failure as
  the outcome (never a task state, whose notice would follow). Session gone
  ends the turn and the next starts anew.
- A task that shows no sign of life for an hour after its stream was lost is
  cancelled. A cancel tells the thread what it did (``Cancel.notice``): the
  task was cancelled, or it could not be stopped; the thread is told after
  the cancel was tried, never before.
- Retry-After is a lower bound on the wait before any call is tried again,
  up to a day.
- A turn takes at most ``max_turn`` (its Binding's ``maxTurnDuration``),
  counted from its first send, or from the send of an answer (the wait for a
  person is not counted). The first event at or past that moment ends the
  turn, unless the task just said it settled (its close or read ends the
  turn as usual): a task is cancelled (and the thread told what the cancel
  did); with no task yet (an agent busy for ever), the turn fails. No wait lasts past that moment. An agent that keeps a stream open
  and silent is only seen at the next read, when its function hands over.
- A timer names its wait: one from an earlier wait, or fired twice, does
  nothing, and one that fires before its wait ends (a resumed function)
  waits on.

Delays come from ``TurnTimings`` (settings, so tests run in seconds); the
jitter is an input (a number in [0, 1) per decision), so the machine stays
deterministic under test.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, fields
from enum import StrEnum
from typing import Any

from shared.core import notices
from shared.core.model import Message, Role, StatusUpdate, StreamEvent, Task, TaskState
from shared.core.timers import WaitTimer


class Phase(StrEnum):
    """Where a turn is."""

    SEND = "send"
    """The message is to be sent (again)."""
    FOLLOW = "follow"
    """A stream of the task is open (the send's, or a subscription)."""
    READ = "read"
    """The task is to be read with GetTask."""
    LOOKUP = "lookup"
    """ListTasks is to say whether the agent already has the message."""
    WAIT = "wait"
    """Nothing to do until a timer fires; then ``after_wait``."""
    DONE = "done"


class Failure(StrEnum):
    """A classified failed call, as the A2A client reports it."""

    CREDENTIALS = "credentials"
    IDENTITY = "identity"
    REFUSED = "refused"  # a card Kourier must refuse: no JSON-RPC, no streaming, ...
    BUSY = "busy"
    NOT_SENT = "not_sent"
    UNKNOWN = "unknown"
    DROPPED = "dropped"  # a stream lost after at least one event
    SESSION_GONE = "session_gone"
    UNREACHABLE = "unreachable"  # card fetch failed
    ANSWER_REJECTED = "answer_rejected"  # -32603 to an answer to a pause


@dataclass(frozen=True)
class TurnTimings:
    """Every delay and limit of a turn's life, in seconds."""

    reread_after_drop: float = 1.0
    backoff_start: float = 1.0
    backoff_cap: float = 60.0
    poll_cap: float = 60.0
    busy_notice_after: float = 120.0
    give_up_after: float = 900.0
    no_sign_of_life: float = 3600.0
    retry_after_cap: float = 86400.0
    max_turn: float = 4 * 3600.0
    """The most one turn may take (from its send, or its answer's), whatever the agent does."""


# Actions ---------------------------------------------------------------------


@dataclass(frozen=True)
class ReadCard:
    """Read the agent's card: which protocol is on the wire."""


@dataclass(frozen=True)
class Send:
    """Send the turn's message (always the same messageId)."""


@dataclass(frozen=True)
class Subscribe:
    """Follow the task with SubscribeToTask."""


@dataclass(frozen=True)
class ReadTask:
    """Read the task with GetTask."""


@dataclass(frozen=True)
class LookUp:
    """Ask ListTasks whether a task of the context holds the message."""


@dataclass(frozen=True)
class Cancel:
    """Cancel the task on the agent, then tell the thread ``notice`` as the cancel went."""

    notice: notices.CancelNotice


@dataclass(frozen=True)
class WaitUntil:
    """Wake this turn at ``at`` (with ``timer``)."""

    at: float
    timer: WaitTimer


@dataclass(frozen=True)
class Notify:
    """Tell the thread (the contract's words)."""

    text: str


@dataclass(frozen=True)
class Finish:
    """The turn ended with ``outcome``.

    A settled task's state (``completed``, ``failed``, ``rejected``,
    ``canceled``, ``unknown``), whose notice the caller picks; or
    ``input_required``; or one whose notice the machine gave before:
    ``auth_required``, ``credentials``, ``identity``, ``refused``,
    ``unreachable``, ``session_gone``, ``no_task``, ``no_sign_of_life``,
    ``answer_rejected``, ``too_long``.
    """

    outcome: str


Action = ReadCard | Send | Subscribe | ReadTask | LookUp | Cancel | WaitUntil | Notify | Finish


# State -----------------------------------------------------------------------


@dataclass
class TurnState:
    """What the machine remembers of one turn (JSON-able, for checkpoints)."""

    started_at: float
    has_context: bool
    """Whether the session had a context when the turn was first sent."""
    protocol: str = ""
    can_subscribe: bool = True
    subscribing: bool = False
    phase: Phase = Phase.SEND
    after_wait: Phase = Phase.SEND
    wake_at: float = 0.0
    """When the current wait ends (a timer that fires sooner waits on)."""
    task_id: str | None = None
    state: TaskState | None = None
    settling_update: bool = False
    """The open stream's last status update settles the task (no full Task yet)."""
    events_in_stream: int = 0
    attempts: int = 0
    busy_since: float | None = None
    busy_told: bool = False
    retrying_since: float | None = None
    """Where the give-up clock starts instead of ``started_at``: the send after a busy answer."""
    stream_lost_at: float | None = None
    last_sign_of_life: float | None = None
    message_reply: bool = False

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form (every field is a scalar: a field loop, no deep copy)."""
        return {field.name: getattr(self, field.name) for field in fields(self)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TurnState:
        """Back from ``to_dict`` (of this release or an earlier one: unknown keys are dropped)."""
        known = {field.name for field in fields(cls)}
        state = cls(**{key: value for key, value in data.items() if key in known})
        state.phase, state.after_wait = Phase(state.phase), Phase(state.after_wait)
        state.state = TaskState(state.state) if state.state else None
        return state


# Events ----------------------------------------------------------------------


@dataclass(frozen=True)
class Started:
    """The turn is to be carried; what the card said of the agent ("": not read yet)."""

    protocol: str
    can_subscribe: bool


@dataclass(frozen=True)
class CardRead:
    """The card was read (``ReadCard``).

    ``has_context``: whether the session has a context the turn goes into.
    """

    protocol: str
    has_context: bool


@dataclass(frozen=True)
class StreamEventSeen:
    """An event arrived on the open stream: what the machine reads of it."""

    task_id: str | None
    state: TaskState | None
    full_task: bool = False
    message_role: Role | None = None
    """For a Message, its role; None for a task event (Task, status or artifact update)."""

    @classmethod
    def of(cls, event: StreamEvent) -> StreamEventSeen:
        """What the machine reads of a stream's event."""
        if isinstance(event, Message):
            return cls(event.task_id, None, message_role=event.role)
        if isinstance(event, Task):
            return cls(event.id or None, event.status.state, full_task=True)
        state = event.status.state if isinstance(event, StatusUpdate) else None
        return cls(event.task_id, state)


@dataclass(frozen=True)
class StreamClosed:
    """The open stream ended normally."""


@dataclass(frozen=True)
class CallFailed:
    """A call failed, classified."""

    failure: Failure
    retry_after: float | None = None
    reason: str = notices.UNREACHABLE


@dataclass(frozen=True)
class TaskRead:
    """GetTask answered. ``changed``: the snapshot differs from the last one seen."""

    state: TaskState
    changed: bool = True


@dataclass(frozen=True)
class LookedUp:
    """ListTasks answered: the task holding the message, if any."""

    task_id: str | None


@dataclass(frozen=True)
class TimerFired:
    """A timer set by ``WaitUntil`` fired."""

    timer: WaitTimer


@dataclass(frozen=True)
class Resumed:
    """Another function continues the turn from its checkpoint (a hand-over, or a take-over)."""


@dataclass(frozen=True)
class Unpaused:
    """A turn that paused on a question still open is taken over (its timer's or
    answer's function died): whether the task still waits is unknown."""


Event = (
    Started
    | CardRead
    | StreamEventSeen
    | StreamClosed
    | CallFailed
    | TaskRead
    | LookedUp
    | TimerFired
    | Resumed
    | Unpaused
)


class TurnMachine:
    """Decides a turn's next actions. Pure: ``now`` and ``jitter`` are inputs."""

    def __init__(self, state: TurnState, timings: TurnTimings = TurnTimings()) -> None:
        self.state = state
        self.timings = timings

    def handle(self, event: Event, now: float, jitter: float = 0.5) -> list[Action]:
        """The actions that follow ``event``."""
        if self.state.phase == Phase.DONE and not isinstance(event, Unpaused):
            return []
        actions = self._next(event, now, jitter)
        if self._goes_on() and now >= self._turn_ends_at():
            return self._too_long()  # what the event would have led to is not done
        return actions

    def _next(self, event: Event, now: float, jitter: float) -> list[Action]:
        s = self.state
        match event:
            case Started(protocol=protocol, can_subscribe=can_subscribe):
                s.protocol, s.can_subscribe = protocol, can_subscribe
                return self._send()
            case CardRead(protocol=protocol, has_context=has_context):
                return self._card_read(protocol, has_context)
            case StreamEventSeen():
                return self._stream_event(event, now)
            case StreamClosed():
                return self._stream_closed(now, jitter)
            case CallFailed():
                return self._call_failed(event, now, jitter)
            case TaskRead(state=state, changed=changed):
                return self._task_read(state, changed, now, jitter)
            case LookedUp(task_id=task_id):
                if task_id is None:
                    return self._send()
                s.task_id = task_id
                return self._to(Phase.READ, [ReadTask()])
            case TimerFired(timer=timer):
                return self._timer(timer, now)
            case Resumed():
                return self._resumed(now, jitter)
            case Unpaused():
                if s.phase != Phase.DONE:
                    return []  # not paused: carried on as it is
                s.phase = Phase.SEND  # read again, as after a send of unknown outcome
                return self._call_failed(CallFailed(Failure.UNKNOWN), now, jitter)
        raise AssertionError(f"unhandled event {event!r}")

    def hand_over(self) -> None:
        """This function stops; another continues from the checkpoint: an open stream is gone."""
        _stream_gone(self.state)

    def for_answer(self, now: float) -> TurnMachine:
        """The machine that sends the answer to this turn's paused task, then follows it.

        The answer goes to the same task, in the task's context, once the card
        is read again (an answer goes only to the agent that asked); its turn
        time counts from now (the wait for people is not counted).
        """
        state = TurnState(started_at=now, has_context=True, task_id=self.state.task_id)
        return TurnMachine(state, self.timings)

    def admits(self, event: StreamEventSeen) -> bool:
        """Whether an event of the open stream is this turn's; if not, it is ignored everywhere."""
        s = self.state
        if event.message_role is not None:  # only the Message that is the whole turn
            return (
                event.message_role is Role.AGENT
                and event.task_id is None
                and s.task_id is None
                and not s.message_reply
            )
        return event.task_id is None or s.task_id in (None, event.task_id)

    # Streams --------------------------------------------------------------

    def _stream_event(self, event: StreamEventSeen, now: float) -> list[Action]:
        s = self.state
        if s.phase not in (Phase.FOLLOW, Phase.SEND) or not self.admits(event):
            return []
        s.phase = Phase.FOLLOW
        s.events_in_stream += 1
        s.last_sign_of_life = now
        s.stream_lost_at = None
        s.busy_since, s.busy_told = None, False
        if event.message_role is not None:
            s.message_reply = True
            return []
        if event.task_id and s.task_id is None:
            s.task_id = event.task_id
        if event.state is not None:
            s.state = event.state
            s.settling_update = event.state.settles_stream and not event.full_task
        return []

    def _stream_closed(self, now: float, jitter: float) -> list[Action]:
        s = self.state
        s.subscribing = False
        events, s.events_in_stream = s.events_in_stream, 0
        if s.message_reply:
            return self._finish(TaskState.COMPLETED.value)
        if s.task_id is None:
            if events:  # events that named no task: nothing to follow
                return [Notify(notices.REQUEST_FAILED), *self._finish("no_task")]
            return self._unknown_outcome(CallFailed(Failure.UNKNOWN), now, jitter)
        if s.state is not None and s.state.settles_stream and not s.settling_update:
            return self._settled(s.state)
        if s.settling_update:
            return self._to(Phase.READ, [ReadTask()])
        return self._lost(now, jitter, quiet=events == 0)

    def _lost(
        self, now: float, jitter: float, quiet: bool = False, retry_after: float = 0.0
    ) -> list[Action]:
        """The stream of a known task is gone: read it again a second later.

        The task is no longer taken to be settling: the read decides again.
        A stream that closed without a single event backs off instead, so an
        agent whose subscriptions end at once is not called in a tight loop;
        a Retry-After waits longer.
        """
        s = self.state
        s.settling_update = False
        if s.stream_lost_at is None:
            s.stream_lost_at = now
        if s.last_sign_of_life is None:
            s.last_sign_of_life = now
        if quiet:
            delay = self._backoff(jitter, self.timings.backoff_cap)
        else:
            delay = self.timings.reread_after_drop
        return self._wait(now + max(delay, retry_after), Phase.READ)

    # Failures ---------------------------------------------------------------

    def _call_failed(self, event: CallFailed, now: float, jitter: float) -> list[Action]:
        s = self.state
        failure = event.failure
        if failure in (Failure.CREDENTIALS, Failure.IDENTITY, Failure.REFUSED):
            return [Notify(notices.turn_failed(event.reason)), *self._finish(failure.value)]
        if failure == Failure.SESSION_GONE:
            return [Notify(notices.SESSION_GONE), *self._finish("session_gone")]
        if failure == Failure.ANSWER_REJECTED:
            return [Cancel(notices.ANSWER_REJECTED), *self._finish("answer_rejected")]
        events, s.events_in_stream = s.events_in_stream, 0
        if s.phase == Phase.READ:
            if s.settling_update:  # the final read failed: the stream counts as dropped
                return self._lost(now, jitter, retry_after=self._retry_after(event))
            if self._lifeless(now):
                return self._abandon()
            return self._wait(now + self._delay(event, jitter), Phase.READ)
        if s.phase == Phase.LOOKUP:
            return self._retry(Phase.LOOKUP, event, now, jitter)
        if s.subscribing and failure == Failure.NOT_SENT and not events:
            s.can_subscribe = False  # the agent has no SubscribeToTask: poll instead
        s.subscribing = False
        if s.task_id is not None:  # a stream of a known task was lost
            return self._lost(now, jitter, retry_after=self._retry_after(event))
        if s.message_reply:
            return self._finish(TaskState.COMPLETED.value)
        if events:  # events that named no task, then the stream failed
            return [Notify(notices.REQUEST_FAILED), *self._finish("no_task")]
        if failure == Failure.BUSY:
            return self._busy(event, now, jitter)
        if failure in (Failure.UNKNOWN, Failure.DROPPED):
            return self._unknown_outcome(event, now, jitter)
        return self._retry(Phase.SEND, event, now, jitter)  # NOT_SENT, UNREACHABLE

    def _busy(self, event: CallFailed, now: float, jitter: float) -> list[Action]:
        """Send again after a backoff, for as long as it takes; tell the thread once."""
        s = self.state
        if s.busy_since is None:
            s.busy_since = now
        s.retrying_since = now + self._delay(event, jitter)
        return self._busy_notice(now) + self._wait(s.retrying_since, Phase.SEND)

    def _busy_notice_at(self) -> float | None:
        """When the thread is to be told the agent is busy, if it is still to be told."""
        s = self.state
        if s.busy_since is None or s.busy_told or s.task_id is not None:
            return None
        return s.busy_since + self.timings.busy_notice_after

    def _busy_notice(self, now: float) -> list[Action]:
        notice_at = self._busy_notice_at()
        if notice_at is None or now < notice_at:
            return []
        self.state.busy_told = True
        return [Notify(notices.AGENT_BUSY)]

    def _unknown_outcome(self, event: CallFailed, now: float, jitter: float) -> list[Action]:
        """After a backoff: look the message up (1.0, existing context), or send it again.

        With the protocol not known yet, a turn with a context is looked up:
        the card is read first, and a 0.3 agent is then sent the message again.
        """
        s = self.state
        may_look_up = s.protocol in ("1.0", "") and s.has_context
        return self._retry(Phase.LOOKUP if may_look_up else Phase.SEND, event, now, jitter)

    def _retry(self, then: Phase, event: CallFailed, now: float, jitter: float) -> list[Action]:
        if self._gave_up(now):
            return self._give_up()
        return self._wait(now + self._delay(event, jitter), then)

    def _gave_up(self, now: float) -> bool:
        """Whether the agent went unreached too long (since the start, or the send after busy)."""
        s = self.state
        since = s.started_at if s.retrying_since is None else s.retrying_since
        return now - since >= self.timings.give_up_after

    def _give_up(self) -> list[Action]:
        return [Notify(notices.turn_failed(notices.UNREACHABLE)), *self._finish("unreachable")]

    # Reads --------------------------------------------------------------------

    def _task_read(
        self, state: TaskState, changed: bool, now: float, jitter: float
    ) -> list[Action]:
        s = self.state
        final, s.settling_update = s.settling_update, False
        s.state = state
        if changed:
            s.last_sign_of_life = now
        if state.settles_stream:
            return self._settled(state)
        if final:
            return self._lost(now, jitter)
        if self._lifeless(now):
            return self._abandon()
        if s.can_subscribe:
            s.subscribing = True
            return self._to(Phase.FOLLOW, [Subscribe()])
        return self._wait(now + self._backoff(jitter, self.timings.poll_cap), Phase.READ)

    def _lifeless(self, now: float) -> bool:
        """No sign of life for too long since the stream was lost."""
        s = self.state
        if s.stream_lost_at is None:
            return False
        last = s.stream_lost_at if s.last_sign_of_life is None else s.last_sign_of_life
        return now - last >= self.timings.no_sign_of_life

    def _turn_ends_at(self) -> float:
        """When the turn has taken as long as a turn may take."""
        return self.state.started_at + self.timings.max_turn

    def _goes_on(self) -> bool:
        """The turn is not over, nor about to end: its task did not just say it settled.

        A task that said so ends the turn at the stream's close, or at the
        read that follows (a full Task, or a settling status update).
        """
        s = self.state
        settled = s.state is not None and s.state.settles_stream
        ending = s.settling_update or (settled and s.phase == Phase.FOLLOW)
        return s.phase != Phase.DONE and not ending

    def _too_long(self) -> list[Action]:
        """Past the longest a turn may take: its task is cancelled; with none, the turn fails."""
        if self.state.task_id is not None:
            return [Cancel(notices.TURN_TOO_LONG), *self._finish("too_long")]
        return [Notify(notices.turn_failed(notices.TOO_LONG)), *self._finish("too_long")]

    def _abandon(self) -> list[Action]:
        return [Cancel(notices.NO_SIGN_OF_LIFE), *self._finish("no_sign_of_life")]

    def _settled(self, state: TaskState) -> list[Action]:
        if state == TaskState.AUTH_REQUIRED:
            return [Cancel(notices.UNUSABLE_PAUSE), *self._finish("auth_required")]
        if state == TaskState.INPUT_REQUIRED:
            return self._finish("input_required")
        return self._finish(state.value)

    # Timers -------------------------------------------------------------------

    def _timer(self, timer: WaitTimer, now: float) -> list[Action]:
        s = self.state
        if s.phase != Phase.WAIT or timer != self._this_wait():
            return []  # a timer of an earlier wait, fired late or twice
        if now < s.wake_at:  # woke early: to tell the thread the agent is busy, or resumed
            return self._busy_notice(now) + self._wait(s.wake_at, s.after_wait)
        if s.after_wait == Phase.SEND:
            return self._send()
        if s.after_wait == Phase.LOOKUP:
            return self._look_up()
        return self._to(Phase.READ, [ReadTask()])

    # Cards ----------------------------------------------------------------------

    def _send(self) -> list[Action]:
        """Send the message, once the card said which protocol is on the wire."""
        return self._to(Phase.SEND, [Send() if self.state.protocol else ReadCard()])

    def _look_up(self) -> list[Action]:
        """Look the message up, once the card said which protocol is on the wire."""
        return self._to(Phase.LOOKUP, [LookUp() if self.state.protocol else ReadCard()])

    def _card_read(self, protocol: str, has_context: bool) -> list[Action]:
        s = self.state
        if s.phase not in (Phase.SEND, Phase.LOOKUP):
            return []
        s.protocol, s.has_context = protocol, has_context
        if s.phase == Phase.LOOKUP and protocol == "1.0" and has_context:
            return self._look_up()
        return self._send()  # 0.3, or no context to look in: sent again

    # Resuming -----------------------------------------------------------------

    def _resumed(self, now: float, jitter: float) -> list[Action]:
        """Continue in a new function what was under way when the last one stopped.

        The Message that is the whole turn already came: the turn is complete
        (nothing else of it was to come). A stream of a known task that was
        open is read again; a wait goes on; a send, a lookup, or a stream that
        named no task has an unknown outcome.
        """
        s = self.state
        if s.message_reply:
            return self._finish(TaskState.COMPLETED.value)
        _stream_gone(s)
        if s.phase == Phase.READ and s.task_id is not None:
            return [ReadTask()]
        if s.phase == Phase.WAIT:
            return self._timer(self._this_wait(), now)
        s.phase = Phase.SEND
        return self._call_failed(CallFailed(Failure.UNKNOWN), now, jitter)

    # Helpers ------------------------------------------------------------------

    def _wait(self, until: float, then: Phase) -> list[Action]:
        """Wait until ``until``, then go to ``then``; a due busy notice wakes the turn sooner."""
        s = self.state
        s.attempts += 1
        until = min(until, self._turn_ends_at())  # no wait outlasts the turn
        s.phase, s.after_wait, s.wake_at = Phase.WAIT, then, until
        notice_at = self._busy_notice_at()
        alarm = until if notice_at is None else min(until, notice_at)
        return [WaitUntil(alarm, self._this_wait())]

    def _this_wait(self) -> WaitTimer:
        return WaitTimer(self.state.attempts)

    def _delay(self, event: CallFailed, jitter: float) -> float:
        """The wait before trying a failed call again: the backoff, or longer for a Retry-After."""
        return max(self._backoff(jitter, self.timings.backoff_cap), self._retry_after(event))

    def _backoff(self, jitter: float, cap: float) -> float:
        """``backoff_start`` doubled per wait of the turn, up to ``cap``; jittered to 50-100%."""
        base = min(self.timings.backoff_start * 2.0 ** min(self.state.attempts, 16), cap)
        return base * (0.5 + jitter / 2)

    def _retry_after(self, event: CallFailed) -> float:
        return min(event.retry_after or 0.0, self.timings.retry_after_cap)

    def _to(self, phase: Phase, actions: list[Action]) -> list[Action]:
        self.state.phase = phase
        return actions

    def _finish(self, outcome: str) -> list[Action]:
        self.state.phase = Phase.DONE
        return [Finish(outcome)]


def first_events(attempted: bool) -> list[Event]:
    """The events a turn that no checkpoint holds begins with: the card is read first.

    ``attempted``: an earlier function began the turn and died before its
    first checkpoint, so whether the agent got it is unknown.
    """
    started = Started(protocol="", can_subscribe=True)
    return [started, CallFailed(Failure.UNKNOWN)] if attempted else [started]


def outcome_of(actions: Iterable[Action]) -> str | None:
    """The outcome of the ``Finish`` among ``actions``, if they end the turn."""
    return next((action.outcome for action in actions if isinstance(action, Finish)), None)


def _stream_gone(state: TurnState) -> None:
    """A stream that was open is gone (its function stopped): the task is to be read."""
    if state.phase == Phase.FOLLOW:
        state.phase, state.events_in_stream, state.settling_update = Phase.READ, 0, False
