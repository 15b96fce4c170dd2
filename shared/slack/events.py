"""Which Slack events become turns.

Theory of operation: Slack delivers one @mention twice (as ``app_mention``
and as ``message``, under two event IDs) and re-sends an event it thinks was
not acknowledged (same event ID). The ingress therefore de-duplicates twice:
on the event ID, and on the chat message itself (channel and ts), which is
also the turn's identity. This module only decides, from one event, whether
it is a person's message that Kourier should carry, and extracts it; the
ingress does the de-duplication against Firestore.

A message counts when it mentions our bot, or when it is a plain reply in a
thread where Kourier already holds a session (a follow-up without a fresh
mention). Edits, deletions, bot messages (ours included) and every other
subtype are ignored, as are channels with no binding.

A click on the stop button of the thread's agent session arrives as
``agent_session_stopped`` (``read_stop``): who pressed it, in which thread,
when, and which of the app's streams Slack stopped for it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

MESSAGE_EVENT_TYPES = ("app_mention", "message")
STOP_EVENT_TYPE = "agent_session_stopped"
HANDLED_EVENT_TYPES = (*MESSAGE_EVENT_TYPES, STOP_EVENT_TYPE)
"""Event types chat_ingress acts on; the Slack app manifest subscribes to these."""

_HANDLED_SUBTYPES = (None, "file_share", "thread_broadcast")
_TS = re.compile(r"^\d{1,12}\.\d{1,9}$")


@dataclass(frozen=True)
class ChatMessage:
    """A person's message in a bound channel."""

    team: str
    channel: str
    ts: str
    thread_ts: str
    user: str
    text: str
    mentions_bot: bool

    @property
    def message_key(self) -> str:
        """Identity of the chat message (and of its turn): channel and ts."""
        return f"{self.channel}-{self.ts}"

    @property
    def thread_key(self) -> str:
        """Identity of the thread it belongs to."""
        return f"{self.channel}-{self.thread_ts}"


def read_message(envelope: dict[str, Any], bot_user_id: str) -> ChatMessage | None:
    """The person's message carried by an ``event_callback``, or None to ignore it."""
    event = envelope.get("event")
    if not isinstance(event, dict) or event.get("type") not in MESSAGE_EVENT_TYPES:
        return None
    if event.get("subtype") not in _HANDLED_SUBTYPES or event.get("bot_id"):
        return None
    user, channel, ts = event.get("user"), event.get("channel"), event.get("ts")
    if not (isinstance(user, str) and isinstance(channel, str) and isinstance(ts, str)):
        return None
    thread_ts = event.get("thread_ts") or ts
    if user == bot_user_id or not (
        _TS.match(ts) and isinstance(thread_ts, str) and _TS.match(thread_ts)
    ):
        return None  # a ts is Slack's "seconds.micros"; anything else cannot be ordered
    raw_text = event.get("text")
    text = raw_text if isinstance(raw_text, str) else ""
    mention = f"<@{bot_user_id}>"
    return ChatMessage(
        team=str(envelope.get("team_id") or event.get("team") or ""),
        channel=channel,
        ts=ts,
        thread_ts=thread_ts,
        user=user,
        text=strip_leading_mention(text, bot_user_id),
        mentions_bot=event["type"] == "app_mention" or mention in text,
    )


def strip_leading_mention(text: str, bot_user_id: str) -> str:
    """The text with a leading ``<@BOT>`` (and the space after it) removed."""
    return re.sub(rf"^\s*<@{re.escape(bot_user_id)}(\|[^>]*)?>[\s:,]*", "", text)


@dataclass(frozen=True)
class StopPress:
    """A person pressed the stop button of a thread's agent session."""

    channel: str
    thread_ts: str
    user: str
    pressed_at: datetime
    streams: list[str]
    """The app's streamed messages Slack stopped for the click (``streaming_message_ts``)."""


def read_stop(envelope: dict[str, Any]) -> StopPress | None:
    """The stop button press carried by an ``event_callback``, or None when it is none."""
    event = envelope.get("event")
    if not isinstance(event, dict) or event.get("type") != STOP_EVENT_TYPE:
        return None
    channel, thread_ts, user = event.get("channel"), event.get("thread_ts"), event.get("user")
    if not (isinstance(channel, str) and isinstance(thread_ts, str) and isinstance(user, str)):
        return None
    try:
        pressed_at = datetime.fromtimestamp(float(event.get("event_ts") or ""), UTC)
    except ValueError:
        return None
    streams = event.get("streaming_message_ts")
    listed = [ts for ts in streams if isinstance(ts, str)] if isinstance(streams, list) else []
    return StopPress(channel, thread_ts, user, pressed_at, listed)
