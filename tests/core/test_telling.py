"""Table tests of how a turn ends and what is recorded before each notice (pure, no I/O).

``shared.core.outcome.ending`` picks how the reply of a finished turn ends;
``shared.core.telling.Telling`` says, for each notice, what the carrier
records before it posts, so that a notice is told at most once whichever
function tells it. Each row of the second table plays the calls a carrier
makes, in order, and names what each returned and what the checkpoint would
say (``told``) after it.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from shared.core import notices
from shared.core.model import Message, Role, TaskState, TaskStatus, TextPart
from shared.core.outcome import Answered, Ending, Paused, Quiet, Told, ending
from shared.core.telling import Tell, Telling, mark, untold


def _failed(text: str) -> TaskStatus:
    return TaskStatus(TaskState.FAILED, Message(Role.AGENT, (TextPart(text),)))


@pytest.mark.parametrize(
    ("outcome", "answered", "status", "expected"),
    [
        ("input_required", False, None, Paused()),
        ("input_required", True, None, Paused()),
        ("completed", True, None, Answered()),
        ("completed", False, None, Told(notices.NO_OUTPUT)),
        ("rejected", True, None, Told(notices.TASK_REJECTED)),
        ("canceled", False, None, Told(notices.TASK_CANCELED)),
        ("failed", True, None, Told(notices.task_failed(None))),
        ("unknown", False, None, Told(notices.task_failed(None))),
        (
            "failed",
            False,
            _failed("429 Too Many Requests"),
            Told(notices.task_failed(notices.FailureCategory.RATE_LIMIT)),
        ),
        # Outcomes whose notice the machine gave when it decided them.
        ("auth_required", True, None, Quiet()),
        ("no_sign_of_life", False, None, Quiet()),
        ("too_long", True, None, Quiet()),
        ("session_gone", False, None, Quiet()),
    ],
)
def test_how_a_finished_turn_ends(
    outcome: str, answered: bool, status: TaskStatus | None, expected: Ending
) -> None:
    assert ending(outcome, answered, status) == expected


def test_only_a_completed_task_with_an_answer_gets_the_feedback_buttons() -> None:
    outcomes = ["completed", "failed", "rejected", "canceled", "unknown", "too_long"]
    with_feedback = [
        (outcome, answered)
        for outcome in outcomes
        for answered in (False, True)
        if isinstance(ending(outcome, answered, None), Answered)
    ]
    assert with_feedback == [("completed", True)]


@dataclass(frozen=True)
class Row:
    """Calls on one carrier's ``Telling``, what each returns, and ``told`` after it."""

    name: str
    calls: tuple[tuple[str, str | None], ...]
    """(method, argument): ``ends_with`` and ``taken_over`` take an outcome, ``tell`` and
    ``not_shown`` none."""
    expected: tuple[tuple[Tell | None, str | None], ...]
    """After each call: what it returned (None for no result) and ``told``."""


ROWS = [
    Row(
        "a notice in the middle of the turn is checkpointed with the machine, not as the end",
        (("tell", None), ("tell", None)),
        ((Tell.IN_TURN, None), (Tell.IN_TURN, None)),
    ),
    Row(
        "a cancel with no end in sight tells in the turn",
        (("ends_with", None), ("tell", None)),
        ((None, None), (Tell.IN_TURN, None)),
    ),
    Row(
        "the end's first notice is recorded as told before it is posted; a second is just posted",
        (("ends_with", "no_sign_of_life"), ("tell", None), ("tell", None)),
        ((None, None), (Tell.END, "no_sign_of_life"), (Tell.AGAIN, "no_sign_of_life")),
    ),
    Row(
        "the first outcome named is the end's (a cancel, then the finish it comes with)",
        (("ends_with", "too_long"), ("ends_with", "unusable_pause"), ("tell", None)),
        ((None, None), (None, None), (Tell.END, "too_long")),
    ),
    Row(
        "a notice Slack did not post is not told: the taker tells it",
        (("ends_with", "failed"), ("tell", None), ("not_shown", None)),
        ((None, None), (Tell.END, "failed"), (None, None)),
    ),
    Row(
        "a taker that finds the end being told tells nothing more of it (its notice is just posted)",
        (("taken_over", "failed"), ("ends_with", "failed"), ("tell", None)),
        ((None, "failed"), (None, "failed"), (Tell.AGAIN, "failed")),
    ),
]


@pytest.mark.parametrize("row", ROWS, ids=[row.name for row in ROWS])
def test_what_is_recorded_before_each_notice(row: Row) -> None:
    telling = Telling()
    seen: list[tuple[Tell | None, str | None]] = []
    for method, argument in row.calls:
        match method:
            case "ends_with":
                telling.ends_with(argument)
                seen.append((None, telling.told))
            case "tell":
                seen.append((telling.tell("N"), telling.told))
            case "not_shown":
                telling.not_shown()
                seen.append((None, telling.told))
            case "taken_over":
                assert argument is not None
                telling.taken_over(argument)
                seen.append((None, telling.told))
    assert tuple(seen) == row.expected


def test_the_end_being_told_keeps_its_notice_and_who_it_mentions() -> None:
    telling = Telling()
    telling.ends_with("stopped")
    assert telling.tell("Stopped by {who}.", who="U1") is Tell.END
    assert (telling.told, telling.notice, telling.who) == ("stopped", "Stopped by {who}.", "U1")


def test_a_taker_posts_the_end_notice_only_when_the_thread_does_not_show_it() -> None:
    wanted = mark("C1-1.000001", "completed")
    other_turn = mark("C1-1.000002", "completed")
    other_end = mark("C1-1.000001", "stopped")
    thread = [{"ts": "1.000001", "text": "hi"}, {"ts": "1.5", "metadata": other_turn}]
    assert untold(thread, wanted)
    assert untold([*thread, {"ts": "1.6", "metadata": other_end}], wanted)
    assert not untold([*thread, {"ts": "1.7", "metadata": wanted}], wanted)
    assert untold(None, wanted)  # Slack could not be read: posted, at least once
    assert wanted == {
        "event_type": "kourier_notice",
        "event_payload": {"turn": "C1-1.000001", "notice": "completed"},
    }
