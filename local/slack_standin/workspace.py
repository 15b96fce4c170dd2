"""The stand-in's Slack workspace: people, channels, messages, streams, modals.

Theory of operation: each Web API method and each control action is one
synchronous method here. A method either raises ``SlackError`` with the
error code Slack would answer, before it changes anything, or applies its
whole change; stream updates are applied to a copy of the message and
swapped in only once the copy is within Slack's limits. The server runs one
event loop and never awaits inside these methods, so no locks are needed.
Time is wall-clock epoch seconds. A stream expires lazily: it stays
"streaming" until a call or a read finds it older than the stream lifetime,
which then marks it "expired" for good, as Slack freezes such a message.
Message timestamps are unique and increasing across the workspace, so the
order of a channel's list is the order of its ``ts`` values.

Agent sessions (``AgentSession``, one per thread) follow Slack's agent
surface while the ``agent_sessions`` tunable is on: agents.sessions.setStatus
creates one (its title and initiator count only then) or sets its status;
chat.startStream creates one too (initiator: the thread root's author) and
sets it processing; chat.stopStream sets ``session_status`` (``active`` by
default); the legacy assistant.threads.setStatus maps to processing (a
status) or active (none). A session left processing for an hour drops to
active. The stop button shows while a session is processing and the app
subscribes to ``agent_session_stopped``; pressing it stops every stream of
the app in the thread (appends and stops then answer ``stopped_by_user``)
and leaves the status as it was, as Slack does. Where Slack's documentation
is silent the stand-in chooses, and says so at the method.
"""

from __future__ import annotations

import base64
import re
import secrets
import string
import time
from dataclasses import dataclass
from typing import Any

from local.slack_standin.models import (
    SESSION_STATUSES,
    AgentSession,
    Block,
    Ephemeral,
    FeedbackClick,
    Message,
    SessionStatus,
    StatusChange,
    TaskCard,
    ThreadStatus,
    TimelineItem,
    Tunables,
    User,
    View,
    interactive_elements,
)

TEAM_ID = "T0KOURIER"
TEAM_NAME = "Kourier Stand-in"
TEAM_DOMAIN = "kourier-standin"
APP_ID = "A0KOURIER"
BOT_ID = "B0KOURIER"
BOT_USER = User(id="U0KOURIER", real_name="Agent Kourier", display_name="kourier", is_bot=True)
# The deprecated verification token Slack still puts in every callback.
VERIFICATION_TOKEN = "standin-verification-token"

MAX_TEXT_CHARS = 40_000
MAX_MARKDOWN_CHARS = 12_000
MAX_BLOCKS = 50
MAX_LOADING_MESSAGES = 10
MAX_TITLE_CHARS = 200
MAX_CONTEXT_ACTIONS = 5
MISSING_STOP_SUBSCRIPTION = "missing_agent_session_stopped_event_subscription"
# Slack clears a thread's status after two minutes without a reply.
STATUS_LIFETIME_SECONDS = 120.0
TASK_STATUSES = ("pending", "in_progress", "complete", "error")

_MENTION = re.compile(r"(<@[UW][A-Z0-9]+>)")


class SlackError(Exception):
    """A Web API failure, answered as ``{"ok": false, "error": code}``."""

    def __init__(self, code: str) -> None:
        super().__init__(code)
        self.code = code


def new_id(prefix: str, length: int = 10) -> str:
    """A random Slack-style ID such as ``Ev0A1B2C3D4E``."""
    alphabet = string.ascii_uppercase + string.digits
    return prefix + "".join(secrets.choice(alphabet) for _ in range(length))


def channel_type(channel: str) -> str:
    """Slack's channel_type for a channel ID: channel, group or im."""
    return {"D": "im", "G": "group"}.get(channel[:1], "channel")


def rich_text_blocks(text: str) -> list[Block]:
    """The rich_text block Slack's client attaches to a typed message."""
    elements: list[dict[str, Any]] = []
    for part in _MENTION.split(text):
        if part.startswith("<@") and _MENTION.fullmatch(part):
            elements.append({"type": "user", "user_id": part[2:-1]})
        elif part:
            elements.append({"type": "text", "text": part})
    section = {"type": "rich_text_section", "elements": elements}
    return [{"type": "rich_text", "block_id": new_id("", 5), "elements": [section]}]


def wire_message(message: Message) -> dict[str, Any]:
    """A message as Slack's API shows it (``message`` in answers and payloads)."""
    wire: dict[str, Any] = {
        "type": "message",
        "ts": message.ts,
        "user": message.user,
        "text": message.text,
        "team": TEAM_ID,
    }
    if message.bot_id:
        wire |= {"bot_id": message.bot_id, "app_id": APP_ID}
    if message.blocks:
        wire["blocks"] = message.blocks
    if message.thread_ts:
        wire["thread_ts"] = message.thread_ts
    if message.metadata:
        wire["metadata"] = message.metadata
    if message.edited:
        wire["edited"] = {"user": message.user}
    return wire


@dataclass
class Trigger:
    """A trigger_id handed to the app with a click, good for one views.open."""

    user: str
    issued_at: float
    used: bool = False
    # The thread of the message clicked, where the click was in one.
    channel: str | None = None
    thread_ts: str | None = None


@dataclass
class ActionTarget:
    """Where an interactive element sits: the message, its thread and block."""

    channel: str
    message_ts: str
    thread_ts: str | None
    is_ephemeral: bool
    user: str
    block_id: str
    element: dict[str, Any]
    message: Message | None


class Workspace:
    """One Slack workspace with the bot installed."""

    def __init__(self, channels: list[str], people: list[User], tunables: Tunables) -> None:
        self.tunables = tunables
        self.users: dict[str, User] = {user.id: user for user in [BOT_USER, *people]}
        self.channels: dict[str, list[Message]] = {channel: [] for channel in channels}
        self.ephemerals: list[Ephemeral] = []
        self.views: dict[str, View] = {}
        self._statuses: dict[tuple[str, str], ThreadStatus] = {}
        self._sessions: dict[tuple[str, str], AgentSession] = {}
        self.feedback: list[FeedbackClick] = []
        self._triggers: dict[str, Trigger] = {}
        self._response_targets: dict[str, ActionTarget] = {}
        # What each person ticked in a message's checkboxes or multi-select:
        # (channel, message ts, action_id, user) -> option values.
        self.selections: dict[tuple[str, str, str, str], list[str]] = {}
        self._last_micros = 0

    # ----- Web API --------------------------------------------------------

    def user(self, user_id: str) -> User:
        """users.info."""
        if user_id not in self.users:
            raise SlackError("user_not_found")
        return self.users[user_id]

    def post_message(
        self,
        *,
        channel: str,
        text: str | None,
        markdown_text: str | None,
        blocks: Any,
        thread_ts: str | None,
        metadata: dict[str, Any] | None,
    ) -> Message:
        """chat.postMessage."""
        self._require_channel(channel)
        body = _message_text(text, markdown_text, blocks)
        message = Message(
            channel=channel,
            ts=self._next_ts(),
            thread_ts=thread_ts,
            user=BOT_USER.id,
            bot_id=BOT_ID,
            text=body,
            blocks=_checked_blocks(blocks),
            timeline=_text_timeline(body),
            metadata=metadata,
        )
        self._append(message)
        return message

    def update_message(
        self,
        *,
        channel: str,
        ts: str,
        text: str | None,
        markdown_text: str | None,
        blocks: Any,
        metadata: dict[str, Any] | None,
    ) -> Message:
        """chat.update: the fields given replace the old ones, the others stay.

        Except the blocks: text (or ``markdown_text``, which cannot go with
        blocks) given without blocks shows in their place, as Slack's
        chat.update documents ("If the text argument is provided and blocks
        are not provided, the blocks will be removed"). Text given with blocks
        is only the notification's fallback: a stopped stream's message then
        shows its task items and the new blocks, not its streamed text too.
        """
        message = self._bot_message(channel, ts, not_owned="cant_update_message")
        if message.stream == "streaming":
            raise SlackError("streaming_state_conflict")
        if text is None and markdown_text is None and blocks is None:
            raise SlackError("no_text")
        if markdown_text is not None and (text is not None or blocks is not None):
            raise SlackError("markdown_text_conflict")
        new_text = str(markdown_text) if markdown_text is not None else text
        limit = MAX_MARKDOWN_CHARS if markdown_text is not None else MAX_TEXT_CHARS
        if new_text is not None and len(new_text) > limit:
            raise SlackError("msg_too_long")
        new_blocks = None if blocks is None else _checked_blocks(blocks)
        if new_text is not None:
            message.text = new_text
            shown_text = _text_timeline(new_text) if new_blocks is None else []
            message.timeline = shown_text + [
                item for item in message.timeline if item.kind == "task"
            ]
        if new_blocks is not None:
            message.blocks = new_blocks
        elif new_text is not None:
            message.blocks = []
        if metadata is not None:
            message.metadata = metadata
        message.edited = True
        return message

    def post_ephemeral(
        self,
        *,
        channel: str,
        user: str,
        text: str | None,
        markdown_text: str | None,
        blocks: Any,
        thread_ts: str | None,
    ) -> Ephemeral:
        """chat.postEphemeral."""
        self._require_channel(channel)
        recipient = self.users.get(user)
        if recipient is None or recipient.is_bot:
            raise SlackError("user_not_in_channel")
        ephemeral = Ephemeral(
            channel=channel,
            user=user,
            ts=self._next_ts(),
            thread_ts=thread_ts,
            text=_message_text(text, markdown_text, blocks),
            blocks=_checked_blocks(blocks),
        )
        self.ephemerals.append(ephemeral)
        return ephemeral

    def start_stream(
        self,
        *,
        channel: str,
        thread_ts: str | None,
        markdown_text: str | None,
        chunks: list[Any] | None,
        recipient_user_id: str | None,
        recipient_team_id: str | None,
        task_display_mode: str | None,
    ) -> Message:
        """chat.startStream: a bot reply in a thread that stays open for appends."""
        self._require_channel(channel)
        if not thread_ts:
            raise SlackError("invalid_arguments")
        if channel_type(channel) != "im":
            if not recipient_user_id:
                raise SlackError("missing_recipient_user_id")
            if not recipient_team_id:
                raise SlackError("missing_recipient_team_id")
        if recipient_team_id is not None and recipient_team_id != TEAM_ID:
            raise SlackError("team_not_found")
        if recipient_user_id is not None and recipient_user_id not in self.users:
            raise SlackError("user_not_found")
        if task_display_mode not in (None, "timeline", "plan"):
            raise SlackError("invalid_arguments")
        started = Message(
            channel=channel,
            ts=self._next_ts(),
            thread_ts=thread_ts,
            user=BOT_USER.id,
            bot_id=BOT_ID,
            task_display_mode=task_display_mode,
            stream="streaming",
            stream_started_at=time.time(),
        )
        message = self._streamed(started, markdown_text, chunks, blocks=None)
        self._append(message)
        self._session_of_stream(channel, thread_ts, "processing", "chat.startStream")
        return message

    def append_stream(
        self, *, channel: str, ts: str, markdown_text: str | None, chunks: list[Any] | None
    ) -> Message:
        """chat.appendStream."""
        message = self._streaming_message(channel, ts)
        if not markdown_text and not chunks:
            raise SlackError("no_text")
        updated = self._streamed(message, markdown_text, chunks, blocks=None)
        self._replace(updated)
        return updated

    def stop_stream(
        self,
        *,
        channel: str,
        ts: str,
        markdown_text: str | None,
        chunks: list[Any] | None,
        blocks: Any,
        metadata: dict[str, Any] | None,
        session_status: str | None,
    ) -> Message:
        """chat.stopStream: the last content; the message is final after it.

        The thread's agent session takes ``session_status`` (default ``active``).
        """
        message = self._streaming_message(channel, ts)
        new_status = session_status_of(session_status or "active")
        updated = self._streamed(message, markdown_text, chunks, blocks)
        updated.stream = "stopped"
        if metadata is not None:
            updated.metadata = metadata
        _leave_unfinished(updated)
        self._replace(updated)
        if updated.thread_ts is not None:
            self._session_of_stream(channel, updated.thread_ts, new_status, "chat.stopStream")
        return updated

    def set_status(
        self, *, channel: str, thread_ts: str, status: str, loading_messages: list[Any] | None
    ) -> None:
        """assistant.threads.setStatus; an empty status clears it."""
        self._require_channel(channel)
        if self._find(channel, thread_ts) is None:
            raise SlackError("invalid_thread_ts")
        if loading_messages is not None and len(loading_messages) > MAX_LOADING_MESSAGES:
            raise SlackError("invalid_arguments")
        self._legacy_status(channel, thread_ts, "processing" if status else "active")
        if status:
            self._statuses[(channel, thread_ts)] = ThreadStatus(
                status=status,
                loading_messages=[str(line) for line in loading_messages or []],
                set_at=time.time(),
            )
        else:
            self._statuses.pop((channel, thread_ts), None)

    def set_agent_status(
        self,
        *,
        channel: str,
        thread_ts: str | None,
        status: str | None,
        title: str | None,
        initiator_user_id: str | None,
    ) -> tuple[AgentSession, list[str]]:
        """agents.sessions.setStatus: create the thread's session, or set its status.

        The title and the initiator count only when the call creates the
        session. Returns the session and the answer's warnings. Slack's page
        lists ``invalid_status``, but a status outside the enum (free text,
        or empty) is observed to answer ``invalid_arguments``, so the
        stand-in answers that. A ``thread_ts`` that names no message answers
        ``invalid_thread_ts`` (the stand-in's choice, as for
        assistant.threads.setStatus).
        """
        self._require_agent_sessions()
        new_status = session_status_of(status)
        self._require_channel(channel)
        if not thread_ts:
            raise SlackError("thread_ts_required")
        if self._find(channel, thread_ts) is None:
            raise SlackError("invalid_thread_ts")
        if title is not None and not 1 <= len(title) <= MAX_TITLE_CHARS:
            raise SlackError("invalid_arguments")
        if initiator_user_id is not None and initiator_user_id not in self.users:
            raise SlackError("user_not_found")
        session = self._sessions.get((channel, thread_ts))
        if session is None:
            session = AgentSession(
                channel=channel,
                thread_ts=thread_ts,
                status=new_status,
                title=title,
                initiator_user_id=initiator_user_id,
            )
            self._sessions[(channel, thread_ts)] = session
        _change_status(session, new_status, "agents.sessions.setStatus")
        warnings = [] if self.tunables.stop_event_subscribed else [MISSING_STOP_SUBSCRIPTION]
        return self._shown(session), warnings

    def rename_agent_session(
        self, *, channel: str, thread_ts: str | None, title: str | None
    ) -> AgentSession:
        """agents.sessions.rename: a new title (1 to 200 characters) for an existing session."""
        self._require_agent_sessions()
        self._require_channel(channel)
        if not thread_ts:
            raise SlackError("thread_ts_required")
        if title is None or not 1 <= len(title) <= MAX_TITLE_CHARS:
            raise SlackError("invalid_arguments")
        session = self._sessions.get((channel, thread_ts))
        if session is None:
            raise SlackError("session_not_found")
        session.title = title
        return self._shown(session)

    def open_view(self, *, trigger_id: str, view: Any) -> View:
        """views.open with a trigger_id from a click."""
        trigger = self._triggers.get(trigger_id)
        if trigger is None:
            raise SlackError("invalid_trigger_id")
        if trigger.used:
            raise SlackError("exchanged_trigger_id")
        if time.time() - trigger.issued_at > self.tunables.trigger_lifetime_seconds:
            raise SlackError("expired_trigger_id")
        if (
            not isinstance(view, dict)
            or view.get("type") != "modal"
            or "title" not in view
            or not isinstance(view.get("blocks"), list)
        ):
            raise SlackError("invalid_arguments")
        blocks = _checked_blocks(view["blocks"])
        trigger.used = True
        view_id = new_id("V")
        full = {
            "private_metadata": "",
            "callback_id": "",
            "external_id": "",
            "clear_on_close": False,
            "notify_on_close": False,
            **view,
            "id": view_id,
            "team_id": TEAM_ID,
            "blocks": blocks,
            "state": {"values": {}},
            "hash": f"{int(time.time())}.{secrets.token_hex(4)}",
            "root_view_id": view_id,
            "previous_view_id": None,
            "app_id": APP_ID,
            "app_installed_team_id": TEAM_ID,
            "bot_id": BOT_ID,
        }
        self.views[view_id] = View(id=view_id, user=trigger.user, view=full)
        return self.views[view_id]

    # ----- what people do (control API) -----------------------------------

    def user_said(self, *, channel: str, user: str, text: str, thread_ts: str | None) -> Message:
        """A person writes a message; a channel new to the workspace is created.

        Raises:
            LookupError: No such person, or no such thread in the channel.
        """
        if user not in self.users or self.users[user].is_bot:
            raise LookupError(f"no person {user} in the workspace")
        if thread_ts is not None:
            parent = self._find(channel, thread_ts)
            if parent is None or parent.thread_ts not in (None, parent.ts):
                raise LookupError(f"no thread {thread_ts} in channel {channel}")
        self.channels.setdefault(channel, [])
        message = Message(
            channel=channel,
            ts=self._next_ts(),
            thread_ts=thread_ts,
            user=user,
            text=text,
            blocks=rich_text_blocks(text),
            timeline=_text_timeline(text),
        )
        self._append(message)
        return message

    def put_user(self, user: User) -> None:
        """Adds a person or replaces one with the same ID."""
        self.users[user.id] = user

    def thread(self, channel: str, ts: str) -> list[Message]:
        """A thread's parent and replies, oldest first."""
        return [
            self._settle(message)
            for message in self.channels.get(channel, [])
            if message.ts == ts or message.thread_ts == ts
        ]

    def replies(
        self, *, channel: str, ts: str, cursor: str | None, limit: int, oldest: str | None
    ) -> tuple[list[Message], str]:
        """conversations.replies: a page of a thread (its parent first) and the next cursor.

        As Slack: ``ts`` must be an existing message (a message with no
        replies is a thread of one); ``oldest`` keeps the replies after it;
        the cursor is opaque ("" on the last page).
        """
        self._require_channel(channel)
        parent = self._find(channel, ts)
        if parent is None:
            raise SlackError("thread_not_found")
        root = parent.thread_ts or parent.ts
        replies = [m for m in self.thread(channel, root) if m.ts != root]
        if oldest:
            replies = [m for m in replies if float(m.ts) > float(oldest)]
        start = 0
        if cursor:
            try:
                start = int(base64.b64decode(cursor).decode().removeprefix("offset:"))
            except ValueError:
                raise SlackError("invalid_cursor") from None
        if not 0 <= start <= len(replies):
            raise SlackError("invalid_cursor")
        size = max(1, min(limit, 1000))
        rest = start + size
        after = base64.b64encode(f"offset:{rest}".encode()).decode() if rest < len(replies) else ""
        return [self._settle(self._find(channel, root) or parent), *replies[start:rest]], after

    def history(self, channel: str) -> list[Message]:
        """A channel's top-level messages, oldest first."""
        return [
            self._settle(message)
            for message in self.channels.get(channel, [])
            if message.thread_ts in (None, message.ts)
        ]

    def status(self, channel: str, thread_ts: str) -> ThreadStatus | None:
        """A thread's status line, unless cleared or older than two minutes."""
        status = self._statuses.get((channel, thread_ts))
        if status is None or time.time() - status.set_at > STATUS_LIFETIME_SECONDS:
            return None
        return status

    def agent_session(self, channel: str, thread_ts: str) -> AgentSession | None:
        """A thread's agent session as people see it now, if it has one."""
        session = self._sessions.get((channel, thread_ts))
        return None if session is None else self._shown(session)

    def press_stop(self, *, channel: str, thread_ts: str, user: str) -> list[str]:
        """A person presses the stop button: every stream of the app in the thread stops.

        Returns the ts of the streams stopped (``streaming_message_ts``). The
        session's status stays as it was: moving it is the app's job.

        Raises:
            LookupError: No such person, or no agent session in the thread.
            ValueError: The session shows no stop button now.
        """
        if user not in self.users or self.users[user].is_bot:
            raise LookupError(f"no person {user} in the workspace")
        session = self.agent_session(channel, thread_ts)
        if session is None:
            raise LookupError(f"no agent session in thread {thread_ts} of channel {channel}")
        if not session.stop_button:
            why = (
                f"it is {session.status}"
                if self.tunables.stop_event_subscribed
                else "the app does not subscribe to agent_session_stopped"
            )
            raise ValueError(f"the session shows no stop button: {why}")
        stopped = []
        for message in self.thread(channel, thread_ts):
            if message.is_bot and message.stream == "streaming":
                message.stream, message.stopped_by = "stopped", user
                _leave_unfinished(message)
                stopped.append(message.ts)
        return stopped

    def record_feedback(self, target: ActionTarget, user: str, action: dict[str, Any]) -> None:
        """Keep a click on a feedback button, as the app is told of it."""
        self.feedback.append(
            FeedbackClick(
                channel=target.channel,
                message_ts=target.message_ts,
                thread_ts=target.thread_ts,
                user=user,
                action_id=str(action["action_id"]),
                positive=action["value"] == target.element["positive_button"]["value"],
                value=str(action["value"]),
                at=time.time(),
            )
        )

    def find_action(
        self, *, channel: str, message_ts: str, action_id: str, block_id: str | None
    ) -> ActionTarget:
        """The interactive element a person acts on, in a message or ephemeral.

        Raises:
            LookupError: No such message, or no such element in it.
        """
        message = self._find(channel, message_ts)
        ephemeral = next(
            (e for e in self.ephemerals if e.channel == channel and e.ts == message_ts), None
        )
        if message is None and ephemeral is None:
            raise LookupError(f"no message {message_ts} in channel {channel}")
        source = message or ephemeral
        assert source is not None
        for found_block_id, element in interactive_elements(source.blocks):
            if element["action_id"] == action_id and block_id in (None, found_block_id):
                return ActionTarget(
                    channel=channel,
                    message_ts=message_ts,
                    thread_ts=source.thread_ts,
                    is_ephemeral=message is None,
                    user=source.user,
                    block_id=found_block_id,
                    element=element,
                    message=message,
                )
        raise LookupError(f"no element with action_id {action_id} in message {message_ts}")

    def issue_trigger(self, user: str, target: ActionTarget | None = None) -> str:
        """A new trigger_id for one views.open on behalf of ``user``, after a click on ``target``."""
        trigger_id = f"{int(time.time())}.{secrets.randbelow(10**12):012d}.{secrets.token_hex(16)}"
        self._triggers[trigger_id] = Trigger(
            user=user,
            issued_at=time.time(),
            channel=None if target is None else target.channel,
            thread_ts=None if target is None else target.thread_ts or target.message_ts,
        )
        return trigger_id

    def select(self, target: ActionTarget, user: str, values: list[str]) -> None:
        """Remembers what ``user`` ticked in a multi-choice element, as their client shows it."""
        key = (target.channel, target.message_ts, str(target.element["action_id"]), user)
        self.selections[key] = list(values)

    def call_thread(
        self, params: dict[str, Any], answer: dict[str, Any]
    ) -> tuple[str | None, str | None]:
        """The channel and thread (root ts) a Web API call was about, as far as it names them.

        A call names a thread by ``thread_ts``, by the ``ts`` of a message in
        it, by the new message it posted, or (views.open) by the click whose
        trigger_id it used.
        """
        trigger = self._triggers.get(str(params.get("trigger_id", "")))
        if trigger is not None:
            return trigger.channel, trigger.thread_ts
        channel = params.get("channel") or params.get("channel_id") or answer.get("channel")
        if not isinstance(channel, str) or not channel:
            return None, None
        if isinstance(params.get("thread_ts"), str) and params["thread_ts"]:
            return channel, params["thread_ts"]
        ts = params.get("ts") or answer.get("ts")
        message = self._find(channel, ts) if isinstance(ts, str) else None
        if message is None:
            return channel, None
        return channel, message.thread_ts or message.ts

    def issue_response_token(self, target: ActionTarget, user: str) -> str:
        """A token for the response_url of a click by ``user`` on ``target``."""
        token = secrets.token_urlsafe(16)
        self._response_targets[token] = ActionTarget(**{**target.__dict__, "user": user})
        return token

    def respond(self, token: str, body: dict[str, Any]) -> None:
        """A post to a response_url: replace, delete, or answer the click.

        Raises:
            LookupError: The token was never issued.
            SlackError: The message in the body is not valid.
        """
        target = self._response_targets.get(token)
        if target is None:
            raise LookupError("unknown response_url")
        if body.get("delete_original"):
            self._delete(target)
            return
        text = body.get("text")
        blocks = body.get("blocks")
        if body.get("replace_original"):
            self._replace_original(target, _message_text(text, None, blocks), blocks)
        elif body.get("response_type") == "in_channel":
            self.post_message(
                channel=target.channel,
                text=text,
                markdown_text=None,
                blocks=blocks,
                thread_ts=body.get("thread_ts"),
                metadata=None,
            )
        else:
            self.post_ephemeral(
                channel=target.channel,
                user=target.user,
                text=text,
                markdown_text=None,
                blocks=blocks,
                thread_ts=target.thread_ts,
            )

    def close_view(self, view_id: str) -> None:
        """The modal closes (submitted, cleared or dismissed)."""
        self.views[view_id].open = False

    # ----- internals ------------------------------------------------------

    def _require_agent_sessions(self) -> None:
        if not self.tunables.agent_sessions:
            raise SlackError("feature_disabled")

    def _shown(self, session: AgentSession) -> AgentSession:
        """A copy of the session as people see it now: lapsed if need be, and its stop button."""
        last = session.changes[-1].at if session.changes else 0.0
        lifetime = self.tunables.processing_lifetime_seconds
        if session.status == "processing" and time.time() - last > lifetime:
            _change_status(session, "active", "slack")
        stop_button = session.status == "processing" and self.tunables.stop_event_subscribed
        return session.model_copy(deep=True, update={"stop_button": stop_button})

    def _session_of_stream(
        self, channel: str, thread_ts: str, status: SessionStatus, via: str
    ) -> None:
        """A stream starts or stops: it creates the thread's session, or sets its status."""
        if not self.tunables.agent_sessions:
            return
        session = self._sessions.get((channel, thread_ts))
        if session is None:
            root = self._find(channel, thread_ts)
            session = AgentSession(
                channel=channel,
                thread_ts=thread_ts,
                status=status,
                initiator_user_id=root.user if root is not None else None,
            )
            self._sessions[(channel, thread_ts)] = session
        _change_status(session, status, via)

    def _legacy_status(self, channel: str, thread_ts: str, status: SessionStatus) -> None:
        """assistant.threads.setStatus in an agent workspace: a status is processing, none active."""
        if self.tunables.agent_sessions and (
            status == "processing" or (channel, thread_ts) in self._sessions
        ):
            self._session_of_stream(channel, thread_ts, status, "assistant.threads.setStatus")

    def _next_ts(self) -> str:
        micros = max(int(time.time() * 1_000_000), self._last_micros + 1)
        self._last_micros = micros
        return f"{micros // 1_000_000}.{micros % 1_000_000:06d}"

    def _require_channel(self, channel: str) -> None:
        if channel not in self.channels:
            raise SlackError("channel_not_found")

    def _find(self, channel: str, ts: str) -> Message | None:
        return next((m for m in self.channels.get(channel, []) if m.ts == ts), None)

    def _append(self, message: Message) -> None:
        self.channels[message.channel].append(message)
        if message.thread_ts is None:
            return
        parent = self._find(message.channel, message.thread_ts)
        if parent is not None and parent.thread_ts is None:
            parent.thread_ts = parent.ts
        if message.is_bot:
            # Slack clears the status line when the app replies.
            self._statuses.pop((message.channel, message.thread_ts), None)

    def _replace(self, updated: Message) -> None:
        messages = self.channels[updated.channel]
        index = next(i for i, m in enumerate(messages) if m.ts == updated.ts)
        messages[index] = updated

    def _settle(self, message: Message) -> Message:
        started = message.stream_started_at or 0.0
        lifetime = self.tunables.stream_lifetime_seconds
        if message.stream == "streaming" and time.time() - started > lifetime:
            message.stream = "expired"
        return message

    def _bot_message(self, channel: str, ts: str, *, not_owned: str) -> Message:
        self._require_channel(channel)
        message = self._find(channel, ts)
        if message is None:
            raise SlackError("message_not_found")
        if message.user != BOT_USER.id:
            raise SlackError(not_owned)
        return self._settle(message)

    def _streaming_message(self, channel: str, ts: str) -> Message:
        message = self._bot_message(channel, ts, not_owned="message_not_owned_by_app")
        if message.stopped_by is not None:
            # Documented for chat.appendStream; undocumented for chat.stopStream,
            # where the stand-in answers the same.
            raise SlackError("stopped_by_user")
        if message.stream != "streaming":
            raise SlackError("message_not_in_streaming_state")
        return message

    def _streamed(
        self,
        message: Message,
        markdown_text: str | None,
        chunks: list[Any] | None,
        blocks: Any,
    ) -> Message:
        """A copy of a streaming message with new content, checked against limits."""
        updated = message.model_copy(deep=True)
        if markdown_text:
            _add_markdown(updated, markdown_text)
        if chunks is not None and not isinstance(chunks, list):
            raise SlackError("invalid_chunks")
        for chunk in chunks or []:
            _apply_chunk(updated, chunk)
        if blocks is not None:
            updated.blocks += _checked_blocks(blocks)
        if len(updated.text) > self.tunables.stream_max_chars:
            raise SlackError("msg_too_long")
        if len(updated.blocks) > MAX_BLOCKS:
            raise SlackError("msg_blocks_too_many")
        return updated

    def _delete(self, target: ActionTarget) -> None:
        if target.is_ephemeral:
            self.ephemerals = [e for e in self.ephemerals if e.ts != target.message_ts]
        else:
            messages = self.channels[target.channel]
            self.channels[target.channel] = [m for m in messages if m.ts != target.message_ts]

    def _replace_original(self, target: ActionTarget, text: str, blocks: Any) -> None:
        new_blocks = _checked_blocks(blocks)
        if target.is_ephemeral:
            for ephemeral in self.ephemerals:
                if ephemeral.ts == target.message_ts:
                    ephemeral.text, ephemeral.blocks = text, new_blocks
            return
        message = self._find(target.channel, target.message_ts)
        if message is not None:
            message.text, message.blocks = text, new_blocks
            message.timeline = _text_timeline(text)
            message.edited = True


def _message_text(text: Any, markdown_text: Any, blocks: Any) -> str:
    """The text of a posted message, checked as chat.postMessage checks it."""
    if markdown_text is not None:
        if text is not None or blocks is not None:
            raise SlackError("markdown_text_conflict")
        if len(str(markdown_text)) > MAX_MARKDOWN_CHARS:
            raise SlackError("msg_too_long")
        return str(markdown_text)
    if not text and not blocks:
        raise SlackError("no_text")
    if len(str(text or "")) > MAX_TEXT_CHARS:
        raise SlackError("msg_too_long")
    return str(text or "")


def _checked_blocks(blocks: Any) -> list[Block]:
    """Blocks as Slack stores them: validated, each with a block_id."""
    if blocks is None:
        return []
    if not isinstance(blocks, list) or not all(
        isinstance(block, dict) and isinstance(block.get("type"), str) for block in blocks
    ):
        raise SlackError("invalid_blocks")
    if len(blocks) > MAX_BLOCKS:
        raise SlackError("invalid_blocks")
    for block in blocks:
        if block["type"] == "context_actions":
            _check_context_actions(block)
    return [{**block, "block_id": block.get("block_id") or new_id("", 5)} for block in blocks]


def session_status_of(value: str | None) -> SessionStatus:
    """A session status argument, or ``invalid_arguments``."""
    for status in SESSION_STATUSES:
        if value == status:
            return status
    raise SlackError("invalid_arguments")


def _check_context_actions(block: Block) -> None:
    """A context_actions block: 1 to 5 feedback_buttons or icon_button elements."""
    elements = block.get("elements")
    if not isinstance(elements, list) or not 1 <= len(elements) <= MAX_CONTEXT_ACTIONS:
        raise SlackError("invalid_blocks")
    for element in elements:
        kind = element.get("type") if isinstance(element, dict) else None
        if kind not in ("feedback_buttons", "icon_button") or not element.get("action_id"):
            raise SlackError("invalid_blocks")
        buttons = [element.get(key) for key in ("positive_button", "negative_button")]
        if kind == "feedback_buttons" and not all(
            isinstance(button, dict) and _text_of(button.get("text")) and button.get("value")
            for button in buttons
        ):
            raise SlackError("invalid_blocks")


def _text_of(obj: Any) -> str:
    return str(obj.get("text", "")) if isinstance(obj, dict) else ""


def _change_status(session: AgentSession, status: SessionStatus, via: str) -> None:
    session.status = status
    session.changes.append(StatusChange(status=status, via=via, at=time.time()))


def _leave_unfinished(message: Message) -> None:
    """A stream stopped: Slack shows a step still pending or running as failed."""
    for card in message.tasks:
        card.left_unfinished = card.status in ("pending", "in_progress")


def _text_timeline(text: str) -> list[TimelineItem]:
    return [TimelineItem(kind="text", text=text)] if text else []


def _add_markdown(message: Message, text: Any) -> None:
    if not isinstance(text, str):
        raise SlackError("invalid_chunks")
    if len(text) > MAX_MARKDOWN_CHARS:
        raise SlackError("msg_too_long")
    message.text += text
    if message.timeline and message.timeline[-1].kind == "text":
        message.timeline[-1].text += text
    elif text:
        message.timeline.append(TimelineItem(kind="text", text=text))


def _apply_chunk(message: Message, chunk: Any) -> None:
    """One streaming chunk: markdown_text, task_update, plan_update or blocks."""
    kind = chunk.get("type") if isinstance(chunk, dict) else None
    if kind == "markdown_text":
        _add_markdown(message, chunk.get("text"))
    elif kind == "task_update":
        _update_task(message, chunk)
    elif kind == "plan_update" and isinstance(chunk.get("title"), str):
        message.plan_title = chunk["title"]
    elif kind == "blocks":
        message.blocks += _checked_blocks(chunk.get("blocks"))
    else:
        raise SlackError("invalid_chunks")


def _update_task(message: Message, chunk: dict[str, Any]) -> None:
    """A task_update: the card with its id takes the fields given, or is added."""
    task_id, title, status = chunk.get("id"), chunk.get("title"), chunk.get("status")
    if not isinstance(task_id, str) or not task_id or not isinstance(title, str):
        raise SlackError("invalid_chunks")
    if status not in TASK_STATUSES:
        raise SlackError("invalid_chunks")
    fields = {
        key: chunk[key]
        for key in ("title", "status", "details", "output", "sources")
        if chunk.get(key) is not None
    }
    card = message.task(task_id)
    if card is None:
        message.tasks.append(TaskCard.model_validate({"id": task_id, **fields}))
        message.timeline.append(TimelineItem(kind="task", task_id=task_id))
    else:
        index = message.tasks.index(card)
        message.tasks[index] = card.model_copy(update=fields)
