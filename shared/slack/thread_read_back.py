"""Reading a thread back, to learn what a function that died (or was stopped) posted.

Only a function that takes a turn over reads the thread, and only when the
turn records that something may show that no checkpoint names: a turn whose
end was being told (``shared.turn_ending.tell_if_untold``: the function
before may have posted the notice, marked with Slack message metadata,
before it died), or a reply that posted (``Turn.posting``: the function
before may have posted a message of the reply, marked too, after its last
checkpoint; ``shared.core.reply_course.orphans``).
"""

from __future__ import annotations

from typing import Any

import structlog
from slack_sdk.errors import SlackApiError

from shared.ports import Chat
from shared.store import Turn

log = structlog.get_logger()

READ_BACK_PAGE = 200
"""Messages a page of a thread's read-back asks for (Slack's recommended page size)."""
READ_BACK_ATTEMPTS = 3
"""Reads of a thread before a notice whose showing is unknown is posted anyway."""


class ThreadReadBack:
    """The messages of one thread, read through the Chat port (``conversations.replies``)."""

    def __init__(self, client: Chat, channel: str, thread_ts: str) -> None:
        self._client = client
        self._channel = channel
        self._thread_ts = thread_ts

    def read_back(self, since: str | None) -> list[dict[str, Any]] | None:
        """The thread's messages after ``since`` (all: None), with their metadata; None if unread.

        Read page by page (``conversations.replies``), tried ``READ_BACK_ATTEMPTS``
        times; when Slack keeps failing, None, so that the caller does not take
        "unread" for "absent".
        """
        for _ in range(READ_BACK_ATTEMPTS):
            try:
                return self._read_thread(since)
            except SlackApiError as error:
                log.warning("thread_read_back_failed", error=error.response.get("error"))
        return None

    def _read_thread(self, since: str | None) -> list[dict[str, Any]]:
        """Every page of the thread after ``since``; raises Slack's first refusal."""
        messages: list[dict[str, Any]] = []
        cursor: str | None = None
        while True:
            page = self._client.conversations_replies(
                channel=self._channel,
                ts=self._thread_ts,
                cursor=cursor,
                include_all_metadata=True,
                limit=READ_BACK_PAGE,
                oldest=since or None,
            )
            messages.extend(page["messages"] or [])
            cursor = (page.get("response_metadata") or {}).get("next_cursor") or None
            if cursor is None:
                return messages


def read_back_if_posted(client: Chat, turn: Turn) -> list[dict[str, Any]] | None:
    """The thread a taker reads when the turn posted: its messages since the turn began.

    None when the turn records no posting (``Turn.posting``: no message of
    its reply can show that no checkpoint names) or when Slack kept failing
    (``ThreadReadBack.read_back``).
    """
    if not turn.posting:
        return None
    return ThreadReadBack(client, turn.channel, turn.thread_ts).read_back(since=turn.ts or None)
