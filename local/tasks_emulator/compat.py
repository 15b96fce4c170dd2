"""Cloud Tasks behaviours Agent Kourier relies on, layered over gcloud-tasks-emulator.

Theory of operation: the installed gcloud-tasks-emulator package keeps each
queue's pending tasks in a list (``QueueState``), serves the Cloud Tasks gRPC
API from it (``Greeter``), and runs one thread per queue (``Processor``) that
posts the queue's tasks one after another. This module subclasses those pieces
and never copies them. What it changes, and why:

- The API listens on 127.0.0.1 only (upstream binds every address).
- A task name once used in a queue is refused with ALREADY_EXISTS, also after
  the task ran or was deleted, as Cloud Tasks does while it remembers the name
  (here: for the life of the process). Upstream accepted duplicates. Unnamed
  tasks get random ids, so they never collide with each other.
- Due tasks are taken out of the queue's list under one lock and posted from a
  thread pool, so a slow target (a stream followed for minutes) does not hold
  up the rest of its queue. Upstream posted them one at a time.
- A failed attempt puts the task back with its schedule time pushed out by the
  queue's RetryConfig backoff (min_backoff doubled max_doublings times, then
  growing linearly, capped at max_backoff), and drops it after max_attempts.
  Upstream retried every 0.1 s, for ever.
- GetTask and DeleteTask work on pending tasks (upstream left them
  unimplemented). A task being posted is not pending, as upstream's RunTask
  already assumed.
"""

from __future__ import annotations

import logging
import secrets
import threading
import time
from concurrent import futures
from datetime import UTC, datetime, timedelta
from urllib import error

import grpc
from gcloud_tasks_emulator import server as upstream
from gcloud_tasks_emulator.cloudtasks_pb2_grpc import add_CloudTasksServicer_to_server
from google.api_core.exceptions import AlreadyExists, GoogleAPICallError, NotFound
from google.cloud.tasks_v2 import (
    Attempt,
    DeleteTaskRequest,
    GetTaskRequest,
    Queue,
    RetryConfig,
    Task,
)
from google.protobuf import empty_pb2
from google.rpc import code_pb2

logger = logging.getLogger("kourier-tasks-emulator")

# Cloud Tasks' documented defaults for a RetryConfig field left unset.
DEFAULT_MIN_BACKOFF = timedelta(seconds=0.1)
DEFAULT_MAX_BACKOFF = timedelta(hours=1)
DEFAULT_MAX_DOUBLINGS = 16
DEFAULT_MAX_ATTEMPTS = 100
# Cloud Tasks allows up to 1000 concurrent dispatches per queue; a local run needs far fewer.
DISPATCH_THREADS = 64
API_THREADS = 8


def _utc_now() -> datetime:
    return datetime.now(UTC)


def retry_delay(config: RetryConfig, attempts: int) -> timedelta:
    """How long Cloud Tasks waits before retrying a task that failed ``attempts`` times.

    Args:
        config: The queue's retry configuration; unset fields take Cloud Tasks' defaults.
        attempts: Attempts made so far (1 after the first failure).

    Returns:
        The backoff: ``min_backoff * 2**(attempts-1)`` for the first ``max_doublings``
        retries, then growing by the last doubled interval per retry, capped at ``max_backoff``.
    """
    min_backoff = config.min_backoff or DEFAULT_MIN_BACKOFF
    max_backoff = config.max_backoff or DEFAULT_MAX_BACKOFF
    max_doublings = config.max_doublings or DEFAULT_MAX_DOUBLINGS
    retries = attempts - 1
    doubled = min_backoff * 2 ** min(retries, max_doublings)
    linear_steps = max(0, retries - max_doublings)
    return min(doubled + linear_steps * min_backoff * 2**max_doublings, max_backoff)


def gives_up(config: RetryConfig, attempts: int) -> bool:
    """Whether a task that failed ``attempts`` times is dropped (max_attempts -1 means never)."""
    max_attempts = config.max_attempts or DEFAULT_MAX_ATTEMPTS
    return max_attempts != -1 and attempts >= max_attempts


class KourierQueueState(upstream.QueueState):
    """Upstream's in-memory queues, with unique task names, backoff and concurrent dispatch."""

    def __init__(self) -> None:
        # Only HTTP-target tasks (full URLs) are used; the App Engine target host is unused.
        super().__init__(upstream.DEFAULT_TARGET_HOST, upstream.DEFAULT_TARGET_PORT, max_retries=-1)
        self._lock = threading.Lock()
        self._used_names: dict[str, set[str]] = {}

    def create_task(self, queue: str, task: Task) -> Task:
        with self._lock:
            used = self._used_names.setdefault(queue, set())
            if not task.name:
                task.name = f"{queue}/tasks/{secrets.randbelow(10**19)}"
            if task.name in used:
                raise AlreadyExists(f"Requested entity already exists: {task.name}")
            now = _utc_now()
            task.create_time = now
            if not task.schedule_time:
                task.schedule_time = now
            created: Task = super().create_task(queue, task)
            used.add(created.name)
            return created

    def take_due_tasks(self, queue: str) -> list[Task]:
        """Removes and returns the queue's tasks whose schedule time has come (none if paused)."""
        with self._lock:
            pending = self._queue_tasks.get(queue)
            if pending is None or self._queues[queue].state != Queue.State.RUNNING:
                return []
            now = _utc_now()
            due = [task for task in pending if task.schedule_time <= now]
            pending[:] = [task for task in pending if task.schedule_time > now]
            return due

    def _take(self, task_name: str) -> tuple[str, Task]:
        queue = task_name.rsplit("/", 2)[0]
        with self._lock:
            pending = self._queue_tasks.get(queue, [])
            for index, task in enumerate(pending):
                if task.name == task_name:
                    return queue, pending.pop(index)
        raise NotFound(f"Task not found: {task_name}")

    def get_task(self, task_name: str) -> Task:
        """The pending task of that name.

        Raises:
            NotFound: No such task is waiting in its queue.
        """
        queue = task_name.rsplit("/", 2)[0]
        with self._lock:
            for task in self._queue_tasks.get(queue, []):
                if task.name == task_name:
                    return task
        raise NotFound(f"Task not found: {task_name}")

    def delete_task(self, task_name: str) -> None:
        """Removes a pending task; its name stays used.

        Raises:
            NotFound: No such task is waiting in its queue.
        """
        self._take(task_name)
        logger.info("[TASKS] Deleted task %s", task_name)

    def submit_task(self, task_name: str, force_run: bool = False) -> Task:
        """Posts a pending task now, whatever its schedule (RunTask)."""
        queue, task = self._take(task_name)
        return self.dispatch(queue, task)

    def dispatch(self, queue: str, task: Task) -> Task:
        """Posts a task once; on failure requeues it after the backoff or drops it."""
        task.dispatch_count += 1
        dispatch_time = _utc_now()
        status = self._post(queue, task)
        if status is not None:
            task.response_count += 1
        succeeded = status is not None and 200 <= status < 300
        attempt = Attempt(
            schedule_time=task.schedule_time,
            dispatch_time=dispatch_time,
            response_time=_utc_now(),
            response_status={"code": code_pb2.OK if succeeded else code_pb2.UNKNOWN},
        )
        task.first_attempt = task.first_attempt or attempt
        task.last_attempt = attempt
        if succeeded:
            return task
        with self._lock:
            queue_config = self._queues.get(queue)
            if queue_config is None:
                return task
            if gives_up(queue_config.retry_config, task.dispatch_count):
                logger.info(
                    "[TASKS] Giving up task %s after %d attempts", task.name, task.dispatch_count
                )
                return task
            delay = retry_delay(queue_config.retry_config, task.dispatch_count)
            task.schedule_time = _utc_now() + delay
            self._queue_tasks[queue].append(task)
        logger.info(
            "[TASKS] Task %s failed (%s); retrying in %.1f s",
            task.name,
            status,
            delay.total_seconds(),
        )
        return task

    @staticmethod
    def _post(queue: str, task: Task) -> int | None:
        """Posts the task's request; returns the HTTP status, or None when there was no response."""
        try:
            with upstream._make_task_request(
                queue, task, upstream.DEFAULT_TARGET_HOST, upstream.DEFAULT_TARGET_PORT
            ) as response:
                response.read()
                return int(response.status)
        except error.HTTPError as http_error:
            return http_error.code
        except OSError as failure:  # URLError, refused connections and timeouts
            logger.warning("[TASKS] No response for task %s: %s", task.name, failure)
            return None


class KourierProcessor(upstream.Processor):
    """Upstream's per-queue polling threads, handing due tasks to a thread pool."""

    def __init__(self, state: KourierQueueState) -> None:
        super().__init__(state)
        self._kourier_state = state
        self._dispatchers = futures.ThreadPoolExecutor(
            max_workers=DISPATCH_THREADS, thread_name_prefix="dispatch"
        )

    def _process_queue(self, queue: str) -> None:
        while self._is_running.is_set() and queue in self._kourier_state.queue_names():
            for task in self._kourier_state.take_due_tasks(queue):
                self._dispatchers.submit(self._kourier_state.dispatch, queue, task)
            time.sleep(upstream._LOOP_SLEEP_TIME)


class KourierServicer(upstream.Greeter):
    """Upstream's gRPC servicer plus GetTask and DeleteTask."""

    def __init__(self, state: KourierQueueState) -> None:
        super().__init__(state)
        self._kourier_state = state

    def GetTask(self, request: GetTaskRequest, context: grpc.ServicerContext) -> Task:
        try:
            return self._kourier_state.get_task(request.name)
        except GoogleAPICallError as err:
            context.abort(err.grpc_status_code, err.message)  # raises

    def DeleteTask(
        self, request: DeleteTaskRequest, context: grpc.ServicerContext
    ) -> empty_pb2.Empty:
        try:
            self._kourier_state.delete_task(request.name)
            return empty_pb2.Empty()
        except GoogleAPICallError as err:
            context.abort(err.grpc_status_code, err.message)  # raises


def serve(port: int) -> None:
    """Serves the Cloud Tasks API on 127.0.0.1:``port`` until interrupted.

    Raises:
        RuntimeError: The port could not be bound.
    """
    state = KourierQueueState()
    processor = KourierProcessor(state)
    api = grpc.server(futures.ThreadPoolExecutor(max_workers=API_THREADS))
    add_CloudTasksServicer_to_server(KourierServicer(state), api)
    api.add_insecure_port(f"127.0.0.1:{port}")
    api.start()
    processor.start()
    logger.info("[SERVER] Cloud Tasks emulator listening on 127.0.0.1:%d", port)
    try:
        api.wait_for_termination()
    finally:
        processor.join(timeout=1)
        api.stop(grace=0)
