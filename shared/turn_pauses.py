"""The pause side of a turn: the agent asks a person, and what the turn does next.

Theory of operation: when the task pauses (input-required, auth-required),
the core decides what the pause is (``shared.core.pauses.read_pause``) and
what to do with it (``shared.core.questions.asked``): refuse it and end the
turn, send the answer at once (an approval the config decides, a question
already answered), or ask. A question is stored, the session claimed anew
for the wait (its ``generation`` and ``open_question``), the turn marked
paused and checkpointed, and its timer set, all before the prompt is shown:
a click that comes at once finds it, and a prompt Slack fails to show still
times out. What a paused turn does next, after an answer, its timer or a
take-over, is the core's ``Next`` (``after_question``): send the answer (a
new reply, the machine's answer phase, the card read again, since an answer
goes only to the agent that asked), read the task, or time out.
"""

from __future__ import annotations

from collections.abc import Callable

import structlog

from shared.a2a.errors import AgentError
from shared.core import agent_session, notices
from shared.core import questions as lifecycle
from shared.core.answers import progress_for
from shared.core.model import Task
from shared.core.pauses import Unusable, read_pause
from shared.core.questions import (
    Ask,
    Next,
    OpenQuestion,
    Place,
    QuestionsNotAllowed,
    RefusePause,
    SendAnswer,
)
from shared.core.reply import ReplyAssembler
from shared.core.timers import QuestionTimer
from shared.core.turn_machine import Action, Started, Unpaused
from shared.slack.prompts import render_prompt
from shared.turn_carrier import Carrier
from shared.turn_ending import TurnEnding
from shared.turn_stream import StreamFollower

log = structlog.get_logger()


class TurnPauses:
    """A turn's questions and approvals, from the pause to what comes after."""

    def __init__(
        self,
        carrier: Carrier,
        follower: StreamFollower,
        ending: TurnEnding,
        run: Callable[[list[Action]], None],
    ) -> None:
        self.carrier, self.follower, self.ending = carrier, follower, ending
        self.carried, self.claim, self.client = carrier.carried, carrier.claim, carrier.client
        self.turn, self.binding, self.backend = carrier.turn, carrier.binding, carrier.backend
        self.questions, self.tasks = carrier.questions, carrier.claim.tasks
        self.thread_status, self.clock = carrier.thread_status, carrier.deps.clock
        self.lease = carrier.deps.settings.lease
        self._run = run
        """Carry out the machine's actions, as the run does."""

    def pause(self) -> None:
        """The task asks a person: show the prompt and wait, or end a turn whose pause is unusable."""
        status = self.carried.task.status
        assert status is not None
        pause = read_pause(
            self.backend.dialect,
            self.follower.task_id(),
            self.claim.session.context_id,
            status,
            session=self.claim.session.id,
        )
        if isinstance(pause, Unusable):
            self._refuse(pause.reason)
            return
        turn = self.turn
        decision = lifecycle.asked(
            pause,
            self.questions.get(pause.key),
            self.carried.answering,
            self.binding.interactions.allowed(),
            Place(self.claim.session.id, turn.id, self.binding.name, turn.channel, turn.thread_ts),
            prompt_fits=not isinstance(render_prompt(progress_for(pause)), Unusable),
        )
        match decision:
            case RefusePause(reason=reason):
                self._refuse(reason)
            case QuestionsNotAllowed(close=existing):
                self.carried.telling.ends_with("unusable_pause")
                self.ending.cancel(notices.QUESTIONS_NOT_ALLOWED)
                self.questions.close(existing)
                self.ending.end("unusable_pause")
            case SendAnswer(question=question):
                self.send_answer(question)
            case Ask():
                self._ask(decision)

    def _ask(self, ask: Ask) -> None:
        """Show the question ``asked`` decided on, and wait for people (or deny at once)."""
        self.questions.close(ask.close)  # answered; the agent asks something new
        if ask.retried:  # the answer was not taken: the question is open again
            self.carried.reply.notice(notices.REQUEST_FAILED)
        question = ask.question
        if ask.deny:
            self.send_answer(self.questions.deny_all(question))
            return
        wake = self.clock.now() + ask.wait
        generation = self.claim.advance_generation(
            lease=ask.wait + self.lease, open_question=question.key
        )
        question = lifecycle.waits_at(question, generation)
        # Stored with the turn paused, under the claim (a function a person's stop
        # took the turn from stores none: nothing would close it), and its timer
        # set, before it is shown: a click that comes at once finds it, and a
        # prompt Slack fails to show still times out.
        self.questions.put(question, status="paused")
        self.claim.save(self.carried, force=True)
        self.tasks.wake(QuestionTimer(question.key), question.generation, wake)
        self.questions.show(question)
        self.thread_status.show(agent_session.waiting())

    def taken_over(self) -> None:
        """A paused turn taken over: the timer or answer that claimed it died."""
        key = self.claim.session.open_question
        question = self.questions.get(key)
        log.info("paused_turn_taken_over", turn=self.turn.id, question=key)
        self.after_question(lifecycle.after_takeover(question, self.turn.id), question)

    def _refuse(self, reason: str) -> None:
        log.warning("pause_unusable", turn=self.turn.id, reason=reason)
        self.carried.telling.ends_with("unusable_pause")
        self.ending.cancel(notices.UNUSABLE_PAUSE)
        self.ending.end("unusable_pause")

    def timed_out(self, key: str) -> None:
        """No one answered in time: deny the approval, or cancel the task."""
        timed_out, stored = self.questions.time_out(key)
        self.after_question(lifecycle.after_timer(timed_out, stored, self.turn.id), stored)

    def after_question(self, next_step: Next, question: OpenQuestion | None) -> None:
        """Carry out what the core decided a turn paused on ``question`` does next."""
        match next_step:
            case Next.SEND_ANSWER:
                assert question is not None
                self.send_answer(question)
            case Next.READ_TASK:
                self._run(self.follower.handle(Unpaused()))
            case Next.TIME_OUT:
                self.carried.telling.ends_with("question_timed_out")
                self.ending.cancel(notices.QUESTION_TIMED_OUT)
                self.ending.end("question_timed_out")
            case Next.NOTHING:
                pass

    def send_answer(self, question: OpenQuestion) -> None:
        """Read the paused task once (its tool parts count as delivered), then send the answer."""
        task_id = self.follower.task_id()
        try:
            paused: Task | None = self.client.get_task(task_id)
        except AgentError:
            paused = None  # answered without it (contract, Tool calls and results)
        self.carried.answering = question
        self.carried.assembler = ReplyAssembler.for_answer(paused)
        self.carried.reply = self.carrier.new_reply(question.key)
        self.carried.machine = self.carried.machine.for_answer(self.clock.time())
        # the answer's reply is a new one
        self.claim.write_turn(status="running", shown_steps={}, posting=False, started_streams=[])
        self.turn.shown_steps, self.turn.posting, self.turn.started_streams = {}, False, []
        self.carrier.show_working()
        self.carried.reply.working()
        # The card first: an answer goes only to the agent that asked.
        self._run(self.follower.handle(Started(protocol="", can_subscribe=True)))
