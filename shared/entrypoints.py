"""Glue between the functions' triggers and the shared code.

Errors: a ``RetryableError`` answers 500 so that Pub/Sub or Cloud Tasks
delivers the event again; any other failure is logged and acknowledged, so a
poison event cannot loop for ever.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Mapping
from typing import Any

import structlog
from cloudevents.http import CloudEvent
from flask import Request, Response, jsonify

from shared import engine, ingress, reconciler
from shared.a2a.trace import current_trace, trace_from_headers
from shared.errors import RetryableError
from shared.logs import configure_logging
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
    if path.startswith(TRIGGERS_PREFIX):
        name = path.removeprefix(TRIGGERS_PREFIX)
        reply = handle_trigger(name, request.get_data(cache=False), dict(request.headers))
    elif path in handlers:
        reply = handlers[path](request.get_data(cache=False), request.headers)
    else:
        return Response("not found", 404)
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
    _join_trace(request.headers)
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


def _json(body: Any, status: int) -> Response:
    response = jsonify(body)
    response.status_code = status
    return response
