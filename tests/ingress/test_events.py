"""Which Slack events become turns (shared.slack.events, pure)."""

from __future__ import annotations

from typing import Any

import pytest

from shared.slack.events import read_message, strip_leading_mention

BOT = "U0KOURIER"


def envelope(**event: Any) -> dict[str, Any]:
    base = {
        "type": "app_mention",
        "user": "U0ALICE",
        "channel": "C1",
        "ts": "100.1",
        "text": f"<@{BOT}> hi",
    }
    return {
        "type": "event_callback",
        "team_id": "T1",
        "event_id": "Ev1",
        "event": {**base, **event},
    }


def test_a_mention_is_a_message_with_the_mention_removed() -> None:
    message = read_message(envelope(), BOT)
    assert message is not None
    assert (message.channel, message.ts, message.thread_ts, message.user) == (
        "C1",
        "100.1",
        "100.1",
        "U0ALICE",
    )
    assert message.text == "hi"
    assert message.mentions_bot
    assert message.message_key == "C1-100.1" and message.thread_key == "C1-100.1"


def test_a_reply_in_a_thread_belongs_to_the_thread() -> None:
    message = read_message(envelope(type="message", thread_ts="99.0", text="more"), BOT)
    assert message is not None
    assert message.thread_key == "C1-99.0"
    assert not message.mentions_bot


def test_the_message_twin_of_a_mention_has_the_same_identity() -> None:
    mention = read_message(envelope(), BOT)
    twin = read_message(envelope(type="message"), BOT)
    assert mention is not None and twin is not None
    assert twin.message_key == mention.message_key
    assert twin.mentions_bot


@pytest.mark.parametrize(
    "event",
    [
        {"user": BOT},
        {"bot_id": "B0OTHER"},
        {"subtype": "message_changed"},
        {"subtype": "message_deleted"},
        {"subtype": "bot_message"},
        {"type": "reaction_added"},
        {"user": None},
        {"ts": "not-a-ts"},
        {"thread_ts": "1e9"},
    ],
    ids=[
        "our own bot",
        "another bot",
        "an edit",
        "a deletion",
        "a bot message",
        "another event",
        "no user",
        "a ts that is not Slack's",
        "a thread_ts that is not Slack's",
    ],
)
def test_events_that_are_not_a_persons_message_are_ignored(event: dict[str, Any]) -> None:
    assert read_message(envelope(**event), BOT) is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f"<@{BOT}> hello", "hello"),
        (f"  <@{BOT}|kourier>: hello", "hello"),
        (f"hello <@{BOT}>", f"hello <@{BOT}>"),
        ("<@U0OTHER> hello", "<@U0OTHER> hello"),
    ],
)
def test_only_a_leading_mention_of_our_bot_is_removed(text: str, expected: str) -> None:
    assert strip_leading_mention(text, BOT) == expected
