"""What a reply's timer does at a given instant, and when it fires next, with the time passed in.

No Slack here: each test drives ``pump`` over a reply's state (``ReplyTimes``),
does each action by changing that state as ``ThreadReply`` would, and reads
the actions taken and the next date. (``tests/replies`` shows the same
schedule against the Slack stand-in.)
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from shared.slack.pacing import ReplyLimits
from shared.slack.tiers import MARGIN
from shared.slack.timetable import SHARE_REFRESH, Due, ReplyTimes, pump, send_at

LIMITS = ReplyLimits(status_refresh=90.0, update_interval=1.0)
IDLE = ReplyTimes(
    fallback=False,
    posted=False,
    streaming=False,
    status_at=None,
    send_at=None,
    start_at=0.0,
    budgeted=False,
    open_until=None,
    shared_at=0.0,
    roll_over_at=None,
    layout_at=0.0,
)
STREAMING = replace(IDLE, posted=True, streaming=True, roll_over_at=1240.0, shared_at=1000.0)


def run(
    times: ReplyTimes,
    now: float,
    after: dict[Due, ReplyTimes] | None = None,
    layout_due: list[float] | None = None,
) -> tuple[list[Due], float | None]:
    """The actions of one pass at ``now``, and when the timer fires next.

    ``after`` is the state each action leaves; ``layout_due`` what a layout write returns.
    """
    state = [times]
    done: list[Due] = []
    plan = pump(now, LIMITS, lambda: state[0])
    try:
        action = next(plan)
        while True:
            done.append(action)
            state[0] = (after or {}).get(action, state[0])
            action = plan.send(layout_due or [] if action is Due.LAYOUT else [])
    except StopIteration as stop:
        return done, stop.value


@pytest.mark.parametrize(
    ("times", "now", "actions", "wake"),
    [
        (IDLE, 1000.0, [], None),  # nothing queued, nothing shown: the timer sleeps
        # The older status line: set again 90 s after it was set, until a message is posted.
        (replace(IDLE, status_at=1000.0), 1089.0, [], 1090.0),
        (replace(IDLE, status_at=1000.0), 1090.0, [Due.STATUS], 1090.0),
        (replace(IDLE, status_at=1000.0, posted=True), 1090.0, [], None),
        # The queue: sent once its interval passed; a new stream waits for the budget's start.
        (replace(IDLE, send_at=1000.6), 1000.5, [], 1000.6),
        (replace(IDLE, send_at=1000.6), 1000.6, [Due.SEND], 1000.6),
        (replace(IDLE, send_at=1000.6, start_at=1005.0), 1001.0, [], 1005.0),
        (replace(STREAMING, send_at=1000.6, start_at=1005.0), 1001.0, [Due.SEND], 1000.6),
        # An open stream rolls over at its age, idle or not.
        (STREAMING, 1239.0, [], 1240.0),
        (STREAMING, 1240.0, [Due.ROLL_OVER], None),
        # Within a budget: the reserved stop is renewed before it lapses; shares read anew.
        (replace(STREAMING, budgeted=True, open_until=1100.0), 1001.0, [], 1100.0 - MARGIN),
        (
            replace(STREAMING, budgeted=True, open_until=1100.0),
            1100.0 - MARGIN,
            [Due.RENEW, Due.SHARE],  # the shares are older than SHARE_REFRESH too
            1100.0 - MARGIN,
        ),
        (
            replace(STREAMING, budgeted=True),
            1000.0 + SHARE_REFRESH,
            [Due.SHARE],
            1240.0,
        ),
        (replace(STREAMING, shared_at=0.0), 1001.0, [], 1240.0),  # no budget: no shares
        # Fallen back: the layout is written once its interval passed.
        (replace(IDLE, fallback=True, layout_at=1001.0), 1000.5, [], 1001.0),
        (replace(IDLE, fallback=True, layout_at=1001.0), 1001.0, [Due.LAYOUT], None),
        (replace(IDLE, fallback=True, send_at=1000.0), 1001.0, [Due.LAYOUT], None),  # no send
    ],
)
def test_what_is_due_at_an_instant_and_when_the_timer_fires_next(
    times: ReplyTimes, now: float, actions: list[Due], wake: float | None
) -> None:
    assert run(times, now) == (actions, wake)


def test_each_action_is_weighed_on_the_state_the_one_before_left() -> None:
    queued = replace(IDLE, status_at=1000.0, send_at=1000.0)
    # The send starts a stream: its status is off, and its roll-over weighs in.
    started = replace(STREAMING, status_at=None, roll_over_at=1330.0)
    actions, wake = run(queued, 1090.0, after={Due.STATUS: queued, Due.SEND: started})
    assert (actions, wake) == ([Due.STATUS, Due.SEND], 1090.0)  # the status noted before


def test_a_refused_stream_falls_back_and_writes_the_layout_in_the_same_pass() -> None:
    queued = replace(IDLE, send_at=1000.0)
    fallen = replace(IDLE, fallback=True, posted=True, layout_at=1.0)
    actions, wake = run(queued, 1000.0, after={Due.SEND: fallen}, layout_due=[1001.5, 1001.2])
    assert (actions, wake) == ([Due.SEND, Due.LAYOUT], 1001.2)


def test_a_reply_that_fell_back_stops_its_stream_before_it_writes_the_layout() -> None:
    # The state falls back with the change that made it (a checkpoint may be saved then):
    # the stream stops first in the next pass, whoever makes it, then the layout is written.
    fell_back = replace(STREAMING, fallback=True, layout_at=1.0)
    stopped = replace(fell_back, streaming=False, roll_over_at=None)
    actions, wake = run(fell_back, 1000.0, after={Due.STOP: stopped})
    assert (actions, wake) == ([Due.STOP, Due.LAYOUT], None)


def test_a_renewed_stop_is_no_date_any_more() -> None:
    reserved = replace(STREAMING, budgeted=True, open_until=1100.0, shared_at=1095.0)
    renewed = replace(reserved, open_until=None)
    actions, wake = run(reserved, 1100.0, after={Due.RENEW: renewed})
    assert (actions, wake) == ([Due.RENEW], 1240.0)


@pytest.mark.parametrize(
    ("times", "at"),
    [
        (IDLE, None),
        (replace(IDLE, send_at=1.0), 1.0),
        (replace(IDLE, send_at=1.0, start_at=5.0), 5.0),  # a new stream: once it may start
        (replace(STREAMING, send_at=1.0, start_at=5.0), 1.0),  # an open one: at once
        (replace(IDLE, send_at=1.0, fallback=True), None),  # fallen back: no queue
    ],
)
def test_when_the_queue_may_be_sent(times: ReplyTimes, at: float | None) -> None:
    assert send_at(times) == at
