"""Writing a turn's reply into its Slack thread as it streams.

Theory of operation. The answer streams live in Slack's streaming messages
(chat.startStream, chat.appendStream, chat.stopStream), or, once text
already shown changed or no stream can start (refused, or no person to
stream to), in ordinary messages posted and edited (the fallback, for good).
This module makes the Slack calls; pure modules decide them, with the time
passed in: what is sent in which batch and where a message rolls over
(``shared.slack.pacing.StreamPacer``), what each posted message shows and
when it may be written (``shared.slack.layout.FallbackLayout``, which holds
the reply's messages), what is due each time the reply is called or its
timer fires (``shared.slack.timetable.pump``: a timer sends what is queued
when the agent goes quiet), and how the reply ends, falls back, rolls over
after a call Slack refused, or carries on when taken over
(``shared.core.reply_course``). ``shared.slack.reply_state.ReplyState``
holds all of that state: each change of the answer and each answer of
Slack's goes in, and what the reply does next comes out. All Slack calls
happen under one lock, in queue order, so slack_sdk's retries of a
rate-limited call (HTTP 429, after Retry-After) delay text but never lose
or reorder it. Each change of the answer is taken into that state before
the Slack calls it leads to, so a checkpoint kept in between (``show``'s
``first``: the one the event that names the task must have) holds it.

The thread's agent session shows that the agent works (``ThreadStatus``):
every stream the reply stops leaves it processing, and the turn sets the
status that follows. Where agent sessions are refused, the older status
line (assistant.threads.setStatus) shows it instead until a message is
posted, set again before Slack clears it after two minutes; never once a
message is posted, as a status after a stream starts adds a message.

Every stream of a workspace shares Slack's limits (``shared.slack.tiers``):
a stream starts and stops only when the workspace's budget lets it, and
appends less often while more streams are open (the reply's place in the
budget: ``shared.slack.reply_budget.ReplyBudget``). While the budget of
starts is spent, the reply keeps its text queued and the thread shows the
agent working; the timer tries again when a start frees, and an answer
complete before then is posted whole (a posted message costs no stream). A
stop waits for its slot.

A person may stop the turn with Slack's stop button: Slack stops the
thread's streams (an append then answers ``stopped_by_user``, and the reply
goes on in a new message, as after any stream Slack cut), and if the stop is
taken, ``stopped`` ends the reply where it stands. A finished answer carries
blocks (its feedback buttons) after its text: in the last stream's
chat.stopStream, or in the last posted message.

The reply's state is plain JSON (``to_state``/``restore``), so a function
that takes the turn over continues the same messages. If the function before
it died, its stream may show text streamed after the state was saved: that
text is streamed again, and the message is written whole when its stream
stops, so it shows each part once (step cards are keyed by call ID, so a
step shown again changes nothing). Every message the reply posts carries
its mark (Slack message metadata, ``reply_course.reply_mark``), and before
its first post the turn records that it posted (``keep_posting``); a stream
carries no metadata, so the turn records each stream's ts as soon as
chat.startStream answers (``keep_stream``). A function that takes over after
one that died, or that a person's stop took the turn from, reads the thread
back and adopts each marked message, and each recorded stream, its
checkpoint does not name (``ReplyState.adopt``; each stream Slack may still
stream is stopped, so that none is edited while it streams), instead of
showing that message's text and steps again elsewhere or leaving the stream
open. What the turn records of that function's reply comes to ``restore``
whole, read once (``shared.slack.left_behind.LeftBehind``).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from typing import Any

import structlog
from slack_sdk.errors import SlackApiError

from shared.core.reply import ReplyChange
from shared.core.reply_course import Then, closing, on_refusal, on_tell, orphans, streams
from shared.core.step_cards import CONTINUED_BELOW, Shown, shown_json
from shared.core.tool_steps import StepFinished
from shared.ports import Blocks, Chat, Clock, Runtime
from shared.slack.layout import Message, Write, rewrite_fields
from shared.slack.left_behind import LeftBehind
from shared.slack.pacing import NEW_MESSAGE, Append, Chunk, ReplyLimits, RollOver, Start, Stop
from shared.slack.prompts import notice_message
from shared.slack.reply_budget import ReplyBudget
from shared.slack.reply_state import ReplyState
from shared.slack.session_status import ThreadStatus
from shared.slack.tiers import append_interval
from shared.slack.timetable import Due, pump
from shared.slack.workspace_budget import WorkspaceBudget

log = structlog.get_logger()

KEEP_PROCESSING = "processing"
"""The session status every chat.stopStream of the reply leaves (the turn sets the next one)."""
DEFAULT_LIMITS = ReplyLimits()


class ThreadReply:
    """One turn's reply in one thread."""

    def __init__(
        self,
        client: Chat,
        channel: str,
        thread_ts: str,
        recipient_user: str | None,
        recipient_team: str | None,
        *,
        clock: Clock,
        runtime: Runtime,
        status: ThreadStatus,
        limits: ReplyLimits = DEFAULT_LIMITS,
        keep_shown_steps: Callable[[dict[str, Any]], None] | None = None,
        keep_posting: Callable[[], None] | None = None,
        keep_stream: Callable[[str, dict[str, Any]], None] | None = None,
        mark: dict[str, Any] | None = None,
        budget: WorkspaceBudget | None = None,
    ) -> None:
        """Start an empty reply.

        Args:
            client: Slack's Web API.
            channel: The thread's channel.
            thread_ts: The thread's ts.
            recipient_user: The person the reply answers. Outside a direct
                message a stream needs one, so without it the reply is
                posted and edited instead.
            recipient_team: That person's team.
            clock: What time it is (intervals, stream ages, waits).
            runtime: Makes the lock and the timer that sends what waits.
            status: The thread's status in Slack (the older status line
                where agent sessions are refused).
            limits: When to roll over and how often to call Slack.
            keep_shown_steps: Keeps, durably, which steps the reply shows,
                where, and as which update (``StreamPacer.shown``); called
                before each Slack call that shows a step anew.
            keep_posting: Keeps, durably, that the reply posted (or is
                posting) a message; called before its first chat.postMessage.
            keep_stream: Keeps, durably, the ts of a stream the reply started,
                with the record of its steps there (``keep_shown_steps``'s, the
                new message's ts in place of ``NEW_MESSAGE``); called as soon as
                chat.startStream answered.
            mark: The metadata each message the reply posts carries
                (``reply_course.reply_mark``); None: none.
            budget: The workspace's Slack budget, shared with every other
                reply (``shared.slack.tiers``): when a stream may start and
                stop, and how often it may append. None: no budget but Slack's.
        """
        self._client = client
        self._clock = clock
        self._status = status
        self._channel = channel
        self._thread_ts = thread_ts
        self._recipient = {
            key: value
            for key, value in (
                ("recipient_user_id", recipient_user),
                ("recipient_team_id", recipient_team),
            )
            if value
        }
        self._limits = limits
        self._keep_shown_steps = keep_shown_steps
        self._keep_posting = keep_posting
        self._keep_stream = keep_stream
        self._mark = mark
        self._budget = ReplyBudget(
            budget, clock, channel, thread_ts, recipient_team, shared=self._share_appends
        )
        self._lock = runtime.lock()
        self._timer = runtime.timer(self._lock, self._on_timer)
        self._failure: Exception | None = None
        self._reply = ReplyState(limits, streams=streams(recipient_user, channel))

    # What the turn engine calls ------------------------------------------------

    def show(self, changes: list[ReplyChange], first: Callable[[], None] | None = None) -> None:
        """Show what ``ReplyAssembler.feed`` or ``finish`` returned: each change, then what is due.

        Every change is taken into the reply's state before any Slack call
        (one that makes the reply fall back too: its stream stops first in the
        pump, ``Due.STOP``). ``first``, if given, is called then, holding the
        lock so that no timer's call comes before it: what must be kept before
        any call that can fail (the turn's checkpoint, which so holds the
        changes; a function taking over from it makes the calls this one was
        about to).
        """
        with self._lock:
            taken = [self._take(change) for change in changes]
            if first is not None:
                first()
            self._raise_failure()
            if any(then is not None for then in taken):
                self._pump()

    def working(self) -> None:
        """Show that the agent is working on the thread's message."""
        with self._lock:
            self._raise_failure()
            if not self._reply.layout.posted():
                self._set_status()
            self._pump()

    def notice(
        self, text: str, who: str | None = None, *, metadata: dict[str, Any] | None = None
    ) -> None:
        """A notice of Agent Kourier's own (never the agent's words), after the answer.

        With ``who`` (a user ID), the notice's ``{who}`` mentions that person;
        with ``metadata``, the message carries it (Slack message metadata).
        """
        self.finish()
        with self._lock:
            self._client.chat_postMessage(
                channel=self._channel,
                thread_ts=self._thread_ts,
                metadata=metadata,
                **notice_message(text, who),
            )

    def tell(self, text: str) -> None:
        """A notice of Agent Kourier's own while the answer goes on (``on_tell``).

        What waits is sent first, so the notice shows after it.
        """
        with self._lock:
            self._raise_failure()
            self._send_queue()
            stream = self._reply.layout.stream()
            if on_tell(stream is not None) is Then.ROLL_OVER:
                assert stream is not None
                self._roll_over(stream)
            self._client.chat_postMessage(
                channel=self._channel, thread_ts=self._thread_ts, **notice_message(text)
            )

    def finish(self, blocks: Blocks = (), *, paused: bool = False) -> None:
        """The answer is complete: write all of it, close every step, stop streaming.

        How each step still running is closed, and how the streams end, is
        decided by ``shared.core.reply_course`` (``closing``, ``on_end``).

        Args:
            blocks: Blocks to show after the answer (its feedback buttons):
                in the stream's last call, or in the last message posted. A
                stream Slack cut before the end takes none.
            paused: The task waits for a person's answer.
        """
        status, output = closing(paused)
        reply = self._reply
        with self._lock:
            self._raise_failure()
            self._timer.close()
            if not reply.fallback and not reply.halted:
                reply.complete()
                self._send_queue()
                then = reply.end()
                if then is Then.CLOSE_CARRIED and self._may_start():
                    self._start_stream(Start(reply.pacer.carry, [], 0))
                elif then in (Then.FALL_BACK, Then.CLOSE_CARRIED):
                    self._fall_back()  # no stream may start yet: the answer is posted whole
                stream = reply.layout.stream()
                if stream is not None:
                    stop = reply.pacer.stop(stream.ts, output=output, status=status)
                    self._stop(stream, stop, blocks=list(blocks))
            reply.steps.close_unfinished(status, output)
            if reply.fallback:
                reply.layout.feedback = list(blocks)
                self._write_messages(force=True)

    def stopped(
        self, stopped_streams: Collection[str], results: Iterable[StepFinished] = ()
    ) -> None:
        """A person stopped the turn: the reply ends where it stands, and shows nothing more.

        Args:
            stopped_streams: The streams Slack stopped for the click
                (``streaming_message_ts``). A stream of the reply it did not
                stop is stopped here; what waited to be sent is dropped.
            results: The results the stopped task holds
                (``ReplyAssembler.results_in``): a step shown running finishes
                at its result where the reply can still change it, and every
                other running step is closed as having none.
        """
        status, output = closing(paused=False)
        with self._lock:
            self._timer.close()
            stop = self._reply.halt(stopped_streams, status, output, results)
            if stop is not None:
                self._stop(*stop)
            self._reply.steps.close_unfinished(status, output)
            if self._reply.fallback:
                self._write_messages(force=True)

    def suspend(self) -> None:
        """This function stops here and another continues: send what waits, keep the stream."""
        with self._lock:
            self._raise_failure()
            self._timer.close()
            if not self._reply.fallback:
                self._send_queue()
            if self._reply.fallback:
                self._write_messages(force=True)

    def close(self) -> None:
        """The run is over, however it ended: the timer stops, and nothing more is sent.

        A stop's function closes the reply too while it cancels the task,
        before ``stopped`` ends it.

        A run that failed must leave the thread to the function that takes
        the turn over: no status set again, no queued text sent, no
        roll-over of a message that function now continues.
        """
        with self._lock:
            self._timer.close()

    def to_state(self) -> dict[str, Any]:
        """What a continuing function needs (nothing is sent)."""
        with self._lock:
            return {**self._reply.to_state(), "open_until": self._budget.open_until}

    @property
    def posted(self) -> list[str]:
        """The ts of each message of the reply posted so far, oldest first."""
        with self._lock:
            return [message.ts for message in self._reply.layout.messages if message.ts]

    def restore(self, state: dict[str, Any], left: LeftBehind) -> None:
        """Continue a reply that another function began (and do what is due by now).

        Args:
            state: What ``to_state`` returned in that function.
            left: What that function may have shown after it saved ``state``
                (``shared.slack.left_behind``): if it died, the text its
                messages show that ``state`` does not hold is sent again, and
                each message written whole (a stream's once it stops), so
                that it shows each part once; each step it showed keeps the
                state it showed (``ReplyState.resume``); the messages marked
                as this reply's in the thread read back, and the streams the
                turn records, that ``state`` does not name are adopted
                (``ReplyState.adopt``).
        """
        with self._lock:
            if left.mark is not None:
                self._mark = left.mark
            self._reply = ReplyState.from_state(state, self._limits)
            then = self._reply.resume(left.shown)
            known = {message.ts for message in self._reply.layout.messages}
            posted = []
            if left.thread is not None and self._mark is not None:
                self._keep_posting = None  # the turn records it already
                posted = orphans(left.thread, self._mark, known)
            streamed = [ts for ts in left.streams if ts not in known]
            if posted or streamed:
                for left_open, stop in self._reply.adopt(posted, streamed, left.shown):
                    self._stop(left_open, stop, adopted=True)
                then = Then.NOTHING  # the reply fell back: the layout writes every message
            self._budget.open_until = state.get("open_until")
            if left.died:
                for message in self._reply.written_again():  # seed 5877
                    self._rewrite(message)
            stream = self._reply.layout.stream()
            if then is Then.FALL_BACK:
                self._fall_back()  # as the function that died did, after it stopped the stream
            elif then is Then.ROLL_OVER:
                assert stream is not None
                self._roll_over(stream)  # as the function that died did
            self._pump()

    # Scheduling -----------------------------------------------------------------

    def _pump(self) -> None:
        """Do what is due now (``shared.slack.timetable.pump``); leave the rest to the timer."""
        plan = pump(self._clock.time(), self._limits, lambda: self._reply.times(self._budget))
        try:
            action = next(plan)
            while True:
                action = plan.send(self._do(action))
        except StopIteration as done:
            self._timer.set(done.value)

    def _do(self, action: Due) -> list[float]:
        """Do what the timetable names; returns when the messages left unwritten are due."""
        stream = self._reply.layout.stream()
        if action is Due.STOP:
            self._stop_streaming()
        elif action is Due.STATUS:
            self._set_status()
        elif action is Due.SEND:
            self._send_queue()
        elif action is Due.RENEW and stream is not None:
            self._budget.renew(len(self._reply.layout.messages) - 1)
        elif action is Due.SHARE:
            self._budget.share()
        elif action is Due.ROLL_OVER and stream is not None:
            self._roll_over(stream)
        elif action is Due.LAYOUT:
            return self._write_messages(force=False)
        return []

    def _on_timer(self) -> None:
        try:
            self._pump()
        except Exception as error:  # noqa: BLE001 - raised at the engine's next call
            log.warning("slack_reply_failed", channel=self._channel, error=repr(error))
            self._failure = error

    def _raise_failure(self) -> None:
        if self._failure is not None:
            failure, self._failure = self._failure, None
            raise failure

    def _set_status(self) -> None:
        """The older status line, where agent sessions are refused (see ``ThreadStatus``)."""
        if self._status.working_line():
            self._reply.status_at = self._clock.time()

    # Streaming ------------------------------------------------------------------

    def _send_queue(self) -> None:
        """Make the calls the pacer names until the queue is sent."""
        while not self._reply.fallback:
            stream = self._reply.layout.stream()
            call = self._reply.pacer.next_call(stream, self._clock.time())
            if call is None:
                return
            if isinstance(call, RollOver):
                assert stream is not None
                self._roll_over(stream)
            elif isinstance(call, Start):
                if not self._may_start():
                    return  # queued: the timer tries again when the budget allows
                self._start_stream(call)
            else:
                assert stream is not None
                self._append_stream(stream, call)

    def _may_start(self) -> bool:
        """Whether the workspace's budget lets the reply's next message stream (``ReplyBudget``)."""
        return self._budget.may_start(len(self._reply.layout.messages))

    def _share_appends(self, open_streams: int) -> None:
        """Pace appends for ``open_streams`` streams sharing the workspace's limit."""
        self._reply.pacer.interval = append_interval(open_streams, self._limits.stream_interval)

    def _start_stream(self, call: Start) -> None:
        before = self._showing(call.chunks, NEW_MESSAGE)
        try:
            answer = self._client.chat_startStream(
                channel=self._channel,
                thread_ts=self._thread_ts,
                chunks=call.chunks,
                **self._recipient,
            )
        except SlackApiError as error:
            self._unshow(before)
            code = error.response.get("error")
            then = self._reply.start_refused(call, code)
            if then is Then.RAISE:
                raise
            if then is Then.FALL_BACK:
                log.info("slack_streaming_unavailable", error=code)
                self._fall_back()
            return
        ts = str(answer["ts"])
        self._reply.started(call, ts, self._clock.time())
        if self._keep_stream is not None:
            self._keep_stream(ts, shown_json(self._reply.pacer.shown))

    def _append_stream(self, stream: Message, call: Append) -> None:
        before = self._showing(call.batch, stream.ts)
        try:
            self._client.chat_appendStream(channel=self._channel, ts=stream.ts, chunks=call.batch)
        except SlackApiError as error:
            self._unshow(before)
            then = self._reply.append_refused(stream, call, error.response.get("error"))
            if then is Then.RAISE:
                raise
            self._roll_over(stream, already_cut=then is Then.GONE)
            return
        self._reply.appended(stream, call, self._clock.time())

    def _showing(self, chunks: list[Chunk], ts: str) -> dict[str, Shown]:
        """Before a call: keep where it shows steps final. Returns the record before it."""
        before = dict(self._reply.pacer.shown)
        shown = self._reply.pacer.showing(chunks, ts)
        if shown is not None and self._keep_shown_steps is not None:
            self._keep_shown_steps(shown)
        return before

    def _unshow(self, before: dict[str, Shown]) -> None:
        """Slack refused the call: the record is again what it was before it."""
        if before != self._reply.pacer.shown and self._keep_shown_steps is not None:
            self._keep_shown_steps(shown_json(before))
        self._reply.pacer.shown = before

    def _roll_over(self, stream: Message, already_cut: bool = False) -> None:
        """Stop ``stream`` (unless Slack already cut it) and carry on in a new message."""
        stop = self._reply.pacer.roll_over(stream)
        if already_cut:
            stream.streaming = False
            self._rewrite(stream)
        else:
            self._stop(stream, stop)

    def _stop(
        self, stream: Message, stop: Stop, blocks: Blocks = (), *, adopted: bool = False
    ) -> None:
        """Stop a stream with what the pacer closes in it (Slack would show a pending step failed).

        ``blocks`` show after the stream's content (an answer's feedback
        buttons). The stream's text is then written whole, if Slack may show
        more; but not that of a stream stopped on ``adopted`` messages (one
        a function before may have left open: ``ReplyState.adopt``), whose
        text this reply may not know: refused
        as no longer streaming, it shows what it shows, and either way the
        layout writes it next.
        """
        self._showing(stop.steps, stream.ts)
        try:
            if self._call_stop(stream, stop.chunks, blocks):
                stream.text += stop.closing
        except SlackApiError as error:
            then = on_refusal("stop", error.response.get("error"))
            if then is not Then.STOP_WITHOUT_TEXT or not stop.closing:
                raise
            self._call_stop(stream, stop.steps, blocks)
        stream.streaming = False
        if not adopted:
            self._rewrite(stream, blocks)

    def _rewrite(self, stream: Message, blocks: Blocks = ()) -> None:
        """Write a stopped stream's text whole, if Slack may show more (``layout.rewrite_fields``)."""
        fields = rewrite_fields(stream, blocks)
        if fields is not None:
            self._client.chat_update(channel=self._channel, ts=stream.ts, **fields)
            stream.rewrite = False

    def _call_stop(self, stream: Message, chunks: list[Chunk], blocks: Blocks = ()) -> bool:
        """chat.stopStream; False when Slack had already cut or stopped the stream."""
        messages = self._reply.layout.messages
        self._budget.wait_to_stop(next(i for i, m in enumerate(messages) if m is stream))
        try:
            self._client.chat_stopStream(
                channel=self._channel,
                ts=stream.ts,
                chunks=chunks or None,
                blocks=list(blocks) or None,
                session_status=KEEP_PROCESSING,
            )
        except SlackApiError as error:
            if on_refusal("stop", error.response.get("error")) is not Then.GONE:
                raise
            return False
        return True

    # Falling back to posted and edited messages -----------------------------------

    def _take(self, change: ReplyChange) -> Then | None:
        """Take ``change`` into the reply's state, falling back if it says so (no Slack call)."""
        then = self._reply.take(change)
        if then is Then.FALL_BACK:
            self._reply.place_cards(self._reply.fall_back())
        return then

    def _fall_back(self) -> None:
        """From now on, post and edit: text already shown changed, or streams are refused.

        Every step not shown in its final state yet continues as a card.
        """
        self._reply.place_cards(self._reply.fall_back())
        self._stop_streaming()

    def _stop_streaming(self) -> None:
        """The reply fell back: its open stream stops, each step it shows running continued below."""
        stream = self._reply.layout.stream()
        if stream is not None:
            self._stop(stream, self._reply.pacer.stop(stream.ts, output=CONTINUED_BELOW))

    def _write_messages(self, force: bool) -> list[float]:
        """Write each message the layout names, each at most once per interval.

        Returns:
            When the messages left unwritten may be written. With ``force``,
            waits for that instead and writes every one.
        """
        due: list[float] = []
        for write in self._reply.writes(self._clock.time()):
            if self._clock.time() < write.ready_at:
                if not force:
                    due.append(write.ready_at)
                    continue
                self._clock.sleep(max(0.0, write.ready_at - self._clock.time()))
            self._write(write)
        return due

    def _write(self, write: Write) -> None:
        ts = write.message.ts
        self._showing(self._reply.final_cards(write), ts or NEW_MESSAGE)
        if ts:
            self._client.chat_update(channel=self._channel, ts=ts, **write.fields)
        else:
            if self._keep_posting is not None:
                self._keep_posting()
                self._keep_posting = None
            answer = self._client.chat_postMessage(
                channel=self._channel,
                thread_ts=self._thread_ts,
                metadata=self._mark,
                **write.fields,
            )
            ts = str(answer["ts"])
        self._reply.wrote(write, ts, self._clock.time())
