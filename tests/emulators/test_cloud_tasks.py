"""Cloud Tasks emulator (local.tasks_emulator): scheduling, unique names, deletion and backoff."""

from __future__ import annotations

import itertools
import uuid
from datetime import UTC, datetime, timedelta

import pytest
from google.api_core.exceptions import AlreadyExists, NotFound
from google.cloud import tasks_v2

from local.emulators import EmulatorEnv
from shared.handoff import make_tasks_client
from shared.settings import Settings
from tests.emulators.http_recorder import Endpoint, HttpRecorder

SCHEDULE_DELAY = timedelta(seconds=2)
MIN_BACKOFF = timedelta(seconds=0.5)
MAX_ATTEMPTS = 3


@pytest.fixture
def tasks(emulators: EmulatorEnv) -> tasks_v2.CloudTasksClient:
    return make_tasks_client(Settings())


@pytest.fixture
def queue(emulators: EmulatorEnv, tasks: tasks_v2.CloudTasksClient) -> str:
    """A new queue of its own: retries start at MIN_BACKOFF, doubling, and stop after MAX_ATTEMPTS."""
    location = tasks.common_location_path(emulators.project, "us-central1")
    return tasks.create_queue(
        parent=location,
        queue=tasks_v2.Queue(
            name=f"{location}/queues/q-{uuid.uuid4().hex}",
            retry_config=tasks_v2.RetryConfig(
                max_attempts=MAX_ATTEMPTS, min_backoff=MIN_BACKOFF, max_doublings=10
            ),
        ),
    ).name


def http_task(
    endpoint: Endpoint, name: str = "", schedule_time: datetime | None = None
) -> tasks_v2.Task:
    return tasks_v2.Task(
        name=name,
        schedule_time=schedule_time,
        http_request=tasks_v2.HttpRequest(url=endpoint.url, body=b'{"checkpoint": 1}'),
    )


def test_scheduled_task_is_delivered_at_its_schedule_time(
    tasks: tasks_v2.CloudTasksClient, queue: str, http_recorder: HttpRecorder
) -> None:
    endpoint = http_recorder.endpoint()
    schedule_time = datetime.now(UTC) + SCHEDULE_DELAY

    tasks.create_task(parent=queue, task=http_task(endpoint, schedule_time=schedule_time))

    [delivery] = endpoint.wait_for_requests(1)
    assert delivery.received_at >= schedule_time.timestamp()
    assert delivery.body == b'{"checkpoint": 1}'


def test_task_name_already_used_is_refused_also_after_the_task_ran(
    tasks: tasks_v2.CloudTasksClient, queue: str, http_recorder: HttpRecorder
) -> None:
    endpoint = http_recorder.endpoint()
    name = f"{queue}/tasks/follow-{uuid.uuid4().hex}"
    tasks.create_task(parent=queue, task=http_task(endpoint, name))

    with pytest.raises(AlreadyExists):
        tasks.create_task(parent=queue, task=http_task(endpoint, name))
    [delivery] = endpoint.wait_for_requests(1)
    with pytest.raises(AlreadyExists):
        tasks.create_task(parent=queue, task=http_task(endpoint, name))

    assert delivery.headers["x-cloudtasks-taskname"] == name.rsplit("/", 1)[1]


def test_deleted_task_is_not_delivered_and_its_name_stays_used(
    tasks: tasks_v2.CloudTasksClient, queue: str, http_recorder: HttpRecorder
) -> None:
    endpoint = http_recorder.endpoint()
    schedule_time = datetime.now(UTC) + SCHEDULE_DELAY
    timer = tasks.create_task(
        parent=queue, task=http_task(endpoint, f"{queue}/tasks/timer", schedule_time)
    )
    assert tasks.get_task(name=timer.name).name == timer.name

    tasks.delete_task(name=timer.name)

    with pytest.raises(NotFound):
        tasks.get_task(name=timer.name)
    with pytest.raises(AlreadyExists):
        tasks.create_task(parent=queue, task=http_task(endpoint, timer.name))
    # A task due just after the deleted one: once it has arrived, the deleted one would have too.
    tasks.create_task(
        parent=queue,
        task=http_task(endpoint, f"{queue}/tasks/sentinel", schedule_time + SCHEDULE_DELAY),
    )
    endpoint.wait_for_requests(1)
    assert [request.headers["x-cloudtasks-taskname"] for request in endpoint.received] == [
        "sentinel"
    ]


def test_failing_task_is_retried_after_the_queue_backoff_then_dropped(
    tasks: tasks_v2.CloudTasksClient, queue: str, http_recorder: HttpRecorder
) -> None:
    failing = http_recorder.endpoint(statuses=[500] * (MAX_ATTEMPTS + 1))

    tasks.create_task(parent=queue, task=http_task(failing))

    attempts = failing.wait_for_requests(MAX_ATTEMPTS)
    gaps = [
        later.received_at - earlier.received_at for earlier, later in itertools.pairwise(attempts)
    ]
    assert gaps[0] >= MIN_BACKOFF.total_seconds()
    assert gaps[1] >= 2 * MIN_BACKOFF.total_seconds()
    assert [attempt.headers["x-cloudtasks-taskretrycount"] for attempt in attempts] == [
        "0",
        "1",
        "2",
    ]
    # A task due after the next retry would have been: once it has arrived, that retry would have too.
    sentinel = http_recorder.endpoint()
    next_retry_time = datetime.now(UTC) + 4 * MIN_BACKOFF
    tasks.create_task(parent=queue, task=http_task(sentinel, schedule_time=next_retry_time))
    sentinel.wait_for_requests(1)
    assert len(failing.received) == MAX_ATTEMPTS
