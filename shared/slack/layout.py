"""A reply's messages, and what its fallback writes into them and when: decided without I/O.

Theory of operation. A reply is a list of Slack messages (``Message``),
streamed or posted. When text already shown changes (a replace, a
take-back, a canonical snapshot that differs) a stream cannot take it back,
and where no stream can start there is none: the reply then falls back to
ordinary messages, for good, and ``FallbackLayout`` decides what each one
shows. The whole answer, converted to Slack Markdown, is laid out over the
messages in order (``plan``); every message but the last keeps the amount
of text it holds, and the last takes the rest, with new messages added when
it is full. Streamed messages are edited with ``markdown_text``; the
messages the fallback posts hold markdown blocks with the steps as
``task_card`` blocks between them, each at the point of the text where its
call arrived (``place_card``; a message holds at most
``MAX_CARDS_PER_MESSAGE``). The last message, streamed or posted, ends with
the answer's feedback blocks once it is complete (a streamed one then holds
its text as a markdown block: text alone would show in the blocks' place). A message already posted that a
take-back left with neither text nor cards shows ``EMPTIED``, and so does one
a function that died posted and the one taking over adopted with nothing of
its own to show (``adopted``). ``plan`` names each message that must
show something new (``Write``), with when it may be written: a message is
edited at most once per ``update_interval`` after its last write, so edits
coalesce; a message not posted yet may be posted at once. The reply's
timer writes the layout at most once per ``update_interval`` (``layout_at``);
when the reply ends or hands over, every write ``plan`` names is made, each
once its message's interval passed, so the final state is always written.
``shared.slack.reply.ThreadReply`` makes the Slack calls and reports each
one Slack took (``wrote``).

The messages are plain JSON (``to_state``/``from_state``), part of the
turn's checkpoint. A function that takes the turn over after one that died
cannot know which messages that one edited since: each posted message is
written whole once more (``Message.rewrite``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from shared.slack.markdown import cut_point, escape_mrkdwn, seam, to_slack_markdown
from shared.slack.pacing import SEAM_ROOM, ReplyLimits

Step = dict[str, Any]
"""A step as the reply shows it: title, status, and maybe details and output."""

EMPTIED = "…"
"""What a message shows once a take-back left it no text (one posted: a markdown block)."""
MAX_CARDS_PER_MESSAGE = 24
"""Slack allows 50 blocks in a message: the cards and the markdown blocks between them."""


@dataclass
class Message:
    """One message of the reply, as Slack shows it."""

    ts: str
    """Empty until a message the fallback laid out is posted."""
    streamed: bool
    streaming: bool = False
    started_at: float = 0.0
    text: str = ""
    """The Slack Markdown it shows (a streamed one: seams included)."""
    content: int = 0
    """How many characters of the answer's Slack Markdown it holds."""
    cards: list[tuple[str, int]] = field(default_factory=list)
    """Steps shown as ``task_card`` blocks (posted messages): call ID, and the
    position in the message's text where the call arrived."""
    written: str | None = None
    """The payload last written with chat.postMessage or chat.update."""
    written_at: float = 0.0
    rewrite: bool = False
    """Slack may show more than ``text`` (its function died after its last
    checkpoint, and what it streamed since is streamed again): when the
    stream ends, ``text`` is written whole. The function may also have
    fallen back since, or been in the fallback, and edited any message: each
    is written whole once more (a stopped stream's at once, on take-over)."""

    def to_state(self) -> dict[str, Any]:
        """JSON-able form (a field loop: ``asdict`` deep-copies, at ~20 times the cost)."""
        return {**vars(self), "cards": list(self.cards)}

    @classmethod
    def from_state(cls, state: Mapping[str, Any]) -> Message:
        return cls(**{**state, "cards": [tuple(card) for card in state["cards"]]})


@dataclass(frozen=True)
class Write:
    """One message to write: chat.update it, or chat.postMessage it when it has no ts."""

    message: Message
    fields: dict[str, Any]
    """The call's arguments besides channel and ts: ``markdown_text``, or ``blocks`` and ``text``."""
    payload: str
    """``fields`` as JSON: what the message shows once written."""
    ready_at: float
    """Not before this: the message was written less than ``update_interval`` ago."""


class FallbackLayout:
    """The reply's messages, and the fallback's layout of the answer over them."""

    def __init__(self, limits: ReplyLimits, messages: list[Message] | None = None) -> None:
        self._limits = limits
        self.messages: list[Message] = messages if messages is not None else []
        self.laid_out_at = 0.0
        """When ``plan`` last laid the answer out."""
        self.feedback: list[dict[str, Any]] = []
        """Blocks the last posted message ends with, once the answer is complete."""

    def stream(self) -> Message | None:
        """The message streaming now, if any.

        The last one, but for a reply that fell back: the cards it places may
        follow the stream until that stops (``timetable.Due.STOP``).
        """
        return next((message for message in reversed(self.messages) if message.streaming), None)

    def posted(self) -> bool:
        """Whether Slack holds a message of the reply."""
        return any(message.ts for message in self.messages)

    def layout_at(self) -> float:
        """When the layout may be computed and written again."""
        return self.laid_out_at + self._limits.update_interval

    def place_card(self, call_id: str, answer: str, room: int) -> None:
        """A step's card, in the last message at the end of its text (in a new one if need be).

        Args:
            call_id: The step's tool call.
            answer: The answer so far (its text before the step).
            room: Characters a message may hold (``StreamPacer.room``).
        """
        if any(call_id == key for message in self.messages for key, _ in message.cards):
            return  # the card shows the step's new state at the next write
        self._lay_out(answer, room)  # so the last message's content is all the text before the step
        last = self.messages[-1] if self.messages else None
        if last is None or last.streamed or len(last.cards) >= MAX_CARDS_PER_MESSAGE:
            last = Message(ts="", streamed=False)
            self.messages.append(last)
        last.cards.append((call_id, last.content))

    def plan(self, answer: str, steps: Mapping[str, Step], room: int, now: float) -> list[Write]:
        """Lay ``answer`` out; each message that must show something new, in order.

        Args:
            answer: The whole answer.
            steps: The reply's steps, by call ID (the cards show their state).
            room: Characters a message may hold (``StreamPacer.room``).
            now: What time it is.
        """
        self.laid_out_at = now
        text, bounds = self._lay_out(answer, room)
        writes: list[Write] = []
        for message, (start, end) in zip(self.messages, bounds):
            fields = self._fields(message, steps, text, start, end)
            if fields is None:
                continue
            payload = json.dumps(fields)
            if payload == message.written and not message.rewrite:
                continue
            ready_at = message.written_at + self._limits.update_interval if message.ts else 0.0
            writes.append(Write(message, fields, payload, ready_at))
        return writes

    def wrote(self, write: Write, ts: str, now: float) -> None:
        """Slack took ``write`` (``ts``: the message's, posted or not) at ``now``."""
        message = write.message
        message.ts = ts
        message.written, message.written_at = write.payload, now
        message.rewrite = False
        if message.streamed:
            message.text = _streamed_text(write.fields)

    def taken_over(self) -> None:
        """The function before died: any message Slack holds may show more than it knows."""
        for message in self.messages:
            message.rewrite = bool(message.ts)

    def adopted(self, orphans: list[str], streamed: Collection[str]) -> None:
        """Messages of the reply that no checkpoint names (ts, oldest first) are its own.

        Those in ``streamed`` were streams, edited with ``markdown_text`` as
        the reply's streams are, and follow the last message (the fallback,
        which alone lays out messages not posted yet, starts no stream);
        each posted one fills the first message not posted yet, or follows
        the last. The messages Slack holds are then in the order it shows
        them: one older than those the checkpoint names (a function left it
        before the first checkpoint, and the one after began afresh: seed
        18734) comes before them, so the answer reads on down the thread.
        None streams any more (the caller stops each that may), and each is
        written at the next layout (it was never written here), one with
        nothing of the reply to show as ``EMPTIED``.
        """
        waiting = [m for m in self.messages if not m.ts and not m.streamed]
        for ts in orphans:
            if ts in streamed:
                self.messages.append(Message(ts=ts, streamed=True))
            elif waiting:
                waiting.pop(0).ts = ts
            else:
                self.messages.append(Message(ts=ts, streamed=False))
        self.messages.sort(key=lambda message: float(message.ts) if message.ts else math.inf)
        for message in self.messages:
            message.streaming = False

    def to_state(self) -> list[dict[str, Any]]:
        return [message.to_state() for message in self.messages]

    @classmethod
    def from_state(cls, state: Sequence[Mapping[str, Any]], limits: ReplyLimits) -> FallbackLayout:
        return cls(limits, [Message.from_state(message) for message in state])

    def _lay_out(self, answer: str, room: int) -> tuple[str, list[tuple[int, int]]]:
        """The answer as Slack Markdown, and where each message's text starts and ends in it.

        Adds a message when the last one is full.
        """
        text = to_slack_markdown(answer)
        bounds: list[tuple[int, int]] = []
        start = 0
        for message in self.messages[:-1]:
            end = min(len(text), start + message.content)
            bounds.append((start, end))
            start = end
        while True:
            end = start + cut_point(text[start:], room - SEAM_ROOM)
            bounds.append((start, end))
            start = end
            if start >= len(text):
                break
        while len(self.messages) < len(bounds):
            self.messages.append(Message(ts="", streamed=False))
        for message, (start, end) in zip(self.messages, bounds):
            message.content = end - start
        return text, bounds

    def _fields(
        self, message: Message, steps: Mapping[str, Step], text: str, start: int, end: int
    ) -> dict[str, Any] | None:
        """What ``message`` must show; None when there is nothing new to show."""
        last = message is self.messages[-1]
        if message.streamed:
            piece = _piece(text, start, end)
            feedback = self.feedback if last else []
            if piece == message.text and not message.rewrite and not feedback:
                return None
            return _streamed_fields(piece or EMPTIED, feedback)
        blocks: list[dict[str, Any]] = []
        cursor = start
        for call_id, offset in message.cards:
            at = min(end, max(cursor, start + offset))
            if at > cursor:
                blocks.append(_markdown(_piece(text, cursor, at)))
            blocks.append(_task_card(call_id, steps[call_id]))
            cursor = at
        if end > cursor:
            blocks.append(_markdown(_piece(text, cursor, end)))
        if not blocks:
            if not message.ts:
                return None
            # Posted, and all its text taken back since (or adopted with none): it shows that it holds none.
            blocks.append(_markdown(EMPTIED))
        if last:
            blocks += self.feedback
        summary = text[start:end] or ", ".join(steps[key]["title"] for key, _ in message.cards)
        return _with_blocks(blocks, summary)


def rewrite_fields(stream: Message, blocks: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
    """The chat.update that writes a stopped stream's text whole; None: no need (``Message.rewrite``)."""
    if not stream.rewrite:
        return None
    return _streamed_fields(stream.text or EMPTIED, blocks)


def _streamed_fields(text: str, blocks: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The chat.update of a stopped stream's message: its text, and ``blocks`` after it.

    Text given to chat.update without blocks shows in their place, so a
    message that ends with blocks (an answer's feedback buttons) holds its
    text as a markdown block before them.
    """
    if not blocks:
        return {"markdown_text": text}
    return _with_blocks([_markdown(text), *blocks], text)


def _streamed_text(fields: Mapping[str, Any]) -> str:
    """The text ``_streamed_fields`` wrote: its ``markdown_text``, or its first (markdown) block's."""
    if "markdown_text" in fields:
        return str(fields["markdown_text"])
    return str(fields["blocks"][0]["text"])


def _markdown(text: str) -> dict[str, Any]:
    return {"type": "markdown", "text": text}


def _with_blocks(blocks: list[dict[str, Any]], text: str) -> dict[str, Any]:
    """The fields that show ``blocks``, with ``text`` (Slack Markdown) as the message's summary."""
    return {"blocks": blocks, "text": escape_mrkdwn(text) or EMPTIED}


def _piece(text: str, start: int, end: int) -> str:
    """``text[start:end]`` standing on its own: a code block cut at either end is closed there."""
    opening = seam(text[:start])[1] if start else ""
    closing = seam(text[:end])[0] if end < len(text) else ""
    return opening + text[start:end] + closing


def _task_card(call_id: str, step: Step) -> dict[str, Any]:
    card = {
        "type": "task_card",
        "task_id": call_id,
        "title": step["title"],
        "status": step["status"],
    }
    for key in ("details", "output"):
        if step.get(key):
            section = {
                "type": "rich_text_section",
                "elements": [{"type": "text", "text": step[key]}],
            }
            card[key] = {"type": "rich_text", "elements": [section]}
    return card
