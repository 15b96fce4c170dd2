"""Glue between the functions' triggers (Flask requests, CloudEvents) and ``shared.handlers``.

Errors: ``shared.handlers`` decides "retry" or "ack"; a retry answers 500
(or raises, for the CloudEvent of turn_send), so that Pub/Sub or Cloud Tasks
delivers the event again; everything else is acknowledged.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Mapping
from typing import Any

import structlog
from cloudevents.http import CloudEvent
from flask import Request, Response, jsonify

from shared import handlers, ingress, reconciler
from shared.a2a.trace import current_trace, trace_from_headers
from shared.bootstrap import Deps, deps
from shared.errors import RetryableError
from shared.triggers.route import TRIGGERS_PREFIX, handle_trigger

log = structlog.get_logger()


def chat_ingress(request: Request) -> Response:
    """Route Slack's two callbacks, the triggers and the health check."""
    if request.method == "GET" and request.path.rstrip("/") in ("/healthz", ""):
        report = reconciler.health(deps())
        return _json(report, 200 if report["ok"] else 503)
    if request.method != "POST":
        return Response("method not allowed", 405)
    routes: dict[str, Callable[[Deps, bytes, Any], ingress.Reply]] = {
        "/slack/events": ingress.handle_event,
        "/slack/interactivity": ingress.handle_interaction,
    }
    path = request.path.rstrip("/")
    if not path.startswith(TRIGGERS_PREFIX) and path not in routes:
        return Response("not found", 404)
    body = _body_within(request, deps().settings.max_callback_bytes)
    if body is None:  # no callback is this long: refused before anything reads it
        return Response("request too large", 413)
    if path.startswith(TRIGGERS_PREFIX):
        reply = handle_trigger(
            deps(), path.removeprefix(TRIGGERS_PREFIX), body, dict(request.headers)
        )
    else:
        reply = routes[path](deps(), body, request.headers)
    return (
        _json(reply.body, reply.status)
        if isinstance(reply.body, dict)
        else Response(reply.body, reply.status)
    )


def turn_send(event: CloudEvent) -> None:
    """Decode the Pub/Sub message and carry the session's next turn (raise: deliver again)."""
    _join_trace(
        {"traceparent": event.get("traceparent") or "", "tracestate": event.get("tracestate") or ""}
    )
    try:
        message = json.loads(base64.b64decode(event.data["message"]["data"]))
    except (KeyError, TypeError, ValueError):
        log.exception("event_failed")  # poison: not a turn message
        return
    if handlers.turn_send(deps(), message) == "retry":
        raise RetryableError("turn_send failed for now; Pub/Sub delivers the turn again")


def stream_follow(request: Request) -> Response:
    """Resume a turn handed over near a deadline, or send the answer to its question."""
    return _task_call(request, handlers.stream_follow)


def reconcile(request: Request) -> Response:
    """The periodic sweep."""
    return _task_call(request, lambda deps, body: handlers.reconcile(deps))


def timeout(request: Request) -> Response:
    """A turn's timer fired (a backoff or a poll ended, a question waited too long)."""
    return _task_call(request, handlers.timeout)


def _task_call(
    request: Request, handler: Callable[[Deps, dict[str, Any]], handlers.Outcome]
) -> Response:
    """A Cloud Task (or Scheduler) call: 500 makes Cloud Tasks deliver it again."""
    if request.method == "GET":
        return Response("ok", 200)
    _join_trace(dict(request.headers.items()))
    body = request.get_json(silent=True)
    if not isinstance(body, dict):
        body = {}
    if handler(deps(), body) == "retry":
        return Response("retry", 500)
    return Response("done", 200)


def _join_trace(headers: Mapping[str, str]) -> None:
    """Calls to agents from here carry the incoming trace; logs name it."""
    trace = trace_from_headers(headers)
    current_trace.set(trace)
    structlog.contextvars.clear_contextvars()
    if trace is not None:
        structlog.contextvars.bind_contextvars(trace_id=trace.traceparent.split("-")[1])


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
