"""Fencing: a function writes and acts only while the turn it carries is still its own.

Theory of operation: a function that claims a session for a turn holds the
session's generation at that moment as its *fencing token*. Every session
write it makes is conditional on the session still carrying that turn at
that generation, and every write of the turn's document on the turn's
``fence`` (the highest token that wrote it) not being above its own
(``Store.write_turn``). A claim that takes a turn over, or resumes it, bumps
the generation and writes the turn's fence before anything else, so from then
on every write of the function that carried the turn before is refused with
``Superseded``, however long that one stalled (Cloud Run keeps an instance
running past its 504, and it may wake at any point).

Side effects that are not writes (Slack calls, calls to the agent) are
fenced by time, and those that start something new or change a step's card
by the session too (``Fence.confirm``, below): a function acts only while the lease it last wrote has not
run out (``Fence.check``), counted on its own monotonic clock from a moment
taken before the write (the lease is the writer's now plus its length), less
a margin for the clocks of other instances. Another function can take the turn over only once that
lease has run out in Firestore's time, so a function that stalled past it
stops at its next side effect instead of posting, sending or answering
again. A Slack call that waits out a rate limit is checked again before
each retry (``shared.slack.retry``). Every blocking call has a timeout of its own (Firestore's, Slack's
30 s, the agent's header and idle timeouts, the stream's ``until``), so a
function never waits unboundedly before it checks.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Any

from shared.errors import Superseded
from shared.ports import Blocks, Chat, ChatAnswer, Clock
from shared.slack.retry import checked_before_retries

SKEW_MARGIN = timedelta(seconds=5)
"""Taken off every lease (a tenth of a shorter one): how far other instances' clocks may be ahead."""


class Fence:
    """How long this function may still act on its turn."""

    def __init__(
        self,
        clock: Clock,
        since: float,
        lease: timedelta,
        still_ours: Callable[[], None] = lambda: None,
    ) -> None:
        """Starts held: the function claimed its turn with a lease of ``lease``.

        Args:
            clock: The function's clock.
            since: ``clock.monotonic()`` taken before the claim was decided.
            lease: The lease the claim wrote.
            still_ours: Reads whether the turn is still this function's, and
                raises ``Superseded`` if not (see ``confirm``).
        """
        self._clock = clock
        self._lease = lease
        self._valid_until = since + _usable(lease)
        self._still_ours = still_ours

    def renewed(self, since: float, lease: timedelta | None = None) -> None:
        """A fenced write set the lease to ``lease`` (the claim's when None) from ``since``."""
        usable = _usable(self._lease if lease is None else lease)
        self._valid_until = max(self._valid_until, since + usable)

    def renewal_due(self) -> bool:
        """Whether less than half of the lease this function counts on is left.

        A run hands over before its claim's lease runs out, so a carrier renews
        the lease (with a checkpoint) at most once a function, in a long stream,
        and a short turn never writes its session for it.
        """
        return self._valid_until - self._clock.monotonic() < _usable(self._lease) / 2

    def check(self) -> None:
        """Raise Superseded if the lease may have run out: another function may carry the turn."""
        if self._clock.monotonic() >= self._valid_until:
            raise Superseded("this function's lease ran out; the turn may be another's now")

    def confirm(self) -> None:
        """Before a side effect that starts something new or changes a step: read the claim.

        A person's stop takes the turn from its carrier while the carrier's
        lease still runs (``shared.stops``), so time alone does not fence
        what the carrier does next: a new message in the thread, the turn
        sent to the agent again, or a step's card shown in a state after the
        stop's function closed the reply (a step left running, or shown
        twice). Those are few (text alone is fenced by time), and are checked
        against the session itself.
        """
        self.check()
        self._still_ours()


def has_card(blocks: Blocks | None, kind: str) -> bool:
    """Whether ``blocks`` (or a stream's chunks) show a step: a block of type ``kind``."""
    return any(block.get("type") == kind for block in blocks or ())


def _usable(lease: timedelta) -> float:
    """The part of a lease this function counts on."""
    return (lease - min(SKEW_MARGIN, lease / 10)).total_seconds()


class FencedChat:
    """Slack's Web API, called only while the fence holds (the ``Chat`` port)."""

    def __init__(self, chat: Chat, fence: Fence) -> None:
        self._chat = chat
        self._fence = fence

    def _card_check(self, changes_a_card: bool) -> Callable[[], None]:
        """A call that shows a step's card reads the session first; text alone, the time."""
        return self._fence.confirm if changes_a_card else self._fence.check

    @contextmanager
    def _checked(self, check: Callable[[], None]) -> Iterator[None]:
        """``check`` before the call, and again before each retry after a rate limit's wait."""
        check()
        with checked_before_retries(check):
            yield

    def chat_postMessage(
        self,
        *,
        channel: str,
        text: str | None = None,
        blocks: Blocks | None = None,
        thread_ts: str | None = None,
        markdown_text: str | None = None,
        parse: str | None = None,
        link_names: bool | None = None,
        unfurl_links: bool | None = None,
        unfurl_media: bool | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> ChatAnswer:
        with self._checked(self._fence.confirm):
            return self._chat.chat_postMessage(
                channel=channel,
                text=text,
                blocks=blocks,
                thread_ts=thread_ts,
                markdown_text=markdown_text,
                parse=parse,
                link_names=link_names,
                unfurl_links=unfurl_links,
                unfurl_media=unfurl_media,
                metadata=metadata,
            )

    def conversations_replies(
        self,
        *,
        channel: str,
        ts: str,
        cursor: str | None = None,
        include_all_metadata: bool | None = None,
        limit: int | None = None,
        oldest: str | None = None,
    ) -> ChatAnswer:
        # A read: it changes nothing the fence guards.
        return self._chat.conversations_replies(
            channel=channel,
            ts=ts,
            cursor=cursor,
            include_all_metadata=include_all_metadata,
            limit=limit,
            oldest=oldest,
        )

    def chat_update(
        self,
        *,
        channel: str,
        ts: str,
        text: str | None = None,
        blocks: Blocks | None = None,
        markdown_text: str | None = None,
    ) -> ChatAnswer:
        with self._checked(self._card_check(has_card(blocks, "task_card"))):
            return self._chat.chat_update(
                channel=channel, ts=ts, text=text, blocks=blocks, markdown_text=markdown_text
            )

    def chat_postEphemeral(
        self, *, channel: str, user: str, text: str | None = None, thread_ts: str | None = None
    ) -> ChatAnswer:
        with self._checked(self._fence.check):
            return self._chat.chat_postEphemeral(
                channel=channel, user=user, text=text, thread_ts=thread_ts
            )

    def chat_startStream(
        self,
        *,
        channel: str,
        thread_ts: str,
        recipient_team_id: str | None = None,
        recipient_user_id: str | None = None,
        chunks: Blocks | None = None,
    ) -> ChatAnswer:
        with self._checked(self._fence.confirm):
            return self._chat.chat_startStream(
                channel=channel,
                thread_ts=thread_ts,
                recipient_team_id=recipient_team_id,
                recipient_user_id=recipient_user_id,
                chunks=chunks,
            )

    def chat_appendStream(
        self, *, channel: str, ts: str, chunks: Blocks | None = None
    ) -> ChatAnswer:
        with self._checked(self._card_check(has_card(chunks, "task_update"))):
            return self._chat.chat_appendStream(channel=channel, ts=ts, chunks=chunks)

    def chat_stopStream(
        self,
        *,
        channel: str,
        ts: str,
        chunks: Blocks | None = None,
        blocks: Blocks | None = None,
        session_status: str | None = None,
    ) -> ChatAnswer:
        with self._checked(self._card_check(has_card(chunks, "task_update"))):
            return self._chat.chat_stopStream(
                channel=channel, ts=ts, chunks=chunks, blocks=blocks, session_status=session_status
            )

    def assistant_threads_setStatus(
        self, *, channel_id: str, thread_ts: str, status: str
    ) -> ChatAnswer:
        with self._checked(self._fence.check):
            return self._chat.assistant_threads_setStatus(
                channel_id=channel_id, thread_ts=thread_ts, status=status
            )

    def agents_sessions_setStatus(
        self,
        *,
        channel_id: str,
        status: str,
        thread_ts: str | None = None,
        title: str | None = None,
        initiator_user_id: str | None = None,
    ) -> ChatAnswer:
        with self._checked(self._fence.check):
            return self._chat.agents_sessions_setStatus(
                channel_id=channel_id,
                status=status,
                thread_ts=thread_ts,
                title=title,
                initiator_user_id=initiator_user_id,
            )

    def agents_sessions_rename(
        self, *, channel_id: str, title: str, thread_ts: str | None = None
    ) -> ChatAnswer:
        with self._checked(self._fence.check):
            return self._chat.agents_sessions_rename(
                channel_id=channel_id, title=title, thread_ts=thread_ts
            )

    def views_open(self, *, trigger_id: str | None = None, view: dict[str, Any]) -> ChatAnswer:
        with self._checked(self._fence.check):
            return self._chat.views_open(trigger_id=trigger_id, view=view)

    def users_info(self, *, user: str) -> ChatAnswer:
        return self._chat.users_info(user=user)  # a read: no side effect to fence

    def auth_test(self) -> ChatAnswer:
        return self._chat.auth_test()
