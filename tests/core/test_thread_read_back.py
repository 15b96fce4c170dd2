"""Reading a thread back, page by page, through a scripted Chat port (no Slack here).

A function that takes over a turn whose end was being told reads the
thread to learn whether the notice already shows: a thread read in part
must never pass for a thread without the notice.
"""

from __future__ import annotations

from typing import Any

import pytest
from slack_sdk.errors import SlackApiError
from slack_sdk.web import SlackResponse

from shared.ports import Chat
from shared.slack.thread_read_back import READ_BACK_ATTEMPTS, READ_BACK_PAGE, ThreadReadBack

Page = dict[str, Any]


def refusal(code: str) -> SlackApiError:
    response = SlackResponse(
        client=None,
        http_verb="POST",
        api_url="https://slack.com/api/conversations.replies",
        req_args={},
        data={"ok": False, "error": code},
        headers={},
        status_code=200,
    )
    return SlackApiError(code, response)


def page(*texts: str, cursor: str | None = None) -> Page:
    return {
        "messages": [{"text": text} for text in texts],
        "response_metadata": {"next_cursor": cursor or ""},
    }


class ScriptedSlack:
    """Answers conversations.replies from a script (a page, or a refusal to raise)."""

    def __init__(self, answers: list[Page | SlackApiError]) -> None:
        self._answers = answers
        self.asked: list[dict[str, Any]] = []

    def conversations_replies(self, **arguments: Any) -> Page:
        self.asked.append(arguments)
        answer = self._answers.pop(0)
        if isinstance(answer, SlackApiError):
            raise answer
        return answer


def read(answers: list[Page | SlackApiError], since: str | None) -> tuple[Any, ScriptedSlack]:
    slack = ScriptedSlack(answers)
    chat: Chat = slack  # type: ignore[assignment]
    return ThreadReadBack(chat, "C1", "1700000000.000100").read_back(since), slack


@pytest.mark.parametrize(
    ("answers", "texts"),
    [
        ([page("a", "b")], ["a", "b"]),
        ([page("a", cursor="p2"), page("b", cursor="p3"), page("c")], ["a", "b", "c"]),
        ([{"messages": None}], []),  # an empty thread, as Slack may answer it
        # A refused read is tried again from the first page: nothing is counted twice.
        (
            [page("a", cursor="p2"), refusal("internal_error"), page("a", cursor="p2"), page("b")],
            ["a", "b"],
        ),
        ([refusal("ratelimited")] * (READ_BACK_ATTEMPTS - 1) + [page("a")], ["a"]),
        # Slack keeps refusing: unread, never "no messages".
        ([refusal("internal_error")] * READ_BACK_ATTEMPTS, None),
    ],
)
def test_a_thread_is_read_whole_or_not_at_all(
    answers: list[Page | SlackApiError], texts: list[str] | None
) -> None:
    messages, _ = read(answers, since=None)

    assert (None if messages is None else [m["text"] for m in messages]) == texts


@pytest.mark.parametrize(
    ("since", "oldest"),
    [(None, None), ("", None), ("1700000000.000200", "1700000000.000200")],
)
def test_each_page_asks_for_the_thread_after_since_with_its_metadata(
    since: str | None, oldest: str | None
) -> None:
    _, slack = read([page("a", cursor="p2"), page("b")], since)

    assert slack.asked == [
        {
            "channel": "C1",
            "ts": "1700000000.000100",
            "cursor": cursor,
            "include_all_metadata": True,
            "limit": READ_BACK_PAGE,
            "oldest": oldest,
        }
        for cursor in (None, "p2")
    ]
