"""What a streamed reply sends to Slack next, and when: decided without I/O.

Theory of operation. A streamed reply's text and steps wait in one ordered
queue of chunks (``markdown_text``, and ``task_update`` keyed by the tool
call's ID). ``StreamPacer`` holds that queue and decides, with the time
passed in, everything about sending it; ``shared.slack.reply.ThreadReply``
makes the Slack calls it names and reports what Slack took.

- *Batching.* The queue goes out at most once per ``interval``
  (``send_at``), so a token-by-token agent costs a bounded number of calls;
  the first chunk after a quiet spell goes at once. The interval is
  ``stream_interval``, or longer while other streams of the workspace share
  Slack's limit on appends (``shared.slack.tiers.append_interval``). One call takes the
  queue's first chunks that fit the message (``next_call``), its last text
  maybe in part, cut at the end of a line where it can be. A chunk leaves
  the queue only once Slack took it (``sent``), so a call that fails and is
  made again later loses and reorders nothing.
- *Rollover.* Slack cuts a streamed message after about five minutes and
  caps its size, so a stream older than ``stream_seconds`` (``roll_over_at``),
  or holding ``room`` characters, or whose next text does not fit, is stopped
  and the reply continues in a new message (``RollOver``). A code block open
  at the cut is closed at the end of one message and opened again at the
  start of the next, with the same fence; a step still running is closed in
  the old message (Slack shows a step left pending as failed) and shown
  again, running, in the new one (``carry``). When Slack refuses a message
  as too long, messages are kept shorter from then on (``shrink``).

- *Steps shown once.* Before a call shows a step, the reply records where
  and as which ``task_update`` (``shown``, kept durably by the caller before
  the call; ``shared.core.step_cards.Shown``): a function that dies after
  the call and before its next checkpoint leaves a step the function taking
  over cannot see (``taken_over``). That one shows a step recorded final
  only in the same message (where Slack updates the card in place), never
  in another, and does not carry it over to a new message still running;
  in its open stream it shows the recorded state again, since that call
  may not have been made. A step recorded running in its open stream is
  closed there when it stops; one recorded closed to continue elsewhere
  says that the function stopped the stream, and the taker does the same.
  A step recorded in a new message whose ts no checkpoint kept is shown in
  the next message (that message was not posted, or it was and shows the
  text again too).

The pacer's state is plain JSON (``to_state``/``from_state``) and is part of
the turn's checkpoint, so a function taking the turn over continues the same
queue.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from shared.core.step_cards import (
    CONTINUED,
    CONTINUED_BELOW,
    RUNNING,
    Shown,
    is_final,
    read_shown,
    shown_json,
)
from shared.slack.markdown import cut_point, seam

Chunk = dict[str, Any]
"""A chunk of chat.startStream/appendStream/stopStream: ``markdown_text`` or ``task_update``."""

SLACK_MARKDOWN_LIMIT = 12_000
"""Slack's limit for one ``markdown_text``, and for the markdown blocks of one message."""
SEAM_ROOM = 100
"""Room kept in a message for the fences that close and re-open a code block."""
MIN_MESSAGE_CHARS = 200
MAX_CHUNKS_PER_CALL = 40
NEW_MESSAGE = ""
"""Where ``shown_final`` puts a step shown in a message whose ts Slack has not answered yet."""


@dataclass(frozen=True)
class ReplyLimits:
    """When a reply rolls over, and how often it may call Slack."""

    stream_seconds: float = 240.0
    """A streamed message rolls over after this long (Slack cuts it at about 300 s)."""
    message_chars: int = 11_000
    """Text in one message. Below ``SLACK_MARKDOWN_LIMIT``, so any message can be edited whole."""
    stream_interval: float = 0.6
    """At most one append per this many seconds (chat.appendStream is Tier 4, ~100/min)."""
    update_interval: float = 1.0
    """At most one chat.update per message per this many seconds."""
    status_refresh: float = 90.0
    """Set the status again after this long (Slack clears it after two minutes)."""

    def __post_init__(self) -> None:
        if not MIN_MESSAGE_CHARS <= self.message_chars <= SLACK_MARKDOWN_LIMIT - SEAM_ROOM:
            raise ValueError(
                f"message_chars must be {MIN_MESSAGE_CHARS}..{SLACK_MARKDOWN_LIMIT - SEAM_ROOM}"
            )


class OpenStream(Protocol):
    """The streamed message the reply appends to, as the pacer reads it."""

    @property
    def started_at(self) -> float:
        """When chat.startStream made it."""
        ...

    @property
    def text(self) -> str:
        """The text it shows (seams included)."""
        ...

    @property
    def ts(self) -> str:
        """Its ts."""
        ...


# What to call ------------------------------------------------------------------


@dataclass(frozen=True)
class Start:
    """chat.startStream with ``chunks``: what the last message carried on, then ``batch``."""

    chunks: list[Chunk]
    batch: list[Chunk]
    size: int
    """How many characters of the answer ``batch`` holds."""


@dataclass(frozen=True)
class Append:
    """chat.appendStream with ``batch``."""

    batch: list[Chunk]
    size: int


@dataclass(frozen=True)
class RollOver:
    """Stop the open stream (``roll_over``); the queue continues in a new message."""


StreamCall = Start | Append | RollOver


@dataclass(frozen=True)
class Stop:
    """What chat.stopStream sends: a fence that closes an open code block, and the running steps, closed."""

    closing: str = ""
    steps: list[Chunk] = field(default_factory=list)

    @property
    def chunks(self) -> list[Chunk]:
        """Every chunk, text first."""
        return ([text_chunk(self.closing)] if self.closing else []) + self.steps


# The pacer ---------------------------------------------------------------------


class StreamPacer:
    """The queue of a streamed reply, and when and how it goes to Slack."""

    def __init__(self, limits: ReplyLimits = ReplyLimits()) -> None:
        self.limits = limits
        self.queue: list[Chunk] = []
        self.carry: list[Chunk] = []
        """Chunks the next message starts with: running steps, a re-opened code block."""
        self.running: dict[str, Chunk] = {}
        """The steps the open stream shows running: call ID to the chunk Slack took."""
        self.room = limits.message_chars
        """How much text a message may hold (less once Slack refused one as too long)."""
        self.last_sent = 0.0
        """When Slack last took a batch (not kept in checkpoints: a new function sends at once)."""
        self.interval = limits.stream_interval
        """Seconds between batches: longer while more streams share the workspace's appends."""
        self.shown: dict[str, Shown] = {}
        """Steps Slack shows, or may show: where, and as which update (kept durably)."""

    # Filling the queue ----------------------------------------------------------

    def add_text(self, text: str) -> None:
        """Queue text (joined to the queued text before it)."""
        if not text:
            return
        if self.queue and self.queue[-1]["type"] == "markdown_text":
            self.queue[-1] = text_chunk(self.queue[-1]["text"] + text)
        else:
            self.queue.append(text_chunk(text))

    def add_step(self, chunk: Chunk) -> None:
        """Queue a step's ``task_update``."""
        self.queue.append(chunk)

    def taken_over(self, shown: Mapping[str, Shown], stream: str | None) -> str | None:
        """A function that died may have shown these steps final: never show them elsewhere.

        A step it showed final in the open stream, message ``stream``, is shown
        there again as it showed it (its call may have failed, or not been made).
        One it was showing in a new message whose ts it never kept was not shown
        (a message it began and never checkpointed would show its text twice
        too): it is shown as it would have been, in the next message, unless
        the checkpoint knows where it shows. A step it showed running in the
        open stream is closed there when that stops.

        Returns how it closed a step in the open stream to go on elsewhere
        (``CONTINUED``, ``CONTINUED_BELOW``): it stopped that stream. None: it did not.
        """
        closed = None
        for key, where in shown.items():
            if where.update is not None and where.update["status"] == RUNNING:
                if where.ts == stream and stream is not None:
                    self.running.setdefault(key, where.update)
                continue
            if not where.final:
                if where.ts == stream and stream is not None and where.update is not None:
                    closed = where.update.get("output")
                    running = {k: v for k, v in where.update.items() if k != "output"}
                    self.running.setdefault(key, {**running, "status": RUNNING})
                continue
            known = self._where(key)
            if where.ts != NEW_MESSAGE:
                self.shown[key] = where
            if where.update is not None and (
                where.ts == stream or (where.ts == NEW_MESSAGE and known is None)
            ):
                self.queue.append(where.update)
        self.carry = [chunk for chunk in self.carry if not self._shown_elsewhere(chunk, None)]
        return closed

    def left_open(self, shown: Mapping[str, Shown], ts: str) -> list[Chunk]:
        """What stops stream ``ts``, which a function that died (or was stopped) started
        after its last checkpoint and may have left open: its steps as ``shown`` records them.

        A step recorded final there shows it again (the call may not have
        been made); one recorded running, or closed to continue, is closed
        as continued below, where the fallback shows it as a card.
        """
        chunks: list[Chunk] = []
        for where in shown.values():
            if where.ts != ts or where.update is None:
                continue
            if where.final:
                chunks.append(where.update)
            else:
                chunks.append({**where.update, "status": "complete", "output": CONTINUED_BELOW})
        return chunks

    def take_back_text(self) -> None:
        """Drop the queued text (no text went out yet, and the answer changed)."""
        self.queue = [chunk for chunk in self.queue if chunk["type"] != "markdown_text"]

    def abandon(self) -> set[str]:
        """Streaming ends for good: empty the queue; the steps not yet shown as they stand.

        A step a message shows (or may show) final is not among them.
        """
        moved = {chunk["id"] for chunk in self.queue + self.carry if chunk["type"] == "task_update"}
        self.queue, self.carry = [], []
        return {key for key in moved | set(self.running) if self._where(key) is None}

    # Deciding -------------------------------------------------------------------

    def send_at(self) -> float | None:
        """When the queue may next be sent; None when it is empty."""
        return self.last_sent + self.interval if self.queue else None

    def roll_over_at(self, stream: OpenStream) -> float:
        """When ``stream`` must stop, even idle (before Slack cuts it with a step running)."""
        return stream.started_at + self.limits.stream_seconds

    def next_call(self, stream: OpenStream | None, now: float) -> StreamCall | None:
        """The call that sends the queue on; None when nothing is queued."""
        self.queue = [c for c in self.queue if not self._shown_elsewhere(c, stream)]
        if not self.queue:
            return None
        if stream is not None and (
            now >= self.roll_over_at(stream) or len(stream.text) >= self.room
        ):
            return RollOver()
        used = len(stream.text) if stream is not None else len(text_of(self.carry))
        batch, size = self._next_batch(used)
        if not batch:
            if stream is None:  # a new message always takes some text
                raise AssertionError("no text fits an empty message")
            return RollOver()  # the next text starts a new message
        if stream is None:
            return Start(self.carry + batch, batch, size)
        return Append(batch, size)

    def _next_batch(self, used: int) -> tuple[list[Chunk], int]:
        """The queue's first chunks that fit a message holding ``used`` characters; their text's size."""
        batch: list[Chunk] = []
        size = 0
        for chunk in self.queue[:MAX_CHUNKS_PER_CALL]:
            if chunk["type"] != "markdown_text":
                batch.append(chunk)
                continue
            fits = cut_point(chunk["text"], self.room, used + size)
            if fits:
                batch.append(text_chunk(chunk["text"][:fits]))
                size += fits
            if fits < len(chunk["text"]):
                break
        return batch, size

    def _shown_elsewhere(self, chunk: Chunk, stream: OpenStream | None) -> bool:
        """Whether ``chunk`` is a step another message may show final already."""
        where = self._where(chunk["id"]) if chunk["type"] == "task_update" else None
        return where is not None and (stream is None or where != stream.ts)

    def _where(self, call_id: str) -> str | None:
        """The message that shows (or may show) the step final, if any."""
        shown = self.shown.get(call_id)
        return shown.ts if shown is not None and shown.final else None

    def showing(self, chunks: list[Chunk], ts: str) -> dict[str, Any] | None:
        """Before a call shows ``chunks`` in message ``ts``: the steps it shows final anew.

        Returns the record of every step shown final so far (to keep durably
        before the call), or None when the call shows no step final anew.
        """
        new = {
            chunk["id"]: Shown(ts, chunk)
            for chunk in chunks
            if chunk["type"] == "task_update"
            and self.shown.get(chunk["id"]) != Shown(ts, chunk)
            and (is_final(chunk) or self._where(chunk["id"]) is None)
        }
        if not new:
            return None
        self.shown.update(new)
        return shown_json(self.shown)

    def started(self, ts: str) -> None:
        """Slack answered the new message's ts: its steps are shown there (the
        checkpoint that follows a new message keeps it)."""
        for key, where in self.shown.items():
            if where.ts == NEW_MESSAGE:
                self.shown[key] = Shown(ts, where.update)

    # What Slack took --------------------------------------------------------------

    def sent(self, call: Start | Append, now: float) -> None:
        """Slack took ``call``: its chunks leave the queue (a stream's carry, too)."""
        if isinstance(call, Start):
            self._shown(self.carry)
            self.carry = []
        if call.batch:
            self._taken(call.batch)
            self.last_sent = now

    def _taken(self, batch: list[Chunk]) -> None:
        """Slack took ``batch``, the head of the queue (its last text maybe in part)."""
        self._shown(batch)
        count = len(batch)
        last, head = batch[-1], self.queue[count - 1]
        if last["type"] == "markdown_text" and len(last["text"]) < len(head["text"]):
            self.queue[count - 1] = text_chunk(head["text"][len(last["text"]) :])
            count -= 1
        del self.queue[:count]

    def _shown(self, chunks: list[Chunk]) -> None:
        """Slack shows ``chunks``: keep track of the steps it shows running."""
        for chunk in chunks:
            if chunk["type"] != "task_update":
                continue
            if chunk["status"] == "in_progress":
                self.running[chunk["id"]] = chunk
            else:
                self.running.pop(chunk["id"], None)

    def roll_over(self, stream: OpenStream) -> Stop:
        """The open ``stream`` ends here; the next message carries on.

        Returns what stops it (unless Slack already cut it): the open code
        block closed, and each running step closed as continued. The next
        message starts with those steps running and the code block opened again.
        """
        closing, opening = seam(stream.text)
        running = [chunk for chunk in self.running.values() if self._where(chunk["id"]) is None]
        stop = self.stop(stream.ts, closing, CONTINUED)
        self.carry = running + ([text_chunk(opening)] if opening else [])
        return stop

    def stop(
        self,
        ts: str,
        closing: str = "",
        output: str | None = None,
        status: str = "complete",
        finished: Mapping[str, Chunk] | None = None,
    ) -> Stop:
        """The open stream, message ``ts``, stops: each step it shows running is closed.

        Closed as ``status`` with ``output``, or as ``finished`` shows it (a
        person's stop found its result); but a step a function that died may have shown
        final in it is not closed again: its final state, if queued, goes in
        the stop, and otherwise it is left as that function left it.
        """
        finished = finished or {}
        finals = [
            chunk
            for chunk in self.queue
            if chunk["type"] == "task_update" and self._where(chunk["id"]) == ts
        ]
        if finals:
            self.queue = [chunk for chunk in self.queue if all(chunk is not f for f in finals)]
        closed = [
            finished.get(chunk["id"])
            or {**chunk, "status": status, **({"output": output} if output else {})}
            for chunk in self.running.values()
            if self._where(chunk["id"]) != ts
        ]
        self.running = {}
        return Stop(closing, finals + closed)

    def carries_steps(self) -> bool:
        """Whether the next message would show steps a rollover continued (to close them)."""
        return any(chunk["type"] == "task_update" for chunk in self.carry)

    def shrink(self, room: int) -> bool:
        """Slack refused a message this long: keep them shorter. False when too short already."""
        if room < MIN_MESSAGE_CHARS:
            return False
        self.room = min(self.room, room)
        return True

    # Checkpoints ----------------------------------------------------------------

    def to_state(self) -> dict[str, Any]:
        """Plain JSON (the keys of the reply's checkpoint before this module existed)."""
        return {
            "queue": list(self.queue),
            "carry": list(self.carry),
            "running": dict(self.running),
            "room": self.room,
            "shown_final": shown_json(self.shown),
        }

    @classmethod
    def from_state(cls, state: Mapping[str, Any], limits: ReplyLimits) -> StreamPacer:
        """Back from ``to_state``."""
        pacer = cls(limits)
        pacer.queue = list(state["queue"])
        pacer.carry = list(state["carry"])
        pacer.running = dict(state["running"])
        pacer.room = state["room"]
        pacer.shown = read_shown(state.get("shown_final") or {})
        return pacer


def text_chunk(text: str) -> Chunk:
    """A ``markdown_text`` chunk."""
    return {"type": "markdown_text", "text": text}


def text_of(chunks: list[Chunk]) -> str:
    """The text of ``chunks``."""
    return "".join(chunk["text"] for chunk in chunks if chunk["type"] == "markdown_text")
