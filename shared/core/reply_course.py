"""The course of a reply in Slack: how it ends, falls back or rolls over, decided without I/O.

Theory of operation. ``shared.slack.reply.ThreadReply`` streams a turn's
answer into Slack's streaming messages, or posts and edits ordinary ones
(the fallback, for good once taken). What goes out in which batch, and
when, is decided by ``shared.slack.pacing``, ``shared.slack.layout`` and
``shared.slack.timetable``; this module decides the rest, over the reply's
state passed in as plain values, and the reply carries it out:

- *Whether it streams at all* (``streams``): outside a direct message a
  stream needs a person to stream to.
- *A change to text already shown* (``on_replace``): a stream cannot take
  text back, so once some went out the reply falls back; until then the
  queued text is taken back and queued anew.
- *A call Slack refused* (``on_refusal``): by the call and Slack's error
  code, whether the reply keeps messages shorter, goes on in a new message
  (a stream Slack cut after its lifetime, or a person stopped), falls back
  (streams refused), or lets the error end the run.
- *The end* (``closing``, ``on_end``). Each step still running is closed:
  as complete, waiting for the answer, when the task paused for a person;
  otherwise as ``error`` with no result, since Kourier cannot vouch that
  the tool succeeded (Slack shows a step left running in a stopped message
  as failed, with its own "Something went wrong"). After the queue is sent,
  an open stream stops with the answer's blocks; with none open, text still
  queued (no stream may start yet) is posted whole, and steps a rollover
  continued are closed in a stream started for them, or posted when none
  may start.
- *A person's stop* (``on_stop``): Slack stopped the thread's streams
  for the click; one it did not is stopped, each running step closed with
  no result. What waited to be sent is dropped.
- *A notice told mid-answer* (``on_tell``; the agent's context changed):
  the answer goes on, so the reply does not end. The open stream rolls
  over, each running step closed as continued, so the notice shows after
  what was streamed and the answer goes on below it, where a step whose
  result comes later finishes (seeds 4972, 5469: the reply ended there,
  its steps closed with no result, and the result came after).
- *A take-over* (``on_take_over``): the function before died after its
  checkpoint. It may have edited any message since, so each one Slack
  holds is written whole again (a stopped stream's at once, unless the
  reply fell back, which writes every message anyway); and if the record
  of its steps says it closed one in the open stream to go on elsewhere,
  it stopped that stream, and the reply does as it did.
- *Messages no checkpoint names* (``reply_mark``, ``orphans``): every
  message the reply posts carries Slack message metadata naming the turn
  and the reply (``reply_mark``). A function that died, or that a person's
  stop took the turn from, between a chat.postMessage and its next
  checkpoint left a message the function taking over does not know: it
  showed text and steps the taker would show again elsewhere, and steps the
  taker never learns of left running (seeds 946, 246). When the turn's
  record says the reply posted (``Turn.posting``), the taker reads the
  thread back once and adopts each message marked as this reply's that its
  checkpoint does not name (``orphans``): a posted message means that
  function fell back, so the taker falls back too and writes that message
  whole as its own, in place of posting a new one. A message marked for
  another turn, or for another reply of this turn (the answer to a
  question is a new reply), or not marked at all, is never touched. A
  stream carries no metadata (chat.startStream takes none): the turn
  records each stream's ts once Slack answered (``Turn.started_streams``),
  and the taker adopts those its checkpoint does not name the same way, the
  last one stopped first if Slack still streams it (seeds 3713, 9846: its
  text and steps were shown again, the stream left open). A function that
  dies between chat.startStream and that record still leaves a stream no
  one knows, and so does a carrier that a person's stop fences out between
  them (seeds 3485, 4217: the stop's function shows its steps again).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from enum import Enum
from typing import Any

from shared.core import notices
from shared.core.step_cards import CONTINUED_BELOW

REPLY_EVENT = "kourier_reply"
"""The ``event_type`` of the metadata of every message a reply posts (``reply_mark``)."""
STREAM_GONE = frozenset({"message_not_in_streaming_state", "stopped_by_user"})
"""Slack's answers for a stream it no longer streams: cut after its lifetime, or stopped by a person."""


class Then(Enum):
    """What the reply does next."""

    NOTHING = "nothing"
    FALL_BACK = "fall back"
    """Post and edit messages from now on; an open stream stops, its running steps continued below."""
    TAKE_BACK = "take back"
    """Drop the queued text and queue the answer anew."""
    ROLL_OVER = "roll over"
    """Stop the open stream; the reply continues in a new message."""
    GONE = "gone"
    """Slack no longer streams the message: the reply continues in a new one, no stop made."""
    SHRINK = "shrink"
    """Keep messages shorter from now on (the error ends the run if they are short already)."""
    SHRINK_AND_ROLL_OVER = "shrink and roll over"
    STOP = "stop"
    """Stop the open stream, the answer's blocks after it."""
    STOP_WITHOUT_TEXT = "stop without text"
    """Stop the stream again with its steps alone (the fence closing its code block made it too long)."""
    CLOSE_CARRIED = "close carried"
    """Start a stream with the steps a rollover continued, to close them (if none may start: fall back)."""
    RAISE = "raise"
    """The error ends the run (a function taking the turn over carries on)."""


def streams(recipient_user: str | None, channel: str) -> bool:
    """Whether a reply may stream: outside a direct message a stream needs the person it answers."""
    return bool(recipient_user) or channel.startswith("D")


def on_replace(fallback: bool, text_shown: bool) -> Then:
    """The answer changed where it was shown already; ``text_shown``: a message shows text."""
    if fallback:
        return Then.NOTHING  # the next layout writes it
    return Then.FALL_BACK if text_shown else Then.TAKE_BACK


def on_refusal(call: str, code: str | None) -> Then:
    """What follows Slack's ``code`` refusing ``call`` (``start``, ``append`` or ``stop``).

    A stop of a stream Slack no longer streams did what it could; one too
    long is made again without the fence that closed its code block, if it
    closed one.
    """
    if call == "start":
        if code == "msg_too_long":
            return Then.SHRINK
        return Then.RAISE if code == "ratelimited" else Then.FALL_BACK
    if code in STREAM_GONE:
        return Then.GONE
    if code == "msg_too_long":
        return Then.SHRINK_AND_ROLL_OVER if call == "append" else Then.STOP_WITHOUT_TEXT
    return Then.RAISE


def closing(paused: bool) -> tuple[str, str]:
    """The status and output a step still running takes when the reply ends."""
    if paused:
        return "complete", notices.STEP_WAITS_FOR_ANSWER
    return "error", notices.STEP_NO_RESULT


def on_end(streaming: bool, queued: bool, carries_steps: bool) -> Then:
    """How a streamed reply ends once the queue is sent (as much as may be sent now).

    Args:
        streaming: A stream is open.
        queued: Text waits still (no stream may start yet).
        carries_steps: The next message would show steps a rollover continued.
    """
    if streaming:
        return Then.STOP
    if queued:
        return Then.FALL_BACK
    return Then.CLOSE_CARRIED if carries_steps else Then.NOTHING


def on_tell(streaming: bool) -> Then:
    """What the reply does before a notice told mid-answer (``streaming``: a stream is open)."""
    return Then.ROLL_OVER if streaming else Then.NOTHING


def written_again_now(fallback: bool, streamed: bool, streaming: bool) -> bool:
    """Whether a message of a reply taken over is written whole at once (see ``on_take_over``)."""
    return not fallback and streamed and not streaming


def on_stop(streaming: bool, stopped_by_slack: bool) -> Then:
    """How a reply a person stopped ends its open stream (it then shows nothing more).

    Args:
        streaming: A stream is open.
        stopped_by_slack: Slack stopped it for the click (``streaming_message_ts``).
    """
    if not streaming:
        return Then.NOTHING
    return Then.GONE if stopped_by_slack else Then.STOP


def on_take_over(streaming: bool, closed: str | None) -> Then:
    """What a reply taken over does first, after its messages are marked to write again.

    Args:
        streaming: A stream is open.
        closed: How the function that died closed a step in the open stream
            to go on elsewhere (``StreamPacer.taken_over``), if it did.
    """
    if not streaming or closed is None:
        return Then.NOTHING
    return Then.FALL_BACK if closed == CONTINUED_BELOW else Then.ROLL_OVER


def reply_mark(turn_id: str, answering: str | None) -> dict[str, Any]:
    """The Slack message metadata of the messages of ``turn_id``'s reply.

    ``answering``: the question whose answer the reply shows (an answer's
    reply is a new one), or None for the turn's first reply.
    """
    return {"event_type": REPLY_EVENT, "event_payload": {"turn": turn_id, "reply": answering or ""}}


def orphans(
    thread: Iterable[Mapping[str, Any]], mark: Mapping[str, Any], known: Collection[str]
) -> list[str]:
    """The ts of the messages ``thread`` holds marked ``mark`` that the reply does not know.

    Args:
        thread: The thread's messages as conversations.replies shows them.
        mark: The reply's metadata (``reply_mark``): only a message that
            carries it is provably this reply's.
        known: The ts of the reply's messages its checkpoint names.

    Returns:
        Oldest first (as the thread lists them).
    """
    return [
        str(message["ts"])
        for message in thread
        if message.get("metadata") == mark and message.get("ts") not in known
    ]
