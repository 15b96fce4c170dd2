"""Glue between the functions' triggers and the shared code.

Errors: a ``RetryableError`` answers 500 so that Pub/Sub or Cloud Tasks
delivers the event again; any other failure is logged and acknowledged, so a
poison event cannot loop for ever.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Mapping
from typing import Any, cast

import structlog
from cloudevents.http import CloudEvent
from flask import Request, Response, jsonify

from shared import engine, ingress, reconciler
from shared.a2a.trace import current_trace, trace_from_headers
from shared.errors import RetryableError
from shared.logs import configure_logging
from shared.settings import get_settings
from shared.triggers.route import TRIGGERS_PREFIX, handle_trigger

configure_logging()
log = structlog.get_logger()


def chat_ingress(request: Request) -> Response:
    """Route Slack's two callbacks, the triggers and the health check."""
    if request.method == "GET" and request.path.rstrip("/") in ("/healthz", ""):
        report = reconciler.health()
        return _json(report, 200 if report["ok"] else 503)
    if request.method != "POST":
        return Response("method not allowed", 405)
    handlers: dict[str, Callable[[bytes, Any], ingress.Reply]] = {
        "/slack/events": ingress.handle_event,
        "/slack/interactivity": ingress.handle_interaction,
    }
    path = request.path.rstrip("/")
    if not path.startswith(TRIGGERS_PREFIX) and path not in handlers:
        return Response("not found", 404)
    body = _body_within(request, get_settings().max_callback_bytes)
    if body is None:  # no callback is this long: refused before anything reads it
        return Response("request too large", 413)
    if path.startswith(TRIGGERS_PREFIX):
        reply = handle_trigger(path.removeprefix(TRIGGERS_PREFIX), body, dict(request.headers))
    else:
        reply = handlers[path](body, request.headers)
    return (
        _json(reply.body, reply.status)
        if isinstance(reply.body, dict)
        else Response(reply.body, reply.status)
    )


def turn_send(event: CloudEvent) -> None:
    """Decode the Pub/Sub message and carry the session's next turn."""
    _join_trace(
        {"traceparent": event.get("traceparent") or "", "tracestate": event.get("tracestate") or ""}
    )
    message = event.data["message"]
    payload = json.loads(base64.b64decode(message["data"]))
    _guarded(lambda: engine.on_turn_published(payload["session_id"], payload["turn_id"]))


def stream_follow(request: Request) -> Response:
    """Resume a turn handed over near a deadline, or send the answer to its question."""
    return _task_call(
        request,
        lambda body: engine.on_resume(
            body["session_id"], body["turn_id"], body["generation"], answer=body.get("answer")
        ),
    )


def reconcile(request: Request) -> Response:
    """The periodic sweep."""
    return _task_call(request, lambda body: reconciler.sweep())


def timeout(request: Request) -> Response:
    """A turn's timer fired (a backoff or a poll ended, a question waited too long)."""
    return _task_call(
        request,
        lambda body: engine.on_resume(
            body["session_id"], body["turn_id"], body["generation"], timer=body["timer"]
        ),
    )


def _task_call(request: Request, work: Callable[[dict[str, Any]], object]) -> Response:
    if request.method == "GET":
        return Response("ok", 200)
    _join_trace(cast(Mapping[str, str], request.headers))  # werkzeug Headers: case-blind
    body = request.get_json(silent=True) or {}
    try:
        _guarded(lambda: work(body))
    except RetryableError:
        return Response("retry", 500)
    return Response("done", 200)


def _join_trace(headers: Mapping[str, str]) -> None:
    """Calls to agents from here carry the incoming trace; logs name it."""
    trace = trace_from_headers(headers)
    current_trace.set(trace)
    structlog.contextvars.clear_contextvars()
    if trace is not None:
        structlog.contextvars.bind_contextvars(trace_id=trace.traceparent.split("-")[1])


def _guarded(work: Callable[[], object]) -> None:
    """Run ``work``; a RetryableError propagates (the platform retries), others are logged."""
    try:
        work()
    except RetryableError:
        log.warning("retrying_later", exc_info=True)
        raise
    except Exception:  # a poison event must not loop for ever
        log.exception("event_failed")


def _body_within(request: Request, limit: int) -> bytes | None:
    """The request's body, or None when it is longer than ``limit`` (then read no further)."""
    if request.content_length is not None and request.content_length > limit:
        return None
    body = b""
    while len(body) <= limit:
        piece = request.stream.read(limit + 1 - len(body))
        if not piece:
            return body
        body += piece
    return None


def _json(body: Any, status: int) -> Response:
    response = jsonify(body)
    response.status_code = status
    return response
