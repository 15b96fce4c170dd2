"""The question and approval lifecycle, decision by decision (``shared.core.questions``).

Each row gives the question as stored, what happens, and what must be
written (the question's status and progress), or that nothing is, or what
the turn does next.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest

from shared.core import notices
from shared.core import questions as lifecycle
from shared.core.answers import ApprovalLedger, Denial, Progress, progress_for
from shared.core.model import Actor
from shared.core.pauses import Pause
from shared.core.questions import (
    Allowed,
    AlreadyTaken,
    Ask,
    Next,
    OpenQuestion,
    Place,
    QuestionsNotAllowed,
    QuestionStatus,
    Refused,
    RefusePause,
    SendAnswer,
)
from shared.core.session import Session
from tests.hitl.builders import (
    ADA,
    APPROVERS,
    AT,
    approval,
    ask,
    question,
    read_approval,
    read_ask,
    read_text,
    tool,
)

OPEN, ANSWERING, CLOSED = QuestionStatus.OPEN, QuestionStatus.ANSWERING, QuestionStatus.CLOSED
CAROL = "U0CAROL"
"""Not an approver."""
TWO_TOOLS = read_approval(approval(tool("t1"), tool("t2", name="rm_dir")))
TEXT = read_text("Which region?")
CHOICE = read_ask(ask(question("Which region?", ["eu", "us"])))
PLACE = Place("s1", "T1", "sre", "C1", "1.0")
ALLOWED = Allowed(questions=timedelta(minutes=5), approvals=timedelta(minutes=10))


def stored(pause: Pause = TWO_TOOLS, **changes: Any) -> OpenQuestion:
    """The question of ``pause`` as turn T1 stored it: open, its prompt posted."""
    base = OpenQuestion(
        key=pause.key,
        session_id="s1",
        turn_id="T1",
        binding="sre",
        channel="C1",
        thread_ts="1.0",
        fingerprint=pause.fingerprint,
        progress=progress_for(pause).to_dict(),
        generation=4,
        prompt_ts="2.0",
    )
    return replace(base, **changes)


def decided(*tools: str, pause: Pause = TWO_TOOLS, **changes: Any) -> OpenQuestion:
    """The approval with ``tools`` already approved by Ada."""
    ledger = progress_for(pause)
    assert isinstance(ledger, ApprovalLedger)
    for tool_id in tools:
        ledger.decide(int(tool_id[1:]) - 1, True, ADA, AT, APPROVERS)
    return stored(pause, progress=ledger.to_dict(), **changes)


def approve(tool: int, who: str = ADA.id) -> Callable[[Progress], bool]:
    """A click on the Approve button of the ``tool``-th tool by ``who``."""

    def click(progress: Progress) -> bool:
        assert isinstance(progress, ApprovalLedger)
        return bool(progress.decide(tool, True, Actor(id=who, platform="slack"), AT, APPROVERS))

    return click


def wrong_prompt(progress: Progress) -> bool:
    raise ValueError("an action this prompt does not have")


def unchanged(progress: Progress) -> bool:
    return False


def approved(question: OpenQuestion) -> list[str]:
    ledger = question.current
    assert isinstance(ledger, ApprovalLedger)
    return [d.tool_id for d in ledger.decisions if d is not None and d.approved]


# People ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "current", "click", "prompt_ts", "status", "approved_tools"),
    [
        ("an approver decides one tool of two", stored(), approve(0), "2.0", OPEN, ["t1"]),
        ("an approver decides the last tool", decided("t1"), approve(1), "2.0", ANSWERING,
         ["t1", "t2"]),
        ("a click before the prompt's ts was kept names it",
         stored(prompt_ts=None), approve(0), "2.0", OPEN, ["t1"]),
    ],
)  # fmt: skip
def test_a_click_that_decides_is_written(
    name: str,
    current: OpenQuestion,
    click: Callable[[Progress], bool],
    prompt_ts: str,
    status: QuestionStatus,
    approved_tools: list[str],
) -> None:
    written = lifecycle.act(current, click, prompt_ts="2.0")
    assert isinstance(written, OpenQuestion), name
    assert (written.status, approved(written), written.prompt_ts) == (
        status,
        approved_tools,
        prompt_ts,
    )


@pytest.mark.parametrize(
    ("name", "current", "click", "verdict"),
    [
        ("a non-approver is refused, and decides nothing",
         stored(), approve(0, who=CAROL), Refused(notices.NOT_AN_APPROVER)),
        ("a tool already decided stays as decided", decided("t1"), approve(0), None),
        ("an action the prompt does not have changes nothing", stored(), wrong_prompt, None),
        ("a click that changes nothing is not written", stored(), unchanged, None),
        ("a question being answered takes no more clicks",
         decided("t1", "t2", status=ANSWERING), approve(0), None),
        ("a closed question takes no clicks", stored(status=CLOSED), approve(0), None),
    ],
)  # fmt: skip
def test_a_click_that_decides_nothing_writes_nothing(
    name: str, current: OpenQuestion, click: Callable[[Progress], bool], verdict: object
) -> None:
    before = current.progress
    assert lifecycle.act(current, click, prompt_ts="9.9") == verdict, name
    assert current.progress == before


@pytest.mark.parametrize(
    ("name", "current", "message", "verdict"),
    [
        ("a reply answers an open text question", stored(TEXT), "m1", ANSWERING),
        ("the same message again is the same answer, not a turn",
         stored(TEXT, replies=["m1"], status=ANSWERING), "m1", AlreadyTaken()),
        ("a reply is no answer to an approval", stored(), "m1", None),
        ("a reply is no answer to a question being answered",
         stored(TEXT, status=ANSWERING, replies=["m0"]), "m1", None),
        ("a reply is no answer to a closed question", stored(TEXT, status=CLOSED), "m1", None),
        ("a reply answers no question that has no free text", stored(CHOICE), "m1", None),
    ],
)  # fmt: skip
def test_a_thread_reply(name: str, current: OpenQuestion, message: str, verdict: object) -> None:
    result = lifecycle.reply(current, "eu-west", ADA, message, AT)
    if isinstance(result, OpenQuestion):
        assert (result.status, result.replies) == (verdict, [message]), name
    else:
        assert result == verdict, name


@pytest.mark.parametrize(
    ("name", "session", "takes"),
    [
        ("its session waits on it", {}, True),
        ("its session waits on another question", {"open_question": "other"}, False),
        ("its session carries another turn", {"active_turn": "T2"}, False),
        ("its session is gone", None, False),
    ],
)
def test_who_may_still_act_on_a_question(
    name: str, session: dict[str, Any] | None, takes: bool
) -> None:
    question = stored()
    waiting = Session(
        id="s1",
        binding="sre",
        channel="C1",
        thread_ts="1.0",
        incarnation="a",
        active_turn="T1",
        open_question=question.key,
    )
    current = None if session is None else replace(waiting, **session)
    assert lifecycle.takes_actions(question, current) is takes, name
    assert not lifecycle.takes_actions(replace(question, status=ANSWERING), waiting)
    assert not lifecycle.takes_actions(None, waiting)


# The turn -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "change", "current", "status"),
    [
        ("a timed-out approval denies what is undecided, and is answered",
         "time_out", decided("t1"), ANSWERING),
        ("a timed-out question closes", "time_out", stored(TEXT), CLOSED),
        ("a time-out after the answer changes nothing",
         "time_out", decided("t1", "t2", status=ANSWERING), None),
        ("a time-out of a closed question changes nothing",
         "time_out", stored(status=CLOSED), None),
        ("no approvals allowed: every tool is denied, and answered",
         "deny_all", stored(), ANSWERING),
        ("deny_all asks nothing of a question", "deny_all", stored(TEXT), None),
        ("deny_all changes a closed approval not", "deny_all", stored(status=CLOSED), None),
        ("an open question closes", "close", stored(), CLOSED),
        ("a question being answered closes", "close", stored(status=ANSWERING), CLOSED),
        ("a closed question stays as it is", "close", stored(status=CLOSED), None),
        ("its agent changed: an open question closes", "withdraw", stored(TEXT), CLOSED),
        ("its agent changed: a decided approval closes unsent",
         "withdraw", decided("t1", "t2", status=ANSWERING), CLOSED),
        ("a withdrawn question stays closed", "withdraw", stored(status=CLOSED), None),
    ],
)  # fmt: skip
def test_the_turn_ends_a_question(
    name: str, change: str, current: OpenQuestion, status: QuestionStatus | None
) -> None:
    changes: dict[str, Callable[[OpenQuestion], OpenQuestion | None]] = {
        "time_out": lambda q: lifecycle.time_out(q, "slack", AT),
        "deny_all": lambda q: lifecycle.deny_all(q, "slack", AT),
        "close": lifecycle.close,
        "withdraw": lambda q: lifecycle.withdraw(q, AT),
    }
    written = changes[change](current)
    assert (written.status if written else None) == status, name


def test_a_timed_out_approval_keeps_what_was_decided_and_denies_the_rest() -> None:
    written = lifecycle.time_out(decided("t1"), "slack", AT)
    assert written is not None
    ledger = written.current
    assert isinstance(ledger, ApprovalLedger)
    assert [(d.tool_id, d.approved, d.denial) for d in ledger.decisions if d] == [
        ("t1", True, None),
        ("t2", False, Denial.TIMEOUT),
    ]


def test_where_the_prompt_is_is_written_once() -> None:
    assert lifecycle.shown_at("2.0")(stored()) is None
    written = lifecycle.shown_at("3.0")(stored(prompt_ts=None))
    assert written is not None and written.prompt_ts == "3.0"


@pytest.mark.parametrize(
    ("recorded", "ended"),
    [
        (None, False),  # known already: whoever closed it ended its prompt
        (stored(), False),  # open: people act on it
        (stored(status=ANSWERING), False),  # its prompt shows the answer going out
        (stored(status=CLOSED), True),  # closed while its prompt was posted
    ],
)
def test_a_prompt_remembered_on_a_closed_question_is_ended_by_the_function_that_posted_it(
    recorded: OpenQuestion | None, ended: bool
) -> None:
    assert lifecycle.ended_before_shown(recorded) is ended


@pytest.mark.parametrize(
    ("current", "generation"),
    [(stored(generation=0), 5), (stored(generation=5), 5), (stored(status=ANSWERING), 7)],
)
def test_a_question_waited_on_carries_the_generation_of_its_wait(
    current: OpenQuestion, generation: int
) -> None:
    assert lifecycle.waits_at(current, generation) == replace(current, generation=generation)


# Around a question -----------------------------------------------------------------------

ANSWERED = stored(status=ANSWERING)


@pytest.mark.parametrize(
    ("name", "pause", "existing", "answering", "allowed", "fits", "expected"),
    [
        ("a new approval waits for its approvers", TWO_TOOLS, None, None, ALLOWED, True,
         Ask(replace(stored(), generation=0, prompt_ts=None), None, retried=False, deny=False,
             wait=timedelta(minutes=10))),
        ("a new question waits its own time", TEXT, None, None, ALLOWED, True,
         Ask(replace(stored(TEXT), generation=0, prompt_ts=None), None, retried=False,
             deny=False, wait=timedelta(minutes=5))),
        ("the same pause, still open, is waited on, not shown again",
         TWO_TOOLS, stored(), None, ALLOWED, True,
         Ask(stored(), None, retried=False, deny=False, wait=timedelta(minutes=10))),
        ("asked again after its answer: the answer was not taken, the thread is told",
         TWO_TOOLS, ANSWERED, ANSWERED, ALLOWED, True,
         Ask(replace(stored(), generation=0, answers_sent=1), None, retried=True, deny=False,
             wait=timedelta(minutes=10))),
        ("answered, its answer never sent by the turn: the pause read again sends it",
         TWO_TOOLS, ANSWERED, None,
         ALLOWED, True, SendAnswer(ANSWERED)),
        ("answered, another turn's question under the same name: not this turn's to send",
         TWO_TOOLS, replace(ANSWERED, turn_id="T0"), None, ALLOWED, True,
         Ask(replace(stored(), turn_id="T1", generation=0, answers_sent=1), None, retried=True,
             deny=False, wait=timedelta(minutes=10))),
        ("a new pause after an answer closes the answered question",
         TEXT, None, ANSWERED, ALLOWED, True,
         Ask(replace(stored(TEXT), generation=0, prompt_ts=None), ANSWERED, retried=False,
             deny=False, wait=timedelta(minutes=5))),
        ("no approvals allowed: every tool is denied at once",
         TWO_TOOLS, None, None, replace(ALLOWED, approvals=None), True,
         Ask(replace(stored(), generation=0, prompt_ts=None), None, retried=False, deny=True,
             wait=timedelta(0))),
        ("no questions allowed: the task is cancelled", TEXT, stored(TEXT), None,
         replace(ALLOWED, questions=None), True, QuestionsNotAllowed(stored(TEXT))),
        ("a different question under a used name cannot be shown",
         TWO_TOOLS, stored(fingerprint="other"), None, ALLOWED, True,
         RefusePause("a different question under a name already used")),
        ("a prompt that does not fit in one message cannot be shown",
         TWO_TOOLS, None, None, ALLOWED, False,
         RefusePause("the prompt does not fit in one Slack message")),
    ],
)  # fmt: skip
def test_what_a_pause_asks(
    name: str,
    pause: Pause,
    existing: OpenQuestion | None,
    answering: OpenQuestion | None,
    allowed: Allowed,
    fits: bool,
    expected: object,
) -> None:
    assert lifecycle.asked(pause, existing, answering, allowed, PLACE, fits) == expected, name


@pytest.mark.parametrize(
    ("name", "timed_out", "now_stored", "next_step"),
    [
        ("an approval timed out: its denials are the answer", ANSWERED, ANSWERED,
         Next.SEND_ANSWER),
        ("a question timed out: the turn ends", stored(status=CLOSED), stored(status=CLOSED),
         Next.TIME_OUT),
        ("answered just before: the timer sends the answer", None, ANSWERED, Next.SEND_ANSWER),
        ("closed before (its turn ended): nothing", None, stored(status=CLOSED), Next.NOTHING),
        ("another turn's answer is not this timer's to send",
         None, stored(status=ANSWERING, turn_id="T0"), Next.NOTHING),
        ("gone: nothing", None, None, Next.NOTHING),
    ],
)  # fmt: skip
def test_after_the_question_timer(
    name: str, timed_out: OpenQuestion | None, now_stored: OpenQuestion | None, next_step: Next
) -> None:
    assert lifecycle.after_timer(timed_out, now_stored, "T1") == next_step, name


@pytest.mark.parametrize(
    ("name", "question", "takeover", "answer_task"),
    [
        ("an answer taken and not yet sent", ANSWERED, Next.SEND_ANSWER, Next.SEND_ANSWER),
        ("a question still open", stored(), Next.READ_TASK, Next.NOTHING),
        ("a question that ended", stored(status=CLOSED), Next.TIME_OUT, Next.NOTHING),
        ("another turn's question", replace(ANSWERED, turn_id="T0"), Next.TIME_OUT,
         Next.NOTHING),
        ("no question", None, Next.TIME_OUT, Next.NOTHING),
    ],
)  # fmt: skip
def test_a_paused_turn_taken_over_or_its_answer_task(
    name: str, question: OpenQuestion | None, takeover: Next, answer_task: Next
) -> None:
    assert lifecycle.after_takeover(question, "T1") == takeover, name
    assert lifecycle.after_answer_task(question, "T1") == answer_task, name
