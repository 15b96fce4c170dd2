"""The thread's sentences, verbatim: a change here is a change a person reads."""

from __future__ import annotations

import pytest

from shared.core import notices
from shared.core.model import Message, Role, TaskState, TaskStatus, TextPart
from shared.core.outcome import final_notice


def test_a_cancel_says_the_task_was_cancelled_or_that_it_could_not_be_stopped() -> None:
    may_still_run = "Agent Kourier could not stop its task, which may still be running."
    assert {
        name: (value.after(stopped=True), value.after(stopped=False))
        for name, value in vars(notices).items()
        if isinstance(value, notices.CancelNotice)
    } == {
        "UNUSABLE_PAUSE": (
            "The agent paused in a way Agent Kourier cannot show here, so its task was cancelled.",
            f"The agent paused in a way Agent Kourier cannot show here. {may_still_run}",
        ),
        "NO_SIGN_OF_LIFE": (
            "The agent's task showed no sign of life for an hour, so it was cancelled.",
            (
                "The agent's task showed no sign of life for an hour. "
                "Agent Kourier could not stop it, and it may still be running."
            ),
        ),
        "ANSWER_REJECTED": (
            "The agent did not take the answer, so its task was cancelled.",
            f"The agent did not take the answer. {may_still_run}",
        ),
        "QUESTIONS_NOT_ALLOWED": (
            (
                "The agent asked a question, but this Binding does not allow questions, "
                "so its task was cancelled."
            ),
            (
                "The agent asked a question, but this Binding does not allow questions. "
                f"{may_still_run}"
            ),
        ),
        "TURN_TOO_LONG": (
            "The agent's task ran longer than a turn may run here, so it was cancelled.",
            (
                "The agent's task ran longer than a turn may run here. "
                "Agent Kourier could not stop it, and it may still be running."
            ),
        ),
        "QUESTION_TIMED_OUT": (
            "No one answered in time, so the agent's task was cancelled.",
            (
                "No one answered in time. "
                "Agent Kourier could not stop the agent's task, which may still be running."
            ),
        ),
        "STOPPED": (
            "Stopped by {who}, and the agent's task was cancelled.",
            (
                "Stopped by {who}. "
                "Agent Kourier could not stop the agent's task, which may still be running."
            ),
        ),
    }


def test_a_stop_is_refused_to_others_in_one_sentence() -> None:
    assert notices.NOT_ALLOWED_TO_STOP == (
        "Only the person who wrote this message and this Binding's approvers "
        "can stop the agent here."
    )


def test_a_turn_the_agent_never_took_in_time_says_so() -> None:
    assert notices.turn_failed(notices.TOO_LONG) == (
        "Agent Kourier could not carry this message: "
        "the agent did not take it in the time a turn may run here."
    )


def test_a_step_that_ended_without_a_result_says_so() -> None:
    assert (notices.STEP_NO_RESULT, notices.STEP_WAITS_FOR_ANSWER) == (
        "No result came from the agent",
        "Waiting for the answer below",
    )


def test_the_task_state_notices_are_the_contracts_and_ours_verbatim() -> None:
    assert final_notice("completed", has_answer_text=False, status=None) == (
        "The agent finished without any output."
    )
    assert final_notice("completed", has_answer_text=True, status=None) is None
    assert final_notice("rejected", has_answer_text=True, status=None) == (
        "The agent rejected this request."
    )
    assert final_notice("canceled", has_answer_text=True, status=None) == (
        "The agent's task was canceled."
    )
    assert final_notice("failed", has_answer_text=True, status=None) == "The agent's task failed."
    assert final_notice("unknown", has_answer_text=False, status=None) == (
        "The agent's task failed."
    )


def _failed(text: str = "", **metadata: str) -> TaskStatus:
    message = Message(Role.AGENT, (TextPart(text),), metadata=metadata)
    return TaskStatus(TaskState.FAILED, message)


@pytest.mark.parametrize(
    ("status", "category"),
    [
        (_failed("This model's maximum context length is 8192 tokens"), "context limit"),
        (_failed("429 Too Many Requests"), "rate limit"),
        (_failed(code="RESOURCE_EXHAUSTED"), "rate limit"),
        (_failed("Invalid API key provided"), "authentication"),
        (_failed(error_code="401"), "authentication"),
        (_failed("Deadline exceeded while calling the tool"), "timeout"),
        (_failed(kagent_error_code="504"), "timeout"),
        (_failed("Permission denied on namespace prod"), "permission"),
        (_failed("403 Forbidden"), "permission"),
    ],
)
def test_a_failed_task_gets_its_recognised_category(status: TaskStatus, category: str) -> None:
    assert final_notice("failed", has_answer_text=True, status=status) == (
        f"The agent's task failed. ({category})"
    )


def test_a_failure_nothing_recognises_has_no_category_and_the_agents_words_stay_out() -> None:
    said = "the secret token sk-live-123 was wrong somewhere"
    notice = final_notice("failed", has_answer_text=True, status=_failed(said))
    assert notice == "The agent's task failed."


def test_only_the_first_32_parts_and_4096_characters_are_read() -> None:
    late = Message(Role.AGENT, tuple(TextPart("x") for _ in range(32)) + (TextPart("429"),))
    assert final_notice("failed", True, TaskStatus(TaskState.FAILED, late)) == (
        "The agent's task failed."
    )
    long = Message(Role.AGENT, (TextPart("x" * 4096 + " 429"),))
    assert final_notice("failed", True, TaskStatus(TaskState.FAILED, long)) == (
        "The agent's task failed."
    )
