"""What a person sees of one reply, as changes to show: text and steps.

Theory of operation. The functions feed every event of a send or a follow,
in arrival order, to one ``ReplyAssembler``; it returns what changed for the
person. Steps come first, then the text: ``TextAppended`` when the answer
only grew (cheap to stream), ``TextReplaced`` when text already shown
changed (the renderer must edit). A ``Task`` is always a snapshot, whether
GetTask, SubscribeToTask or the send returned it; every other event is live
stream. The answer is the artifacts' text, or the text of the Message that
is the whole turn (the turn machine admits no other: see
``TurnMachine.admits``; events it does not admit never reach the assembler).
Status and history
text, file parts and data parts other than tool calls and results are never
shown. All state is plain JSON (``to_state``/``from_state``), so a follow in
another function continues the same reply.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from shared.core.artifacts import ArtifactText
from shared.core.model import Message, StatusUpdate, StreamEvent, Task
from shared.core.tool_ledger import ToolPartLedger
from shared.core.tool_parts import tool_parts_of_task
from shared.core.tool_steps import StepBook, StepEvent, StepFinished, StepStarted


@dataclass(frozen=True)
class TextAppended:
    """The answer grew: ``text`` follows what was shown."""

    text: str


@dataclass(frozen=True)
class TextReplaced:
    """Text already shown changed: ``text`` is the whole answer now."""

    text: str


ReplyChange = TextAppended | TextReplaced | StepStarted | StepFinished


class ReplyAssembler:
    """One reply's answer text and steps, from the events of its task."""

    def __init__(self) -> None:
        """Start the reply to a new turn."""
        self._artifacts = ArtifactText()
        self._ledger = ToolPartLedger()
        self._steps = StepBook()
        self._message_reply: str | None = None

    @classmethod
    def for_answer(cls, paused_task: Task | None) -> ReplyAssembler:
        """Start the reply to an answer to a paused task (a question or an approval).

        Args:
            paused_task: The task as GetTask read it just before the answer was
                sent, or None when it could not be read. Its tool parts count as
                delivered, its text as shown, and its calls are taken for
                results that arrive without their call.
        """
        assembler = cls()
        if paused_task is not None:
            assembler._artifacts.take_as_shown(paused_task)
            assembler._ledger.count_as_delivered(paused_task)
            assembler._steps = StepBook(paused_calls=tool_parts_of_task(paused_task))
        return assembler

    @property
    def answer_text(self) -> str:
        """The answer as it stands."""
        if self._message_reply is not None:
            return self._message_reply
        return self._artifacts.text

    def feed(self, event: StreamEvent) -> list[ReplyChange]:
        """Take the next event of the turn; return what changed for the person.

        A Message is the whole turn: the caller feeds no other (``TurnMachine.admits``).
        """
        before = self.answer_text
        steps: list[StepEvent] = []
        if isinstance(event, Message):
            self._message_reply = event.text
        elif isinstance(event, Task):
            steps = self._steps.deliver(self._ledger.read_snapshot(event))
            self._artifacts.apply_snapshot(event)
        elif isinstance(event, StatusUpdate):
            steps = self._steps.deliver(self._ledger.read_status(event))
        else:
            steps = self._steps.deliver(self._ledger.read_chunk(event))
            self._artifacts.apply_chunk(event)
        return [*steps, *_text_change(before, self.answer_text)]

    def results_in(self, task: Task) -> list[StepFinished]:
        """The step results ``task`` holds that this reply has not delivered (a person's stop).

        ``task`` is the task as the agent reports it once stopped (canonical),
        read as any snapshot is (``feed``): a function that carried the turn
        may have read these results after the state this assembler continues.
        Only results are returned: a stopped reply shows no new step or text.
        """
        return [change for change in self.feed(task) if isinstance(change, StepFinished)]

    def finish(self) -> list[ReplyChange]:
        """The send has ended or failed: deliver the tool results still waiting for their call."""
        return list(self._steps.flush())

    def to_state(self) -> dict[str, Any]:
        """A JSON-able form, read back by ``from_state``."""
        return {
            "artifacts": self._artifacts.to_state(),
            "tools": self._ledger.to_state(),
            "steps": self._steps.to_state(),
            "message_reply": self._message_reply,
        }

    @classmethod
    def from_state(cls, state: Mapping[str, Any]) -> ReplyAssembler:
        """The assembler ``to_state`` wrote."""
        assembler = cls()
        assembler._artifacts = ArtifactText.from_state(state["artifacts"])
        assembler._ledger = ToolPartLedger.from_state(state["tools"])
        assembler._steps = StepBook.from_state(state["steps"])
        assembler._message_reply = state["message_reply"]
        return assembler


def _text_change(before: str, after: str) -> list[ReplyChange]:
    if after == before:
        return []
    if after.startswith(before):
        return [TextAppended(after[len(before) :])]
    return [TextReplaced(after)]
