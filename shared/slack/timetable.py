"""What a reply does when its timer fires, and when the timer fires next: decided without I/O.

Theory of operation. A reply does what is due each time the turn engine
calls it and each time its timer fires; ``pump`` decides, with the time
passed in, what that is, in a fixed order, each at most once a pass: stop
the stream of a reply that fell back (``STOP``: the reply's state falls
back with the change that made it, and its stream stops at the next pass,
so a checkpoint saved in between holds the change, and a function taking
over from it stops that stream), set the older status line again before
Slack clears it (``STATUS``, only until a message is posted), send what is
queued (``SEND``; a new stream only once
the workspace's budget lets it start, ``send_at``), renew the open stream's
reserved stop in the budget before it lapses (``RENEW``), learn again how
many streams share the workspace's appends (``SHARE``), stop a stream that
would outlive Slack's limit, idle or not (``ROLL_OVER``), and write the
fallback's layout (``LAYOUT``, at most once per ``update_interval``). An
action changes what follows (a send may start a stream, or fall back to
posted messages), so ``pump`` is a generator: it names one action, the
reply does it (``shared.slack.reply.ThreadReply`` makes the Slack calls)
and sends back the dates its messages are due (``LAYOUT`` only), and
``pump`` reads the reply's state again (``ReplyTimes``) before it decides
the next. It returns when the timer fires next: the earliest date of what
was not due yet, or None. Every date is compared with the one ``now`` the
pass began at, so a pass does each thing once however long its calls take.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from dataclasses import dataclass
from enum import Enum

from shared.slack.pacing import ReplyLimits
from shared.slack.tiers import MARGIN

SHARE_REFRESH = 10.0
"""Seconds between reads of how many streams share the workspace's appends."""


class Due(Enum):
    """One thing a reply's timer does."""

    STOP = "stop"
    STATUS = "status"
    SEND = "send"
    RENEW = "renew"
    SHARE = "share"
    ROLL_OVER = "roll_over"
    LAYOUT = "layout"


@dataclass(frozen=True)
class ReplyTimes:
    """What the timer weighs in a reply's state, read at one moment."""

    fallback: bool
    """The reply posts and edits messages (a stream still open stops first: ``STOP``)."""
    posted: bool
    """Slack holds a message of the reply."""
    streaming: bool
    """A stream is open (the reply's last message)."""
    status_at: float | None
    """When the older status line was last set; None: it is not shown."""
    send_at: float | None
    """When the pacer may send its queue next (``StreamPacer.send_at``)."""
    start_at: float
    """No stream starts before this: the workspace's budget of starts was spent."""
    budgeted: bool
    """The reply shares a workspace's budget (``WorkspaceBudget``)."""
    open_until: float | None
    """The open stream counts as open in the budget until then, unless renewed."""
    shared_at: float
    """When the reply last learnt how many streams share the workspace's appends."""
    roll_over_at: float | None
    """When the open stream rolls over (``StreamPacer.roll_over_at``); None: no stream."""
    layout_at: float
    """When the fallback's layout may be written again (``FallbackLayout.layout_at``)."""


def send_at(times: ReplyTimes) -> float | None:
    """When the queue may be sent next (a new stream: once the budget lets it start)."""
    at = None if times.fallback else times.send_at
    if at is not None and not times.streaming:
        at = max(at, times.start_at)
    return at


def pump(
    now: float, limits: ReplyLimits, read: Callable[[], ReplyTimes]
) -> Generator[Due, list[float], float | None]:
    """One pass of the reply's timer at ``now``: each action due, then when to fire next.

    Args:
        now: What time it is.
        limits: The reply's intervals.
        read: The reply's state now (read again after each action).
    """
    due: list[float] = []
    times = read()
    if times.streaming and times.fallback:
        yield Due.STOP
        times = read()
    if times.status_at is not None and not times.posted:
        if now - times.status_at >= limits.status_refresh:
            yield Due.STATUS
            times = read()
        if times.status_at is not None:
            due.append(times.status_at + limits.status_refresh)
    queue_at = send_at(times)
    if queue_at is not None and now >= queue_at:
        yield Due.SEND
        times = read()
        queue_at = send_at(times)  # text left queued waits for a stream to start
    if queue_at is not None:
        due.append(queue_at)
    if times.streaming and not times.fallback:
        if times.budgeted:
            # A stream that streams on past its reserved stop is counted again, for its life.
            if times.open_until is not None and now >= times.open_until - MARGIN:
                yield Due.RENEW
                times = read()
            if now - times.shared_at >= SHARE_REFRESH:
                yield Due.SHARE
                times = read()
        if times.open_until is not None:
            due.append(times.open_until - MARGIN)
        # An idle stream too: stopped before Slack cuts it with a step still running.
        if times.roll_over_at is not None and now >= times.roll_over_at:
            yield Due.ROLL_OVER
            times = read()
        elif times.roll_over_at is not None:
            due.append(times.roll_over_at)
    if times.fallback:  # maybe only since the queue was sent: streams were refused
        if now >= times.layout_at:
            due += yield Due.LAYOUT
        else:
            due.append(times.layout_at)
    return min(due) if due else None
