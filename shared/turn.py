"""Carrying one turn: the I/O around the pure turn machine.

Theory of operation: ``TurnRun`` performs the actions ``TurnMachine``
decides (send, subscribe, read, look up, cancel, wait, notify, finish) and
feeds back what happened, through parts with one job each: the claim, its
fenced writes, lease, hand-over and checkpoint (``shared.turn_claim``); the
calls to the agent and what their events change (``shared.turn_stream``);
the end and its notices (``shared.turn_ending``); and the questions and
approvals (``shared.turn_pauses``). What the parts share, the turn as it is
carried (``shared.turn_carried``) among it, their ``Carrier`` builds once
(``shared.turn_carrier``). Every event of the agent also goes, in arrival
order, to the pure ``ReplyAssembler``, whose changes ``ThreadReply`` shows
in Slack. What a run must not forget is its *checkpoint*, kept on the turn's
document: the machine's state, the assembler's state (what was delivered),
the reply's state, and what the run knows of the task with its freshness
(``shared.core.task_view``: ``observed_at``, ``caught_up``), and
``reconcile_every``, the cadence at which a healthy stream is reconciled
with GetTask (at every hand-over, when ``stream_follow`` resumes with a
read); a typed, versioned ``shared.checkpoint.Checkpoint``. The claim writes
it (``TurnClaim.save``) when the task is first named, when the reply has
posted a new Slack message, at most every few seconds while a stream runs
(coalesced, so a long answer costs a bounded number of writes), and whenever
the run stops before the turn ends. A function that dies is taken over from
its last checkpoint (see ``shared.engine``): it continues the same Slack
messages, and what was shown since that checkpoint is shown again in place,
not twice (see ``ThreadReply.restore``).

A run stops before the end in two ways. Near its function's deadline it
hands over: it checkpoints and schedules ``stream_follow`` through a Cloud
Task, which resumes with GetTask and SubscribeToTask. For a long wait (a
backoff, a poll) it schedules ``timeout`` at the wake-up time. Both tasks
carry a deterministic name, so a hand-over or timer made twice runs once,
and both carry the session's ``generation``: a delivery whose generation is
not the session's current one is stale and does nothing.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager

from shared.bootstrap import Deps
from shared.checkpoint import Checkpoint
from shared.core import agent_session
from shared.core import questions as lifecycle
from shared.core.questions import Next
from shared.core.session import Session
from shared.core.timers import QuestionTimer, Timer
from shared.core.turn_machine import (
    Action,
    Cancel,
    Finish,
    LookUp,
    Notify,
    Phase,
    ReadCard,
    ReadTask,
    Resumed,
    Send,
    Subscribe,
    TimerFired,
    WaitUntil,
    first_events,
    outcome_of,
)
from shared.slack.left_behind import Predecessor
from shared.store import Turn
from shared.turn_carrier import Carrier
from shared.turn_ending import TurnEnding
from shared.turn_pauses import TurnPauses
from shared.turn_stream import StreamFollower


class TurnRun:
    """One function's part in carrying one turn."""

    def __init__(self, deps: Deps, session: Session, turn: Turn, deadline: float) -> None:
        self.carrier = Carrier(deps, session, turn, deadline)
        """What the run's parts share: the claim, the ports, the turn as carried."""
        self.turn, self.deadline = turn, deadline
        self.clock, self.settings = deps.clock, deps.settings
        self.claim, self.carried = self.carrier.claim, self.carrier.carried
        self.ending = TurnEnding(self.carrier)
        """How the turn ends, and its notices told once (``shared.turn_ending``)."""
        self.follower = StreamFollower(self.carrier, self.ending)
        """The run's calls to the agent and what they change (``shared.turn_stream``)."""
        self.pauses = TurnPauses(self.carrier, self.follower, self.ending, run=self._run)
        """The turn's questions and approvals (``shared.turn_pauses``)."""

    @property
    def session(self) -> Session:
        """The session as this function last read or wrote it."""
        return self.claim.session

    # Entry points -------------------------------------------------------------

    def start(self) -> None:
        """Carry the turn from the beginning, or take over one whose function died."""
        with self._reply_closed_at_end():
            checkpoint = self.claim.load()
            if checkpoint is None:
                self._begin()
            elif self._carry_on(checkpoint, Predecessor.DIED):
                if self.carried.machine.state.phase == Phase.DONE:
                    self.pauses.taken_over()  # paused on a question when it stopped
                else:
                    self.carrier.show_working()
                    self._run(self.follower.handle(Resumed()))

    def resume(self, timer: Timer | None) -> None:
        """Continue from the checkpoint: after a hand-over, or when a timer fired."""
        with self._reply_closed_at_end():
            checkpoint = self.claim.load()
            if checkpoint is None or not self._carry_on(checkpoint):
                return
            if isinstance(timer, QuestionTimer):
                self.pauses.timed_out(timer.key)
                return
            # processing lapses after an hour: each function says so anew
            self.carrier.show_working()
            self._run(self.follower.handle(Resumed() if timer is None else TimerFired(timer)))

    def answer(self, key: str) -> None:
        """Send the answer to a paused task's question, then follow the task as a turn."""
        with self._reply_closed_at_end():
            question = self.carrier.questions.get(key)
            if lifecycle.after_answer_task(question, self.turn.id) != Next.SEND_ANSWER:
                return
            assert question is not None
            self.claim.write_turn()  # the fence first
            self.carrier.restore(self.claim.load())
            self.pauses.send_answer(question)

    def stop(self) -> None:
        """A person stopped the turn: cancel its task, end the reply and any prompt, say so.

        This function took the turn from its carrier (``engine.on_stop``), or
        found the stop recorded when it came to carry the turn on. The thread
        is told who stopped it and whether the agent's task stopped, exactly
        once (as the end's notice: ``shared.turn_ending``): the turn then ends
        as ``stopped``, and the thread's next turn goes on. A turn whose end
        was being told already (this stop's, or its carrier's) ends as that.
        """
        who = self.turn.stopped_by
        assert who is not None
        if self._carry_on(self.claim.load(), Predecessor.STOPPED):
            self.ending.stopped(who, self.follower.task_of_the_message)

    @contextmanager
    def _reply_closed_at_end(self) -> Iterator[None]:
        """However the run ends (a failure too), its reply stops writing to the thread."""
        try:
            yield
        finally:
            self.carried.reply.close()

    def _carry_on(
        self, checkpoint: Checkpoint | None, predecessor: Predecessor = Predecessor.HANDED_OVER
    ) -> bool:
        """Carry on from ``checkpoint``; False when its end was being told (the turn is ended now).

        The fence is written first: the carrier before (dead, stalled, or the
        one a stop took the turn from) can write no more. ``predecessor``: how
        that carrier let the turn go (``Carrier.restore``).
        """
        self.claim.write_turn()
        if self.ending.ended_already(checkpoint):
            return False
        self.carrier.restore(checkpoint, predecessor)
        return True

    def _begin(self) -> None:
        """Carry a turn that no checkpoint holds: from its first send."""
        # One write: the fence, running, and begun (a function that takes over
        # later cannot know whether this one reached the agent).
        self.claim.write_turn(
            status="running", attempted=True, started_at=self.turn.started_at or self.clock.now()
        )
        self.carrier.show_working()
        self.carrier.adopt_left_before_checkpoint()
        title = agent_session.alert_title(self.turn.trigger, self.turn.title)
        if title:
            self.carrier.thread_status.rename(title)  # the thread an alert began is named after it
        self.carried.reply.working()
        self.carried.machine = self.carrier.new_machine()
        *earlier, first = first_events(attempted=self.turn.attempted)
        for event in earlier:
            self.carried.machine.handle(event, self.clock.time())
        self._run(self.follower.handle(first))

    # The loop -------------------------------------------------------------------

    def _run(self, actions: list[Action]) -> None:
        pending = deque(actions)
        while pending:
            if self.clock.monotonic() >= self.deadline:
                self.claim.hand_over(self.carried)
                return
            action = pending.popleft()
            self.claim.fence.check()
            match action:
                case ReadCard():
                    pending.extend(self.follower.read_card())
                case Send():
                    pending.extend(self.follower.send())
                case Subscribe():
                    pending.extend(self.follower.subscribe())
                case ReadTask():
                    pending.extend(self.follower.read_task())
                case LookUp():
                    pending.extend(self.follower.look_up())
                case Cancel(notice=notice):
                    self.carried.telling.ends_with(outcome_of(pending))
                    self.ending.cancel(notice)
                case WaitUntil(at=at, timer=timer):
                    wait = at - self.clock.time()
                    if wait <= self.settings.inline_wait_seconds and (
                        self.clock.monotonic() + wait < self.deadline
                    ):
                        self.clock.sleep(max(0.0, wait))
                        pending.extend(self.follower.handle(TimerFired(timer)))
                    else:
                        self.claim.sleep_until(at, timer, self.carried)
                        return
                case Notify(text=text):
                    self.carried.telling.ends_with(outcome_of(pending))
                    self.ending.tell(text)
                case Finish(outcome=outcome):
                    self.ending.finish(outcome, pause=self.pauses.pause)
                    return
        if self.carried.machine.state.phase == Phase.FOLLOW:
            # the stream was cut at the deadline, still open
            self.claim.hand_over(self.carried)
