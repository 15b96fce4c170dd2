"""What a person sees of one reply, as changes to show: text and steps.

Theory of operation. The functions feed every event of a send or a follow,
in arrival order, to one ``ReplyAssembler``; it returns what changed for the
person. Steps come first, then the text: ``TextAppended`` when the answer
only grew (cheap to stream), ``TextReplaced`` when text already shown
changed (the renderer must edit). A ``Task`` is always a snapshot, whether
GetTask, SubscribeToTask or the send returned it; every other event is live
stream. The answer is the artifacts' text, or the text of the one Message
that is the whole turn: from the agent, naming no task, before any event
named one, and not in reply to an answer to a pause. Status and history
text, file parts and data parts other than tool calls and results are never
shown. All state is plain JSON (``to_state``/``from_state``), so a follow in
another function continues the same reply.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from shared.core.artifacts import ArtifactText
from shared.core.model import Message, Role, StatusUpdate, StreamEvent, Task
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
        self._answers_pause = False
        self._task_named = False
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
        assembler._answers_pause = True
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

    @property
    def is_message_reply(self) -> bool:
        """Whether a Message from the agent was the whole turn."""
        return self._message_reply is not None

    def feed(self, event: StreamEvent) -> list[ReplyChange]:
        """Take the next event of the task; return what changed for the person."""
        before = self.answer_text
        steps: list[StepEvent] = []
        if isinstance(event, Message):
            self._take_message(event)
        elif isinstance(event, Task):
            self._task_named = True
            steps = self._steps.deliver(self._ledger.read_snapshot(event))
            self._artifacts.apply_snapshot(event)
        elif isinstance(event, StatusUpdate):
            self._task_named = self._task_named or event.task_id is not None
            steps = self._steps.deliver(self._ledger.read_status(event))
        else:
            self._task_named = self._task_named or event.task_id is not None
            steps = self._steps.deliver(self._ledger.read_chunk(event))
            self._artifacts.apply_chunk(event)
        return [*steps, *_text_change(before, self.answer_text)]

    def finish(self) -> list[ReplyChange]:
        """The send has ended or failed: deliver the tool results still waiting for their call."""
        return list(self._steps.flush())

    def _take_message(self, message: Message) -> None:
        is_whole_turn = (
            message.role is Role.AGENT
            and message.task_id is None
            and not self._task_named
            and not self._answers_pause
            and self._message_reply is None
        )
        if is_whole_turn:
            self._message_reply = message.text

    def to_state(self) -> dict[str, Any]:
        """A JSON-able form, read back by ``from_state``."""
        return {
            "artifacts": self._artifacts.to_state(),
            "tools": self._ledger.to_state(),
            "steps": self._steps.to_state(),
            "answers_pause": self._answers_pause,
            "task_named": self._task_named,
            "message_reply": self._message_reply,
        }

    @classmethod
    def from_state(cls, state: Mapping[str, Any]) -> ReplyAssembler:
        """The assembler ``to_state`` wrote."""
        assembler = cls()
        assembler._artifacts = ArtifactText.from_state(state["artifacts"])
        assembler._ledger = ToolPartLedger.from_state(state["tools"])
        assembler._steps = StepBook.from_state(state["steps"])
        assembler._answers_pause = state["answers_pause"]
        assembler._task_named = state["task_named"]
        assembler._message_reply = state["message_reply"]
        return assembler


def _text_change(before: str, after: str) -> list[ReplyChange]:
    if after == before:
        return []
    if after.startswith(before):
        return [TextAppended(after[len(before) :])]
    return [TextReplaced(after)]
