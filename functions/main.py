"""The five Cloud Functions of Agent Kourier, one entry point each.

Each entry point only translates its trigger into a call of the shared code;
``shared.entrypoints`` holds the few lines of glue. Deployed, this file is
the source root with ``shared/`` beside it.
"""

from __future__ import annotations

import functions_framework
from cloudevents.http import CloudEvent
from flask import Request, Response

from shared import entrypoints


@functions_framework.http
def chat_ingress(request: Request) -> Response:
    """Slack Events API (/slack/events), Interactivity (/slack/interactivity), alerts (/triggers/<name>)."""
    return entrypoints.chat_ingress(request)


@functions_framework.cloud_event
def turn_send(event: CloudEvent) -> None:
    """A turn published on the turns topic (pushed by Pub/Sub, read as a CloudEvent)."""
    entrypoints.turn_send(event)


@functions_framework.http
def stream_follow(request: Request) -> Response:
    """Cloud Task: resume following a stream from its checkpoint."""
    return entrypoints.stream_follow(request)


@functions_framework.http
def reconcile(request: Request) -> Response:
    """Cloud Scheduler / Cloud Task: find and resume sessions whose function died."""
    return entrypoints.reconcile(request)


@functions_framework.http
def timeout(request: Request) -> Response:
    """Cloud Task: a timer fired (busy notice, give-up, question timeout)."""
    return entrypoints.timeout(request)
