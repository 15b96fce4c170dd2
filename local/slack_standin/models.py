"""What the Slack stand-in keeps and shows, as typed records.

The server stores its workspace in these models and its control API sends
them as JSON; the test client reads them back into the same classes. So a
thread read over HTTP is the same typed object the server holds, and the
plain-text rendering (``render_message``) is the one the CLI prints.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, Field

TaskStatus = Literal["pending", "in_progress", "complete", "error"]
StreamState = Literal["streaming", "stopped", "expired"]
SessionStatus = Literal["processing", "active", "suspended", "closed"]
SESSION_STATUSES: tuple[SessionStatus, ...] = ("processing", "active", "suspended", "closed")
# How a callback is signed: as Slack does, with a secret that is not the
# app's, or with a timestamp older than the five minutes receivers accept.
SignatureMode = Literal["valid", "wrong_secret", "stale_timestamp"]

Block = dict[str, Any]


class User(BaseModel):
    """A person (or the bot) in the stand-in's workspace."""

    id: str
    real_name: str
    display_name: str = ""
    email: str | None = None
    is_bot: bool = False

    @property
    def handle(self) -> str:
        """The short user name Slack puts in ``user.name``."""
        if self.email:
            return self.email.split("@", 1)[0]
        return (self.display_name or self.real_name.split(" ", 1)[0]).lower()


class TaskCard(BaseModel):
    """One step card of a streamed message: the last state of a task_update id."""

    id: str
    title: str
    status: TaskStatus
    details: str | None = None
    output: str | None = None
    sources: list[dict[str, Any]] = Field(default_factory=list)
    # Still pending or in progress when the stream stopped: Slack then shows
    # the card as failed ("Something went wrong").
    left_unfinished: bool = False


class TimelineItem(BaseModel):
    """A piece of a message body in the order the reader sees it."""

    kind: Literal["text", "task"]
    text: str = ""
    task_id: str | None = None


class Message(BaseModel):
    """A message in a channel, in its final form as a reader sees it."""

    channel: str
    ts: str
    thread_ts: str | None = None
    user: str
    bot_id: str | None = None
    # Everything the reader sees as text: posted text, or streamed markdown.
    text: str = ""
    blocks: list[Block] = Field(default_factory=list)
    tasks: list[TaskCard] = Field(default_factory=list)
    timeline: list[TimelineItem] = Field(default_factory=list)
    plan_title: str | None = None
    task_display_mode: str | None = None
    stream: StreamState | None = None
    stream_started_at: float | None = None
    # The person whose click on the stop button stopped the stream.
    stopped_by: str | None = None
    edited: bool = False
    metadata: dict[str, Any] | None = None

    @property
    def is_bot(self) -> bool:
        """Whether the bot posted this message."""
        return self.bot_id is not None

    def task(self, task_id: str) -> TaskCard | None:
        """The step card with this id, if the message has one."""
        return next((card for card in self.tasks if card.id == task_id), None)

    @property
    def commands(self) -> list[str]:
        """What Slack reads in this message as a mention or a labelled link, in order.

        A mention (``<!here>``, ``<!channel>``, ``<!everyone>``,
        ``<!subteam^…>``, ``<@U…>``, ``<#C…>``) notifies people; a labelled
        link ``<url|label>`` hides its address. Slack documents both for
        mrkdwn (a message's ``text``, mrkdwn text objects) and says nothing
        for standard Markdown (streamed ``markdown_text``, markdown blocks),
        where ``<@U…>`` is observed to mention; so they count everywhere
        except in plain_text objects and rich_text, which show text as
        written, and HTML entities (``&lt;``) are not read as ``<``.
        """
        return [
            found.group(0)
            for text in [self.text, *_read_texts(self.blocks), *_card_texts(self.tasks)]
            for found in _COMMAND.finditer(text)
        ]

    def action_ids(self) -> list[str]:
        """The action_ids of the interactive elements in the blocks, in order."""
        return [element["action_id"] for _, element in interactive_elements(self.blocks)]

    @property
    def rendered(self) -> str:
        """The message as plain text, the way a reader sees it."""
        return render_message(self)


class Ephemeral(BaseModel):
    """A message only one user sees."""

    channel: str
    user: str
    ts: str
    thread_ts: str | None = None
    text: str = ""
    blocks: list[Block] = Field(default_factory=list)


class ThreadStatus(BaseModel):
    """The assistant status line of a thread (assistant.threads.setStatus)."""

    status: str
    loading_messages: list[str] = Field(default_factory=list)
    set_at: float


class StatusChange(BaseModel):
    """One status an agent session was given, by which call (or by Slack itself)."""

    status: SessionStatus
    via: str
    at: float


class AgentSession(BaseModel):
    """A thread's agent session (agents.sessions.*): its lifecycle status and title.

    Slack shows the stop button only while the session is ``processing`` and
    the app subscribes to ``agent_session_stopped`` (``stop_button``).
    ``changes`` lists every status set, oldest first, the same status twice
    included.
    """

    channel: str
    thread_ts: str
    status: SessionStatus
    title: str | None = None
    initiator_user_id: str | None = None
    changes: list[StatusChange] = Field(default_factory=list)
    stop_button: bool = False

    @property
    def statuses(self) -> list[SessionStatus]:
        """The statuses the session went through, a repeated one counted once."""
        seen: list[SessionStatus] = []
        for change in self.changes:
            if not seen or seen[-1] != change.status:
                seen.append(change.status)
        return seen


class FeedbackClick(BaseModel):
    """A person clicked a feedback button (👍 or 👎) of a message."""

    channel: str
    message_ts: str
    thread_ts: str | None = None
    user: str
    action_id: str
    positive: bool
    value: str
    at: float


class View(BaseModel):
    """A modal opened with views.open."""

    id: str
    user: str
    view: dict[str, Any]
    open: bool = True
    errors: dict[str, str] = Field(default_factory=dict)


class Delivery(BaseModel):
    """One HTTP callback the stand-in sent to the app, and what came back."""

    kind: str
    event_id: str | None = None
    retry_num: int = 0
    status: int | None = None
    body: str = ""
    error: str | None = None


class Posted(BaseModel):
    """A user message posted through the control API, and its event deliveries."""

    channel: str
    ts: str
    thread_ts: str | None = None
    event_ids: list[str]
    deliveries: list[Delivery]

    @property
    def statuses(self) -> list[int | None]:
        """The HTTP status the app answered to each event (None: no answer)."""
        return [delivery.status for delivery in self.deliveries]


class UrlVerification(BaseModel):
    """A url_verification challenge sent to the events URL."""

    challenge: str
    echoed: bool
    delivery: Delivery


class Interaction(BaseModel):
    """A block_actions callback (a click) and what the app answered."""

    trigger_id: str
    response_url: str
    action: dict[str, Any]
    delivery: Delivery


class Submission(BaseModel):
    """A view_submission callback and what it did to the modal."""

    view_id: str
    response_action: str | None = None
    errors: dict[str, str] = Field(default_factory=dict)
    view_open: bool
    delivery: Delivery


class StopPressed(BaseModel):
    """A person pressed an agent session's stop button: the streams Slack stopped, the event."""

    channel: str
    thread_ts: str
    user: str
    streaming_message_ts: list[str]
    event_id: str
    delivery: Delivery


class ApiCall(BaseModel):
    """One Web API call the app made, as the stand-in answered it."""

    method: str
    params: dict[str, Any]
    status_code: int
    ok: bool
    error: str | None = None
    at: float
    # The whole answer, as the app received it.
    answer: dict[str, Any] = Field(default_factory=dict)
    # The thread the call was about (its channel and root ts), where it names one.
    channel: str | None = None
    thread_ts: str | None = None


class RateLimit(BaseModel):
    """At most ``limit`` calls of one method in any ``window_seconds``."""

    limit: int = Field(ge=1)
    window_seconds: float = Field(gt=0)


class ScriptedFailure(BaseModel):
    """The next ``times`` calls of one method fail with HTTP ``status`` and ``error``."""

    error: str = "service_unavailable"
    status: int = Field(503, ge=200, le=599)
    times: int = Field(1, ge=1)


class Tunables(BaseModel):
    """Settings a test may change while the stand-in runs."""

    events_url: str | None = None
    # Defaults to the events URL, as most Slack apps use one endpoint.
    interactivity_url: str | None = None
    # Slack gives up on a callback after 3 seconds.
    ack_timeout_seconds: float = Field(3.0, gt=0)
    # Slack stops accepting appends to a stream after about 5 minutes.
    stream_lifetime_seconds: float = Field(300.0, gt=0)
    # Total markdown of one streamed message before msg_too_long.
    stream_max_chars: int = Field(40_000, ge=1)
    # A trigger_id opens a modal only within about 3 seconds.
    trigger_lifetime_seconds: float = Field(3.0, gt=0)
    # The app is declared as an agent and the workspace allows agent sessions;
    # when False, agents.sessions.* answer feature_disabled and streams make none.
    agent_sessions: bool = True
    # The app subscribes to agent_session_stopped: without it Slack shows no
    # stop button and setStatus warns missing_agent_session_stopped_event_subscription.
    stop_event_subscribed: bool = True
    # A session left processing this long drops to active (Slack: one hour).
    processing_lifetime_seconds: float = Field(3600.0, gt=0)


class SayRequest(BaseModel):
    """Control API: a user writes a message."""

    channel: str
    text: str
    user: str = "U0ALICE"
    thread_ts: str | None = None
    as_mention: bool = True
    both_events: bool = False
    signature: SignatureMode = "valid"


class ResendRequest(BaseModel):
    """Control API: Slack retries an event it already sent."""

    reason: str = "http_timeout"
    signature: SignatureMode = "valid"


class SignedRequest(BaseModel):
    """Control API: a callback with only a choice of signature."""

    signature: SignatureMode = "valid"


class ClickRequest(BaseModel):
    """Control API: a user acts on an interactive element of a message."""

    channel: str
    message_ts: str
    action_id: str
    block_id: str | None = None
    user: str = "U0ALICE"
    # The option chosen in a select, radio group or overflow menu; for
    # feedback buttons, which one: "positive" or "negative" (or its value).
    value: str | None = None
    # The options chosen in checkboxes or a multi-select.
    values: list[str] | None = None
    signature: SignatureMode = "valid"


class StopRequest(BaseModel):
    """Control API: a person presses the stop button of a thread's agent session."""

    user: str = "U0ALICE"
    signature: SignatureMode = "valid"


class SubmitRequest(BaseModel):
    """Control API: a user submits an open modal.

    ``values`` maps each input's action_id to the text typed or the option
    value chosen (a list for multi-choice inputs).
    """

    values: dict[str, str | list[str]] = Field(default_factory=dict)
    signature: SignatureMode = "valid"


_COMMAND = re.compile(
    r"<(?:!(?i:here|channel|everyone)|!subteam\^[^>|]+|[@#][A-Z0-9]+)(?:\|[^>]*)?>"
    r"|<[A-Za-z][A-Za-z0-9+.-]*:[^\s<>|]*\|[^>]*>"
)


def _read_texts(value: Any) -> list[str]:
    """The texts of blocks that Slack reads for mentions: markdown blocks and mrkdwn objects."""
    if isinstance(value, list):
        return [text for item in value for text in _read_texts(item)]
    if not isinstance(value, dict):
        return []
    if value.get("type") in ("markdown", "mrkdwn") and isinstance(value.get("text"), str):
        return [value["text"]]
    return [text for item in value.values() for text in _read_texts(item)]


def _card_texts(cards: list[TaskCard]) -> list[str]:
    return [text for card in cards for text in (card.title, card.details, card.output) if text]


def interactive_elements(blocks: list[Block]) -> list[tuple[str, dict[str, Any]]]:
    """(block_id, element) of every element with an action_id, in order."""
    found: list[tuple[str, dict[str, Any]]] = []
    for block in blocks:
        in_row = block.get("type") in ("actions", "context_actions")
        candidates = list(block.get("elements", [])) if in_row else []
        for key in ("accessory", "element"):
            if isinstance(block.get(key), dict):
                candidates.append(block[key])
        found += [
            (str(block.get("block_id", "")), element)
            for element in candidates
            if isinstance(element, dict) and "action_id" in element
        ]
    return found


_TASK_MARKS = {"pending": "[ ]", "in_progress": "[~]", "complete": "[x]", "error": "[!]"}


def render_message(message: Message) -> str:
    """A message as plain text: body, step cards and blocks in reading order."""
    lines: list[str] = []
    if message.plan_title:
        lines.append(f"Plan: {message.plan_title}")
    # A posted message with blocks shows the blocks; its text is only the
    # notification fallback. A streamed message shows both.
    if message.stream is not None or not message.blocks:
        cards = {card.id: card for card in message.tasks}
        for item in message.timeline:
            if item.kind == "text":
                lines.append(item.text)
            elif item.task_id in cards:
                lines.append(_render_task(cards[item.task_id]))
    lines += [line for block in message.blocks for line in render_block(block)]
    if message.stream == "streaming":
        lines.append("(streaming...)")
    elif message.stream == "expired":
        lines.append("(stream expired)")
    return "\n".join(line for line in lines if line)


def _render_task(card: TaskCard) -> str:
    mark = "[!]" if card.left_unfinished else _TASK_MARKS[card.status]
    line = f"{mark} {card.title}"
    if card.details:
        line += f" - {card.details}"
    if card.output:
        line += f" -> {card.output}"
    if card.left_unfinished:
        line += " (Something went wrong)"
    return line


def _text_of(obj: Any) -> str:
    if isinstance(obj, dict):
        return str(obj.get("text", ""))
    return str(obj or "")


def _rich_text(elements: list[Any]) -> str:
    parts: list[str] = []
    for element in elements:
        if element.get("type") == "user":
            parts.append(f"<@{element.get('user_id')}>")
        elif "elements" in element:
            parts.append(_rich_text(element["elements"]))
        else:
            parts.append(str(element.get("text", "")))
    return "".join(parts)


def render_block(block: Block) -> list[str]:
    """One Block Kit block as the lines of plain text a reader sees."""
    kind = block.get("type")
    if kind in ("section", "header"):
        lines = [_text_of(block.get("text"))] + [_text_of(f) for f in block.get("fields", [])]
        if isinstance(block.get("accessory"), dict):
            lines.append(_render_element(block["accessory"]))
        return [line for line in lines if line]
    if kind == "context":
        return [" ".join(_text_of(element) for element in block.get("elements", []))]
    if kind in ("actions", "context_actions"):
        return [" ".join(_render_element(element) for element in block.get("elements", []))]
    if kind == "markdown":
        return [str(block.get("text", ""))]
    if kind == "rich_text":
        return [_rich_text(block.get("elements", []))]
    if kind == "divider":
        return ["---"]
    if kind == "input":
        return [f"{_text_of(block.get('label'))}: ____"]
    if kind == "task_card":
        status = str(block.get("status", "pending"))
        return [f"{_TASK_MARKS.get(status, '[?]')} {block.get('title', '')}"]
    if kind == "plan":
        return [f"Plan: {block.get('title', '')}"]
    return [f"<{kind} block>"]


def _render_element(element: dict[str, Any]) -> str:
    if element.get("type") == "feedback_buttons":
        buttons = (element.get("positive_button"), element.get("negative_button"))
        return " ".join(f"[{_text_of((button or {}).get('text'))}]" for button in buttons)
    if element.get("type") == "checkboxes":
        ticked = {str(o.get("value")) for o in element.get("initial_options", [])}
        return " ".join(
            f"[{'x' if str(o.get('value')) in ticked else ' '}] {_text_of(o.get('text'))}"
            for o in element.get("options", [])
        )
    label = _text_of(element.get("text")) or _text_of(element.get("placeholder"))
    return f"[{label or element.get('action_id', element.get('type'))}]"
