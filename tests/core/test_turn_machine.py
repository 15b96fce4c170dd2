"""Table-driven tests of the pure turn state machine (issue 4).

Each row starts a turn, feeds it events at given times with given jitter,
and names the actions expected after every event and where the turn ends.
Between events the state goes through its checkpoint form (to_dict, JSON,
from_dict) and the next event is handled by a new machine on the restored
state, as a new function would, so every row also shows that a checkpoint
holds all the machine needs. Times start at 0; with the default jitter of 0
a backoff is half its base, so the n-th wait of a turn is 2**(n-1) / 2 s
until it reaches half the cap.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, replace
from typing import Any

import pytest

from shared.core import notices
from shared.core.model import (
    Artifact,
    ArtifactUpdate,
    Message,
    Role,
    StatusUpdate,
    StreamEvent,
    Task,
    TaskState,
    TaskStatus,
)
from shared.core.outcome import final_notice
from shared.core.timers import WaitTimer
from shared.core.turn_machine import (
    Action,
    CallFailed,
    Cancel,
    CardRead,
    Event,
    Failure,
    Finish,
    LookedUp,
    LookUp,
    Notify,
    Phase,
    ReadCard,
    ReadTask,
    Resumed,
    Send,
    Started,
    StreamClosed,
    StreamEventSeen,
    Subscribe,
    TaskRead,
    TimerFired,
    TurnMachine,
    TurnState,
    TurnTimings,
    Unpaused,
    WaitUntil,
    first_events,
    outcome_of,
)

DEFAULT = TurnTimings()
GIVE_UP = notices.turn_failed(notices.UNREACHABLE)


@dataclass(frozen=True)
class Step:
    """One event at ``at`` and the actions it must yield."""

    at: float
    event: Event
    actions: list[Action]
    jitter: float = 0.0


@dataclass(frozen=True)
class Row:
    """A turn from its first state through ``steps`` to ``end`` (state attributes)."""

    name: str
    steps: list[Step]
    end: dict[str, Any]
    has_context: bool = True
    timings: TurnTimings = DEFAULT
    task_id: str | None = None
    """The task followed from the start: an answer's, sent to its paused task."""
    started_at: float = 0.0


def at(when: float, event: Event, *actions: Action, jitter: float = 0.0) -> Step:
    return Step(when, event, list(actions), jitter)


def start(protocol: str = "1.0", can_subscribe: bool = True) -> Step:
    return at(0, Started(protocol, can_subscribe), Send())


def fail(
    failure: Failure, retry_after: float | None = None, reason: str = notices.UNREACHABLE
) -> CallFailed:
    return CallFailed(failure, retry_after, reason)


def timer(number: int) -> TimerFired:
    return TimerFired(WaitTimer(number))


def wait(until: float, number: int) -> WaitUntil:
    return WaitUntil(until, WaitTimer(number))


def status(state: TaskState, task_id: str | None = "t1") -> StreamEventSeen:
    """A TaskStatusUpdateEvent."""
    return StreamEventSeen(task_id, state)


def snapshot(state: TaskState, task_id: str = "t1") -> StreamEventSeen:
    """A full Task."""
    return StreamEventSeen(task_id, state, full_task=True)


CLOSED = StreamClosed()
MESSAGE_REPLY = StreamEventSeen(None, None, message_role=Role.AGENT)


def message(role: Role = Role.AGENT, task_id: str | None = None) -> StreamEventSeen:
    """A Message on the stream."""
    return StreamEventSeen(task_id, None, message_role=role)


WORKING = TaskState.WORKING
DONE = {"phase": Phase.DONE}


def run(row: Row) -> TurnState:
    """Feed the row's events, checking actions and the checkpoint round trip after each."""
    state = TurnState(started_at=row.started_at, has_context=row.has_context, task_id=row.task_id)
    for number, step in enumerate(row.steps):
        actions = TurnMachine(state, row.timings).handle(step.event, step.at, step.jitter)
        assert actions == step.actions, f"step {number}: {step.event!r} at {step.at}"
        restored = TurnState.from_dict(json.loads(json.dumps(state.to_dict())))
        assert restored == state, f"step {number}: the checkpoint lost something"
        state = restored
    return state


# Task states (contract, "Task states") -----------------------------------------

SETTLED_STATES = [
    TaskState.COMPLETED,
    TaskState.FAILED,
    TaskState.REJECTED,
    TaskState.CANCELED,
    TaskState.UNKNOWN,
]

TASK_STATE_ROWS = [
    Row(
        "submitted and working show the turn as running",
        [
            start(),
            at(1, snapshot(TaskState.SUBMITTED)),
            at(2, status(WORKING)),
            at(3, status(WORKING)),
        ],
        {"phase": Phase.FOLLOW, "task_id": "t1"},
    ),
    *[
        Row(
            f"a {state} Task ends the stream and the turn",
            [
                start(),
                at(1, snapshot(WORKING)),
                at(2, snapshot(state)),
                at(3, CLOSED, Finish(state.value)),
            ],
            DONE,
        )
        for state in SETTLED_STATES
    ],
    *[
        Row(
            f"a {state} status update, then a normal close: one GetTask at once, taken as final",
            [
                start(),
                at(1, snapshot(WORKING)),
                at(2, status(state)),
                at(3, CLOSED, ReadTask()),
                at(3, TaskRead(state), Finish(state.value)),
            ],
            DONE,
        )
        for state in SETTLED_STATES
    ],
    Row(
        "auth-required: the task is cancelled, then the thread told what the cancel did",
        [
            start(),
            at(1, snapshot(TaskState.AUTH_REQUIRED)),
            at(2, CLOSED, Cancel(notices.UNUSABLE_PAUSE), Finish("auth_required")),
        ],
        DONE,
    ),
    Row(
        "auth-required found by the final read: cancelled, then told, ended",
        [
            start(),
            at(1, status(WORKING)),
            at(2, status(TaskState.AUTH_REQUIRED)),
            at(3, CLOSED, ReadTask()),
            at(
                3,
                TaskRead(TaskState.AUTH_REQUIRED),
                Cancel(notices.UNUSABLE_PAUSE),
                Finish("auth_required"),
            ),
        ],
        DONE,
    ),
    Row(
        "input-required is a question",
        [
            start(),
            at(1, snapshot(TaskState.INPUT_REQUIRED)),
            at(2, CLOSED, Finish("input_required")),
        ],
        DONE,
    ),
    Row(
        "a Message reply (role agent, no task) is the whole turn",
        [start(), at(1, MESSAGE_REPLY), at(2, CLOSED, Finish("completed"))],
        DONE,
    ),
    Row(
        "a Message reply, then the stream fails: still the whole turn",
        [start(), at(1, MESSAGE_REPLY), at(2, fail(Failure.DROPPED), Finish("completed"))],
        DONE,
    ),
]

# Streams that end before their task settles -------------------------------------

STREAM_ROWS = [
    Row(
        "a stream closed while working: GetTask a second later, then SubscribeToTask",
        [
            start(),
            at(1, status(WORKING)),
            at(5, CLOSED, wait(6, 1)),
            at(6, timer(1), ReadTask()),
            at(6, TaskRead(WORKING), Subscribe()),
            at(7, status(WORKING)),
            at(8, snapshot(TaskState.COMPLETED)),
            at(9, CLOSED, Finish("completed")),
        ],
        DONE,
    ),
    Row(
        "a stream dropped after events: GetTask a second later finds the task done",
        [
            start(),
            at(1, status(WORKING)),
            at(5, fail(Failure.DROPPED), wait(6, 1)),
            at(6, timer(1), ReadTask()),
            at(6, TaskRead(TaskState.COMPLETED), Finish("completed")),
        ],
        DONE,
    ),
    Row(
        "an agent without SubscribeToTask is polled with GetTask, backing off up to the poll cap",
        [
            start(),
            at(1, status(WORKING)),
            at(5, CLOSED, wait(6, 1)),
            at(6, timer(1), ReadTask()),
            at(6, TaskRead(WORKING), Subscribe()),
            at(6, fail(Failure.NOT_SENT), wait(7, 2)),  # the subscribe failed before any event
            at(7, timer(2), ReadTask()),
            at(7, TaskRead(WORKING), wait(9, 3)),
            at(9, timer(3), ReadTask()),
            at(9, TaskRead(WORKING), wait(13, 4)),
            at(13, timer(4), ReadTask()),
            at(13, TaskRead(WORKING), wait(17, 5)),  # capped: 8 s, jittered to half
            at(17, timer(5), ReadTask()),
            at(17, TaskRead(WORKING), wait(21, 6)),
            at(21, timer(6), ReadTask()),
            at(21, TaskRead(TaskState.COMPLETED), Finish("completed")),
        ],
        DONE,
        timings=TurnTimings(poll_cap=8, backoff_cap=1000),
    ),
    Row(
        "a subscription that fails after events is a drop, not a missing method",
        [
            start(),
            at(1, status(WORKING)),
            at(5, CLOSED, wait(6, 1)),
            at(6, timer(1), ReadTask()),
            at(6, TaskRead(WORKING), Subscribe()),
            at(7, status(WORKING)),
            at(8, fail(Failure.NOT_SENT), wait(9, 2)),
            at(9, timer(2), ReadTask()),
            at(9, TaskRead(WORKING), Subscribe()),
        ],
        {"phase": Phase.FOLLOW, "can_subscribe": True},
    ),
    Row(
        "a subscription that closes without an event backs off instead of a tight loop",
        [
            start(),
            at(1, status(WORKING)),
            at(5, CLOSED, wait(6, 1)),
            at(6, timer(1), ReadTask()),
            at(6, TaskRead(WORKING), Subscribe()),
            at(6, CLOSED, wait(7, 2)),
            at(7, timer(2), ReadTask()),
            at(7, TaskRead(WORKING), Subscribe()),
            at(7, CLOSED, wait(9, 3)),
            at(9, timer(3), ReadTask()),
            at(9, TaskRead(WORKING), Subscribe()),
            at(9, CLOSED, wait(13, 4)),
        ],
        {"phase": Phase.WAIT, "after_wait": Phase.READ},
    ),
    Row(
        "a final read that shows the task running: the stream counts as dropped",
        [
            start(),
            at(1, status(WORKING)),
            at(2, status(TaskState.INPUT_REQUIRED)),
            at(3, CLOSED, ReadTask()),
            at(3, TaskRead(WORKING), wait(4, 1)),
            at(4, timer(1), ReadTask()),
            at(4, TaskRead(WORKING), Subscribe()),
        ],
        {"phase": Phase.FOLLOW},
    ),
    Row(
        "a final read that fails: the stream counts as dropped",
        [
            start(),
            at(1, status(WORKING)),
            at(2, status(TaskState.COMPLETED)),
            at(3, CLOSED, ReadTask()),
            at(3, fail(Failure.UNKNOWN), wait(4, 1)),
            at(4, timer(1), ReadTask()),
            at(4, TaskRead(WORKING), Subscribe()),
        ],
        {"phase": Phase.FOLLOW},
    ),
    Row(
        "a stream failing right after a settling status update: dropped, the next read decides",
        [
            start(),
            at(1, status(WORKING)),
            at(2, status(TaskState.COMPLETED)),
            at(3, fail(Failure.DROPPED), wait(4, 1)),
            at(4, timer(1), ReadTask()),
            at(4, TaskRead(WORKING), Subscribe()),
        ],
        {"phase": Phase.FOLLOW},
    ),
]

# Unknown outcomes --------------------------------------------------------------

UNKNOWN_OUTCOME_ROWS = [
    Row(
        "1.0 with a context: an unknown outcome is looked up; a found task is read and followed",
        [
            start("1.0"),
            at(0, fail(Failure.UNKNOWN), wait(0.5, 1)),
            at(0.5, timer(1), LookUp()),
            at(1, LookedUp("t7"), ReadTask()),
            at(1, TaskRead(WORKING), Subscribe()),
            at(2, status(WORKING, "t7")),
        ],
        {"phase": Phase.FOLLOW, "task_id": "t7"},
    ),
    Row(
        "1.0 with a context: a message the lookup does not find is sent again",
        [
            start("1.0"),
            at(0, fail(Failure.UNKNOWN), wait(0.5, 1)),
            at(0.5, timer(1), LookUp()),
            at(1, LookedUp(None), Send()),
        ],
        {"phase": Phase.SEND, "task_id": None},
    ),
    Row(
        "1.0 with a context: an agent failing with 5xx is not called in a tight loop",
        [
            start("1.0"),
            at(0, fail(Failure.UNKNOWN), wait(0.5, 1)),
            at(0.5, timer(1), LookUp()),
            at(0.5, LookedUp(None), Send()),
            at(0.5, fail(Failure.UNKNOWN), wait(1.5, 2)),
            at(1.5, timer(2), LookUp()),
        ],
        {"phase": Phase.LOOKUP},
    ),
    Row(
        "0.3 with a context: never looked up, sent again after a backoff",
        [
            start("0.3"),
            at(0, fail(Failure.UNKNOWN), wait(0.5, 1)),
            at(0.5, timer(1), Send()),
            at(0.5, fail(Failure.DROPPED), wait(1.5, 2)),  # dropped before any event
            at(1.5, timer(2), Send()),
        ],
        {"phase": Phase.SEND},
    ),
    Row(
        "1.0 on a thread's first turn: no context to look in, sent again after a backoff",
        [start("1.0"), at(0, fail(Failure.UNKNOWN), wait(0.5, 1)), at(0.5, timer(1), Send())],
        {"phase": Phase.SEND},
        has_context=False,
    ),
    Row(
        "a stream that closes naming no task has an unknown outcome",
        [start("1.0"), at(0, CLOSED, wait(0.5, 1)), at(0.5, timer(1), LookUp())],
        {"phase": Phase.LOOKUP},
    ),
    Row(
        "a lookup that keeps failing is retried, then the turn fails after 15 minutes",
        [
            start("1.0"),
            at(0, fail(Failure.UNKNOWN), wait(0.5, 1)),
            at(0.5, timer(1), LookUp()),
            at(0.5, fail(Failure.NOT_SENT), wait(1.5, 2)),
            at(1.5, timer(2), LookUp()),
            at(899, fail(Failure.UNKNOWN), wait(901, 3)),
            at(901, timer(3), LookUp()),
            at(901, fail(Failure.NOT_SENT), Notify(GIVE_UP), Finish("unreachable")),
        ],
        DONE,
    ),
    Row(
        "events that named no task, then a normal close: the request failed, nothing is sent again",
        [
            start(),
            at(1, status(WORKING, task_id=None)),
            at(2, CLOSED, Notify(notices.REQUEST_FAILED), Finish("no_task")),
        ],
        DONE,
    ),
    Row(
        "events that named no task, then the stream fails: the request failed, not sent again",
        [
            start(),
            at(1, status(WORKING, task_id=None)),
            at(2, fail(Failure.DROPPED), Notify(notices.REQUEST_FAILED), Finish("no_task")),
        ],
        DONE,
    ),
]

# Busy (-32004) -----------------------------------------------------------------


def busy_round(send_at: float, number: int, until: float, *notice: Action) -> list[Step]:
    """A timer sends again and the agent answers busy again."""
    return [
        at(send_at, timer(number), Send()),
        at(send_at, fail(Failure.BUSY), *notice, wait(until, number + 1)),
    ]


BUSY_ROWS = [
    Row(
        "busy: backoff from about a second to the cap, one notice at exactly 2 minutes",
        [
            start(),
            at(0, fail(Failure.BUSY), wait(0.5, 1)),
            *busy_round(0.5, 1, 1.5),
            *busy_round(1.5, 2, 3.5),
            *busy_round(3.5, 3, 7.5),
            *busy_round(7.5, 4, 15.5),
            *busy_round(15.5, 5, 31.5),
            *busy_round(31.5, 6, 61.5),  # capped at 60 s, jittered to half
            *busy_round(61.5, 7, 91.5),
            *busy_round(91.5, 8, 120),  # the backoff would sleep to 121.5: wake for the notice
            at(120, timer(9), Notify(notices.AGENT_BUSY), wait(121.5, 10)),
            *busy_round(121.5, 10, 151.5),  # told once only
            *busy_round(151.5, 11, 181.5),
        ],
        {"phase": Phase.WAIT, "after_wait": Phase.SEND, "busy_told": True},
    ),
    Row(
        "busy with jitter: each wait is between half and all of its backoff",
        [
            start(),
            at(0, fail(Failure.BUSY), wait(0.75, 1), jitter=0.5),
            at(0.75, timer(1), Send()),
            at(0.75, fail(Failure.BUSY), wait(2.25, 2), jitter=0.5),
            at(2.25, timer(2), Send()),
            at(2.25, fail(Failure.BUSY), wait(4.25, 3), jitter=0.0),
        ],
        {"phase": Phase.WAIT},
    ),
    Row(
        "busy, then the agent takes the message: no notice",
        [
            start(),
            at(0, fail(Failure.BUSY), wait(0.5, 1)),
            at(0.5, timer(1), Send()),
            at(1, snapshot(WORKING)),
            at(200, snapshot(TaskState.COMPLETED)),
            at(200, CLOSED, Finish("completed")),
        ],
        DONE,
    ),
    Row(
        "busy for a long time is waited out, whatever the 15-minute limit",
        [
            start(),
            at(0, fail(Failure.BUSY, retry_after=3600), wait(120, 1)),
            at(120, timer(1), Notify(notices.AGENT_BUSY), wait(3600, 2)),
            at(3600, timer(2), Send()),
            at(3600, fail(Failure.BUSY), wait(3602, 3)),  # the wake for the notice was a wait too
            at(3602, timer(3), Send()),
        ],
        {"phase": Phase.SEND},
    ),
    Row(
        "busy with a Retry-After past 2 minutes: told at 2 minutes, sent no sooner than asked",
        [
            start(),
            at(0, fail(Failure.BUSY, retry_after=300), wait(120, 1)),
            at(120, timer(1), Notify(notices.AGENT_BUSY), wait(300, 2)),
            at(300, timer(2), Send()),
        ],
        {"phase": Phase.SEND, "busy_told": True},
    ),
    Row(
        "after 20 minutes of busy, an unknown outcome is still looked up; 15 minutes start again",
        [
            start("1.0"),
            at(0, fail(Failure.BUSY, retry_after=1200), wait(120, 1)),
            at(120, timer(1), Notify(notices.AGENT_BUSY), wait(1200, 2)),
            at(1200, timer(2), Send()),
            at(1200, fail(Failure.UNKNOWN), wait(1202, 3)),
            at(1202, timer(3), LookUp()),
            at(2099, fail(Failure.UNKNOWN), wait(2103, 4)),
            at(2103, timer(4), LookUp()),
            at(2103, fail(Failure.UNKNOWN), Notify(GIVE_UP), Finish("unreachable")),
        ],
        DONE,
    ),
]

# Not sent, unreachable, and failures that end the turn at once ------------------

GIVE_UP_ROWS = [
    Row(
        "not sent (4xx): retried, then the turn fails after 15 minutes",
        [
            start(),
            at(0, fail(Failure.NOT_SENT), wait(0.5, 1)),
            at(0.5, timer(1), Send()),
            at(899, fail(Failure.NOT_SENT), wait(900, 2)),
            at(900, timer(2), Send()),
            at(900, fail(Failure.NOT_SENT), Notify(GIVE_UP), Finish("unreachable")),
        ],
        DONE,
    ),
    Row(
        "the card cannot be fetched: retried, then the turn fails after 15 minutes",
        [
            at(0, Started("", True), ReadCard()),
            at(0, fail(Failure.UNREACHABLE), wait(0.5, 1)),
            at(0.5, timer(1), ReadCard()),
            at(900, fail(Failure.UNREACHABLE), Notify(GIVE_UP), Finish("unreachable")),
        ],
        DONE,
    ),
    Row(
        "0.3: unknown outcomes are sent again until 15 minutes, then the turn fails",
        [
            start("0.3"),
            at(0, fail(Failure.UNKNOWN), wait(0.5, 1)),
            at(0.5, timer(1), Send()),
            at(950, CLOSED, Notify(GIVE_UP), Finish("unreachable")),  # closed naming no task
        ],
        DONE,
    ),
]

REFUSALS = [
    (Failure.CREDENTIALS, notices.CREDENTIALS_REJECTED),
    (Failure.IDENTITY, notices.IDENTITY_REFUSED),
    (Failure.REFUSED, notices.NO_JSONRPC_INTERFACE),
    (Failure.REFUSED, notices.NO_STREAMING),
]

# Where in a turn a call can fail: the steps that lead there.
CALL_SITES: dict[str, list[Step]] = {
    "the card": [],
    "the send": [start()],
    "the stream": [start(), at(1, status(WORKING))],
    "GetTask": [
        start(),
        at(1, status(WORKING)),
        at(2, CLOSED, wait(3, 1)),
        at(3, timer(1), ReadTask()),
    ],
    "SubscribeToTask": [
        start(),
        at(1, status(WORKING)),
        at(2, CLOSED, wait(3, 1)),
        at(3, timer(1), ReadTask()),
        at(3, TaskRead(WORKING), Subscribe()),
    ],
    "ListTasks": [
        start("1.0"),
        at(0, fail(Failure.UNKNOWN), wait(0.5, 1)),
        at(0.5, timer(1), LookUp()),
    ],
}

FAIL_AT_ONCE_ROWS = [
    *[
        Row(
            f"{failure} ({reason}) at {site}: the turn fails at once with the reason",
            [
                *steps,
                at(
                    5,
                    fail(failure, reason=reason),
                    Notify(notices.turn_failed(reason)),
                    Finish(failure.value),
                ),
            ],
            DONE,
        )
        for failure, reason in REFUSALS
        for site, steps in CALL_SITES.items()
    ],
    *[
        Row(
            f"session gone at {site}: the thread is told and the turn ends",
            [
                *CALL_SITES[site],
                at(
                    5,
                    fail(Failure.SESSION_GONE),
                    Notify(notices.SESSION_GONE),
                    Finish("session_gone"),
                ),
            ],
            DONE,
        )
        for site in ("GetTask", "SubscribeToTask")
    ],
    Row(
        "an answer the agent rejects (-32603): the task is cancelled, then the thread told",
        [
            at(0, Started("1.0", True), Send()),
            at(
                1,
                fail(Failure.ANSWER_REJECTED),
                Cancel(notices.ANSWER_REJECTED),
                Finish("answer_rejected"),
            ),
        ],
        {"phase": Phase.DONE, "task_id": "t-paused"},
        task_id="t-paused",
    ),
]

# No sign of life -------------------------------------------------------------

LIFE = TurnTimings(no_sign_of_life=100, poll_cap=8)

NO_SIGN_OF_LIFE_ROWS = [
    Row(
        "polled with no change for the limit after the stream was lost: cancelled",
        [
            start(can_subscribe=False),
            at(10, status(WORKING)),
            at(10, CLOSED, wait(11, 1)),
            at(11, timer(1), ReadTask()),
            at(11, TaskRead(WORKING, changed=True), wait(12, 2)),
            at(12, timer(2), ReadTask()),
            at(110.5, TaskRead(WORKING, changed=False), wait(112.5, 3)),
            at(112.5, timer(3), ReadTask()),
            at(
                112.5,
                TaskRead(WORKING, changed=False),
                Cancel(notices.NO_SIGN_OF_LIFE),
                Finish("no_sign_of_life"),
            ),
        ],
        DONE,
        timings=LIFE,
    ),
    Row(
        "a changed snapshot is a sign of life: the clock starts again",
        [
            start(can_subscribe=False),
            at(10, status(WORKING)),
            at(10, CLOSED, wait(11, 1)),
            at(11, timer(1), ReadTask()),
            at(100, TaskRead(WORKING, changed=True), wait(101, 2)),
            at(101, timer(2), ReadTask()),
            at(150, TaskRead(WORKING, changed=False), wait(152, 3)),
            at(152, timer(3), ReadTask()),
            at(152, TaskRead(TaskState.COMPLETED), Finish("completed")),
        ],
        DONE,
        timings=LIFE,
    ),
    Row(
        "reads that keep failing for the limit after the stream was lost: cancelled",
        [
            start(),
            at(10, status(WORKING)),
            at(10, CLOSED, wait(11, 1)),
            at(11, timer(1), ReadTask()),
            at(11, fail(Failure.UNKNOWN), wait(12, 2)),
            at(12, timer(2), ReadTask()),
            at(
                110,
                fail(Failure.UNKNOWN),
                Cancel(notices.NO_SIGN_OF_LIFE),
                Finish("no_sign_of_life"),
            ),
        ],
        DONE,
        timings=LIFE,
    ),
]

# Retry-After -------------------------------------------------------------------

RETRY_AFTER_ROWS = [
    Row(
        "a Retry-After longer than the backoff is waited",
        [
            start(),
            at(0, fail(Failure.NOT_SENT, retry_after=30), wait(30, 1)),
            at(30, timer(1), Send()),
        ],
        {"phase": Phase.SEND},
    ),
    Row(
        "a Retry-After shorter than the backoff: the backoff is waited",
        [start(), at(0, fail(Failure.NOT_SENT, retry_after=0.1), wait(0.5, 1))],
        {"phase": Phase.WAIT},
    ),
    Row(
        "a Retry-After is capped at a day",
        [start(), at(0, fail(Failure.NOT_SENT, retry_after=2 * 86400), wait(86400, 1))],
        {"phase": Phase.WAIT},
        timings=TurnTimings(max_turn=7 * 86400),
    ),
    Row(
        "a Retry-After before a lookup",
        [
            start("1.0"),
            at(0, fail(Failure.UNKNOWN, retry_after=30), wait(30, 1)),
            at(30, timer(1), LookUp()),
        ],
        {"phase": Phase.LOOKUP},
    ),
    Row(
        "a Retry-After on a lost stream delays the read",
        [
            start(),
            at(1, status(WORKING)),
            at(5, fail(Failure.DROPPED, retry_after=30), wait(35, 1)),
            at(35, timer(1), ReadTask()),
        ],
        {"phase": Phase.READ},
    ),
    Row(
        "a Retry-After on a failed subscription delays the read",
        [*CALL_SITES["SubscribeToTask"], at(3, fail(Failure.UNKNOWN, retry_after=30), wait(33, 2))],
        {"phase": Phase.WAIT, "after_wait": Phase.READ},
    ),
    Row(
        "a Retry-After on a failed read",
        [*CALL_SITES["GetTask"], at(3, fail(Failure.UNKNOWN, retry_after=30), wait(33, 2))],
        {"phase": Phase.WAIT, "after_wait": Phase.READ},
    ),
]

# The longest turn -----------------------------------------------------------------

BOUNDED = TurnTimings(max_turn=100)
TOO_LONG_ROWS = [
    Row(
        "a task that streams heartbeats for ever is cancelled at the longest turn",
        [
            start(),
            at(1, snapshot(WORKING)),
            at(50, status(WORKING)),
            at(99.9, status(WORKING)),
            at(100, status(WORKING), Cancel(notices.TURN_TOO_LONG), Finish("too_long")),
        ],
        DONE,
        timings=BOUNDED,
    ),
    Row(
        "a task polled while it stays working is cancelled at the longest turn",
        [
            start(can_subscribe=False),
            at(10, status(WORKING)),
            at(10, CLOSED, wait(11, 1)),
            at(11, timer(1), ReadTask()),
            at(11, TaskRead(WORKING), wait(12, 2)),
            at(12, timer(2), ReadTask()),
            at(100, TaskRead(WORKING), Cancel(notices.TURN_TOO_LONG), Finish("too_long")),
        ],
        DONE,
        timings=BOUNDED,
    ),
    Row(
        "an agent busy for ever: no task to cancel, the turn fails at the longest turn",
        [
            start(),
            at(0, fail(Failure.BUSY, retry_after=300), wait(100, 1)),
            at(100, timer(1), Notify(notices.turn_failed(notices.TOO_LONG)), Finish("too_long")),
        ],
        DONE,
        timings=BOUNDED,
    ),
    Row(
        "a task that settles at the longest turn ends as it settled, nothing cancelled",
        [
            start(),
            at(1, snapshot(WORKING)),
            at(100, status(TaskState.COMPLETED)),
            at(100, CLOSED, ReadTask()),
            at(101, TaskRead(TaskState.COMPLETED), Finish("completed")),
        ],
        DONE,
        timings=BOUNDED,
    ),
    Row(
        "a pause at the longest turn is the person's: the turn waits for an answer",
        [
            start(),
            at(1, snapshot(WORKING)),
            at(100, snapshot(TaskState.INPUT_REQUIRED)),
            at(100, CLOSED, Finish("input_required")),
        ],
        DONE,
        timings=BOUNDED,
    ),
    Row(
        "an answer's turn has its own longest turn, from the answer's send",
        [
            at(500, Started("1.0", True), Send()),
            at(501, status(WORKING)),
            at(599, status(WORKING)),
            at(600, status(WORKING), Cancel(notices.TURN_TOO_LONG), Finish("too_long")),
        ],
        DONE,
        timings=BOUNDED,
        task_id="t1",
        started_at=500.0,
    ),
    Row(
        "no wait outlasts the turn: a Retry-After past it wakes the turn at its end",
        [
            start(),
            at(1, status(WORKING)),
            at(5, fail(Failure.DROPPED, retry_after=1000), wait(100, 1)),
            at(100, timer(1), Cancel(notices.TURN_TOO_LONG), Finish("too_long")),
        ],
        DONE,
        timings=BOUNDED,
    ),
]

# Timers ------------------------------------------------------------------------

TIMER_ROWS = [
    Row(
        "a timer of an earlier or later wait does nothing",
        [
            start(),
            at(0, fail(Failure.NOT_SENT), wait(0.5, 1)),
            at(0.5, timer(0)),
            at(0.5, timer(2)),
            at(0.5, TimerFired("something else")),
            at(0.5, timer(1), Send()),
        ],
        {"phase": Phase.SEND},
    ),
    Row(
        "a timer fired twice acts once",
        [
            start(),
            at(0, fail(Failure.NOT_SENT), wait(0.5, 1)),
            at(0.5, timer(1), Send()),
            at(0.6, timer(1)),
            at(0.7, fail(Failure.NOT_SENT), wait(1.7, 2)),
            at(1.7, timer(1)),
            at(1.7, timer(2), Send()),
            at(1.8, timer(2)),
        ],
        {"phase": Phase.SEND},
    ),
    Row(
        "a timer that fires before its wait ends (a resumed function) waits on",
        [
            start(),
            at(0, fail(Failure.NOT_SENT, retry_after=30), wait(30, 1)),
            at(10, timer(1), wait(30, 2)),
            at(30, timer(1)),
            at(30, timer(2), Send()),
        ],
        {"phase": Phase.SEND},
    ),
    Row(
        "nothing happens to a turn that ended",
        [
            start(),
            at(1, snapshot(TaskState.COMPLETED)),
            at(2, CLOSED, Finish("completed")),
            at(3, CLOSED),
            at(3, timer(0)),
            at(3, fail(Failure.SESSION_GONE)),
            at(3, TaskRead(TaskState.FAILED)),
        ],
        DONE,
    ),
]

# The card comes first (contract, Methods: ListTasks on recovery) ---------------

CARD_ROWS = [
    Row(
        "nothing is sent before the card said which protocol is on the wire",
        [
            at(0, Started("", True), ReadCard()),
            at(0, CardRead("1.0", has_context=True), Send()),
        ],
        {"phase": Phase.SEND, "protocol": "1.0"},
    ),
    Row(
        "a restarted turn whose card cannot be read: the card is retried, then 1.0 is looked up",
        [
            at(0, Started("", True), ReadCard()),
            at(0, fail(Failure.UNKNOWN), wait(0.5, 1)),  # begun by a function that died
            at(0.5, timer(1), ReadCard()),
            at(0.5, fail(Failure.UNREACHABLE), wait(1.5, 2)),
            at(1.5, timer(2), ReadCard()),
            at(1.5, CardRead("1.0", has_context=True), LookUp()),
            at(2, LookedUp("t1"), ReadTask()),
        ],
        {"phase": Phase.READ, "task_id": "t1", "protocol": "1.0"},
    ),
    Row(
        "a restarted turn whose card reads 0.3 once it can be read: sent again, never looked up",
        [
            at(0, Started("", True), ReadCard()),
            at(0, fail(Failure.UNKNOWN), wait(0.5, 1)),
            at(0.5, timer(1), ReadCard()),
            at(0.5, CardRead("0.3", has_context=True), Send()),
        ],
        {"phase": Phase.SEND, "protocol": "0.3"},
    ),
    Row(
        "a restarted first turn of a thread: no context to look in, sent again after the card",
        [
            at(0, Started("", True), ReadCard()),
            at(0, fail(Failure.UNKNOWN), wait(0.5, 1)),
            at(0.5, timer(1), ReadCard()),
            at(0.5, CardRead("1.0", has_context=False), Send()),
        ],
        {"phase": Phase.SEND},
        has_context=False,
    ),
    Row(
        "a card that says the session's context is gone: nothing to look in, sent again",
        [
            at(0, Started("", True), ReadCard()),
            at(0, fail(Failure.UNKNOWN), wait(0.5, 1)),
            at(0.5, timer(1), ReadCard()),
            at(0.5, CardRead("1.0", has_context=False), Send()),
        ],
        {"phase": Phase.SEND, "has_context": False},
    ),
    Row(
        "a lookup that finds nothing sends the message again",
        [
            at(0, Started("", True), ReadCard()),
            at(0, fail(Failure.UNKNOWN), wait(0.5, 1)),
            at(0.5, timer(1), ReadCard()),
            at(0.5, CardRead("1.0", has_context=True), LookUp()),
            at(1, LookedUp(None), Send()),
        ],
        {"phase": Phase.SEND, "protocol": "1.0"},
    ),
    Row(
        "a card read that comes late changes nothing",
        [start(), at(1, snapshot(WORKING)), at(2, CardRead("0.3", has_context=False))],
        {"phase": Phase.FOLLOW, "protocol": "1.0", "has_context": True},
    ),
]

# Events that are not the turn's (contract, Replies; streaming principles) ------

NOT_THE_TURNS_ROWS = [
    Row(
        "another task's completed Task does not end the turn of a working one",
        [
            start(),
            at(1, snapshot(WORKING)),
            at(2, snapshot(TaskState.COMPLETED, task_id="t2")),
            at(3, CLOSED, wait(4, 1)),  # t1's stream is lost: read t1 a second later
            at(4, timer(1), ReadTask()),
        ],
        {"phase": Phase.READ, "task_id": "t1", "state": WORKING},
    ),
    Row(
        "another task's settling status update changes nothing",
        [
            start(),
            at(1, status(WORKING)),
            at(2, status(TaskState.FAILED, task_id="t2")),
            at(3, status(TaskState.COMPLETED)),
            at(4, CLOSED, ReadTask()),
            at(4, TaskRead(TaskState.COMPLETED), Finish("completed")),
        ],
        DONE,
    ),
    Row(
        "another task's events before a close count as no event: the stream closed quiet",
        [
            start(),
            at(1, status(WORKING)),
            at(5, CLOSED, wait(6, 1)),
            at(6, timer(1), ReadTask()),
            at(6, TaskRead(WORKING), Subscribe()),
            at(7, status(TaskState.COMPLETED, task_id="t2")),
            at(7, CLOSED, wait(8, 2)),  # backs off as a subscription with no event does
        ],
        {"phase": Phase.WAIT, "task_id": "t1", "state": WORKING},
    ),
    Row(
        "a Message naming a task is ignored: its task is not followed",
        [
            start(),
            at(1, message(task_id="t9")),
            at(2, snapshot(WORKING)),
            at(3, snapshot(TaskState.COMPLETED)),
            at(4, CLOSED, Finish("completed")),
        ],
        {**DONE, "task_id": "t1", "message_reply": False},
    ),
    Row(
        "a Message from the user is ignored",
        [start(), at(1, message(Role.USER)), at(2, snapshot(TaskState.COMPLETED))],
        {"task_id": "t1", "message_reply": False},
    ),
    Row(
        "a Message with no role is not the agent's: ignored",
        [start(), at(1, message(Role.UNSPECIFIED)), at(2, CLOSED, wait(2.5, 1))],
        {"message_reply": False, "phase": Phase.WAIT},
    ),
    Row(
        "a Message after the agent named a task is ignored",
        [
            start(),
            at(1, status(WORKING)),
            at(2, message()),
            at(3, status(TaskState.COMPLETED)),
            at(4, CLOSED, ReadTask()),
        ],
        {"message_reply": False, "task_id": "t1"},
    ),
    Row(
        "a second Message is ignored: the first was the whole turn",
        [start(), at(1, MESSAGE_REPLY), at(2, message(task_id="t9"))],
        {"message_reply": True, "task_id": None, "events_in_stream": 1},
    ),
    Row(
        "a Message in reply to an answer is ignored: the paused task is read",
        [
            at(0, Started("1.0", True), Send()),
            at(1, message()),
            at(2, CLOSED, wait(2.5, 1)),  # quiet: nothing of the task was seen
            at(2.5, timer(1), ReadTask()),
        ],
        {"phase": Phase.READ, "task_id": "t-paused", "message_reply": False},
        task_id="t-paused",
    ),
    Row(
        "a stream of ignored Messages alone names no task: the outcome is unknown, sent again",
        [
            start("1.0"),
            at(1, message(Role.USER)),
            at(1, message(task_id="t9")),
            at(2, CLOSED, wait(2.5, 1)),
            at(2.5, timer(1), Send()),
        ],
        {"phase": Phase.SEND, "task_id": None},
        has_context=False,
    ),
    Row(
        "ignored Messages alone, on 1.0 with a context: looked up before it is sent again",
        [
            start("1.0"),
            at(1, message(task_id="t9")),
            at(2, CLOSED, wait(2.5, 1)),
            at(2.5, timer(1), LookUp()),
        ],
        {"phase": Phase.LOOKUP, "task_id": None},
    ),
    Row(
        "ignored Messages, then the stream drops: an unknown outcome, not a failed request",
        [
            start("0.3"),
            at(1, message(Role.USER)),
            at(2, fail(Failure.DROPPED), wait(2.5, 1)),
            at(2.5, timer(1), Send()),
        ],
        {"phase": Phase.SEND},
    ),
]

ROWS = [
    *CARD_ROWS,
    *NOT_THE_TURNS_ROWS,
    *TASK_STATE_ROWS,
    *STREAM_ROWS,
    *UNKNOWN_OUTCOME_ROWS,
    *BUSY_ROWS,
    *GIVE_UP_ROWS,
    *FAIL_AT_ONCE_ROWS,
    *NO_SIGN_OF_LIFE_ROWS,
    *RETRY_AFTER_ROWS,
    *TOO_LONG_ROWS,
    *TIMER_ROWS,
]


@pytest.mark.parametrize("row", ROWS, ids=[row.name for row in ROWS])
def test_transition(row: Row) -> None:
    state = run(row)
    for name, expected in row.end.items():
        assert getattr(state, name) == expected, name


@pytest.mark.parametrize(
    "row", [row for row in ROWS if row.end.get("phase") == Phase.DONE], ids=lambda row: row.name
)
def test_a_turn_that_ends_is_told_why_once(row: Row) -> None:
    """A notice the machine gives is not followed by a task-state notice for the same end."""
    ending = next(
        step for step in reversed(row.steps) if any(isinstance(a, Finish) for a in step.actions)
    )
    run(row)
    [finish] = [action for action in ending.actions if isinstance(action, Finish)]
    told = [action for action in ending.actions if isinstance(action, Notify | Cancel)]
    picked = final_notice(finish.outcome, has_answer_text=True, status=None)
    assert len(told) + (picked is not None) <= 1, (told, picked)


# Long runs, with random jitter ----------------------------------------------------


class Driver:
    """Plays an agent: answers each call, fires each timer when due, records what happened."""

    def __init__(self, machine: TurnMachine, seed: int) -> None:
        self.machine = machine
        self.random = random.Random(seed)
        self.now = 0.0
        self.sends: list[float] = []
        self.reads: list[float] = []
        self.notices: list[tuple[float, str]] = []
        self.finished: str | None = None
        self.subscribes = 0

    def feed(self, event: Event, answer: Any) -> None:
        """Handle ``event``, answering calls from ``answer``, until ``answer["until"]``."""
        pending = self.machine.handle(event, self.now, self.random.random())
        while pending and self.finished is None:
            action = pending.pop(0)
            match action:
                case WaitUntil(at=wake, timer=name):
                    assert wake >= self.now
                    self.now = wake
                    pending += self.machine.handle(TimerFired(name), self.now, self.random.random())
                case Notify(text=text):
                    self.notices.append((self.now, text))
                case Finish(outcome=outcome):
                    self.finished = outcome
                case _:
                    if isinstance(action, Send):
                        self.sends.append(self.now)
                    if isinstance(action, ReadTask):
                        self.reads.append(self.now)
                    if isinstance(action, Subscribe):
                        self.subscribes += 1
                    if self.now > answer["until"]:
                        return
                    pending += self.machine.handle(
                        answer[type(action)], self.now, self.random.random()
                    )


@pytest.mark.parametrize("seed", range(8))
def test_a_busy_agent_is_tried_for_as_long_as_it_takes_and_the_thread_told_once_at_two_minutes(
    seed: int,
) -> None:
    timings = TurnTimings(max_turn=8 * 3600)
    machine = TurnMachine(TurnState(started_at=0.0, has_context=True), timings)
    driver = Driver(machine, seed)
    driver.feed(Started("1.0", True), {Send: fail(Failure.BUSY), "until": 4 * 3600})
    assert driver.finished is None
    assert driver.notices == [(120.0, notices.AGENT_BUSY)]
    gaps = [later - earlier for earlier, later in zip(driver.sends, driver.sends[1:])]
    assert gaps[0] < 1.0
    assert max(gaps) <= DEFAULT.backoff_cap
    assert all(gap >= DEFAULT.backoff_cap / 2 for gap in gaps[-10:])


@pytest.mark.parametrize("seed", range(4))
def test_a_busy_agent_is_tried_until_the_longest_turn_and_then_the_thread_told(seed: int) -> None:
    machine = TurnMachine(TurnState(started_at=0.0, has_context=True))
    driver = Driver(machine, seed)
    driver.feed(Started("1.0", True), {Send: fail(Failure.BUSY), "until": 86400})
    assert driver.finished == "too_long"
    assert driver.now == DEFAULT.max_turn
    assert driver.notices == [
        (120.0, notices.AGENT_BUSY),
        (DEFAULT.max_turn, notices.turn_failed(notices.TOO_LONG)),
    ]


@pytest.mark.parametrize("seed", range(8))
def test_a_busy_agent_with_retry_after_is_never_called_sooner(seed: int) -> None:
    machine = TurnMachine(TurnState(started_at=0.0, has_context=True))
    driver = Driver(machine, seed)
    driver.feed(Started("1.0", True), {Send: fail(Failure.BUSY, retry_after=45), "until": 3600})
    gaps = [later - earlier for earlier, later in zip(driver.sends, driver.sends[1:])]
    assert min(gaps) >= 45 - 1e-6  # float noise of subtracting absolute times
    assert driver.notices == [(120.0, notices.AGENT_BUSY)]


@pytest.mark.parametrize("failure", [Failure.NOT_SENT, Failure.UNREACHABLE, Failure.UNKNOWN])
@pytest.mark.parametrize("seed", range(4))
def test_an_unreachable_agent_fails_the_turn_after_fifteen_minutes(
    failure: Failure, seed: int
) -> None:
    machine = TurnMachine(TurnState(started_at=0.0, has_context=False))
    driver = Driver(machine, seed)
    driver.feed(Started("0.3", True), {Send: fail(failure), "until": 86400})
    assert driver.finished == "unreachable"
    assert driver.notices == [(driver.now, GIVE_UP)]
    assert DEFAULT.give_up_after <= driver.now <= DEFAULT.give_up_after + DEFAULT.backoff_cap
    assert driver.sends[-2] < DEFAULT.give_up_after <= driver.sends[-1] == driver.now


@pytest.mark.parametrize("seed", range(8))
def test_a_task_without_subscribe_is_polled_with_backoff_up_to_the_poll_cap(seed: int) -> None:
    timings = TurnTimings(poll_cap=30, backoff_cap=1000)
    machine = TurnMachine(TurnState(started_at=0.0, has_context=True), timings)
    driver = Driver(machine, seed)
    machine.handle(Started("1.0", True), 0.0)
    machine.handle(status(WORKING), 0.0)
    answers = {ReadTask: TaskRead(WORKING), Subscribe: fail(Failure.NOT_SENT), "until": 3000}
    driver.feed(CLOSED, answers)
    assert driver.finished is None
    assert driver.subscribes == 1
    gaps = [later - earlier for earlier, later in zip(driver.reads[1:], driver.reads[2:])]
    assert max(gaps) <= timings.poll_cap
    assert all(gap >= timings.poll_cap / 2 for gap in gaps[-10:])


# Resuming in a new function --------------------------------------------------------


def following() -> TurnState:
    """A turn whose stream is open, right after a settling status update."""
    state = run(
        Row("following", [start(), at(1, status(WORKING)), at(2, status(TaskState.COMPLETED))], {})
    )
    assert state.phase == Phase.FOLLOW and state.settling_update
    return state


def test_a_hand_over_turns_an_open_stream_into_a_read() -> None:
    machine = TurnMachine(following())
    machine.hand_over()
    resumed = machine.state
    assert (resumed.phase, resumed.events_in_stream, resumed.settling_update) == (
        Phase.READ,
        0,
        False,
    )
    assert TurnMachine(resumed).handle(TaskRead(WORKING), 10) == [Subscribe()]


@pytest.mark.parametrize(
    "steps",
    [
        [start()],
        [start(), at(0, fail(Failure.NOT_SENT), wait(0.5, 1))],
        CALL_SITES["GetTask"],
        CALL_SITES["ListTasks"],
    ],
    ids=["send", "wait", "read", "lookup"],
)
def test_a_hand_over_keeps_any_other_phase(steps: list[Step]) -> None:
    state = run(Row("", steps, {}))
    machine = TurnMachine(replace(state))
    machine.hand_over()
    assert machine.state == state


def test_the_answer_to_a_paused_task_is_sent_to_that_task_its_time_counted_anew() -> None:
    paused = run(Row("", [*PAUSED, at(3, RESUMED)], {}))
    answer = TurnMachine(paused, TurnTimings(max_turn=60)).for_answer(1000)
    assert answer.state == TurnState(started_at=1000, has_context=True, task_id="t1")
    assert answer.timings == TurnTimings(max_turn=60)
    assert answer.handle(Started(protocol="", can_subscribe=True), 1000) == [ReadCard()]
    assert answer.handle(StreamEventSeen("t1", WORKING), 1059) == []
    assert answer.handle(StreamEventSeen("t1", WORKING), 1060) == [
        Cancel(notices.TURN_TOO_LONG),
        Finish("too_long"),
    ]


PAUSED = [
    start(),
    at(1, snapshot(TaskState.INPUT_REQUIRED)),
    at(2, CLOSED, Finish("input_required")),
]
"""A turn paused on a question: done, as far as the machine goes, until it is answered."""

RESUMED = Resumed()

RESUMED_ROWS = [
    Row(
        "taken over after the Message that is the whole turn: it is complete (F1)",
        [start(), at(1, MESSAGE_REPLY), at(600, RESUMED, Finish("completed"))],
        {**DONE, "task_id": None},
    ),
    Row(
        "taken over while following a task: it is read",
        [start(), at(1, status(WORKING)), at(600, RESUMED, ReadTask())],
        {"phase": Phase.READ, "task_id": "t1", "events_in_stream": 0},
    ),
    Row(
        "handed over while following a task: it is read (the checkpoint says READ already)",
        [*CALL_SITES["GetTask"], at(4, RESUMED, ReadTask())],
        {"phase": Phase.READ, "task_id": "t1"},
    ),
    Row(
        "taken over during a wait that is over: the wait's call is made",
        [start(), at(0, fail(Failure.NOT_SENT), wait(0.5, 1)), at(9, RESUMED, Send())],
        {"phase": Phase.SEND},
    ),
    Row(
        "taken over during a wait that is not over: it waits on",
        [start(), at(0, fail(Failure.NOT_SENT), wait(0.5, 1)), at(0.2, RESUMED, wait(0.5, 2))],
        {"phase": Phase.WAIT, "after_wait": Phase.SEND},
    ),
    Row(
        "taken over while sending: the outcome is unknown, sent again after a backoff",
        [start("0.3"), at(5, RESUMED, wait(5.5, 1))],
        {"phase": Phase.WAIT, "after_wait": Phase.SEND},
    ),
    Row(
        "taken over on a stream whose events named no task: unknown outcome, not a failed request",
        [start("0.3"), at(1, StreamEventSeen(None, WORKING)), at(5, RESUMED, wait(5.5, 1))],
        {"phase": Phase.WAIT, "after_wait": Phase.SEND, "events_in_stream": 0},
    ),
    Row(
        "taken over during a lookup: looked up again after a backoff",
        [*CALL_SITES["ListTasks"], at(3, RESUMED, wait(4, 2))],
        {"phase": Phase.WAIT, "after_wait": Phase.LOOKUP},
    ),
    Row(
        "paused on a question: neither a resume nor a timer carries it on",
        [*PAUSED, at(300, RESUMED), at(301, timer(1))],
        {"phase": Phase.DONE},
    ),
    Row(
        "paused on a question still open, taken over: its task is read again",
        [*PAUSED, at(300, Unpaused(), wait(301, 1)), at(301, timer(1), ReadTask())],
        {"phase": Phase.READ, "task_id": "t1"},
    ),
    Row(
        "unpaused when it is not paused: carried on as it is",
        [start(), at(1, status(WORKING)), at(2, Unpaused())],
        {"phase": Phase.FOLLOW},
    ),
]


@pytest.mark.parametrize("row", RESUMED_ROWS, ids=[row.name for row in RESUMED_ROWS])
def test_a_turn_resumed_in_another_function(row: Row) -> None:
    state = run(row)
    for name, expected in row.end.items():
        assert getattr(state, name) == expected, name


def test_the_machine_reads_each_kind_of_event() -> None:
    working = TaskStatus(TaskState.WORKING)
    events: list[tuple[StreamEvent, StreamEventSeen]] = [
        (Task("t1", "c1", working), StreamEventSeen("t1", WORKING, full_task=True)),
        (Task("", "c1", working), StreamEventSeen(None, WORKING, full_task=True)),
        (StatusUpdate("t1", "c1", working), StreamEventSeen("t1", WORKING)),
        (ArtifactUpdate("t1", "c1", Artifact("a")), StreamEventSeen("t1", None)),
        (Message(Role.USER, task_id="t1"), StreamEventSeen("t1", None, message_role=Role.USER)),
    ]
    for event, seen in events:
        assert StreamEventSeen.of(event) == seen


def test_a_turn_no_checkpoint_holds_begins_with_its_card_read() -> None:
    machine = TurnMachine(TurnState(started_at=0.0, has_context=True), DEFAULT)
    assert first_events(attempted=False) == [Started(protocol="", can_subscribe=True)]
    assert machine.handle(first_events(attempted=False)[0], 0.0) == [ReadCard()]


def test_a_turn_begun_by_a_function_that_died_is_looked_up_after_its_card() -> None:
    """Whether the agent got it is unknown: never sent into its context again unlooked."""
    machine = TurnMachine(TurnState(started_at=0.0, has_context=True), DEFAULT)
    *earlier, first = first_events(attempted=True)
    assert first == CallFailed(Failure.UNKNOWN)
    for event in earlier:
        machine.handle(event, 0.0)
    assert [type(action) for action in machine.handle(first, 0.0)] == [WaitUntil]


@pytest.mark.parametrize(
    ("actions", "outcome"),
    [
        ([Notify("busy"), WaitUntil(1.0, WaitTimer(1))], None),
        ([Cancel(notices.NO_SIGN_OF_LIFE), Finish("no_sign_of_life")], "no_sign_of_life"),
        ([], None),
    ],
)
def test_the_outcome_that_pending_actions_end_the_turn_with(
    actions: list[Action], outcome: str | None
) -> None:
    assert outcome_of(actions) == outcome
