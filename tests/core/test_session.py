"""The session lease, decision by decision: who carries a thread's turn.

Each row gives the session as stored, a decision, and what must be written
(or that nothing is, or that the caller was superseded).
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from shared.core import session as sessions
from shared.core.session import (
    Claimed,
    CloseQuestion,
    ForgetContext,
    LearnContext,
    Session,
    Thread,
)
from shared.errors import Superseded

AT = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
LEASE = timedelta(seconds=540)
THREAD = Thread("s1", "binding", "C1", "1.0")


def stored(**changes: object) -> Session:
    """A session carrying turn T1 at generation 3, its lease running another minute."""
    base = Session(
        id="s1",
        binding="binding",
        channel="C1",
        thread_ts="1.0",
        incarnation="incarnation-a",
        context_id="ctx",
        active_turn="T1",
        lease_until=AT + timedelta(minutes=1),
        task_id="task-1",
        generation=3,
    )
    return replace(base, **changes)  # type: ignore[arg-type]


def free(**changes: object) -> Session:
    """A session carrying nothing, at generation 4."""
    fields: dict[str, object] = {
        "active_turn": None,
        "lease_until": None,
        "task_id": None,
        "generation": 4,
        **changes,
    }
    return stored(**fields)


@pytest.mark.parametrize(
    ("current", "waiting", "expected"),
    [
        # No session yet: the first waiting turn starts one.
        (
            None,
            "T1",
            Claimed(
                Session(
                    id="s1",
                    binding="binding",
                    channel="C1",
                    thread_ts="1.0",
                    active_turn="T1",
                    lease_until=AT + LEASE,
                    generation=1,
                ),
                "T1",
                taken_over=False,
            ),
        ),
        (None, None, None),  # nothing waits
        (stored(), "T2", None),  # the carrier holds its lease: busy
        # The carrier's lease ran out: its turn is taken over before any waiting one.
        (
            stored(lease_until=AT),
            "T2",
            Claimed(stored(lease_until=AT + LEASE, generation=4), "T1", taken_over=True),
        ),
        (
            free(),
            "T2",
            Claimed(free(active_turn="T2", lease_until=AT + LEASE, generation=5), "T2", False),
        ),
        (free(), None, None),
        # Which agent the context belongs to is checked before the send, not at the claim.
        (
            free(incarnation="incarnation-old"),
            "T2",
            Claimed(
                free(
                    incarnation="incarnation-old",
                    active_turn="T2",
                    lease_until=AT + LEASE,
                    generation=5,
                ),
                "T2",
                False,
            ),
        ),
    ],
)
def test_a_claim(current: Session | None, waiting: str | None, expected: Claimed | None) -> None:
    asked: list[bool] = []

    def first_waiting() -> str | None:
        asked.append(True)
        return waiting

    carrying = current is not None and current.active_turn is not None

    assert sessions.claim(current, THREAD, first_waiting, AT, LEASE) == expected
    if carrying:
        assert asked == []  # the waiting turns are read only when the session is free


@pytest.mark.parametrize(
    ("current", "turn_id", "generation", "expected"),
    [
        (stored(), "T1", 3, stored(generation=4, lease_until=AT + LEASE)),
        (stored(), "T1", 2, None),  # stale: a later claim moved on
        (stored(), "T1", 4, None),  # a duplicate of a delivery already taken
        (stored(), "T2", 3, None),  # another turn
        (free(), "T1", 4, None),  # the turn ended
        (None, "T1", 3, None),
    ],
)
def test_a_resumption_takes_only_the_generation_it_was_scheduled_with(
    current: Session | None, turn_id: str, generation: int, expected: Session | None
) -> None:
    assert sessions.resume(current, turn_id, generation, AT, LEASE) == expected


@pytest.mark.parametrize(
    ("current", "until", "expected"),
    [
        (stored(), AT + LEASE, stored(lease_until=AT + LEASE)),
        (stored(lease_until=AT + timedelta(hours=1)), AT + LEASE, None),  # never shortened
        (stored(lease_until=None), AT + LEASE, stored(lease_until=AT + LEASE)),
    ],
)
def test_a_renewal_extends_and_never_shortens(
    current: Session, until: datetime, expected: Session | None
) -> None:
    assert sessions.renew(current, "T1", 3, until) == expected


@pytest.mark.parametrize(
    "decide",
    [
        lambda current: sessions.renew(current, "T1", 3, AT + LEASE),
        lambda current: sessions.advance(current, "T1", 3, AT + LEASE, "task-1", None),
        lambda current: sessions.carried(current, "T1", 3, ForgetContext()),
    ],
    ids=["renew", "advance", "carried"],
)
@pytest.mark.parametrize(
    "current",
    [None, stored(generation=4), stored(active_turn="T2"), free()],
    ids=["gone", "taken-over", "another-turn", "released"],
)
def test_a_carrier_whose_claim_moved_on_is_superseded(decide: object, current: object) -> None:
    with pytest.raises(Superseded):
        decide(current)  # type: ignore[operator]


def test_an_advance_is_a_new_generation_with_its_lease_task_and_question() -> None:
    until = AT + timedelta(minutes=15)

    assert sessions.advance(stored(), "T1", 3, until, "task-9", "q-1") == stored(
        generation=4, lease_until=until, task_id="task-9", open_question="q-1"
    )


@pytest.mark.parametrize(
    ("edit", "changes"),
    [
        (LearnContext("ctx-2"), {"context_id": "ctx-2"}),
        (
            LearnContext("ctx-2", "incarnation-b"),
            {"context_id": "ctx-2", "incarnation": "incarnation-b"},
        ),
        (ForgetContext(), {"context_id": None}),
        (CloseQuestion(), {"open_question": None}),
    ],
    ids=["learn-context", "learn-context-and-bind", "forget-context", "close-question"],
)
def test_a_carried_change_applies_to_its_own_session_only(
    edit: sessions.Edit, changes: dict[str, object]
) -> None:
    waiting = stored(open_question="q-1")
    assert sessions.carried(waiting, "T1", 3, edit) == replace(waiting, **changes)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("current", "expected"),
    [
        # Its carrier's lease still runs: a stop takes it anyway, at a new generation.
        (stored(), stored(generation=4, lease_until=AT + LEASE)),
        (
            stored(open_question="q-1"),
            stored(generation=4, lease_until=AT + LEASE, open_question="q-1"),
        ),
        (stored(active_turn="T2"), None),  # the thread carries the next turn now
        (free(), None),
        (None, None),
    ],
)
def test_a_stop_claims_the_session_of_its_turn_whoever_carries_it(
    current: Session | None, expected: Session | None
) -> None:
    assert sessions.interrupt(current, "T1", AT, LEASE) == expected


@pytest.mark.parametrize(
    ("current", "generation", "expected"),
    [
        (stored(), 3, stored(lease_until=AT)),
        (stored(), 2, None),  # taken over meanwhile: nothing to let go
        (free(), 4, None),
        (None, 3, None),
    ],
)
def test_letting_go_ends_the_lease_now_if_the_claim_is_still_its_own(
    current: Session | None, generation: int, expected: Session | None
) -> None:
    assert sessions.let_go(current, "T1", generation, AT) == expected


@pytest.mark.parametrize(
    ("current", "expected"),
    [
        (stored(), stored(active_turn=None, lease_until=None, task_id=None, generation=4)),
        (stored(active_turn="T2"), None),  # the session carries another turn
        (free(), None),
        (None, None),
    ],
)
def test_a_release_frees_the_session_of_its_own_turn_only(
    current: Session | None, expected: Session | None
) -> None:
    assert sessions.release(current, "T1") == expected


@pytest.mark.parametrize(
    ("current", "task_id", "news", "expected"),
    [
        (stored(task_id=None), "task-2", True, stored(task_id="task-2")),  # named just now
        (stored(), "task-1", False, stored()),  # known already: no checkpoint for it
        (stored(), "task-2", True, stored(task_id="task-2")),  # the agent moved to a new task
        (stored(), None, True, stored(task_id=None)),  # a checkpoint of a turn never sent
        (free(task_id=None), None, False, free(task_id=None)),
    ],
)
def test_the_task_a_carrier_follows_is_kept_in_its_memory(
    current: Session, task_id: str | None, news: bool, expected: Session
) -> None:
    assert sessions.follow(current, task_id) is news
    assert current == expected


@pytest.mark.parametrize(
    ("current", "generation", "expected"),
    [
        # Claimed for T1 just now; T0, before it in the thread, was stored meanwhile.
        (stored(), 3, stored(active_turn="T0", generation=4)),
        (stored(), 2, None),  # another claim moved the session on
        (stored(active_turn="T2"), 3, None),
        (free(), 3, None),
        (None, 3, None),
    ],
)
def test_a_claim_gives_way_to_an_earlier_turn_stored_while_it_was_decided(
    current: Session | None, generation: int, expected: Session | None
) -> None:
    assert sessions.give_way(current, "T1", generation, "T0") == expected
