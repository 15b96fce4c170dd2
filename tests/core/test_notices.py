"""The thread's sentences, verbatim: a change here is a change a person reads."""

from __future__ import annotations

from shared.core import notices


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
