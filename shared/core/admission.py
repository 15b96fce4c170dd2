"""Whether chat_ingress takes a person's message as a turn, or tells them why not.

Theory of operation: a message becomes a turn when it can be carried and
when carrying it keeps the queues fair. It cannot be carried when its text
is longer than Kourier carries. It would be unfair when its thread already
has ``per_thread`` turns waiting behind the one the agent works on (turns
of a thread reach the agent one at a time), or when its author already has
``per_user`` turns waiting anywhere: one person, or one busy thread, cannot
fill the queues and the function pool that every binding shares. A message
that starts a thread waits behind nothing, so only a thread's later
messages are counted (and the ingress spends no read on a first one). A refused
message is not stored and never reaches the agent; the person is told,
with the limit, so they can send it again later.
"""

from __future__ import annotations

from dataclasses import dataclass

from shared.core import notices


@dataclass(frozen=True)
class Limits:
    """The ingress's limits (settings ``KOURIER_MAX_MESSAGE_CHARS`` and ``KOURIER_MAX_QUEUED_*``)."""

    message_chars: int
    per_thread: int
    per_user: int


@dataclass(frozen=True)
class Refusal:
    """Why a message is not taken, as the person is told; ``public``: told in the thread."""

    outcome: str
    notice: str
    public: bool


def too_long(text: str, limits: Limits) -> Refusal | None:
    """A message longer than Kourier carries: the thread is told (nothing of it is stored)."""
    if len(text) <= limits.message_chars:
        return None
    notice = notices.message_too_long(len(text), limits.message_chars)
    return Refusal("too_long", notice, public=True)


def queue_full(waiting_in_thread: int, waiting_of_user: int, limits: Limits) -> Refusal | None:
    """A message that would queue past a limit: its author alone is told."""
    if waiting_in_thread >= limits.per_thread:
        notice = notices.THREAD_QUEUE_FULL.format(count=waiting_in_thread)
        return Refusal("thread_queue_full", notice, public=False)
    if waiting_of_user >= limits.per_user:
        notice = notices.USER_QUEUE_FULL.format(count=waiting_of_user)
        return Refusal("user_queue_full", notice, public=False)
    return None
