"""The A2A client the turn engine calls: one agent, any protocol version.

Theory of operation: an ``AgentClient`` is cheap and made per use from an
AgentBackend and the Binding whose identity calls it. On its first call it
reads the agent card (through a process-wide cache, see ``discovery``) to
choose 1.0 or 0.3 and to learn whether the card lists kagent's
human-in-the-loop extension; a card that breaks a discovery rule raises
``CardUnusable``. Every call then goes to the endpoint with the same
headers: the backend's static headers, the one identity header (the config
refuses a static header of either identity header's name), ``A2A-Version: 1.0`` on 1.0, the
W3C trace context when one is active (``trace.current_trace``) and
``A2A-Extensions`` naming the HITL extension when the card lists it or the
message names it (mirrored as ``X-A2A-Extensions`` on 0.3, whose servers
read that name). Results are translated by ``wire`` into the internal model,
and failures are the classified errors of ``errors``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import structlog

from shared.a2a import wire
from shared.a2a.discovery import AgentCard, CardCache, fetch_card
from shared.a2a.errors import (
    AgentError,
    CardUnusable,
    LookupIncomplete,
    MethodUnavailable,
    OutcomeUnknown,
)
from shared.a2a.trace import current_trace
from shared.a2a.transport import (
    HEADER_TIMEOUT_SECONDS,
    IDLE_TIMEOUT_SECONDS,
    AgentLink,
    CallKind,
    Transport,
)
from shared.a2a.wire import Method
from shared.config import AgentBackend, Binding
from shared.core.model import HITL_EXTENSION, OutgoingMessage, StreamEvent, Task, TaskState
from shared.ports import Clock, Ids
from shared.secrets import read_secret

log = structlog.get_logger(__name__)

CANCEL_ATTEMPTS = 3
"""CancelTask is tried this many times before the task is read to see whether it stopped."""
LIST_PAGE_LIMIT = 100
"""ListTasks follows nextPageToken for up to this many pages."""
LIST_PAGE_SIZE = 100
"""The largest pageSize A2A 1.0 allows."""
LIST_SECONDS = 300.0
"""The longest the pages of one ListTasks walk may take, together."""


@dataclass(frozen=True)
class TaskList:
    """What ListTasks returned; ``complete`` is False when the page limit cut it."""

    tasks: tuple[Task, ...]
    complete: bool


@dataclass(frozen=True)
class Cancelled:
    """How a cancel went: whether the task stopped, and the task as the agent last reported it."""

    stopped: bool
    task: Task | None
    """CancelTask's answer, or the GetTask read after it kept failing; None when neither answered."""


class AgentClient:
    """Calls to one agent backend with one binding's identity."""

    def __init__(
        self,
        backend: AgentBackend,
        binding: Binding,
        *,
        link: AgentLink,
        cards: CardCache,
        clock: Clock,
        ids: Ids,
        max_response_bytes: int,
        call_seconds: float,
        header_timeout: float = HEADER_TIMEOUT_SECONDS,
        idle_timeout: float = IDLE_TIMEOUT_SECONDS,
        list_page_size: int = LIST_PAGE_SIZE,
    ) -> None:
        """Creates the client; nothing is sent until the first call.

        Args:
            backend: The agent backend.
            binding: The binding whose identity calls the agent.
            link: How requests reach the agent (HTTP over the process's
                connection pool; tests may give a client with a transport of their own).
            cards: The card cache (the process's).
            clock: Deadlines and Retry-After dates are read on it.
            ids: JSON-RPC request ids.
            header_timeout: Seconds within which response headers must arrive.
            idle_timeout: Seconds a stream may go without an event before it is cut.
            list_page_size: The pageSize of each ListTasks call.
            max_response_bytes: The most one answer or event may hold
                (``KOURIER_MAX_AGENT_RESPONSE_BYTES``).
            call_seconds: The longest a call answered with one JSON document
                may take (``KOURIER_AGENT_CALL_SECONDS``).
        """
        self.backend = backend
        self._list_page_size = list_page_size
        self._binding = binding
        self._clock = clock
        self._transport = Transport(
            link,
            backend.name,
            clock=clock,
            ids=ids,
            header_timeout=header_timeout,
            idle_timeout=idle_timeout,
            max_response_bytes=max_response_bytes,
            call_seconds=call_seconds,
        )
        self._cards = cards
        self._card: AgentCard | None = None

    @property
    def endpoint(self) -> str:
        """Where every call goes."""
        return self.backend.endpoint

    def card(self) -> AgentCard:
        """The agent's card, fetched on first use (or taken from the cache).

        Raises:
            CardUnusable: The card breaks a discovery rule.
            DiscoveryFailed: The card could not be fetched.
            CredentialsRejected: The card fetch got 401 or 403.
        """
        if self._card is None:
            headers = self.base_headers()
            card = self._cards.card(
                self.endpoint, headers, lambda: fetch_card(self._transport, self.endpoint, headers)
            )
            if card.problems:
                raise CardUnusable(
                    card.problems[0],
                    f"agent card of {self.backend.name}: {'; '.join(card.problems)}",
                )
            self._card = card
        return self._card

    @property
    def protocol_version(self) -> wire.ProtocolVersion:
        """The protocol version on the wire (reads the card)."""
        version = self.card().protocol_version
        assert version is not None  # a usable card has one
        return version

    @property
    def supports_list_tasks(self) -> bool:
        """Whether ListTasks may be called (A2A 1.0 only; reads the card)."""
        return self.protocol_version == "1.0"

    def send(
        self, message: OutgoingMessage, *, until: float | None = None
    ) -> Iterator[StreamEvent]:
        """Send one message with SendStreamingMessage and yield the agent's events.

        A message with ``task_id`` is an answer to a paused task, which
        changes what -32004 and -32603 mean. Events the model does not know
        are skipped.

        Args:
            message: The message.
            until: A ``Clock.monotonic()`` value at which the stream is closed
                and the iteration ends quietly.

        Raises:
            AgentError: The classified failure (see ``shared.a2a.errors``).
        """
        version = self.protocol_version
        kind = CallKind.ANSWER if message.task_id else CallKind.SEND
        results = self._transport.stream(
            self.endpoint,
            Method.SEND_STREAMING.wire_name(version),
            wire.send_params(message, version),
            self._headers(message.extensions),
            kind,
            until,
        )
        yield from self._events(results)

    def get_task(self, task_id: str, history_length: int | None = None) -> Task:
        """Read a task with GetTask.

        Raises:
            SessionGone: The agent no longer knows the task (-32001).
            AgentError: Another classified failure.
        """
        params: dict[str, Any] = {"id": task_id}
        if history_length is not None:
            params["historyLength"] = history_length
        return self._task_call(Method.GET_TASK, params, CallKind.FOLLOW)

    def subscribe(self, task_id: str, *, until: float | None = None) -> Iterator[StreamEvent]:
        """Follow a running task with SubscribeToTask and yield its events.

        Raises:
            SessionGone: The agent no longer knows the task (-32001).
            NotSent: For example -32004, which a2a-sdk answers for a task that has ended.
            AgentError: Another classified failure.
        """
        version = self.protocol_version
        results = self._transport.stream(
            self.endpoint,
            Method.SUBSCRIBE.wire_name(version),
            {"id": task_id},
            self._headers(()),
            CallKind.FOLLOW,
            until,
        )
        yield from self._events(results)

    def cancel(self, task_id: str) -> Task:
        """Cancel a task with CancelTask; returns the task as the agent reports it.

        Raises:
            AgentError: The classified failure (-32002, not cancelable, is a NotSent).
        """
        return self._task_call(Method.CANCEL, {"id": task_id}, CallKind.OTHER)

    def cancel_until_stopped(self, task_id: str, *, turn: str) -> Cancelled:
        """Cancel the task: stopped if cancelled, or read as ended after CancelTask kept failing.

        CancelTask is tried ``CANCEL_ATTEMPTS`` times. When it still fails,
        the task is read with GetTask: one that reads as ended has stopped.
        The failure is logged as ``cancel_failed`` for ``turn`` (the
        log-based metric ``agentkourier_cancels_failed_total``).
        """
        failures: list[str] = []
        for attempt in range(CANCEL_ATTEMPTS):
            if attempt:
                self._clock.sleep(0.5 * attempt)
            try:
                return Cancelled(stopped=True, task=self.cancel(task_id))
            except AgentError as error:
                failures.append(type(error).__name__)
        task: Task | None = None
        try:
            task = self.get_task(task_id)
        except AgentError as error:
            failures = [*failures, f"GetTask: {type(error).__name__}"]
        state: TaskState | None = None if task is None else task.status.state
        stopped = state is not None and state.is_terminal
        log.warning(
            "cancel_failed",
            turn=turn,
            task=task_id,
            errors=failures,
            task_state=state,
            stopped=stopped,
        )
        return Cancelled(stopped, task)

    def list_tasks(self, context_id: str) -> TaskList:
        """The tasks of a context with their history (ListTasks, A2A 1.0 only).

        Follows nextPageToken for up to ``LIST_PAGE_LIMIT`` pages; a list cut
        there says it is not complete. Artifacts are not asked for, so the
        tasks carry none.

        Raises:
            MethodUnavailable: The agent speaks 0.3, which has no ListTasks.
            AgentError: Another classified failure.
        """
        tasks: list[Task] = []
        more = False
        for page, more in self._task_pages(context_id):
            tasks += page
        return TaskList(tuple(tasks), complete=not more)

    def _task_pages(self, context_id: str) -> Iterator[tuple[list[Task], bool]]:
        """ListTasks page by page (one in memory at a time), all within ``LIST_SECONDS``.

        Each page comes with whether the agent has more after it: true for
        the last page read means the page limit cut the list.
        """
        if not self.supports_list_tasks:
            raise MethodUnavailable("ListTasks is not part of A2A 0.3")
        deadline = self._clock.monotonic() + LIST_SECONDS
        token: str | None = None
        for _ in range(LIST_PAGE_LIMIT):
            if self._clock.monotonic() > deadline:
                raise OutcomeUnknown(f"ListTasks: the pages took longer than {LIST_SECONDS:g} s")
            params: dict[str, Any] = {"contextId": context_id, "pageSize": self._list_page_size}
            if token:
                params["pageToken"] = token
            result = self._transport.call(
                self.endpoint,
                Method.LIST_TASKS.wire_name("1.0"),
                params,
                self._headers(()),
                CallKind.OTHER,
            )
            page, token = wire.list_page_from_json(result)
            yield page, bool(token)
            if not token:
                break

    def task_holding_message(self, context_id: str, message_id: str) -> Task | None:
        """The task of ``context_id`` whose history holds ``message_id``, if any (1.0 only).

        This is how a turn whose outcome is unknown is found: only a message
        in some task's history counts.

        Raises:
            LookupIncomplete: The list was cut at its page limit without the
                message: it may be in a task not read.
            MethodUnavailable: The agent speaks 0.3.
            AgentError: Another classified failure.
        """
        more, read = False, 0
        for page, more in self._task_pages(context_id):
            read += len(page)
            for task in page:
                if any(m.message_id == message_id for m in task.history):
                    return task
        if more:
            log.warning(
                "list_tasks_incomplete",
                agent=self.backend.name,
                context=context_id,
                pages=LIST_PAGE_LIMIT,
                tasks=read,
            )
            raise LookupIncomplete(
                f"ListTasks of context {context_id} stopped at {LIST_PAGE_LIMIT} pages "
                f"without message {message_id}"
            )
        return None

    def base_headers(self) -> dict[str, str]:
        """The static headers and the identity header, as on every request."""
        headers = header_dict(
            (name, value if isinstance(value, str) else read_secret(value.value_secret_ref.name))
            for name, value in self.backend.headers.items()
        )
        identity = self._binding.identity
        if identity.token_secret_ref is not None:
            headers["authorization"] = f"Bearer {read_secret(identity.token_secret_ref.name)}"
        else:
            assert identity.user_id is not None  # the config allows exactly one
            headers["x-user-id"] = identity.user_id
        return headers

    def _headers(self, message_extensions: Iterable[str]) -> dict[str, str]:
        return request_headers(self.base_headers(), self.card(), message_extensions)

    def _task_call(self, method: Method, params: dict[str, Any], kind: CallKind) -> Task:
        version = self.protocol_version
        result = self._transport.call(
            self.endpoint, method.wire_name(version), params, self._headers(()), kind
        )
        task = wire.task_from_json(result)
        if task is None:
            raise OutcomeUnknown(f"{method.wire_name(version)}: the result is not a task")
        return task

    def _events(self, results: Iterator[Any]) -> Iterator[StreamEvent]:
        for result in results:
            event = wire.event_from_json(result)
            if event is None:
                log.info("agent_event_skipped", agent=self.backend.name, keys=_keys(result))
                continue
            yield event


def request_headers(
    base: Mapping[str, str], card: AgentCard, message_extensions: Iterable[str]
) -> dict[str, str]:
    """The headers of one call: ``base`` plus version, extensions and trace context.

    Args:
        base: The static and identity headers (``AgentClient.base_headers``).
        card: The agent's card.
        message_extensions: The extensions the message sent names, if any.
    """
    headers = header_dict(base.items())
    if card.protocol_version == "1.0":
        headers["a2a-version"] = "1.0"
    asked = [HITL_EXTENSION] if card.lists_hitl else []
    extensions = list(dict.fromkeys([*asked, *message_extensions]))
    if extensions:
        headers["a2a-extensions"] = ", ".join(extensions)
        if card.protocol_version == "0.3":
            headers["x-a2a-extensions"] = headers["a2a-extensions"]
    trace = current_trace.get()
    if trace is not None:
        for name, value in trace.as_headers().items():
            headers.pop(name, None)
            headers[name] = value
    return headers


def header_dict(pairs: Iterable[tuple[str, str]]) -> dict[str, str]:
    """Headers by lower-case name, a repeated name's values joined with ", ".

    What ``dict(httpx.Headers(pairs).items())`` gives, without building an
    ``httpx.Headers`` (bytes per name and value) on every call to an agent.
    """
    headers: dict[str, str] = {}
    for name, value in pairs:
        key = name.lower()
        headers[key] = f"{headers[key]}, {value}" if key in headers else value
    return headers


def _keys(result: Any) -> list[str]:
    return [str(k) for k in result] if isinstance(result, dict) else [type(result).__name__]
