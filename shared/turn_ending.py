"""How a turn ends: its notices told once, the task cancelled, the end recorded.

Theory of operation: when the machine finishes the turn, the core's
``ending`` says how it ends: paused on a question (the run's pause side
takes it), told a notice, answered (with feedback), or quiet. A notice of
the turn's end (a stop's too) is shown exactly once, whichever function
tells it (``shared.core.telling``): what is recorded before the post depends
on the notice (a notice in the turn: checkpoint the machine, then post; the
first of the end: show all of the answer, checkpoint the end as ``told``
with its text, then post it marked with Slack message metadata; a later
one: just post). A function that takes the turn over from a checkpoint
whose end is told reads the thread back and posts the notice only if no
message carries its mark, then ends the turn (``ended_already``). A cancel is told as it
went: a task that does not stop is told as one that could not be stopped.
The end itself (``finish_turn``) closes the turn's questions, writes the
outcome under the claim, and shows the thread's session as ended.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import structlog
from slack_sdk.errors import SlackApiError

from shared.checkpoint import NONE as NO_CHECKPOINT
from shared.checkpoint import Checkpoint
from shared.core import agent_session, notices
from shared.core import session as sessions
from shared.core.outcome import Answered, Paused, Quiet, Told, ending
from shared.core.session import CloseQuestion, ForgetContext
from shared.core.telling import Tell, mark, untold
from shared.core.tool_steps import StepFinished
from shared.core.turn_machine import TurnState
from shared.feedback import feedback_blocks
from shared.slack.reply import ThreadReply
from shared.slack.thread_read_back import ThreadReadBack
from shared.store import DONE_TURNS_KEPT, Turn
from shared.turn_carrier import Carrier

log = structlog.get_logger()


def tell_if_untold(
    reply: ThreadReply,
    thread: ThreadReadBack,
    turn: Turn,
    outcome: str,
    notice: str,
    who: str | None = None,
) -> None:
    """A taker's telling of ``turn``'s end (``outcome``), which a function that died was telling.

    That function recorded the end as being told, then died before or after
    posting ``notice`` (mentioning ``who``): the thread is read back, and the
    notice posted, marked, only if no message carries its mark
    (``shared.core.telling``).
    """
    wanted = mark(turn.id, outcome)
    if untold(thread.read_back(since=turn.ts or None), wanted):
        log.info("turn_end_told_by_taker", turn=turn.id, outcome=outcome)
        reply.notice(notice, who, metadata=wanted)


class TurnEnding:
    """The end of the turn, and every notice of it."""

    def __init__(self, carrier: Carrier) -> None:
        self.carried, self.claim, self.client = carrier.carried, carrier.claim, carrier.client
        self.turn, self.questions = carrier.turn, carrier.questions
        self.thread_status, self.clock = carrier.thread_status, carrier.deps.clock
        self.thread = ThreadReadBack(carrier.chat, self.turn.channel, self.turn.thread_ts)
        """The thread read back, by a taker that finds the end being told (``tell_if_untold``)."""
        self.agent_name = carrier.backend.name
        """The agent's name, in the feedback an answer offers."""

    def finish(self, outcome: str, pause: Callable[[], None]) -> None:
        """The machine finished the turn: show the rest, then pause, or tell and end it."""
        self.carried.reply.show(self.carried.assembler.finish())
        answered = bool(self.carried.assembler.answer_text.strip())
        match ending(outcome, answered, self.carried.task.status):
            case Paused():
                self.carried.reply.finish(paused=True)
                pause()  # waits for a person, or ends the turn
                return
            case Told(notice=notice):
                self.carried.telling.ends_with(outcome)
                self.tell(notice)
            case Answered():
                self.carried.telling.ends_with(outcome)
                self.carried.reply.finish(feedback_blocks(self.turn.id, self.agent_name))
            case Quiet():
                self.carried.telling.ends_with(outcome)
                self.carried.reply.finish()
        self.end(outcome)

    def cancel(self, notice: notices.CancelNotice) -> None:
        """Cancel the task, then tell the thread ``notice`` as it went (contract, Methods).

        A task that does not stop (``AgentClient.cancel_until_stopped``) is
        told as one that could not be stopped.
        """
        task_id = self.carried.machine.state.task_id
        stopped = (
            task_id is None or self.client.cancel_until_stopped(task_id, turn=self.turn.id).stopped
        )
        self.tell(notice.after(stopped))

    def end(self, outcome: str) -> None:
        """The turn ends with ``outcome`` (told, if it was to be told)."""
        if outcome == "session_gone":
            self.claim.change_session(ForgetContext())
        self.finish_turn(outcome)

    def tell(self, notice: str, who: str | None = None) -> None:
        """Post ``notice`` (mentioning ``who``); the end's exactly once (``shared.core.telling``)."""
        match self.carried.telling.tell(notice, who):
            case Tell.IN_TURN:
                self.claim.save(self.carried, force=True)
                self.carried.reply.notice(notice, who)
            case Tell.AGAIN:
                self.carried.reply.notice(notice, who)
            case Tell.END:
                self.carried.reply.finish()  # all of the answer first, so the taker has nothing to show
                # the post next: the smallest window
                self.claim.save(self.carried, force=True, renew=False)
                try:
                    self.carried.reply.notice(notice, who, metadata=self._end_mark())
                except SlackApiError:
                    self.carried.telling.not_shown()
                    self.claim.save(self.carried, force=True)
                    raise

    def _end_mark(self) -> dict[str, Any]:
        """The metadata of the notice of the turn's end (``shared.core.telling.mark``)."""
        told = self.carried.telling.told
        assert told is not None
        return mark(self.turn.id, told)

    def ended_already(self, checkpoint: Checkpoint | None) -> bool:
        """Whether the function that wrote ``checkpoint`` was telling the turn's end: end it.

        Its notice is posted if the thread does not show it (that function
        died before its post); a checkpoint of an earlier release, which has
        no notice, ends the turn untold.
        """
        if checkpoint is None or checkpoint.told is None:
            return False
        log.info("turn_end_already_told", turn=self.turn.id, outcome=checkpoint.told)
        sessions.follow(self.claim.session, TurnState.from_dict(checkpoint.machine).task_id)
        self.carried.telling.taken_over(checkpoint.told)
        if checkpoint.notice is not None:
            tell_if_untold(
                self.carried.reply,
                self.thread,
                self.turn,
                checkpoint.told,
                checkpoint.notice,
                checkpoint.notice_who,
            )
        self.end(checkpoint.told)
        return True

    def finish_turn(self, outcome: str) -> None:
        """Record the end of the turn (its notice, if any, is shown); its questions close."""
        self.questions.close_all(self.turn.id)
        if self.claim.session.open_question:
            self.claim.change_session(CloseQuestion())
        if outcome not in ("completed", "input_required"):
            log.warning("turn_failed", turn=self.turn.id, outcome=outcome)
        self.claim.write_turn(
            status="done",
            outcome=outcome,
            task_id=self.carried.machine.state.task_id,
            **NO_CHECKPOINT.fields(),
            expire_at=self.clock.now() + DONE_TURNS_KEPT,
        )
        self.thread_status.show(agent_session.ended(outcome))

    def stopped(self, who: str, task_of_the_message: Callable[[], str | None]) -> None:
        """A person stopped the turn: cancel its task, end the reply and any prompt, say so.

        The task is the one the machine follows, else the one holding the
        turn's message (``task_of_the_message``); a turn never sent has no
        task and stopped at once, and one sent whose task is unknown is told
        as not stopped. The reply ends once the task is cancelled, each step
        still running finished at the result the task holds then, or closed
        as having none: the task as the agent reports it is canonical, and the
        carrier the stop took the turn from may have read a result after the
        checkpoint this function continues from (seeds 899, 1820, 2449, 5002).
        """
        self.carried.reply.close()  # nothing goes out while the task is cancelled
        self.questions.stopped(self.turn.id, who)
        task_id = self.carried.machine.state.task_id or task_of_the_message()
        stopped = task_id is None if not self.turn.attempted else False
        results: list[StepFinished] = []
        if task_id is not None:
            cancelled = self.client.cancel_until_stopped(task_id, turn=self.turn.id)
            stopped = cancelled.stopped
            if cancelled.task is not None:
                results = self.carried.assembler.results_in(cancelled.task)
        self.carried.reply.stopped(self.turn.stopped_streams, results)
        self.carried.telling.ends_with("stopped")
        self.tell(notices.STOPPED.after(stopped), who=who)
        log.info("turn_stopped", turn=self.turn.id, by=who, task=task_id, task_stopped=stopped)
        self.finish_turn("stopped")
