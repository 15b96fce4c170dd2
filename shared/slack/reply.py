"""Writing a turn's reply into its Slack thread as it streams.

Theory of operation: the answer streams live with Slack's streaming messages
(chat.startStream, chat.appendStream, chat.stopStream); appended text is
buffered briefly so a token-by-token agent does not cost a Slack call per
token. Each tool call is a ``task_update`` chunk keyed by its call ID: in
progress when the call arrives, complete or error when its result does, so a
step is one card however often it is updated.

Slack cuts a streamed message after about five minutes and caps its size, so
the reply rolls over to a continuation message before either, re-opening an
open code block. A step still running at a roll-over is closed in the old
message (Slack shows a step left pending as failed) and shown again, in
progress, in the new one. A stream that Slack has already cut
(``message_not_in_streaming_state``) is rolled over the same way.

When the agent replaces text already shown, a stream cannot take it back:
the reply stops streaming and shows the whole canonical text in an ordinary
message that is edited in place from then on.

The reply's state (what was shown, the open stream, the open steps) is plain
JSON, so a function that takes the turn over continues the same message.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from shared.slack.markdown import to_slack_markdown

WORKING_STATUS = "is working…"
CONTINUED = "continued in the next message"


@dataclass(frozen=True)
class ReplyLimits:
    """When a streamed message rolls over, and how often text is flushed."""

    max_stream_seconds: float = 240.0
    max_stream_chars: int = 30_000
    flush_seconds: float = 0.5
    flush_chars: int = 400


class ThreadReply:
    """One turn's reply in one thread."""

    def __init__(
        self,
        client: WebClient,
        channel: str,
        thread_ts: str,
        recipient_user: str,
        recipient_team: str,
        limits: ReplyLimits = ReplyLimits(),
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._client = client
        self._channel = channel
        self._thread_ts = thread_ts
        self._recipient = {"recipient_user_id": recipient_user, "recipient_team_id": recipient_team}
        self._limits = limits
        self._clock = clock
        self._pending = ""
        self._last_flush = 0.0
        self._shown = ""  # all text shown so far, across continuation messages
        self._stream_ts: str | None = None
        self._stream_started = 0.0
        self._stream_chars = 0
        self._edit_ts: str | None = None  # set once we fall back to post + update
        self._open_steps: dict[str, dict[str, Any]] = {}

    # What the person sees while the agent works -----------------------------

    def working(self) -> None:
        """Show that the agent is working on the thread's message."""
        self._client.assistant_threads_setStatus(
            channel_id=self._channel, thread_ts=self._thread_ts, status=WORKING_STATUS
        )

    def append(self, text: str) -> None:
        """Add text to the end of the answer."""
        if not text:
            return
        self._pending += text
        if len(self._pending) >= self._limits.flush_chars or (
            self._clock() - self._last_flush >= self._limits.flush_seconds
        ):
            self._flush()

    def replace(self, text: str) -> None:
        """The answer is now ``text``: text already shown changed."""
        self._pending = ""
        if text == self._shown:
            return
        self._shown = text
        self._stop_stream()
        self._edit()

    def step_started(self, call_id: str, name: str, details: str) -> None:
        """A tool call began."""
        chunk = {"type": "task_update", "id": call_id, "title": name, "status": "in_progress"}
        if details:
            chunk["details"] = details
        self._open_steps[call_id] = chunk
        self._send_chunks([chunk])

    def step_finished(self, call_id: str, name: str, ok: bool, output: str) -> None:
        """A tool call returned (or failed)."""
        chunk = dict(self._open_steps.pop(call_id, {"type": "task_update", "id": call_id, "title": name}))
        chunk["status"] = "complete" if ok else "error"
        if output:
            chunk["output"] = output
        self._send_chunks([chunk])

    def notice(self, text: str) -> None:
        """A notice of Agent Kourier's own (never the agent's words), after the answer."""
        self.finish()
        self._client.chat_postMessage(channel=self._channel, thread_ts=self._thread_ts, text=text)

    def finish(self) -> None:
        """The answer is complete: flush and stop streaming (open steps are closed)."""
        self._flush()
        self._stop_stream()
        self._open_steps.clear()

    def suspend(self) -> None:
        """This function stops here and another continues: flush, keep the stream open."""
        self._flush()

    def to_state(self) -> dict[str, Any]:
        """What a continuing function needs."""
        self._flush()
        return {
            "shown": self._shown,
            "stream_ts": self._stream_ts,
            "stream_started": self._stream_started,
            "stream_chars": self._stream_chars,
            "edit_ts": self._edit_ts,
            "open_steps": self._open_steps,
        }

    def restore(self, state: dict[str, Any]) -> None:
        """Continue a reply that another function began."""
        self._shown = state["shown"]
        self._stream_ts = state["stream_ts"]
        self._stream_started = state["stream_started"]
        self._stream_chars = state["stream_chars"]
        self._edit_ts = state["edit_ts"]
        self._open_steps = dict(state["open_steps"])

    # Slack calls -------------------------------------------------------------

    def _flush(self) -> None:
        self._last_flush = self._clock()
        text, self._pending = self._pending, ""
        if not text:
            return
        if self._edit_ts is not None:
            self._shown += text
            self._edit()
            return
        while text:
            if self._stream_ts is not None and self._stream_is_full():
                self._roll_over()
            room = self._limits.max_stream_chars - self._stream_chars
            piece, text = text[:room], text[room:]
            self._stream(markdown_text=piece)

    def _send_chunks(self, chunks: list[dict[str, Any]]) -> None:
        self._flush()
        if self._edit_ts is not None:
            # Text already went to an edited message: steps go to a stream after it.
            self._edit_ts = None
        if self._stream_ts is not None and self._stream_is_full():
            self._roll_over()
        self._stream(chunks=chunks)

    def _stream_is_full(self) -> bool:
        too_old = self._clock() - self._stream_started >= self._limits.max_stream_seconds
        return too_old or self._stream_chars >= self._limits.max_stream_chars

    def _stream(self, markdown_text: str | None = None, chunks: list[dict[str, Any]] | None = None) -> None:
        """Add text or chunks to the open stream, starting or renewing it as needed."""
        content: dict[str, Any] = {}
        if markdown_text:
            content["markdown_text"] = to_slack_markdown(markdown_text)
        if chunks:
            content["chunks"] = chunks
        if self._stream_ts is None:
            self._start_stream(content)
        else:
            try:
                self._client.chat_appendStream(channel=self._channel, ts=self._stream_ts, **content)
            except SlackApiError as error:
                if error.response.get("error") != "message_not_in_streaming_state":
                    raise
                self._stream_ts = None  # Slack cut it: continue in a new message
                self._start_stream(content)
        if markdown_text:
            self._stream_chars += len(markdown_text)
            self._shown += markdown_text

    def _start_stream(self, content: dict[str, Any]) -> None:
        reopened = [step for key, step in self._open_steps.items() if step not in content.get("chunks", [])]
        if reopened:
            content = {**content, "chunks": [*reopened, *content.get("chunks", [])]}
        answer = self._client.chat_startStream(
            channel=self._channel, thread_ts=self._thread_ts, **self._recipient, **content
        )
        self._stream_ts = str(answer["ts"])
        self._stream_started = self._clock()
        self._stream_chars = 0

    def _roll_over(self) -> None:
        """Stop this streamed message and continue in a new one."""
        in_code_block = self._shown.count("```") % 2 == 1
        self._stop_stream(close_code_block=in_code_block, open_steps_output=CONTINUED)
        self._start_stream({"markdown_text": "```\n"} if in_code_block else {})

    def _stop_stream(self, close_code_block: bool = False, open_steps_output: str | None = None) -> None:
        if self._stream_ts is None:
            return
        ts, self._stream_ts = self._stream_ts, None
        # Never leave a step pending when a stream stops: Slack shows it as failed.
        closing = [dict(step, status="complete") for step in self._open_steps.values()]
        if open_steps_output:
            closing = [dict(step, output=open_steps_output) for step in closing]
        try:
            self._client.chat_stopStream(
                channel=self._channel,
                ts=ts,
                markdown_text="\n```" if close_code_block else None,
                chunks=closing or None,
            )
        except SlackApiError as error:
            if error.response.get("error") != "message_not_in_streaming_state":
                raise

    def _edit(self) -> None:
        rendered = to_slack_markdown(self._shown) or " "
        if self._edit_ts is None:
            answer = self._client.chat_postMessage(
                channel=self._channel, thread_ts=self._thread_ts, markdown_text=rendered
            )
            self._edit_ts = str(answer["ts"])
        else:
            self._client.chat_update(channel=self._channel, ts=self._edit_ts, markdown_text=rendered)


def summarize(value: Any, limit: int = 200) -> str:
    """A short one-line summary of a tool's arguments or result."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= limit else text[: limit - 1] + "…"
