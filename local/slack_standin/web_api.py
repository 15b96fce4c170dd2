"""The Slack Web API as slack_sdk's WebClient calls it: ``/api/<method>``.

slack_sdk 3.48 sends every call as a POST with the token in
``Authorization: Bearer``. Methods that carry blocks or chunks send a JSON
body (``application/json;charset=utf-8``); the others (auth.test,
users.info) a form body. As on Slack, a form or query string may carry the
token as ``token`` instead, a JSON body may not, and form fields that hold
structures (blocks, chunks, view, ...) are JSON strings. Answers are HTTP
200 with ``ok`` true or false; a call over a rate limit is HTTP 429 with
``Retry-After`` and ``{"ok": false, "error": "ratelimited"}``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qsl

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from local.slack_standin.core import Standin
from local.slack_standin.models import User
from local.slack_standin.workspace import (
    BOT_ID,
    BOT_USER,
    TEAM_DOMAIN,
    TEAM_ID,
    TEAM_NAME,
    SlackError,
    Workspace,
    wire_message,
)

# Methods Slack answers without a token.
UNAUTHENTICATED = frozenset({"api.test"})
# The error a badly encoded JSON field gets, by field.
_FORMAT_ERRORS = {
    "blocks": "invalid_blocks_format",
    "chunks": "invalid_chunks",
    "metadata": "invalid_metadata_format",
}


class Params:
    """The arguments of one call, typed as a handler asks for them."""

    def __init__(self, values: dict[str, Any]) -> None:
        self.values = values

    def text(self, name: str) -> str | None:
        """A string argument, or None when absent."""
        value = self.values.get(name)
        return None if value is None else str(value)

    def structure(self, name: str) -> Any:
        """A structured argument (list or object), decoded if it came as a string."""
        value = self.values.get(name)
        if not isinstance(value, str):
            return value
        try:
            return json.loads(value)
        except ValueError:
            raise SlackError(_FORMAT_ERRORS.get(name, "invalid_arguments")) from None


def _api_test(workspace: Workspace, params: Params) -> dict[str, Any]:
    return {"args": params.values}


def _auth_test(workspace: Workspace, params: Params) -> dict[str, Any]:
    return {
        "url": f"https://{TEAM_DOMAIN}.slack.com/",
        "team": TEAM_NAME,
        "user": BOT_USER.handle,
        "team_id": TEAM_ID,
        "user_id": BOT_USER.id,
        "bot_id": BOT_ID,
        "is_enterprise_install": False,
    }


def _post_message(workspace: Workspace, params: Params) -> dict[str, Any]:
    message = workspace.post_message(
        channel=params.text("channel") or "",
        text=params.text("text"),
        markdown_text=params.text("markdown_text"),
        blocks=params.structure("blocks"),
        thread_ts=params.text("thread_ts"),
        metadata=params.structure("metadata"),
    )
    return {"channel": message.channel, "ts": message.ts, "message": wire_message(message)}


def _update(workspace: Workspace, params: Params) -> dict[str, Any]:
    message = workspace.update_message(
        channel=params.text("channel") or "",
        ts=params.text("ts") or "",
        text=params.text("text"),
        markdown_text=params.text("markdown_text"),
        blocks=params.structure("blocks"),
        metadata=params.structure("metadata"),
    )
    return {
        "channel": message.channel,
        "ts": message.ts,
        "text": message.text,
        "message": wire_message(message),
    }


def _post_ephemeral(workspace: Workspace, params: Params) -> dict[str, Any]:
    ephemeral = workspace.post_ephemeral(
        channel=params.text("channel") or "",
        user=params.text("user") or "",
        text=params.text("text"),
        markdown_text=params.text("markdown_text"),
        blocks=params.structure("blocks"),
        thread_ts=params.text("thread_ts"),
    )
    return {"message_ts": ephemeral.ts}


def _start_stream(workspace: Workspace, params: Params) -> dict[str, Any]:
    message = workspace.start_stream(
        channel=params.text("channel") or "",
        thread_ts=params.text("thread_ts"),
        markdown_text=params.text("markdown_text"),
        chunks=params.structure("chunks"),
        recipient_user_id=params.text("recipient_user_id"),
        recipient_team_id=params.text("recipient_team_id"),
        task_display_mode=params.text("task_display_mode"),
    )
    return {"channel": message.channel, "ts": message.ts}


def _append_stream(workspace: Workspace, params: Params) -> dict[str, Any]:
    message = workspace.append_stream(
        channel=params.text("channel") or "",
        ts=params.text("ts") or "",
        markdown_text=params.text("markdown_text"),
        chunks=params.structure("chunks"),
    )
    return {"channel": message.channel, "ts": message.ts}


def _stop_stream(workspace: Workspace, params: Params) -> dict[str, Any]:
    message = workspace.stop_stream(
        channel=params.text("channel") or "",
        ts=params.text("ts") or "",
        markdown_text=params.text("markdown_text"),
        chunks=params.structure("chunks"),
        blocks=params.structure("blocks"),
        metadata=params.structure("metadata"),
        session_status=params.text("session_status"),
    )
    return {"channel": message.channel, "ts": message.ts, "message": wire_message(message)}


def _set_agent_status(workspace: Workspace, params: Params) -> dict[str, Any]:
    session, warnings = workspace.set_agent_status(
        channel=params.text("channel_id") or "",
        thread_ts=params.text("thread_ts"),
        status=params.text("status"),
        title=params.text("title"),
        initiator_user_id=params.text("initiator_user_id"),
    )
    answer: dict[str, Any] = {"status": session.status, "agent_status": session.status}
    if session.title is not None:
        answer["title"] = session.title
    if warnings:
        answer |= {"warning": ",".join(warnings), "response_metadata": {"warnings": warnings}}
    return answer


def _rename_agent_session(workspace: Workspace, params: Params) -> dict[str, Any]:
    session = workspace.rename_agent_session(
        channel=params.text("channel_id") or "",
        thread_ts=params.text("thread_ts"),
        title=params.text("title"),
    )
    return {"title": session.title}


def _set_status(workspace: Workspace, params: Params) -> dict[str, Any]:
    status = params.text("status")
    if status is None:
        raise SlackError("invalid_arguments")
    workspace.set_status(
        channel=params.text("channel_id") or "",
        thread_ts=params.text("thread_ts") or "",
        status=status,
        loading_messages=params.structure("loading_messages"),
    )
    return {}


def _replies(workspace: Workspace, params: Params) -> dict[str, Any]:
    channel, ts = params.text("channel"), params.text("ts")
    if not channel:
        raise SlackError("channel_not_found")
    if not ts:
        raise SlackError("thread_not_found")
    limit = params.text("limit")
    if limit is not None and not limit.isdigit():
        raise SlackError("invalid_limit")
    messages, next_cursor = workspace.replies(
        channel=channel,
        ts=ts,
        cursor=params.text("cursor"),
        limit=int(limit) if limit else 1000,
        oldest=params.text("oldest"),
    )
    with_metadata = params.text("include_all_metadata") in ("true", "True", "1")
    wire = [wire_message(message) for message in messages]
    if not with_metadata:
        for message in wire:
            message.pop("metadata", None)
    return {
        "messages": wire,
        "has_more": bool(next_cursor),
        "response_metadata": {"next_cursor": next_cursor},
    }


def _users_info(workspace: Workspace, params: Params) -> dict[str, Any]:
    return {"user": user_object(workspace.user(params.text("user") or ""))}


def _views_open(workspace: Workspace, params: Params) -> dict[str, Any]:
    view = workspace.open_view(
        trigger_id=params.text("trigger_id") or "", view=params.structure("view")
    )
    return {"view": view.view}


HANDLERS: dict[str, Callable[[Workspace, Params], dict[str, Any]]] = {
    "api.test": _api_test,
    "auth.test": _auth_test,
    "chat.postMessage": _post_message,
    "chat.update": _update,
    "chat.postEphemeral": _post_ephemeral,
    "chat.startStream": _start_stream,
    "chat.appendStream": _append_stream,
    "chat.stopStream": _stop_stream,
    "assistant.threads.setStatus": _set_status,
    "agents.sessions.setStatus": _set_agent_status,
    "agents.sessions.rename": _rename_agent_session,
    "conversations.replies": _replies,
    "users.info": _users_info,
    "views.open": _views_open,
}


def user_object(user: User) -> dict[str, Any]:
    """A person as users.info shows them."""
    profile: dict[str, Any] = {
        "real_name": user.real_name,
        "display_name": user.display_name,
        "real_name_normalized": user.real_name,
        "display_name_normalized": user.display_name,
        "team": TEAM_ID,
    }
    if user.email:
        profile["email"] = user.email
    if user.is_bot:
        profile["bot_id"] = BOT_ID
    return {
        "id": user.id,
        "team_id": TEAM_ID,
        "name": user.handle,
        "deleted": False,
        "real_name": user.real_name,
        "tz": "Etc/UTC",
        "tz_label": "Coordinated Universal Time",
        "tz_offset": 0,
        "profile": profile,
        "is_admin": False,
        "is_owner": False,
        "is_bot": user.is_bot,
        "is_app_user": False,
        "updated": 1700000000,
    }


async def _read_call(request: Request) -> tuple[dict[str, Any], str | None]:
    """The arguments and the token of a call, wherever Slack accepts them."""
    params: dict[str, Any] = dict(request.query_params)
    token = params.pop("token", None)
    raw = await request.body()
    content_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if raw and content_type == "application/json":
        try:
            body = json.loads(raw)
        except ValueError:
            raise SlackError("invalid_json") from None
        if not isinstance(body, dict):
            raise SlackError("invalid_json")
        body.pop("token", None)
        params.update(body)
    elif raw and content_type == "application/x-www-form-urlencoded":
        form = dict(parse_qsl(raw.decode(), keep_blank_values=True))
        token = form.pop("token", token)
        params.update(form)
    elif raw:
        raise SlackError("invalid_post_type")
    authorization = request.headers.get("authorization", "")
    if authorization.startswith("Bearer "):
        token = authorization.removeprefix("Bearer ").strip()
    return params, token


async def call_method(request: Request) -> JSONResponse:
    """One Web API call, answered and logged as Slack would answer it."""
    standin: Standin = request.app.state.standin
    method = request.path_params["method"]
    params: dict[str, Any] = {}
    status_code, headers = 200, {}
    try:
        handler = HANDLERS.get(method)
        if handler is None:
            raise SlackError("unknown_method")
        params, token = await _read_call(request)
        if method not in UNAUTHENTICATED and not token:
            raise SlackError("not_authed")
        if method not in UNAUTHENTICATED and token != standin.settings.bot_token:
            raise SlackError("invalid_auth")
        retry_after = standin.limiter.retry_after(method)
        if retry_after is not None:
            status_code, headers = 429, {"Retry-After": str(retry_after)}
            raise SlackError("ratelimited")
        failure = standin.failures.next(method)
        if failure is not None:
            status_code = failure.status
            raise SlackError(failure.error)
        body = {"ok": True, **handler(standin.workspace, Params(params))}
    except SlackError as error:
        body = {"ok": False, "error": error.code}
    standin.record_call(method, params, status_code, body)
    return JSONResponse(body, status_code=status_code, headers=headers)


routes = [Route("/api/{method}", call_method, methods=["GET", "POST"])]
