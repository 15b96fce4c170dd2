"""Which messages the ingress takes as turns, and what a person is told of one it does not."""

from __future__ import annotations

from shared.core import notices
from shared.core.admission import Limits, Refusal, queue_full, too_long

LIMITS = Limits(message_chars=10, per_thread=3, per_user=5)


def test_a_message_up_to_the_limit_is_taken_and_a_longer_one_is_refused_in_the_thread() -> None:
    assert too_long("x" * 10, LIMITS) is None
    assert too_long("x" * 12_345, LIMITS) == Refusal(
        "too_long",
        "This message is too long for Agent Kourier to carry (12,345 characters; at most 10), "
        "so the agent did not get it. Please shorten it and send it again.",
        public=True,
    )


def test_a_message_is_taken_while_its_thread_and_its_author_have_room() -> None:
    assert queue_full(waiting_in_thread=2, waiting_of_user=4, limits=LIMITS) is None


def test_a_full_thread_refuses_to_the_author_alone() -> None:
    assert queue_full(3, 0, LIMITS) == Refusal(
        "thread_queue_full",
        "This thread already has 3 messages waiting for the agent, so this one was not sent. "
        "Send it again once they are answered.",
        public=False,
    )


def test_an_author_with_too_many_waiting_is_refused_in_any_thread() -> None:
    refusal = queue_full(0, 5, LIMITS)

    assert refusal is not None and not refusal.public
    assert refusal.notice == notices.USER_QUEUE_FULL.format(count=5)
    assert refusal.notice == (
        "You already have 5 messages waiting for the agent, so this one was not sent. "
        "Send it again once they are answered."
    )
