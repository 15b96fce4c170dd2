"""Handing work from one function to another: Pub/Sub and Cloud Tasks.

A turn reaches ``turn_send`` through the turns topic (a push subscription
delivers it, and functions-framework makes it a CloudEvent):
``PubSubTurnQueue`` is the ``TurnQueue`` port. Work that must happen later,
or in a fresh function after a deadline, is a Cloud Task to an HTTP function:
``CloudTasksQueue`` is the ``TaskQueue`` port. A task *name* makes scheduling
idempotent: the same timer set twice fires once. A publish or a task that
fails for now raises ``HandoffUnavailable``, so the function fails and its
own event is delivered again.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from concurrent.futures import TimeoutError as FutureTimeout
from datetime import datetime
from typing import Any

import grpc
from google.api_core import exceptions as google
from google.cloud import tasks_v2
from google.cloud.pubsub_v1 import PublisherClient
from google.cloud.tasks_v2.services.cloud_tasks.transports import CloudTasksGrpcTransport
from google.protobuf import timestamp_pb2

from shared.core.timers import QuestionTimer, Timer, WaitTimer
from shared.errors import RetryableError
from shared.ports import TaskTarget
from shared.settings import Settings

PUBLISH_TIMEOUT_SECONDS = 30.0

WAIT_TIMER = "wait-"
QUESTION_TIMER = "question-"
"""The wire names of timers (``timer_name``): kept as they were, for tasks already set."""

TRANSIENT = (
    google.ServerError,
    google.TooManyRequests,
    google.DeadlineExceeded,
    google.RetryError,
    FutureTimeout,
)
"""Pub/Sub and Cloud Tasks failures that a later attempt may not meet."""

# The longest a Cloud Task may wait for its target (seconds).
MAX_DISPATCH_DEADLINE = 1800


class HandoffUnavailable(RetryableError):
    """Pub/Sub or Cloud Tasks failed for now."""


class PubSubTurnQueue:
    """The turns topic (the ``TurnQueue`` port)."""

    def __init__(self, settings: Settings, publisher: PublisherClient) -> None:
        self._publisher = publisher
        self._topic = publisher.topic_path(settings.project, settings.turns_topic)

    def publish_turn(self, session_id: str, turn_id: str) -> None:
        """Publish and wait until Pub/Sub has the message."""
        payload = json.dumps({"session_id": session_id, "turn_id": turn_id}).encode()
        try:
            self._publisher.publish(self._topic, payload).result(timeout=PUBLISH_TIMEOUT_SECONDS)
        except TRANSIENT as error:
            raise HandoffUnavailable(f"publish to {self._topic}: {error!r}") from error


def make_tasks_client(settings: Settings) -> tasks_v2.CloudTasksClient:
    """A Cloud Tasks client: of the emulator when ``CLOUD_TASKS_EMULATOR_HOST`` is set.

    There is no official Cloud Tasks emulator, so Google's client does not
    know that variable; the client then talks to it over an insecure channel.
    """
    if settings.cloud_tasks_emulator_host:
        channel = grpc.insecure_channel(settings.cloud_tasks_emulator_host)
        return tasks_v2.CloudTasksClient(transport=CloudTasksGrpcTransport(channel=channel))
    return tasks_v2.CloudTasksClient()


class CloudTasksQueue:
    """Cloud Tasks to ``stream_follow`` and ``timeout`` (the ``TaskQueue`` port)."""

    def __init__(self, settings: Settings, client: tasks_v2.CloudTasksClient) -> None:
        self._settings = settings
        self._client = client

    def schedule(
        self,
        target: TaskTarget,
        body: Mapping[str, Any],
        *,
        name: str | None = None,
        at: datetime | None = None,
    ) -> bool:
        """Create the task; False when a task of that ``name`` exists."""
        settings = self._settings
        queue, url = {
            "stream_follow": (settings.follow_queue, settings.stream_follow_url),
            "timeout": (settings.timers_queue, settings.timeout_url),
        }[target]
        parent = self._client.queue_path(settings.project, settings.location, queue)
        request: dict[str, Any] = {
            "http_method": tasks_v2.HttpMethod.POST,
            "url": url,
            "headers": {"Content-Type": "application/json"},
            "body": json.dumps(dict(body)).encode(),
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
            task["name"] = self._client.task_path(settings.project, settings.location, queue, name)
        if at:
            stamp = timestamp_pb2.Timestamp()
            stamp.FromDatetime(at)
            task["schedule_time"] = stamp
        try:
            self._client.create_task(parent=parent, task=tasks_v2.Task(task))
        except google.AlreadyExists:
            return False
        except TRANSIENT as error:
            raise HandoffUnavailable(f"Cloud Tasks {queue}: {error!r}") from error
        return True


def timer_name(timer: Timer) -> str:
    """How a timer is named in its Cloud Task (its body's ``timer``, and in the task's name)."""
    match timer:
        case WaitTimer(attempt=attempt):
            return f"{WAIT_TIMER}{attempt}"
        case QuestionTimer(key=key):
            return f"{QUESTION_TIMER}{key}"


def read_timer(name: str) -> Timer:
    """The timer a Cloud Task names (``timer_name``'s inverse).

    Raises:
        ValueError: No timer is named so (the task is poison: acknowledged and logged).
    """
    if name.startswith(QUESTION_TIMER) and len(name) > len(QUESTION_TIMER):
        return QuestionTimer(name.removeprefix(QUESTION_TIMER))
    attempt = name.removeprefix(WAIT_TIMER)
    if name.startswith(WAIT_TIMER) and attempt.isdigit():
        return WaitTimer(int(attempt))
    raise ValueError(f"no timer is named {name!r}")
