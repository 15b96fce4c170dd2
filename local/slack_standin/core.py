"""The stand-in as a whole: the workspace, the callbacks it sends, its logs.

Theory of operation: the Web API and the control API share one ``Standin``.
A person's action through the control API first changes the workspace as
Slack would (a typed message is stored before its events leave), then sends
the callbacks and waits for the app's answers, so the caller learns the
HTTP status the app gave each one. While it waits, the app may call the Web
API of the same process (the server is asynchronous). Every event sent is
kept by event_id so it can be sent again as Slack retries it: same body,
rising ``X-Slack-Retry-Num``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import math
import secrets
import time
from collections import deque
from dataclasses import dataclass
from typing import Any

import httpx

from local.slack_standin import callbacks
from local.slack_standin.models import (
    ApiCall,
    ClickRequest,
    Delivery,
    Interaction,
    Posted,
    RateLimit,
    ResendRequest,
    SayRequest,
    ScriptedFailure,
    SignatureMode,
    SignedRequest,
    StopPressed,
    StopRequest,
    Submission,
    SubmitRequest,
    Tunables,
    UrlVerification,
    View,
)
from local.slack_standin.settings import StandinSettings
from local.slack_standin.workspace import BOT_USER, Workspace, new_id

CALL_LOG_SIZE = 10_000
log = logging.getLogger("slack_standin")


@dataclass
class SentEvent:
    """An event callback as first sent, and how often it was sent again."""

    envelope: dict[str, Any]
    retries: int = 0


class RateLimiter:
    """Per-method sliding-window limits, off until a test sets one."""

    def __init__(self) -> None:
        self.limits: dict[str, RateLimit] = {}
        self._recent: dict[str, deque[float]] = {}

    def set(self, method: str, limit: RateLimit | None) -> None:
        """Sets or (with None) lifts the limit of one method."""
        self._recent.pop(method, None)
        if limit is None:
            self.limits.pop(method, None)
        else:
            self.limits[method] = limit

    def retry_after(self, method: str) -> int | None:
        """Seconds to wait if this call is over the limit, else None (and it counts)."""
        limit = self.limits.get(method)
        if limit is None:
            return None
        now = time.monotonic()
        recent = self._recent.setdefault(method, deque())
        while recent and now - recent[0] >= limit.window_seconds:
            recent.popleft()
        if len(recent) >= limit.limit:
            return max(1, math.ceil(recent[0] + limit.window_seconds - now))
        recent.append(now)
        return None


class Failures:
    """Scripted failures per method, off until a test sets one."""

    def __init__(self) -> None:
        self.scripted: dict[str, ScriptedFailure] = {}

    def set(self, method: str, failure: ScriptedFailure | None) -> None:
        """Sets or (with None) lifts the failures of one method."""
        if failure is None:
            self.scripted.pop(method, None)
        else:
            self.scripted[method] = failure

    def next(self, method: str) -> ScriptedFailure | None:
        """The failure this call gets, if one is scripted (and it counts)."""
        failure = self.scripted.get(method)
        if failure is None:
            return None
        if failure.times <= 1:
            self.scripted.pop(method)
        else:
            self.scripted[method] = failure.model_copy(update={"times": failure.times - 1})
        return failure


class Changes:
    """A count of the changes to the stand-in's state, and a way to wait for the next one.

    Whatever changes the state bumps it (the server after every request that
    is not a read, see ``app.ChangeNotifier``); a watcher such as the
    console's event stream waits for a count past the one it showed.
    """

    def __init__(self) -> None:
        self.count = 0
        self._next = asyncio.Event()

    def bump(self) -> None:
        """Something changed: wake everyone waiting."""
        self.count += 1
        self._next.set()
        self._next = asyncio.Event()

    async def wait(self, seen: int, timeout: float) -> int:
        """The count once it is past ``seen``, or as it is after ``timeout`` seconds."""
        if self.count == seen:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._next.wait(), timeout)
        return self.count


class Standin:
    """Everything one stand-in process holds."""

    def __init__(self, settings: StandinSettings, http: httpx.AsyncClient) -> None:
        self.settings = settings
        self.sender = callbacks.Sender(http, settings.signing_secret)
        self.changes = Changes()
        self.reset()

    def reset(self) -> None:
        """Back to the state the process started in."""
        self.workspace = Workspace(
            self.settings.channel_ids(), self.settings.people(), self.settings.tunables()
        )
        self.limiter = RateLimiter()
        self.failures = Failures()
        self.calls: deque[ApiCall] = deque(maxlen=CALL_LOG_SIZE)
        self._events: dict[str, SentEvent] = {}

    @property
    def tunables(self) -> Tunables:
        """The run-time settings in force."""
        return self.workspace.tunables

    def configure(self, changes: dict[str, Any]) -> Tunables:
        """Changes some run-time settings; the others stay.

        Raises:
            ValueError: A name is not a run-time setting, or a value is not
                valid (pydantic.ValidationError).
        """
        unknown = set(changes) - set(Tunables.model_fields)
        if unknown:
            raise ValueError(f"not run-time settings: {sorted(unknown)}")
        merged = {**self.tunables.model_dump(), **changes}
        self.workspace.tunables = Tunables.model_validate(merged)
        return self.workspace.tunables

    def record_call(
        self, method: str, params: dict[str, Any], status_code: int, body: dict[str, Any]
    ) -> None:
        """Logs one Web API call as it was answered, with the thread it was about."""
        log.info("api %s -> %s", method, body.get("error") or "ok")
        channel, thread_ts = self.workspace.call_thread(params, body)
        self.calls.append(
            ApiCall(
                method=method,
                params=params,
                status_code=status_code,
                ok=bool(body.get("ok")),
                error=body.get("error"),
                at=time.time(),
                answer=body,
                channel=channel,
                thread_ts=thread_ts,
            )
        )

    async def say(self, request: SayRequest) -> Posted:
        """A person writes; the app hears an app_mention and/or a message event.

        Raises:
            LookupError: No such person or thread.
        """
        text = request.text
        mention = f"<@{BOT_USER.id}>"
        if request.as_mention and mention not in text:
            text = f"{mention} {text}"
        message = self.workspace.user_said(
            channel=request.channel, user=request.user, text=text, thread_ts=request.thread_ts
        )
        self.changes.bump()  # the message shows before the app has answered its events
        parent_user = None
        if request.thread_ts is not None:
            parent_user = self.workspace.thread(request.channel, request.thread_ts)[0].user
        # A mention arrives as app_mention, and also as message when the app
        # subscribes to messages; a plain message only as message.
        kinds = ["app_mention"] if request.as_mention else []
        if request.both_events or not request.as_mention:
            kinds.append("message")
        event_ids = []
        for kind in kinds:
            event_id = new_id("Ev")
            event = callbacks.message_event(kind, message, parent_user)
            self._events[event_id] = SentEvent(callbacks.event_envelope(event, event_id))
            event_ids.append(event_id)
        deliveries = await asyncio.gather(
            *(self._send_event(event_id, request.signature) for event_id in event_ids)
        )
        return Posted(
            channel=message.channel,
            ts=message.ts,
            thread_ts=request.thread_ts,
            event_ids=event_ids,
            deliveries=list(deliveries),
        )

    async def resend(self, event_id: str, request: ResendRequest) -> Delivery:
        """Sends an event again as a Slack retry.

        Raises:
            LookupError: No event was sent with this ID.
        """
        sent = self._events.get(event_id)
        if sent is None:
            raise LookupError(f"no event {event_id} was sent")
        sent.retries += 1
        return await self._send_event(event_id, request.signature, request.reason)

    async def verify_url(self, request: SignedRequest) -> UrlVerification:
        """Sends a url_verification challenge; the app must echo it."""
        challenge = secrets.token_urlsafe(24)
        delivery = await self.sender.send(
            url=self.tunables.events_url,
            kind="url_verification",
            body=callbacks.encode_json(callbacks.url_verification(challenge)),
            content_type="application/json",
            signature=request.signature,
            timeout=self.tunables.ack_timeout_seconds,
        )
        echoed = delivery.status == 200 and challenge in (
            delivery.body.strip(),
            _json_object(delivery.body).get("challenge"),
        )
        return UrlVerification(challenge=challenge, echoed=echoed, delivery=delivery)

    async def click(self, request: ClickRequest) -> Interaction:
        """A person acts on an element of a message: a block_actions callback.

        Raises:
            LookupError: No such person, message or element.
            ValueError: The element cannot be acted on with these values.
        """
        workspace = self.workspace
        user = workspace.users.get(request.user)
        if user is None:
            raise LookupError(f"no person {request.user} in the workspace")
        target = workspace.find_action(
            channel=request.channel,
            message_ts=request.message_ts,
            action_id=request.action_id,
            block_id=request.block_id,
        )
        action = callbacks.action(target.element, target.block_id, request.value, request.values)
        if "selected_options" in action:
            workspace.select(target, user.id, [str(o["value"]) for o in action["selected_options"]])
        trigger_id = workspace.issue_trigger(user.id, target)
        token = workspace.issue_response_token(target, user.id)
        response_url = f"http://127.0.0.1:{self.settings.port}/actions/{token}"
        payload = callbacks.block_actions(
            target=target,
            user=user,
            trigger_id=trigger_id,
            response_url=response_url,
            action=action,
        )
        if target.element.get("type") == "feedback_buttons":
            workspace.record_feedback(target, user.id, action)
        delivery = await self._send_interaction("block_actions", payload, request.signature)
        return Interaction(
            trigger_id=trigger_id, response_url=response_url, action=action, delivery=delivery
        )

    async def press_stop(self, channel: str, thread_ts: str, request: StopRequest) -> StopPressed:
        """A person presses the stop button of a thread's agent session.

        Slack stops the app's streams in the thread, then sends
        ``agent_session_stopped`` (kept, so it can be sent again as a retry).

        Raises:
            LookupError: No such person, or no agent session in the thread.
            ValueError: The session shows no stop button now.
        """
        streams = self.workspace.press_stop(channel=channel, thread_ts=thread_ts, user=request.user)
        event_id = new_id("Ev")
        event = callbacks.agent_session_stopped(channel, thread_ts, request.user, streams)
        self._events[event_id] = SentEvent(callbacks.event_envelope(event, event_id))
        delivery = await self._send_event(event_id, request.signature)
        return StopPressed(
            channel=channel,
            thread_ts=thread_ts,
            user=request.user,
            streaming_message_ts=streams,
            event_id=event_id,
            delivery=delivery,
        )

    async def submit(self, view_id: str, request: SubmitRequest) -> Submission:
        """A person submits an open modal: a view_submission callback.

        The app's answer acts as on Slack: an empty 200 closes the modal;
        ``response_action`` "errors" keeps it open with the errors, "update"
        replaces it, "push" opens another on top, "clear" closes it.

        Raises:
            LookupError: No such view.
            ValueError: The view is closed, or the values do not fit its inputs.
        """
        workspace = self.workspace
        view = workspace.views.get(view_id)
        if view is None:
            raise LookupError(f"no view {view_id}")
        if not view.open:
            raise ValueError(f"the view {view_id} is closed")
        payload = callbacks.view_submission(
            view=view,
            user=workspace.users[view.user],
            trigger_id=workspace.issue_trigger(view.user),
            values=request.values,
        )
        delivery = await self._send_interaction("view_submission", payload, request.signature)
        answer = _json_object(delivery.body) if delivery.status == 200 else {}
        response_action = answer.get("response_action")
        errors = {str(k): str(v) for k, v in dict(answer.get("errors") or {}).items()}
        if delivery.status == 200:
            self._apply_view_answer(view, response_action, answer, errors)
        return Submission(
            view_id=view_id,
            response_action=response_action,
            errors=errors,
            view_open=view.open,
            delivery=delivery,
        )

    def _apply_view_answer(
        self,
        view: View,
        response_action: str | None,
        answer: dict[str, Any],
        errors: dict[str, str],
    ) -> None:
        if response_action == "errors":
            view.errors = errors
        elif response_action == "update" and isinstance(answer.get("view"), dict):
            view.view = {**view.view, **answer["view"], "id": view.id}
            view.errors = {}
        elif response_action == "push" and isinstance(answer.get("view"), dict):
            pushed_id = new_id("V")
            self.workspace.views[pushed_id] = View(
                id=pushed_id,
                user=view.user,
                view={**answer["view"], "id": pushed_id, "previous_view_id": view.id},
            )
        else:
            self.workspace.close_view(view.id)

    async def _send_event(
        self, event_id: str, signature: SignatureMode, retry_reason: str = ""
    ) -> Delivery:
        sent = self._events[event_id]
        return await self.sender.send(
            url=self.tunables.events_url,
            kind=sent.envelope["event"]["type"],
            body=callbacks.encode_json(sent.envelope),
            content_type="application/json",
            signature=signature,
            timeout=self.tunables.ack_timeout_seconds,
            event_id=event_id,
            retry_num=sent.retries,
            retry_reason=retry_reason,
        )

    async def _send_interaction(
        self, kind: str, payload: dict[str, Any], signature: SignatureMode
    ) -> Delivery:
        return await self.sender.send(
            url=self.tunables.interactivity_url or self.tunables.events_url,
            kind=kind,
            body=callbacks.encode_payload_form(payload),
            content_type="application/x-www-form-urlencoded",
            signature=signature,
            timeout=self.tunables.ack_timeout_seconds,
        )


def _json_object(text: str) -> dict[str, Any]:
    """The JSON object in an app's answer, or {} when it holds none."""
    try:
        value = json.loads(text) if text.strip() else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}
