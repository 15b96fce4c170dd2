"""A reply as it stands in Slack, and what follows each change or answer of Slack's: no I/O.

Theory of operation. ``ReplyState`` holds everything a turn's reply knows:
the answer so far, its markdown still undecided (``MarkdownStream``), the
queue of a streamed reply (``StreamPacer``), the reply's messages
(``FallbackLayout``), its steps (``StepCards``), whether it fell back to
posted messages, and when the older status line was set. It changes only
through its methods, each given the time where it matters, and each says
what the Slack side (``shared.slack.reply.ThreadReply``) does next, by the
rules of ``shared.core.reply_course``:

- *A change of the answer* (``take``): text is queued for the stream (or
  left to the next layout in the fallback), a step is queued or shown as a
  card; text already streamed that changed makes the reply fall back.
- *Slack's answers*: a stream started (``started``), a batch appended
  (``appended``), a message written (``wrote``) are recorded; a refused
  start or append (``start_refused``, ``append_refused``) keeps messages
  shorter when Slack found one too long, by half of what it refused, and
  says whether the reply goes on in a new message, falls back, or lets the
  error end the run (messages already as short as they go).
- *Falling back, a person's stop, a take-over* (``fall_back`` then
  ``place_cards``, ``halt``, ``from_state`` then ``resume``): what stops the
  open stream, which steps continue as cards, which messages are written
  whole again, and what the reply does first. Messages the function before
  posted or streamed after its last checkpoint are adopted (``adopt``, see
  ``shared.core.reply_course.orphans`` and ``Turn.started_streams``): the
  reply falls back and carries on in those messages as its own, the stream
  that function may have left open stopped first (and the checkpoint's,
  if it is the last).

Its state is plain JSON (``to_state``/``from_state``), the keys of the
turn's checkpoint.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from typing import Any, Protocol

from shared.core.reply import ReplyChange, TextAppended, TextReplaced
from shared.core.reply_course import (
    Then,
    on_end,
    on_refusal,
    on_replace,
    on_stop,
    on_take_over,
    written_again_now,
)
from shared.core.step_cards import (
    CONTINUED_BELOW,
    Shown,
    StepCards,
    is_final,
    summarize,
    task_update,
)
from shared.core.tool_steps import StepFinished, StepStarted
from shared.slack.layout import FallbackLayout, Message, Write
from shared.slack.markdown import MarkdownStream, neutralise
from shared.slack.pacing import Append, Chunk, ReplyLimits, Start, Stop, StreamPacer, text_of
from shared.slack.timetable import ReplyTimes


class BudgetDates(Protocol):
    """The dates of the reply's place in its workspace's budget (``ReplyBudget``)."""

    @property
    def start_at(self) -> float: ...

    @property
    def budgeted(self) -> bool: ...

    @property
    def open_until(self) -> float | None: ...

    @property
    def shared_at(self) -> float: ...


class ReplyState:
    """One turn's reply: its answer, queue, messages and steps, changed without I/O."""

    def __init__(self, limits: ReplyLimits, *, streams: bool) -> None:
        """An empty reply; ``streams``: it may stream (``reply_course.streams``), else it posts."""
        self.answer = ""
        self.markdown = MarkdownStream()
        self.pacer = StreamPacer(limits)
        self.layout = FallbackLayout(limits)
        self.steps = StepCards()
        self.fallback = not streams
        """The reply posts and edits messages, for good."""
        self.status_at: float | None = None
        """When the older status line was last set; None: it is not shown."""
        self.halted = False
        """A person stopped the turn: nothing more of the answer is shown."""

    # The answer -------------------------------------------------------------------

    def take(self, change: ReplyChange) -> Then | None:
        """Take ``change`` into the answer and its steps.

        Returns ``FALL_BACK`` when text already streamed changed (the open
        stream must stop), ``NOTHING`` otherwise; None when the change changes
        nothing.
        """
        if isinstance(change, TextAppended):
            self.answer += change.text
            if not self.fallback:
                self.pacer.add_text(self.markdown.feed(change.text))
        elif isinstance(change, TextReplaced):
            if change.text == self.answer:
                return None
            self.answer = change.text
            shown = any(message.text for message in self.layout.messages)
            then = on_replace(self.fallback, shown)
            if then is Then.FALL_BACK:
                return then
            if then is Then.TAKE_BACK:
                self.pacer.take_back_text()
                self.markdown = MarkdownStream()
                self.pacer.add_text(self.markdown.feed(change.text))
        elif isinstance(change, StepStarted):
            details = neutralise(summarize(change.args))
            if self.steps.start(change.call_id, neutralise(change.name), details):
                self._show_step(change.call_id)
        elif self._finish_step(change):
            self._show_step(change.call_id)
        return Then.NOTHING

    def _finish_step(self, result: StepFinished) -> bool:
        """The step's card takes ``result``; False when it shows final already (taken over)."""
        output = neutralise(summarize(result.response))
        return self.steps.finish(result.call_id, neutralise(result.name), result.ok, output)

    def _show_step(self, call_id: str) -> None:
        if self.fallback:
            self._place_card(call_id)
        else:
            self.pacer.add_step(task_update(call_id, self.steps.steps[call_id]))

    def complete(self) -> None:
        """The answer is complete: the markdown held back for what follows is queued."""
        self.pacer.add_text(self.markdown.flush())

    def end(self) -> Then:
        """The answer is complete and the queue sent as far as it may be: how the stream ends."""
        return on_end(
            self.layout.stream() is not None, bool(self.pacer.queue), self.pacer.carries_steps()
        )

    # Slack's answers --------------------------------------------------------------

    def started(self, call: Start, ts: str, now: float) -> None:
        """chat.startStream took ``call`` at ``now``: message ``ts`` streams."""
        self.layout.messages.append(
            Message(
                ts=ts,
                streamed=True,
                streaming=True,
                started_at=now,
                text=text_of(call.chunks),
                content=call.size,
            )
        )
        self.status_at = None
        self.pacer.started(ts)
        self.pacer.sent(call, now)

    def start_refused(self, call: Start, code: str | None) -> Then:
        """Slack refused ``call`` with ``code``.

        Returns ``SHRINK`` (messages are shorter now: the queue is sent again),
        ``FALL_BACK`` or ``RAISE``.
        """
        then = on_refusal("start", code)
        if then is Then.SHRINK and not self.pacer.shrink(call.size // 2):
            return Then.RAISE
        return then

    def appended(self, stream: Message, call: Append, now: float) -> None:
        """chat.appendStream took ``call`` into ``stream`` at ``now``."""
        stream.text += text_of(call.batch)
        stream.content += call.size
        self.pacer.sent(call, now)

    def append_refused(self, stream: Message, call: Append, code: str | None) -> Then:
        """Slack refused ``call`` with ``code``.

        Returns ``GONE`` (Slack cut the stream: go on in a new message),
        ``ROLL_OVER`` (it was too long: messages are shorter now, stop it and
        go on in a new one) or ``RAISE``.
        """
        then = on_refusal("append", code)
        if then is Then.SHRINK_AND_ROLL_OVER:
            room = (len(stream.text) + call.size) // 2
            return Then.ROLL_OVER if self.pacer.shrink(room) else Then.RAISE
        return then

    def writes(self, now: float) -> list[Write]:
        """The fallback's layout at ``now``: each message to write (``FallbackLayout.plan``)."""
        return self.layout.plan(self.answer, self.steps.steps, self.pacer.room, now)

    def final_cards(self, write: Write) -> list[Chunk]:
        """The steps ``write`` shows final (recorded before it is made)."""
        cards = [task_update(key, self.steps.steps[key]) for key, _ in write.message.cards]
        return [card for card in cards if is_final(card)]

    def wrote(self, write: Write, ts: str, now: float) -> None:
        """Slack took ``write`` at ``now``; ``ts``: its message's, maybe just posted."""
        if not write.message.ts:
            self.pacer.started(ts)
            self.status_at = None
        self.layout.wrote(write, ts, now)

    # Endings ------------------------------------------------------------------------

    def fall_back(self) -> set[str]:
        """From now on the reply posts and edits: the steps to show as cards (``place_cards``).

        The open stream, if any, stops next (``timetable.Due.STOP``).
        """
        self.fallback = True
        return self.pacer.abandon()

    def place_cards(self, moved: Collection[str]) -> None:
        """The steps ``moved`` continue as cards, in the order they began."""
        for key in self.steps.steps:
            if key in moved:
                self._place_card(key)

    def _place_card(self, call_id: str) -> None:
        """The step shows as a card of the posted messages, where its call arrived in the answer."""
        self.layout.place_card(call_id, self.answer, self.pacer.room)

    def halt(
        self,
        stopped_streams: Collection[str],
        status: str,
        output: str,
        results: Iterable[StepFinished] = (),
    ) -> tuple[Message, Stop] | None:
        """A person stopped the turn: nothing more is shown; the stream to stop, and how.

        A stream Slack stopped for the click (in ``stopped_streams``) is
        stopped already: none then. A running step that ``results`` finishes
        (the stopped task's: ``ReplyAssembler.results_in``) takes its result
        where the reply can still change it; the others close as ``status``
        with ``output``.
        """
        self.halted = True
        self.pacer.abandon()
        finished = {}
        for result in results:
            if self.steps.running(result.call_id):
                self._finish_step(result)
                finished[result.call_id] = task_update(
                    result.call_id, self.steps.steps[result.call_id]
                )
        stream = self.layout.stream()
        if stream is None:
            return None
        then = on_stop(True, stream.ts in stopped_streams)
        if then is Then.GONE:
            stream.streaming = False
            self.pacer.stop(stream.ts)
            return None
        return stream, self.pacer.stop(stream.ts, output=output, status=status, finished=finished)

    # Checkpoints ------------------------------------------------------------------

    def times(self, budget: BudgetDates) -> ReplyTimes:
        """What the timetable weighs, as the reply stands now."""
        stream = self.layout.stream()
        return ReplyTimes(
            fallback=self.fallback,
            posted=self.layout.posted(),
            streaming=stream is not None,
            status_at=self.status_at,
            send_at=self.pacer.send_at(),
            start_at=budget.start_at,
            budgeted=budget.budgeted,
            open_until=budget.open_until,
            shared_at=budget.shared_at,
            roll_over_at=None if stream is None else self.pacer.roll_over_at(stream),
            layout_at=self.layout.layout_at(),
        )

    def to_state(self) -> dict[str, Any]:
        """Plain JSON, the keys of the reply's checkpoint."""
        return {
            "answer": self.answer,
            "markdown": self.markdown.to_state(),
            **self.pacer.to_state(),
            "messages": self.layout.to_state(),
            "steps": self.steps.to_state(),
            "fallback": self.fallback,
            "status_at": self.status_at,
        }

    @classmethod
    def from_state(cls, state: Mapping[str, Any], limits: ReplyLimits) -> ReplyState:
        """Back from ``to_state``."""
        reply = cls(limits, streams=not state["fallback"])
        reply.answer = state["answer"]
        reply.markdown = MarkdownStream.from_state(state["markdown"])
        reply.pacer = StreamPacer.from_state(state, limits)
        reply.layout = FallbackLayout.from_state(state["messages"], limits)
        reply.steps = StepCards.from_state(state["steps"])
        reply.status_at = state["status_at"]
        return reply

    def resume(self, shown: Mapping[str, Shown]) -> Then:
        """Continue after a function that may have shown the steps ``shown`` (``keep_shown_steps``).

        Each step keeps the state it showed (``StepCards.taken_over``), shown
        again where the open stream may show it (``StreamPacer.taken_over``).
        A step it showed final in a posted message the checkpoint names keeps
        its card there: that message is written whole from the layout, which
        would drop a card that function added after the checkpoint (the step,
        settled, then showed nowhere final; as ``adopt`` does for the
        messages the checkpoint does not name).
        Returns what that function did after, which the reply does too
        (``on_take_over``): ``FALL_BACK``, ``ROLL_OVER`` or ``NOTHING``.
        """
        self.steps.taken_over(shown)
        stream = self.layout.stream()
        closed = self.pacer.taken_over(shown, None if stream is None else stream.ts)
        posted = {
            message.ts for message in self.layout.messages if message.ts and not message.streamed
        }
        self.place_cards(_cards_kept(shown, posted))
        return on_take_over(stream is not None, closed)

    def adopt(
        self, posted: list[str], streamed: list[str], shown: Mapping[str, Shown]
    ) -> list[tuple[Message, Stop]]:
        """The function before wrote messages no checkpoint names: ``posted``, ``streamed`` (ts).

        ``posted``: marked as this reply's, read back from the thread;
        ``streamed``: the streams the turn records it started. The reply
        cannot stream on in messages whose text it does not know, so it
        falls back (as that function did before it posted), and each is one
        of its own messages, in the order Slack shows them, filled in where
        the layout has one not posted yet, else added after the last
        (``FallbackLayout.adopted``). Every message Slack holds is written
        whole at the next layout (``FallbackLayout.taken_over``): each shows
        its part of the answer once. The steps not shown final elsewhere
        continue as cards there, and so do those ``shown``
        (``keep_shown_steps``'s record) says an adopted stream shows running
        or closed to continue, and those it says an adopted posted message
        shows final (written whole, it shows them again; seed 5066: a stop's
        function wrote them final there and died, and the next one emptied it).

        Returns each stream that may still stream, oldest first, and what
        stops it, as the layout no longer streams in any (Slack refuses to
        edit a message while it streams): every adopted stream (one a
        function left open when it died before its first checkpoint, which
        the function after began afresh without knowing, may be followed by
        that function's messages: seed 18734), with what ``shown`` records
        there closed (``StreamPacer.left_open``); and the checkpoint's open
        stream if no adopted message came after it (one did only once its
        function had stopped it), its running steps continued below as the
        fallback's are. A stream Slack no longer streams refuses the stop,
        which changes nothing.
        """
        open_stream = self.layout.stream()
        moved = set() if self.fallback else self.fall_back()
        orphans = sorted([*posted, *streamed], key=float)
        self.layout.adopted(orphans, streamed)
        self.place_cards(moved | _cards_kept(shown, posted, streamed))
        self.layout.taken_over()
        stops = [
            (message, Stop(steps=self.pacer.left_open(shown, message.ts)))
            for message in self.layout.messages
            if message.ts in streamed
        ]
        if open_stream is not None and float(open_stream.ts) > float(orphans[-1]):
            stop = self.pacer.stop(open_stream.ts, output=CONTINUED_BELOW)
            stops.append((open_stream, stop))
        return sorted(stops, key=lambda stop: float(stop[0].ts))

    def written_again(self) -> list[Message]:
        """The function before died: the stopped streams to write whole at once.

        Every message Slack holds is written whole again (``FallbackLayout.taken_over``).
        """
        self.layout.taken_over()
        return [
            message
            for message in self.layout.messages
            if written_again_now(self.fallback, message.streamed, message.streaming)
        ]


def _cards_kept(
    shown: Mapping[str, Shown], posted: Collection[str], streamed: Collection[str] = ()
) -> set[str]:
    """The steps that ``shown`` says show in messages written whole from now, to keep as cards.

    Those shown in one of the posted messages ``posted`` (the layout writes
    it from its cards: the step's card goes there), and those shown running,
    or closed to continue, in one of the streams ``streamed`` (they continue
    as cards).
    """
    return {
        key
        for key, where in shown.items()
        if where.ts in posted or (where.ts in streamed and not where.final)
    }
