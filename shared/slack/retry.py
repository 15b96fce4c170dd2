"""Slack calls held back by a rate limit: the fence is checked again before each retry.

Theory of operation. slack_sdk retries a call Slack answered with HTTP 429
after waiting out its ``Retry-After`` (up to 30 s), inside the call. The
fence (``shared.fence.FencedChat``) checks a call before it goes out, so a
call that waited could land after a person's stop took the turn and the
stop's function closed the reply: a step's card shown running again, or
twice (seeds 153, 224, 373). ``FencedChat`` names the check of each call
(``checked_before_retries``); ``RateLimitRetry``, the retry handler of every
Kourier client (``shared.slack.web``), runs it after each wait
(``before_retry``), so a call whose turn is no longer its function's is
never retried. The simulator's Slack waits and retries the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from slack_sdk.http_retry.builtin_handlers import RateLimitErrorRetryHandler

_CHECK: ContextVar[Callable[[], None] | None] = ContextVar("slack_retry_check", default=None)


@contextmanager
def checked_before_retries(check: Callable[[], None]) -> Iterator[None]:
    """While the block runs, ``check`` runs before each retry of a Slack call (it may raise)."""
    token = _CHECK.set(check)
    try:
        yield
    finally:
        _CHECK.reset(token)


def before_retry() -> None:
    """A Slack call waited out a rate limit and is about to go out again: check it still may."""
    check = _CHECK.get()
    if check is not None:
        check()


class RateLimitRetry(RateLimitErrorRetryHandler):
    """slack_sdk's retry of a rate-limited call, which checks the call again after its wait."""

    def prepare_for_next_attempt(self, **kwargs: Any) -> None:
        super().prepare_for_next_attempt(**kwargs)
        before_retry()
