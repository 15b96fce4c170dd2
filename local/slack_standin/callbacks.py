"""Callbacks to the app, built and signed the way Slack sends them.

Events go to the events URL as a JSON ``event_callback`` envelope;
interactivity payloads (``block_actions``, ``view_submission``) go to the
interactivity URL form-encoded as ``payload=<json>``. Every request carries
``X-Slack-Request-Timestamp`` and ``X-Slack-Signature``, which is
``v0=`` + HMAC-SHA256(signing secret, ``v0:{timestamp}:{raw body}``) over
the exact bytes sent.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import logging
import time
from typing import Any
from urllib.parse import urlencode

import httpx

from local.slack_standin.models import Delivery, Message, SignatureMode, User, View
from local.slack_standin.workspace import (
    APP_ID,
    BOT_USER,
    TEAM_DOMAIN,
    TEAM_ID,
    VERIFICATION_TOKEN,
    ActionTarget,
    channel_type,
    wire_message,
)

log = logging.getLogger("slack_standin")

# A stale signature is this much older than the five minutes receivers allow.
STALE_SECONDS = 600
SINGLE_CHOICE = ("static_select", "radio_buttons", "overflow")
MULTI_CHOICE = ("checkboxes", "multi_static_select")
USER_AGENT = "Slackbot 1.0 (+https://api.slack.com/robots)"


def signature_headers(secret: str, body: bytes, mode: SignatureMode) -> dict[str, str]:
    """The two signature headers for ``body``, signed as ``mode`` says."""
    timestamp = int(time.time()) - (STALE_SECONDS if mode == "stale_timestamp" else 0)
    key = f"not-{secret}" if mode == "wrong_secret" else secret
    base = f"v0:{timestamp}:".encode() + body
    digest = hmac.new(key.encode(), base, hashlib.sha256).hexdigest()
    return {"X-Slack-Request-Timestamp": str(timestamp), "X-Slack-Signature": f"v0={digest}"}


def encode_json(payload: dict[str, Any]) -> bytes:
    """Compact JSON, as Slack sends it."""
    return json.dumps(payload, separators=(",", ":")).encode()


def encode_payload_form(payload: dict[str, Any]) -> bytes:
    """An interactivity body: ``payload=<url-encoded json>``."""
    return urlencode({"payload": json.dumps(payload, separators=(",", ":"))}).encode()


def event_envelope(event: dict[str, Any], event_id: str) -> dict[str, Any]:
    """The ``event_callback`` envelope around one event."""
    context = base64.urlsafe_b64encode(encode_json({"event_id": event_id})).decode()
    return {
        "token": VERIFICATION_TOKEN,
        "team_id": TEAM_ID,
        "context_team_id": TEAM_ID,
        "context_enterprise_id": None,
        "api_app_id": APP_ID,
        "event": event,
        "type": "event_callback",
        "event_id": event_id,
        "event_time": int(time.time()),
        "authorizations": [
            {
                "enterprise_id": None,
                "team_id": TEAM_ID,
                "user_id": BOT_USER.id,
                "is_bot": True,
                "is_enterprise_install": False,
            }
        ],
        "is_ext_shared_channel": False,
        "event_context": f"4-{context}",
    }


def message_event(kind: str, message: Message, parent_user: str | None) -> dict[str, Any]:
    """An ``app_mention`` or ``message`` event for a person's message.

    As on Slack, only ``message`` events carry ``channel_type``, and replies
    carry ``thread_ts`` and ``parent_user_id``.
    """
    event: dict[str, Any] = {
        "type": kind,
        "user": message.user,
        "text": message.text,
        "ts": message.ts,
        "client_msg_id": f"{message.ts}-{message.user}",
        "team": TEAM_ID,
        "blocks": message.blocks,
        "channel": message.channel,
        "event_ts": message.ts,
    }
    if kind == "message":
        event["channel_type"] = channel_type(message.channel)
    if message.thread_ts is not None and message.thread_ts != message.ts:
        event["thread_ts"] = message.thread_ts
        if parent_user is not None:
            event["parent_user_id"] = parent_user
    return event


def agent_session_stopped(
    channel: str, thread_ts: str, user: str, streams: list[str]
) -> dict[str, Any]:
    """The ``agent_session_stopped`` event of a click on the stop button.

    ``streaming_message_ts`` lists the app's streams Slack stopped for it
    (empty when none was streaming). ``team_id`` is only on the envelope.
    """
    return {
        "type": "agent_session_stopped",
        "channel": channel,
        "user": user,
        "thread_ts": thread_ts,
        "streaming_message_ts": streams,
        "event_ts": f"{time.time():.6f}",
    }


def url_verification(challenge: str) -> dict[str, Any]:
    """The request Slack sends when an events URL is saved."""
    return {"token": VERIFICATION_TOKEN, "challenge": challenge, "type": "url_verification"}


def payload_user(user: User) -> dict[str, Any]:
    """The ``user`` object of an interactivity payload."""
    return {"id": user.id, "username": user.handle, "name": user.handle, "team_id": TEAM_ID}


def block_actions(
    *,
    target: ActionTarget,
    user: User,
    trigger_id: str,
    response_url: str,
    action: dict[str, Any],
) -> dict[str, Any]:
    """The ``block_actions`` payload of one click."""
    container: dict[str, Any] = {
        "type": "message",
        "message_ts": target.message_ts,
        "channel_id": target.channel,
        "is_ephemeral": target.is_ephemeral,
    }
    if target.thread_ts is not None:
        container["thread_ts"] = target.thread_ts
    payload: dict[str, Any] = {
        "type": "block_actions",
        "user": payload_user(user),
        "api_app_id": APP_ID,
        "token": VERIFICATION_TOKEN,
        "container": container,
        "trigger_id": trigger_id,
        "team": {"id": TEAM_ID, "domain": TEAM_DOMAIN},
        "enterprise": None,
        "is_enterprise_install": False,
        "channel": {"id": target.channel, "name": target.channel.lower()},
        "state": {"values": {}},
        "response_url": response_url,
        "actions": [action],
    }
    if target.message is not None:
        payload["message"] = wire_message(target.message)
    return payload


def action(
    element: dict[str, Any], block_id: str, value: str | None, values: list[str] | None
) -> dict[str, Any]:
    """The ``actions[0]`` entry for acting on ``element``.

    Raises:
        ValueError: The element cannot be clicked, or the option chosen is
            not one of its options.
    """
    kind = element.get("type")
    entry: dict[str, Any] = {
        "type": kind,
        "action_id": element["action_id"],
        "block_id": block_id,
        "action_ts": f"{time.time():.6f}",
    }
    if kind == "button":
        entry["text"] = element.get("text")
        entry |= {key: element[key] for key in ("value", "style", "url") if key in element}
    elif kind == "feedback_buttons":
        button = _feedback_button(element, value)
        entry |= {"value": button["value"], "text": button["text"]}
    elif kind == "icon_button":
        entry |= {key: element[key] for key in ("icon", "value", "text") if key in element}
    elif kind in SINGLE_CHOICE:
        entry["selected_option"] = _option(element, value)
    elif kind in MULTI_CHOICE:
        entry["selected_options"] = [_option(element, chosen) for chosen in values or []]
    else:
        raise ValueError(f"acting on a {kind} element is not supported")
    return entry


def _feedback_button(element: dict[str, Any], value: str | None) -> dict[str, Any]:
    """The button of a feedback_buttons element a click picks: by its side or its value."""
    buttons = {"positive": element["positive_button"], "negative": element["negative_button"]}
    for side, button in buttons.items():
        if value in (side, button.get("value")):
            return dict(button)
    raise ValueError(f"pick the positive or the negative button of {element['action_id']}")


def view_submission(
    *, view: View, user: User, trigger_id: str, values: dict[str, str | list[str]]
) -> dict[str, Any]:
    """The ``view_submission`` payload of a modal filled with ``values``.

    Raises:
        ValueError: A value names no input of the view, a required input has
            no value, or an option chosen is not one of its options.
    """
    state: dict[str, dict[str, Any]] = {}
    for block in view.view["blocks"]:
        element = block.get("element", {})
        if block.get("type") != "input" or "action_id" not in element:
            continue
        action_id = element["action_id"]
        given = values.get(action_id)
        if given is None and not block.get("optional", False):
            raise ValueError(f"the required input {action_id} has no value")
        state.setdefault(block["block_id"], {})[action_id] = _input_state(element, given)
    inputs = {action_id for entries in state.values() for action_id in entries}
    unknown = set(values) - inputs
    if unknown:
        raise ValueError(f"the view has no inputs {sorted(unknown)}")
    return {
        "type": "view_submission",
        "team": {"id": TEAM_ID, "domain": TEAM_DOMAIN},
        "user": payload_user(user),
        "api_app_id": APP_ID,
        "token": VERIFICATION_TOKEN,
        "trigger_id": trigger_id,
        "view": {**view.view, "state": {"values": state}},
        "response_urls": [],
        "is_enterprise_install": False,
        "enterprise": None,
    }


def _input_state(element: dict[str, Any], given: str | list[str] | None) -> dict[str, Any]:
    kind = element.get("type")
    if kind in SINGLE_CHOICE:
        chosen = None if given is None else _option(element, str(given))
        return {"type": kind, "selected_option": chosen}
    if kind in MULTI_CHOICE:
        picks = [given] if isinstance(given, str) else given or []
        return {"type": kind, "selected_options": [_option(element, pick) for pick in picks]}
    return {"type": kind, "value": given}


def _option(element: dict[str, Any], value: str | None) -> dict[str, Any]:
    options = list(element.get("options", []))
    options += [option for group in element.get("option_groups", []) for option in group["options"]]
    for option in options:
        if option.get("value") == value:
            return dict(option)
    known = [option.get("value") for option in options]
    raise ValueError(f"{value!r} is not an option of {element['action_id']} ({known})")


class Sender:
    """Posts signed callbacks to the app and reports how it answered."""

    def __init__(self, http: httpx.AsyncClient, signing_secret: str) -> None:
        self._http = http
        self._secret = signing_secret

    async def send(
        self,
        *,
        url: str | None,
        kind: str,
        body: bytes,
        content_type: str,
        signature: SignatureMode,
        timeout: float,
        event_id: str | None = None,
        retry_num: int = 0,
        retry_reason: str = "",
    ) -> Delivery:
        """Posts one callback; a timeout or refused connection is an error, not a raise."""
        delivery = Delivery(kind=kind, event_id=event_id, retry_num=retry_num)
        if not url:
            delivery.error = "no callback URL configured"
            return delivery
        headers = {
            "Content-Type": content_type,
            "User-Agent": USER_AGENT,
            **signature_headers(self._secret, body, signature),
        }
        if retry_num:
            headers |= {"X-Slack-Retry-Num": str(retry_num), "X-Slack-Retry-Reason": retry_reason}
        try:
            response = await self._http.post(url, content=body, headers=headers, timeout=timeout)
        except httpx.TimeoutException:
            delivery.error = "http_timeout"
        except httpx.HTTPError as error:
            delivery.error = f"connection_failed: {error}"
        else:
            delivery.status = response.status_code
            delivery.body = response.text
        log.info("callback %s %s -> %s", kind, event_id or "", delivery.status or delivery.error)
        return delivery
