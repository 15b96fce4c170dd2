"""Handing work from one function to another: Pub/Sub and Cloud Tasks.

A turn reaches ``turn_send`` through the turns topic (a push subscription
delivers it, and functions-framework makes it a CloudEvent). Work that must
happen later, or in a fresh function after a deadline, is a Cloud Task to an
HTTP function; a task *name* makes scheduling idempotent: the same timer set
twice fires once.
"""

from __future__ import annotations

import json
from datetime import datetime
from functools import lru_cache
from typing import Any

import grpc
from google.api_core.exceptions import AlreadyExists
from google.cloud import pubsub_v1, tasks_v2
from google.cloud.tasks_v2.services.cloud_tasks.transports import CloudTasksGrpcTransport
from google.protobuf import timestamp_pb2

from shared.settings import Settings, get_settings

# The longest a Cloud Task may wait for its target (seconds).
MAX_DISPATCH_DEADLINE = 1800


@lru_cache(maxsize=1)
def _publisher() -> pubsub_v1.PublisherClient:
    return pubsub_v1.PublisherClient()


def publish_turn(session_id: str, turn_id: str) -> None:
    """Ask ``turn_send`` to carry the session's next turn (``turn_id`` is the trigger)."""
    settings = get_settings()
    topic = _publisher().topic_path(settings.project, settings.turns_topic)
    payload = json.dumps({"session_id": session_id, "turn_id": turn_id}).encode()
    _publisher().publish(topic, payload).result(timeout=30)


def make_tasks_client(settings: Settings | None = None) -> tasks_v2.CloudTasksClient:
    """A Cloud Tasks client: of the emulator when ``CLOUD_TASKS_EMULATOR_HOST`` is set.

    There is no official Cloud Tasks emulator, so Google's client does not
    know that variable; the client then talks to it over an insecure channel.
    """
    settings = settings or get_settings()
    if settings.cloud_tasks_emulator_host:
        channel = grpc.insecure_channel(settings.cloud_tasks_emulator_host)
        return tasks_v2.CloudTasksClient(transport=CloudTasksGrpcTransport(channel=channel))
    return tasks_v2.CloudTasksClient()


@lru_cache(maxsize=1)
def _tasks_client() -> tasks_v2.CloudTasksClient:
    return make_tasks_client()


def schedule_call(
    queue: str, url: str, body: dict[str, Any], name: str | None = None, at: datetime | None = None
) -> bool:
    """Create a Cloud Task that POSTs ``body`` as JSON to ``url``.

    Returns False when a task of that ``name`` already exists (it was
    scheduled before: the same timer set twice fires once).
    """
    settings = get_settings()
    client = _tasks_client()
    parent = client.queue_path(settings.project, settings.location, queue)
    request: dict[str, Any] = {
        "http_method": tasks_v2.HttpMethod.POST,
        "url": url,
        "headers": {"Content-Type": "application/json"},
        "body": json.dumps(body).encode(),
    }
    if settings.tasks_service_account:
        request["oidc_token"] = {"service_account_email": settings.tasks_service_account}
    task: dict[str, Any] = {
        "http_request": request,
        "dispatch_deadline": {
            "seconds": int(settings.dispatch_deadline_seconds.get(queue, MAX_DISPATCH_DEADLINE))
        },
    }
    if name:
        task["name"] = client.task_path(settings.project, settings.location, queue, name)
    if at:
        stamp = timestamp_pb2.Timestamp()
        stamp.FromDatetime(at)
        task["schedule_time"] = stamp
    try:
        client.create_task(parent=parent, task=task)
    except AlreadyExists:
        return False
    return True
