"""A typed client of the stand-in's control API, for tests and the CLI.

Example::

    standin = SlackStandin("http://127.0.0.1:8310")
    posted = standin.say("C0123456789", "what is up?")
    replies = standin.wait_for(
        lambda: [m for m in standin.thread(posted.channel, posted.ts) if m.is_bot]
    )

The app under test talks to the same process as Slack, with
``WebClient(base_url=standin.api_url, token=...)``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from types import TracebackType
from typing import Any, Self, TypeVar

import httpx
from pydantic import BaseModel

from local.slack_standin.models import (
    AgentSession,
    ApiCall,
    Delivery,
    Ephemeral,
    FeedbackClick,
    Interaction,
    Message,
    Posted,
    SignatureMode,
    StopPressed,
    Submission,
    ThreadStatus,
    Tunables,
    UrlVerification,
    User,
    View,
)

T = TypeVar("T")
Model = TypeVar("Model", bound=BaseModel)


class StandinError(RuntimeError):
    """The control API refused a request (unknown thread, element, view...)."""


class SlackStandin:
    """Acts as Slack users and reads what the app did, over HTTP."""

    def __init__(self, base_url: str, *, timeout: float = 30.0) -> None:
        self.base_url = base_url.rstrip("/")
        self._http = httpx.Client(base_url=self.base_url, timeout=timeout)

    @property
    def api_url(self) -> str:
        """The Web API base URL to give slack_sdk's WebClient (SLACK_API_URL)."""
        return f"{self.base_url}/api/"

    def close(self) -> None:
        """Closes the HTTP connection pool."""
        self._http.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def is_up(self) -> bool:
        """Whether the stand-in answers."""
        try:
            return self._http.get("/_standin/health", timeout=2.0).status_code == 200
        except httpx.HTTPError:
            return False

    def say(
        self,
        channel: str,
        text: str,
        *,
        user: str = "U0ALICE",
        thread_ts: str | None = None,
        as_mention: bool = True,
        both_events: bool = False,
        signature: SignatureMode = "valid",
    ) -> Posted:
        """A person writes in a channel or thread, and the app hears it.

        With ``as_mention`` the text starts with ``<@U0KOURIER>`` (added if
        missing) and arrives as an ``app_mention`` event, plus a ``message``
        event with ``both_events``. Without it, only a ``message`` event.
        Returns once the app answered every event.
        """
        body = {
            "channel": channel,
            "text": text,
            "user": user,
            "thread_ts": thread_ts,
            "as_mention": as_mention,
            "both_events": both_events,
            "signature": signature,
        }
        return self._send(Posted, "POST", "/_standin/messages", body)

    def resend(
        self, event_id: str, *, reason: str = "http_timeout", signature: SignatureMode = "valid"
    ) -> Delivery:
        """Sends an event again as Slack retries: same body and event_id."""
        body = {"reason": reason, "signature": signature}
        return self._send(Delivery, "POST", f"/_standin/events/{event_id}/resend", body)

    def verify_url(self, *, signature: SignatureMode = "valid") -> UrlVerification:
        """Sends a url_verification challenge to the events URL."""
        return self._send(
            UrlVerification, "POST", "/_standin/url_verification", {"signature": signature}
        )

    def thread(self, channel: str, ts: str) -> list[Message]:
        """A thread's parent and replies, oldest first, as a reader sees them."""
        return self._list(Message, f"/_standin/channels/{channel}/threads/{ts}")

    def history(self, channel: str) -> list[Message]:
        """A channel's top-level messages, oldest first."""
        return self._list(Message, f"/_standin/channels/{channel}/messages")

    def thread_status(self, channel: str, ts: str) -> ThreadStatus | None:
        """A thread's status line (assistant.threads.setStatus), if one shows."""
        data = self._call("GET", f"/_standin/channels/{channel}/threads/{ts}/status")
        return None if data is None else ThreadStatus.model_validate(data)

    def agent_session(self, channel: str, ts: str) -> AgentSession | None:
        """A thread's agent session (agents.sessions.*), if it has one."""
        data = self._call("GET", f"/_standin/channels/{channel}/threads/{ts}/session")
        return None if data is None else AgentSession.model_validate(data)

    def press_stop(
        self, channel: str, ts: str, *, user: str = "U0ALICE", signature: SignatureMode = "valid"
    ) -> StopPressed:
        """A person presses the stop button of a thread's agent session.

        Slack stops the app's streams in the thread and sends
        ``agent_session_stopped``; returns once the app answered it.
        """
        body = {"user": user, "signature": signature}
        return self._send(
            StopPressed, "POST", f"/_standin/channels/{channel}/threads/{ts}/stop", body
        )

    def feedback(self) -> list[FeedbackClick]:
        """Every click on a feedback button, oldest first."""
        return self._list(FeedbackClick, "/_standin/feedback")

    def ephemerals(self, channel: str | None = None, user: str | None = None) -> list[Ephemeral]:
        """Ephemeral messages, optionally of one channel and one user."""
        params = {key: value for key, value in (("channel", channel), ("user", user)) if value}
        return self._list(Ephemeral, "/_standin/ephemerals", params)

    def click(
        self,
        channel: str,
        message_ts: str,
        action_id: str,
        *,
        user: str = "U0ALICE",
        block_id: str | None = None,
        value: str | None = None,
        values: list[str] | None = None,
        signature: SignatureMode = "valid",
    ) -> Interaction:
        """A person clicks a button (or picks ``value`` / ``values`` in a menu)."""
        body = {
            "channel": channel,
            "message_ts": message_ts,
            "action_id": action_id,
            "block_id": block_id,
            "user": user,
            "value": value,
            "values": values,
            "signature": signature,
        }
        return self._send(Interaction, "POST", "/_standin/actions", body)

    def views(self) -> list[View]:
        """Every modal the app opened."""
        return self._list(View, "/_standin/views")

    def submit(
        self,
        view_id: str,
        values: dict[str, str | list[str]],
        *,
        signature: SignatureMode = "valid",
    ) -> Submission:
        """A person submits a modal; ``values`` maps input action_ids to answers."""
        body = {"values": values, "signature": signature}
        return self._send(Submission, "POST", f"/_standin/views/{view_id}/submit", body)

    def close_view(self, view_id: str) -> View:
        """A person closes a modal without submitting it (the app hears nothing)."""
        return self._send(View, "POST", f"/_standin/views/{view_id}/close", {})

    def calls(self, method: str | None = None) -> list[ApiCall]:
        """The Web API calls the app made, oldest first."""
        return self._list(ApiCall, "/_standin/calls", {"method": method} if method else None)

    def set_rate_limit(self, method: str, limit: int, window_seconds: float) -> None:
        """From now on, calls of ``method`` beyond ``limit`` per window get HTTP 429."""
        body = {"limit": limit, "window_seconds": window_seconds}
        self._call("PUT", f"/_standin/rate_limits/{method}", body)

    def clear_rate_limit(self, method: str) -> None:
        """Lifts the rate limit of ``method``."""
        self._call("DELETE", f"/_standin/rate_limits/{method}")

    def fail(
        self, method: str, error: str = "service_unavailable", status: int = 503, times: int = 1
    ) -> None:
        """The next ``times`` calls of ``method`` fail with HTTP ``status`` and ``error``."""
        body = {"error": error, "status": status, "times": times}
        self._call("PUT", f"/_standin/failures/{method}", body)

    def clear_failures(self, method: str) -> None:
        """Lifts the scripted failures of ``method``."""
        self._call("DELETE", f"/_standin/failures/{method}")

    def configure(self, **changes: Any) -> Tunables:
        """Changes run-time settings (``Tunables`` fields) until ``reset``; returns all of them."""
        return self._send(Tunables, "PATCH", "/_standin/config", changes)

    def put_user(self, user: User) -> None:
        """Adds a person to the workspace, or replaces one."""
        self._call("PUT", f"/_standin/users/{user.id}", user.model_dump(mode="json"))

    def reset(self) -> None:
        """Back to the state the stand-in started in."""
        self._call("POST", "/_standin/reset")

    def wait_for(
        self, condition: Callable[[], T], *, timeout: float = 30.0, interval: float = 0.1
    ) -> T:
        """Polls ``condition`` until it returns something truthy, and returns that.

        Raises:
            TimeoutError: It did not within ``timeout`` seconds.
        """
        deadline = time.monotonic() + timeout
        while True:
            result = condition()
            if result:
                return result
            if time.monotonic() > deadline:
                raise TimeoutError(f"not met within {timeout} s; last result: {result!r}")
            time.sleep(interval)

    def _call(
        self,
        verb: str,
        path: str,
        body: dict[str, Any] | None = None,
        params: dict[str, str] | None = None,
    ) -> Any:
        response = self._http.request(verb, path, json=body, params=params)
        if response.status_code >= 400:
            raise StandinError(f"{verb} {path}: {response.status_code} {response.text}")
        return response.json()

    def _send(self, model: type[Model], verb: str, path: str, body: dict[str, Any]) -> Model:
        return model.model_validate(self._call(verb, path, body))

    def _list(
        self, model: type[Model], path: str, params: dict[str, str] | None = None
    ) -> list[Model]:
        return [model.model_validate(item) for item in self._call("GET", path, params=params)]
