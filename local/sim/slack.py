"""Slack in memory: the Web API subset Kourier calls, with Slack's errors and limits.

Theory of operation. ``SimSlack`` holds the workspace (messages by channel,
streams, ephemerals, thread statuses, trigger ids); ``SimChat`` is the
``Chat`` port over it, with slack_sdk's method names and keywords. Each call
is a scheduling point. The rules follow the stand-in's ``Workspace``
(``local/slack_standin/workspace.py``), which follows Slack: a method either
fails with Slack's error code before it changes anything, or applies its
whole change; a stream stays open for appends for five minutes and is then
frozen; ``chat.update`` of a message still streaming is refused;
``markdown_text`` cannot go with ``text`` or ``blocks``; 12,000 characters of
Markdown at most; an update that gives text (or ``markdown_text``) and no
blocks removes the message's blocks, and one that gives blocks alone keeps
its text. Message ts values are unique and increasing virtual
microseconds.

Faults are Slack's: HTTP 429 with Retry-After, which slack_sdk's
``RateLimitErrorRetryHandler`` retries up to five times after waiting, so the
fake waits (virtual time) and retries the same way before it gives up with
``ratelimited``, checking the fence again before each retry as Kourier's
handler does (``shared.slack.retry``); 5xx; a stream refused (the reply falls back to posted
messages); a stream cut early; ``msg_too_long`` below the limit.

Every message keeps who wrote it and, for the oracle, the turn the thread's
session was carrying when it was written.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from slack_sdk.errors import SlackApiError

from local.sim.world import SECOND, Killed, World, us
from shared.slack.retry import before_retry

BOT_USER = "U0KOURIER"
TEAM = "T0KOURIER"
MAX_MARKDOWN = 12_000
MAX_TEXT = 40_000
MAX_BLOCKS = 50
STREAM_LIFETIME_US = 300 * SECOND
STREAM_MAX_CHARS = 40_000
TRIGGER_LIFETIME_US = 3 * SECOND
SLACK_FAULTS = (
    ("crash_before", 0.003),
    ("ratelimited", 0.02),
    ("server_error", 0.003),
    ("crash_after", 0.005),
)
"""Faults of one Web API call: the instance dies before it; HTTP 429 (slack_sdk waits out
Retry-After and tries again, five times); HTTP 5xx; it applies and the instance dies."""


class SlackAnswer(dict[str, Any]):
    """What a Web API method returns (indexable, like slack_sdk's SlackResponse)."""

    status_code = 200

    @property
    def data(self) -> dict[str, Any]:
        return self


class _ErrorBody(dict[str, Any]):
    def __init__(self, code: str, status: int, headers: dict[str, str] | None = None) -> None:
        super().__init__(ok=False, error=code)
        self.status_code = status
        self.headers = headers or {}

    @property
    def data(self) -> dict[str, Any]:
        return self


class SlackError(Exception):
    """Slack's answer ``ok: false`` with this code (raised before anything changed)."""

    def __init__(self, code: str, status: int = 200) -> None:
        super().__init__(code)
        self.code = code
        self.status = status


@dataclass
class Card:
    """A step card of a streamed message (a task_update by id)."""

    id: str
    title: str
    status: str
    details: str | None = None
    output: str | None = None


@dataclass
class SlackMessage:
    """One message in a channel."""

    channel: str
    ts: str
    thread_ts: str | None
    user: str
    text: str = ""
    blocks: list[dict[str, Any]] = field(default_factory=list)
    stream: str = ""
    """"" (never streamed), "streaming", "stopped" or "expired"."""
    started_us: int = 0
    cards: dict[str, Card] = field(default_factory=dict)
    edited: bool = False
    by: str = ""
    """The invocation that wrote it."""
    turn: str | None = None
    """The turn the thread's session carried when it was posted."""
    updates: int = 0
    stopped_by: str | None = None
    """The person whose click on the stop button stopped it (it then answers stopped_by_user)."""
    metadata: dict[str, Any] | None = None
    """Its message metadata (``event_type``, ``event_payload``), as posted."""
    steps_shown: list[tuple[int, str, str, str | None]] = field(default_factory=list)
    """Each step card it showed after each call that wrote it: (time, id, status, output)."""


@dataclass
class Ephemeral:
    """A message only one person sees."""

    channel: str
    user: str
    text: str
    thread_ts: str | None
    at_us: int


class SimSlack:
    """The workspace: what Slack keeps, and what the oracle reads."""

    def __init__(self, world: World, channels: list[str], users: dict[str, dict[str, Any]]) -> None:
        self.world = world
        self.channels: dict[str, list[SlackMessage]] = {channel: [] for channel in channels}
        self.by_ts: dict[tuple[str, str], SlackMessage] = {}
        self.users = users
        self.ephemerals: list[Ephemeral] = []
        self.statuses: dict[tuple[str, str], tuple[str, int]] = {}
        self.sessions: dict[tuple[str, str], tuple[str, int]] = {}
        """Each thread's agent session: its status, and when it was set."""
        self.triggers: dict[str, tuple[str, int, bool]] = {}
        self.calls: list[tuple[int, str, str, dict[str, Any]]] = []
        """(time, invocation, method, arguments) of every call that applied."""
        self._last_us = 0
        self.on_prompt: Callable[[SlackMessage], None] = lambda message: None
        """Told of every bot message with buttons (people may act on it)."""
        self.active_turn: Callable[[str, str], str | None] = lambda channel, thread: None
        """The turn a thread's session carries now (set by the world, read for tagging)."""

    def next_ts(self) -> str:
        micros = max(self.world.now_us + 1_700_000_000 * SECOND, self._last_us + 1)
        self._last_us = micros
        return f"{micros // SECOND}.{micros % SECOND:06d}"

    def user_says(self, channel: str, user: str, text: str, thread_ts: str | None) -> SlackMessage:
        """A person writes (no scheduling point: the world calls this)."""
        message = SlackMessage(channel, self.next_ts(), thread_ts, user, text=text)
        self._append(message)
        return message

    def thread(self, channel: str, thread_ts: str) -> list[SlackMessage]:
        """A thread's parent and replies, oldest first."""
        return [
            m
            for m in self.channels.get(channel, [])
            if m.ts == thread_ts or m.thread_ts == thread_ts
        ]

    def message(self, channel: str, ts: str) -> SlackMessage | None:
        return self.by_ts.get((channel, ts))

    def _append(self, message: SlackMessage) -> None:
        self.channels.setdefault(message.channel, []).append(message)
        self.by_ts[(message.channel, message.ts)] = message
        if message.user == BOT_USER and message.thread_ts:
            self.statuses.pop((message.channel, message.thread_ts), None)

    def settle(self, message: SlackMessage) -> SlackMessage:
        if (
            message.stream == "streaming"
            and self.world.now_us - message.started_us > STREAM_LIFETIME_US
        ):
            message.stream = "expired"
        return message

    # The methods (applied atomically; raise SlackError before changing anything) --------

    def post_message(
        self,
        channel: str,
        text: Any,
        blocks: Any,
        thread_ts: Any,
        markdown_text: Any,
        metadata: Any = None,
    ) -> SlackMessage:
        self._channel(channel)
        body = _message_text(text, markdown_text, blocks)
        message = SlackMessage(
            channel,
            self.next_ts(),
            thread_ts,
            BOT_USER,
            text=body,
            blocks=_blocks(blocks),
            metadata=_metadata(metadata),
        )
        self._tag(message)
        self._append(message)
        if any(block.get("type") == "actions" for block in message.blocks):
            self.on_prompt(message)
        return message

    def replies(
        self, channel: str, ts: str, cursor: Any, metadata: bool, limit: Any, oldest: Any
    ) -> dict[str, Any]:
        """conversations.replies: a page of a thread, oldest first (the parent always first)."""
        self._channel(channel)
        thread = self.thread(channel, ts)
        if not thread or thread[0].ts != ts:
            raise SlackError("thread_not_found")
        parent, replies = thread[0], thread[1:]
        if oldest:
            replies = [m for m in replies if float(m.ts) > float(oldest)]
        start = int(cursor) if cursor else 0
        if not 0 <= start <= len(replies):
            raise SlackError("invalid_cursor")
        size = max(1, min(int(limit or 1000), 1000))
        page = replies[start : start + size]
        more = start + size < len(replies)
        return {
            "messages": [_wire(m, metadata) for m in [parent, *page]],
            "has_more": more,
            "response_metadata": {"next_cursor": str(start + size) if more else ""},
        }

    def update(
        self, channel: str, ts: str, text: Any, blocks: Any, markdown_text: Any
    ) -> SlackMessage:
        message = self._bot_message(channel, ts)
        if message.stream == "streaming":
            raise SlackError("streaming_state_conflict")
        if text is None and markdown_text is None and blocks is None:
            raise SlackError("no_text")
        if markdown_text is not None and (text is not None or blocks is not None):
            raise SlackError("markdown_text_conflict")
        new_text = str(markdown_text) if markdown_text is not None else text
        limit = MAX_MARKDOWN if markdown_text is not None else MAX_TEXT
        if new_text is not None and len(new_text) > limit:
            raise SlackError("msg_too_long")
        new_blocks = None if blocks is None else _blocks(blocks)
        if new_text is not None:
            message.text = new_text
        if new_blocks is not None:
            message.blocks = new_blocks
        elif new_text is not None:  # the text shows in place of the blocks
            message.blocks = []
        message.edited = True
        message.updates += 1
        return message

    def post_ephemeral(self, channel: str, user: str, text: Any, thread_ts: Any) -> Ephemeral:
        self._channel(channel)
        if user not in self.users:
            raise SlackError("user_not_in_channel")
        ephemeral = Ephemeral(channel, user, str(text or ""), thread_ts, self.world.now_us)
        self.ephemerals.append(ephemeral)
        return ephemeral

    def start_stream(
        self, channel: str, thread_ts: Any, user: Any, team: Any, chunks: Any, markdown_text: Any
    ) -> SlackMessage:
        self._channel(channel)
        if not thread_ts:
            raise SlackError("invalid_arguments")
        if not channel.startswith("D"):
            if not user:
                raise SlackError("missing_recipient_user_id")
            if not team:
                raise SlackError("missing_recipient_team_id")
        if team is not None and team != TEAM:
            raise SlackError("team_not_found")
        if user is not None and user not in self.users:
            raise SlackError("user_not_found")
        message = SlackMessage(
            channel, "", thread_ts, BOT_USER, stream="streaming", started_us=self.world.now_us
        )
        _stream_content(message, markdown_text, chunks)
        message.ts = self.next_ts()
        self._tag(message)
        self._append(message)
        return message

    def append_stream(self, channel: str, ts: str, chunks: Any, markdown_text: Any) -> SlackMessage:
        message = self._streaming(channel, ts)
        if not markdown_text and not chunks:
            raise SlackError("no_text")
        trial = _copy_message(message)
        _stream_content(trial, markdown_text, chunks)
        _commit(message, trial)
        message.updates += 1
        return message

    def stop_stream(
        self, channel: str, ts: str, chunks: Any, markdown_text: Any, blocks: Any
    ) -> SlackMessage:
        message = self._streaming(channel, ts)
        trial = _copy_message(message)
        _stream_content(trial, markdown_text, chunks)
        if blocks is not None:
            trial.blocks = trial.blocks + _blocks(blocks)
        _commit(message, trial)
        message.stream = "stopped"
        message.updates += 1
        return message

    def set_status(self, channel: str, thread_ts: str, status: str) -> None:
        self._channel(channel)
        if self.message(channel, thread_ts) is None:
            raise SlackError("invalid_thread_ts")
        if status:
            self.statuses[(channel, thread_ts)] = (status, self.world.now_us)
        else:
            self.statuses.pop((channel, thread_ts), None)

    def press_stop(self, channel: str, thread_ts: str, user: str) -> list[str] | None:
        """A person presses the stop button: the app's streams in the thread stop.

        None when no button shows (the session is not processing); else the
        ts of each stream it stopped (``streaming_message_ts``): one Slack cut
        already at the end of its lifetime is no longer streaming.
        """
        if self.sessions.get((channel, thread_ts), ("", 0))[0] != "processing":
            return None
        stopped = []
        for message in self.thread(channel, thread_ts):
            if message.user == BOT_USER and self.settle(message).stream == "streaming":
                message.stream, message.stopped_by = "stopped", user
                stopped.append(message.ts)
        return stopped

    def set_session_status(self, channel: str, thread_ts: str, status: str) -> None:
        self._channel(channel)
        if self.message(channel, thread_ts) is None:
            raise SlackError("invalid_thread_ts")
        if status not in ("processing", "active", "suspended", "closed"):
            raise SlackError("invalid_status")
        self.sessions[(channel, thread_ts)] = (status, self.world.now_us)

    def rename_session(self, channel: str, thread_ts: str) -> None:
        self._channel(channel)
        if self.message(channel, thread_ts) is None:
            raise SlackError("invalid_thread_ts")

    def open_view(self, trigger_id: Any, view: Any) -> dict[str, Any]:
        found = self.triggers.get(str(trigger_id))
        if found is None:
            raise SlackError("invalid_trigger_id")
        user, issued_us, used = found
        if used:
            raise SlackError("exchanged_trigger_id")
        if self.world.now_us - issued_us > TRIGGER_LIFETIME_US:
            raise SlackError("expired_trigger_id")
        if not isinstance(view, dict) or view.get("type") != "modal":
            raise SlackError("invalid_arguments")
        self.triggers[str(trigger_id)] = (user, issued_us, True)
        return {"id": f"V{len(self.triggers)}", "user": user, "view": view}

    def issue_trigger(self, user: str) -> str:
        trigger_id = f"trigger-{len(self.triggers) + 1}"
        self.triggers[trigger_id] = (user, self.world.now_us, False)
        return trigger_id

    # Internals ------------------------------------------------------------------------------

    def _channel(self, channel: str) -> None:
        if channel not in self.channels:
            raise SlackError("channel_not_found")

    def _bot_message(self, channel: str, ts: str) -> SlackMessage:
        self._channel(channel)
        message = self.message(channel, ts)
        if message is None:
            raise SlackError("message_not_found")
        if message.user != BOT_USER:
            raise SlackError("cant_update_message")
        return self.settle(message)

    def _streaming(self, channel: str, ts: str) -> SlackMessage:
        message = self._bot_message(channel, ts)
        if message.stopped_by is not None:
            raise SlackError("stopped_by_user")
        if message.stream != "streaming":
            raise SlackError("message_not_in_streaming_state")
        return message

    def _tag(self, message: SlackMessage) -> None:
        invocation = self.world.current
        message.by = invocation.name if invocation is not None else ""
        if message.thread_ts:
            message.turn = self.active_turn(message.channel, message.thread_ts)


def _message_text(text: Any, markdown_text: Any, blocks: Any) -> str:
    if markdown_text is not None:
        if text is not None or blocks is not None:
            raise SlackError("markdown_text_conflict")
        if len(str(markdown_text)) > MAX_MARKDOWN:
            raise SlackError("msg_too_long")
        return str(markdown_text)
    if not text and not blocks:
        raise SlackError("no_text")
    if len(str(text or "")) > MAX_TEXT:
        raise SlackError("msg_too_long")
    return str(text or "")


def _metadata(metadata: Any) -> dict[str, Any] | None:
    """Message metadata as Slack keeps it: an event_type and an object payload, or refused."""
    if metadata is None:
        return None
    if (
        not isinstance(metadata, dict)
        or not isinstance(metadata.get("event_type"), str)
        or not isinstance(metadata.get("event_payload"), dict)
    ):
        raise SlackError("invalid_metadata_format")
    return copy.deepcopy(metadata)


def _wire(message: SlackMessage, metadata: bool) -> dict[str, Any]:
    """A message as conversations.replies shows it (metadata only when asked for)."""
    wire: dict[str, Any] = {"type": "message", "ts": message.ts, "user": message.user}
    wire["text"] = message.text
    if message.thread_ts:
        wire["thread_ts"] = message.thread_ts
    if metadata and message.metadata is not None:
        wire["metadata"] = copy.deepcopy(message.metadata)
    return wire


def _blocks(blocks: Any) -> list[dict[str, Any]]:
    if blocks is None:
        return []
    if not isinstance(blocks, list) or not all(
        isinstance(b, dict) and isinstance(b.get("type"), str) for b in blocks
    ):
        raise SlackError("invalid_blocks")
    if len(blocks) > MAX_BLOCKS:
        raise SlackError("invalid_blocks")
    return [dict(b) for b in blocks]


def _copy_message(message: SlackMessage) -> SlackMessage:
    copy = SlackMessage(
        message.channel,
        message.ts,
        message.thread_ts,
        message.user,
        message.text,
        list(message.blocks),
    )
    copy.cards = {key: Card(**vars(card)) for key, card in message.cards.items()}
    return copy


def _commit(message: SlackMessage, trial: SlackMessage) -> None:
    message.text, message.blocks, message.cards = trial.text, trial.blocks, trial.cards


def _stream_content(message: SlackMessage, markdown_text: Any, chunks: Any) -> None:
    if markdown_text:
        _add_markdown(message, markdown_text)
    if chunks is not None and not isinstance(chunks, list):
        raise SlackError("invalid_chunks")
    for chunk in chunks or []:
        kind = chunk.get("type") if isinstance(chunk, dict) else None
        if kind == "markdown_text":
            _add_markdown(message, chunk.get("text"))
        elif kind == "task_update":
            _task_update(message, chunk)
        elif kind == "blocks":
            message.blocks = message.blocks + _blocks(chunk.get("blocks"))
        else:
            raise SlackError("invalid_chunks")
    if len(message.text) > STREAM_MAX_CHARS:
        raise SlackError("msg_too_long")
    if len(message.blocks) > MAX_BLOCKS:
        raise SlackError("msg_blocks_too_many")


def _add_markdown(message: SlackMessage, text: Any) -> None:
    if not isinstance(text, str):
        raise SlackError("invalid_chunks")
    if len(text) > MAX_MARKDOWN:
        raise SlackError("msg_too_long")
    message.text += text


def _task_update(message: SlackMessage, chunk: dict[str, Any]) -> None:
    task_id, title, status = chunk.get("id"), chunk.get("title"), chunk.get("status")
    if not isinstance(task_id, str) or not task_id or not isinstance(title, str):
        raise SlackError("invalid_chunks")
    if status not in ("pending", "in_progress", "complete", "error"):
        raise SlackError("invalid_chunks")
    card = message.cards.get(task_id)
    if card is None:
        message.cards[task_id] = Card(
            task_id, title, status, chunk.get("details"), chunk.get("output")
        )
    else:
        card.title, card.status = title, status
        if chunk.get("details") is not None:
            card.details = chunk["details"]
        if chunk.get("output") is not None:
            card.output = chunk["output"]


def card_output(block: dict[str, Any]) -> str | None:
    """The text of a ``task_card`` block's output, if it has one."""
    output = block.get("output")
    if not output:
        return None
    return "".join(
        element.get("text", "")
        for section in output.get("elements", [])
        for element in section.get("elements", [])
    )


def _steps_shown(at_us: int, message: SlackMessage) -> list[tuple[int, str, str, str | None]]:
    """The step cards ``message`` shows now: its streamed ``task_update``s and ``task_card``s."""
    shown = [(at_us, card.id, card.status, card.output) for card in message.cards.values()]
    shown += [
        (at_us, block["task_id"], block["status"], card_output(block))
        for block in message.blocks
        if block.get("type") == "task_card"
    ]
    return shown


class SimChat:
    """The ``Chat`` port: slack_sdk's WebClient surface over ``SimSlack``, with its retries."""

    def __init__(self, slack: SimSlack) -> None:
        self.slack = slack
        self.world = slack.world
        self._latency = slack.world.stream("slack/latency")
        self._retry_after = slack.world.stream("slack/retry-after")

    def _call(self, method: str, args: dict[str, Any], apply: Callable[[], Any]) -> SlackAnswer:
        world = self.world
        rng = self._latency
        for attempt in range(6):
            latency = 0.02 + rng.random() * 0.08
            if rng.random() < 0.01:
                latency += rng.uniform(0.5, 3.0)
            world.block(us(latency))
            invocation = world.current
            assert invocation is not None
            fault = world.pick("slack", SLACK_FAULTS, method)
            if fault == "crash_before":
                world.kill(invocation.instance, f"before {method}")
                raise Killed(invocation.name)
            if fault == "ratelimited":
                retry_after = self._retry_after.randint(1, 30)
                world.log("slack.429", method, retry_after)
                if attempt == 5:
                    raise SlackApiError(
                        "ratelimited",
                        _ErrorBody("ratelimited", 429, {"Retry-After": str(retry_after)}),
                    )
                self._wait(retry_after)
                before_retry()  # as slack_sdk's handler does (``shared.slack.retry``)
                continue
            if fault == "server_error":
                world.log("slack.5xx", method)
                raise SlackApiError("internal_error", _ErrorBody("internal_error", 500))
            try:
                result = apply()
            except SlackError as error:
                world.log("slack.error", method, error.code)
                raise SlackApiError(error.code, _ErrorBody(error.code, error.status)) from None
            self.slack.calls.append((world.now_us, invocation.name, method, args))
            if isinstance(result, SlackMessage):
                result.steps_shown += _steps_shown(world.now_us, result)
            world.log("slack", method)
            if fault == "crash_after":
                world.kill(invocation.instance, f"after {method}")
                raise Killed(invocation.name)
            answer = SlackAnswer(ok=True)
            if isinstance(result, SlackMessage):
                answer.update(ts=result.ts, channel=result.channel)
            elif isinstance(result, dict):
                answer.update(result)
            return answer
        raise AssertionError("unreachable")

    def _wait(self, seconds: float) -> None:
        world = self.world
        until = world.now_us + us(seconds)
        while world.now_us < until:
            world.block(until - world.now_us)

    def _maybe(self, site: str, code: str, probability: float) -> None:
        if self.world.chance(site, probability):
            raise SlackError(code)

    # The ten methods ------------------------------------------------------------------------

    def chat_postMessage(
        self,
        *,
        channel: str,
        text: str | None = None,
        blocks: Any = None,
        thread_ts: str | None = None,
        markdown_text: str | None = None,
        metadata: dict[str, Any] | None = None,
        **extra: Any,
    ) -> SlackAnswer:
        args = {
            "channel": channel,
            "text": text,
            "blocks": blocks,
            "thread_ts": thread_ts,
            "markdown_text": markdown_text,
        }
        if metadata is not None:
            args["metadata"] = metadata
        return self._call(
            "chat.postMessage",
            args,
            lambda: self.slack.post_message(
                channel, text, blocks, thread_ts, markdown_text, metadata
            ),
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
        **extra: Any,
    ) -> SlackAnswer:
        args = {"channel": channel, "ts": ts, "cursor": cursor, "oldest": oldest}
        return self._call(
            "conversations.replies",
            args,
            lambda: self.slack.replies(
                channel, ts, cursor, bool(include_all_metadata), limit, oldest
            ),
        )

    def chat_update(
        self,
        *,
        channel: str,
        ts: str,
        text: str | None = None,
        blocks: Any = None,
        markdown_text: str | None = None,
        **extra: Any,
    ) -> SlackAnswer:
        args = {
            "channel": channel,
            "ts": ts,
            "text": text,
            "blocks": blocks,
            "markdown_text": markdown_text,
        }
        return self._call(
            "chat.update", args, lambda: self.slack.update(channel, ts, text, blocks, markdown_text)
        )

    def chat_postEphemeral(
        self,
        *,
        channel: str,
        user: str,
        text: str | None = None,
        thread_ts: str | None = None,
        **extra: Any,
    ) -> SlackAnswer:
        args = {"channel": channel, "user": user, "text": text, "thread_ts": thread_ts}
        return self._call(
            "chat.postEphemeral",
            args,
            lambda: self.slack.post_ephemeral(channel, user, text, thread_ts),
        )

    def chat_startStream(
        self,
        *,
        channel: str,
        thread_ts: str,
        recipient_team_id: str | None = None,
        recipient_user_id: str | None = None,
        chunks: Any = None,
        markdown_text: str | None = None,
        **extra: Any,
    ) -> SlackAnswer:
        args = {"channel": channel, "thread_ts": thread_ts, "chunks": chunks}

        def apply() -> SlackMessage:
            self._maybe("slack.stream_refused", "feature_not_enabled", 0.02)
            return self.slack.start_stream(
                channel, thread_ts, recipient_user_id, recipient_team_id, chunks, markdown_text
            )

        return self._call("chat.startStream", args, apply)

    def chat_appendStream(
        self,
        *,
        channel: str,
        ts: str,
        chunks: Any = None,
        markdown_text: str | None = None,
        **extra: Any,
    ) -> SlackAnswer:
        args = {"channel": channel, "ts": ts, "chunks": chunks}

        def apply() -> SlackMessage:
            message = self.slack.message(channel, ts)
            if (
                message is not None
                and message.stream == "streaming"
                and self.world.chance("slack.stream_cut", 0.005)
            ):
                message.stream = "expired"
            if message is not None and len(message.text) > 4000:
                self._maybe("slack.too_long", "msg_too_long", 0.05)
            return self.slack.append_stream(channel, ts, chunks, markdown_text)

        return self._call("chat.appendStream", args, apply)

    def chat_stopStream(
        self,
        *,
        channel: str,
        ts: str,
        chunks: Any = None,
        markdown_text: str | None = None,
        blocks: Any = None,
        session_status: str | None = None,
        **extra: Any,
    ) -> SlackAnswer:
        args = {"channel": channel, "ts": ts, "chunks": chunks, "session_status": session_status}

        def apply() -> SlackMessage:
            stopped = self.slack.stop_stream(channel, ts, chunks, markdown_text, blocks)
            thread = stopped.thread_ts or stopped.ts
            self.slack.sessions[(channel, thread)] = (
                session_status or "active",
                self.slack.world.now_us,
            )
            return stopped

        return self._call("chat.stopStream", args, apply)

    def agents_sessions_setStatus(
        self,
        *,
        channel_id: str,
        status: str,
        thread_ts: str | None = None,
        title: str | None = None,
        initiator_user_id: str | None = None,
        **extra: Any,
    ) -> SlackAnswer:
        args = {"channel_id": channel_id, "thread_ts": thread_ts, "status": status}
        return self._call(
            "agents.sessions.setStatus",
            args,
            lambda: self.slack.set_session_status(channel_id, str(thread_ts), status),
        )

    def agents_sessions_rename(
        self, *, channel_id: str, title: str, thread_ts: str | None = None, **extra: Any
    ) -> SlackAnswer:
        args = {"channel_id": channel_id, "thread_ts": thread_ts, "title": title}
        return self._call(
            "agents.sessions.rename",
            args,
            lambda: self.slack.rename_session(channel_id, str(thread_ts)),
        )

    def assistant_threads_setStatus(
        self, *, channel_id: str, thread_ts: str, status: str, **extra: Any
    ) -> SlackAnswer:
        args = {"channel_id": channel_id, "thread_ts": thread_ts, "status": status}
        return self._call(
            "assistant.threads.setStatus",
            args,
            lambda: self.slack.set_status(channel_id, thread_ts, status),
        )

    def views_open(
        self, *, trigger_id: str | None = None, view: dict[str, Any], **extra: Any
    ) -> SlackAnswer:
        args = {"trigger_id": trigger_id, "view": view}
        return self._call(
            "views.open", args, lambda: {"view": self.slack.open_view(trigger_id, view)}
        )

    def users_info(self, *, user: str, **extra: Any) -> SlackAnswer:
        def apply() -> dict[str, Any]:
            if user not in self.slack.users:
                raise SlackError("user_not_found")
            return {"user": self.slack.users[user]}

        return self._call("users.info", {"user": user}, apply)

    def auth_test(self, **extra: Any) -> SlackAnswer:
        return self._call("auth.test", {}, lambda: {"user_id": BOT_USER, "team_id": TEAM})
