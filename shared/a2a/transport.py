"""JSON-RPC over HTTP to one agent, with the contract's timing and error rules.

Theory of operation: every call is one POST to the endpoint, with redirects
never followed. Response headers must arrive within ``header_timeout``
(httpx's read timeout covers the wait for them). A stream then reads with
``idle_timeout`` instead: httpcore takes a body's read timeout from the
request's timeout extension when the body is first read, so it is raised
there, after the headers. Since a server's SSE keep-alive comments would
reset a socket read timeout for ever, a watchdog thread also counts the time
since the last A2A event and, past ``idle_timeout`` (or past the caller's
``until``), shuts the socket down, which ends the blocked read at once;
whichever of the two fires first, the stream is cut for silence.
Failures are classified by the contract's Errors table: the HTTP status
first, then a JSON-RPC error by its code and by what kind of call it
answered, and a lost connection by whether an event had arrived. After the
first event of a stream, every failure is ``StreamDropped``.

What an agent sends is bounded, so one answer cannot exhaust a function's
memory or hold it for ever: a JSON answer, and each event of a stream, may
hold at most ``max_response_bytes`` (past it, ``ResponseTooLarge``, and the
read stops there), and a call that answers with one JSON document must have
sent all of it within ``call_seconds`` (past it, the outcome is unknown). A
stream's length is the caller's ``until``.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Generator, Iterator, Mapping
from contextlib import AbstractContextManager, ExitStack, closing, contextmanager
from enum import Enum
from types import TracebackType
from typing import Any, Protocol, Self

import httpx
import structlog
from httpx_sse import EventSource, SSEError

from shared.a2a import wire
from shared.a2a.errors import (
    AgentBusy,
    AgentError,
    AnswerRejected,
    CredentialsRejected,
    IdentityRefused,
    NotSent,
    OutcomeUnknown,
    ResponseTooLarge,
    SessionGone,
    StreamDropped,
    parse_retry_after,
)
from shared.ports import Clock, Ids

log = structlog.get_logger(__name__)

HEADER_TIMEOUT_SECONDS = 30.0
IDLE_TIMEOUT_SECONDS = 300.0


class CallKind(Enum):
    """What a call is for; the same JSON-RPC error means different things."""

    SEND = "send"
    """A new turn (SendStreamingMessage without taskId)."""
    ANSWER = "answer"
    """An answer to a paused task (SendStreamingMessage with taskId)."""
    FOLLOW = "follow"
    """GetTask or SubscribeToTask of a task Kourier follows."""
    OTHER = "other"
    """CancelTask, ListTasks."""


class LinkReply(Protocol):
    """An agent's answer to one request, as far as a link carries it."""

    status: int
    headers: Mapping[str, str]
    """The response headers (names in any case)."""
    where: str
    """The request, as errors name it ("POST https://...")."""
    cut: str | None
    """Why the link cut a stream it was reading: "idle", "until", or None."""

    def document(self, what: str, max_bytes: int, seconds: float, clock: Clock) -> Any:
        """The whole body, decoded from JSON.

        Raises:
            ValueError: The body is not JSON.
            ResponseTooLarge: It holds more than ``max_bytes``.
            OutcomeUnknown: It took longer than ``seconds``, or the connection was lost.
        """

    def frames(
        self, method: str, max_bytes: int, idle: float, until: float | None, clock: Clock
    ) -> Generator[Any]:
        """Each event's JSON-RPC frame, decoded, as it arrives; ends when the stream does.

        Raises:
            OutcomeUnknown: An event is not JSON.
            ResponseTooLarge: An event holds more than ``max_bytes``.
            httpx.HTTPError: The connection was lost (``ReadTimeout``: nothing came for ``idle``).
            httpx_sse.SSEError: The stream is not SSE.
        """

    @property
    def is_event_stream(self) -> bool:
        """Whether the answer is an event stream (else one JSON document)."""


class AgentLink(Protocol):
    """How requests reach an agent."""

    def send(
        self,
        http_method: str,
        url: str,
        payload: Mapping[str, Any] | None,
        headers: Mapping[str, str],
        timeout: float,
    ) -> AbstractContextManager[LinkReply]:
        """Send one request; the answer is open for reading within the block.

        Raises:
            httpx.HTTPError: No answer came (no connection, no headers within ``timeout``).
        """


class HttpLink:
    """Requests as HTTP through an ``httpx.Client``, redirects never followed."""

    def __init__(self, http: httpx.Client) -> None:
        """Send over ``http`` (its redirect and timeout settings are overridden per call)."""
        self._http = http

    @contextmanager
    def send(
        self,
        http_method: str,
        url: str,
        payload: Mapping[str, Any] | None,
        headers: Mapping[str, str],
        timeout: float,
    ) -> Iterator[LinkReply]:
        """Send one request; the response's body is left to read, and closed after the block."""
        request = self._http.build_request(
            http_method,
            url,
            json=None if payload is None else dict(payload),
            headers=dict(headers),
            timeout=httpx.Timeout(timeout),
        )
        response = self._http.send(request, stream=True, follow_redirects=False)
        try:
            yield _HttpReply(response)
        finally:
            response.close()


class _HttpReply:
    """An httpx response read as a ``LinkReply``."""

    def __init__(self, response: httpx.Response) -> None:
        self._response = response
        self.status = response.status_code
        self.headers: Mapping[str, str] = response.headers
        self.where = f"{response.request.method} {response.request.url}"
        self.cut: str | None = None

    @property
    def is_event_stream(self) -> bool:
        return _content_type(self.headers) == "text/event-stream"

    def document(self, what: str, max_bytes: int, seconds: float, clock: Clock) -> Any:
        response = self._response
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > max_bytes:
            raise ResponseTooLarge(f"{what}: the answer declares {declared} bytes")
        deadline = clock.monotonic() + seconds
        body = bytearray()
        try:
            for chunk in response.iter_bytes():
                body += chunk
                if len(body) > max_bytes:
                    raise ResponseTooLarge(f"{what}: the answer is longer than {max_bytes} bytes")
                if clock.monotonic() > deadline:
                    raise OutcomeUnknown(f"{what}: the answer took longer than {seconds:g} s")
        except httpx.HTTPError as error:
            raise OutcomeUnknown(f"connection lost while reading the answer ({error!r})") from None
        return wire.loads(bytes(body))

    def frames(
        self, method: str, max_bytes: int, idle: float, until: float | None, clock: Clock
    ) -> Generator[Any]:
        response = self._response
        timeouts = response.request.extensions.get("timeout")
        if isinstance(timeouts, dict):
            timeouts["read"] = idle
        text = _CappedText(response, max_bytes, method)
        watchdog = _Watchdog(response, idle, until, clock)
        try:
            with watchdog:
                for sse in EventSource(text).iter_sse():  # type: ignore[arg-type]
                    text.event_arrived()
                    if not sse.data.strip():
                        continue
                    try:
                        frame = wire.loads(sse.data)
                    except ValueError:
                        raise OutcomeUnknown(f"{method}: an event that is not JSON") from None
                    watchdog.event_arrived()
                    yield frame
        finally:
            self.cut = watchdog.cut  # final: the watchdog's thread has ended


class Transport:
    """Calls to one agent's endpoint."""

    def __init__(
        self,
        link: AgentLink,
        agent: str,
        *,
        clock: Clock,
        ids: Ids,
        header_timeout: float = HEADER_TIMEOUT_SECONDS,
        idle_timeout: float = IDLE_TIMEOUT_SECONDS,
        max_response_bytes: int,
        call_seconds: float,
    ) -> None:
        """Creates the transport.

        Args:
            link: How requests reach the agent.
            agent: The agent's name, for logs.
            clock: Deadlines (``until``, the call budget) and Retry-After dates are read on it.
            ids: JSON-RPC request ids.
            header_timeout: Seconds within which response headers must arrive.
            idle_timeout: Seconds a stream may go without an event before it is cut.
            max_response_bytes: The most one answer, or one event, may hold.
            call_seconds: The longest a call answered with one JSON document may take.
        """
        self._link = link
        self._agent = agent
        self._clock = clock
        self._ids = ids
        self.header_timeout = header_timeout
        self.idle_timeout = idle_timeout
        self.max_response_bytes = max_response_bytes
        self.call_seconds = call_seconds

    def get_json(self, url: str, headers: Mapping[str, str]) -> Any:
        """GET a JSON document (the agent card).

        Raises:
            CredentialsRejected: On 401 or 403.
            NotSent: On a redirect or another 4xx, or if no connection could be opened.
            OutcomeUnknown: On 5xx, 408, 429, a timeout, a lost connection, or a body
                that is not JSON.
        """
        with self._logged("card"), self._sent("GET", url, None, headers) as reply:
            self._raise_for_status(reply)
            try:
                return self._document(reply, "the card")
            except ValueError:
                kind = _content_type(reply.headers) or "no content type"
                raise OutcomeUnknown(
                    f"{url} did not answer with JSON ({kind})", http_status=reply.status
                ) from None

    def call(
        self,
        url: str,
        method: str,
        params: Mapping[str, Any],
        headers: Mapping[str, str],
        kind: CallKind,
    ) -> Any:
        """One JSON-RPC call that answers with one result.

        Returns:
            The JSON-RPC result.

        Raises:
            AgentError: The classified failure.
        """
        with self._logged(method):
            payload = self._request(method, params)
            with self._sent(
                "POST", url, payload, {**headers, "Accept": "application/json"}
            ) as reply:
                self._raise_for_status(reply)
                return self._answer_document(reply, method, kind)

    def stream(
        self,
        url: str,
        method: str,
        params: Mapping[str, Any],
        headers: Mapping[str, str],
        kind: CallKind,
        until: float | None = None,
    ) -> Iterator[Any]:
        """One streaming JSON-RPC call: yields each result as it arrives.

        An answer that is plain JSON instead of SSE (as a2a-sdk sends errors)
        is read the same way: an error is raised, a result is yielded.

        Args:
            url: The endpoint.
            method: The JSON-RPC method.
            params: Its params.
            headers: The request headers.
            kind: What the call is for.
            until: A ``Clock.monotonic()`` value at which the stream is closed
                and the iteration ends quietly (a caller's time budget).

        Raises:
            AgentError: The classified failure.
        """
        with self._logged(method):
            payload = self._request(method, params)
            with self._sent(
                "POST", url, payload, {**headers, "Accept": "text/event-stream"}
            ) as reply:
                self._raise_for_status(reply)
                if not reply.is_event_stream:
                    yield self._answer_document(reply, method, kind)
                    return
                yield from self._events(reply, method, kind, until)

    def _events(
        self, reply: LinkReply, method: str, kind: CallKind, until: float | None
    ) -> Iterator[Any]:
        seen_event = False
        lost: Exception | None = None
        frames = reply.frames(
            method, self.max_response_bytes, self.idle_timeout, until, self._clock
        )
        with closing(frames):
            try:
                for frame in frames:
                    result = _result(frame, method, kind, reply.headers, self._clock.time())
                    seen_event = True
                    yield result
            except (httpx.HTTPError, SSEError) as error:
                lost = error
            except ResponseTooLarge:
                raise  # reading on would fail again: never a dropped stream
            except AgentError as error:
                if seen_event:
                    raise StreamDropped(str(error), retry_after=error.retry_after) from None
                raise
        if reply.cut == "until" or (until is not None and self._clock.monotonic() >= until):
            return
        # The socket's read timeout is the idle limit too: whichever fires first, it is a cut.
        if reply.cut == "idle" or isinstance(lost, httpx.ReadTimeout):
            detail = f"{method}: no event for {self.idle_timeout:g} s; the stream was cut"
            raise _stream_failure(seen_event, detail)
        if lost is not None:
            raise _stream_failure(seen_event, f"{method}: connection lost ({lost!r})")

    @contextmanager
    def _sent(
        self,
        http_method: str,
        url: str,
        payload: Mapping[str, Any] | None,
        headers: Mapping[str, str],
    ) -> Iterator[LinkReply]:
        """Send a request; its answer is left to read, and closed after the block."""
        with ExitStack() as opened:
            try:
                reply = opened.enter_context(
                    self._link.send(http_method, url, payload, headers, self.header_timeout)
                )
            except httpx.HTTPError as error:
                raise _connection_failure(error, self.header_timeout) from None
            yield reply

    def _document(self, reply: LinkReply, what: str) -> Any:
        """The whole body, if it is at most ``max_response_bytes`` and comes within ``call_seconds``.

        Raises:
            ValueError: The body is not JSON.
        """
        return reply.document(what, self.max_response_bytes, self.call_seconds, self._clock)

    def _answer_document(self, reply: LinkReply, method: str, kind: CallKind) -> Any:
        """The result of an answer that is one JSON-RPC document, or its error classified."""
        try:
            frame = self._document(reply, method)
        except ValueError:
            raise OutcomeUnknown(
                "the answer is neither JSON nor an event stream "
                f"({_content_type(reply.headers) or 'no content type'})",
                http_status=reply.status,
            ) from None
        return _result(frame, method, kind, reply.headers, self._clock.time())

    def _request(self, method: str, params: Mapping[str, Any]) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": self._ids.token(), "method": method, "params": dict(params)}

    @contextmanager
    def _logged(self, call: str) -> Iterator[None]:
        """Log each classified failure once, with the detail the thread never sees."""
        try:
            yield
        except AgentError as error:
            log.warning(
                "agent_call_failed",
                agent=self._agent,
                call=call,
                outcome=type(error).__name__,
                detail=str(error),
                http_status=error.http_status,
                rpc_code=error.rpc_code,
                retry_after=error.retry_after,
            )
            raise

    def _raise_for_status(self, reply: LinkReply) -> None:
        status = reply.status
        if 200 <= status < 300:
            return
        retry_after = parse_retry_after(reply.headers, self._clock.time())
        where = reply.where
        if 300 <= status < 400:
            location = reply.headers.get("location", "nowhere")
            raise NotSent(
                f"{where} answered with a redirect (HTTP {status} to {location}); "
                "Agent Kourier follows no redirect",
                http_status=status,
                retry_after=retry_after,
            )
        if status in (401, 403):
            # The log-based metric agentkourier_credential_rejections_total counts these.
            log.warning("credential_rejected", agent=self._agent, http_status=status)
            raise CredentialsRejected(
                f"{where} answered HTTP {status}", http_status=status, retry_after=retry_after
            )
        failure = OutcomeUnknown if status >= 500 or status in (408, 429) else NotSent
        raise failure(
            f"{where} answered HTTP {status}", http_status=status, retry_after=retry_after
        )


class _Watchdog:
    """Shuts a stream's socket when no event came for ``idle`` seconds, or at ``until``.

    ``cut`` says why it did: "idle", "until", or None while it has not.
    Without a socket (a transport that is not a network one) it never cuts,
    and the read timeout alone bounds the silence.
    """

    def __init__(
        self, response: httpx.Response, idle: float, until: float | None, clock: Clock
    ) -> None:
        stream = response.extensions.get("network_stream")
        found = stream.get_extra_info("socket") if stream is not None else None
        self._socket = found if isinstance(found, socket.socket) else None
        self._idle = idle
        self._until = until
        self._clock = clock
        self._last_event = clock.monotonic()
        self._stopped = threading.Event()
        self._thread: threading.Thread | None = None
        self.cut: str | None = None

    def __enter__(self) -> Self:
        if self._socket is not None:
            self._thread = threading.Thread(
                target=self._watch, args=(self._socket,), name="a2a-stream-watchdog", daemon=True
            )
            self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._stopped.set()
        if self._thread is not None:
            self._thread.join()

    def event_arrived(self) -> None:
        """Restart the idle count."""
        self._last_event = self._clock.monotonic()

    def _watch(self, stream_socket: socket.socket) -> None:
        while True:
            idle_deadline = self._last_event + self._idle
            deadline = idle_deadline if self._until is None else min(idle_deadline, self._until)
            if self._stopped.wait(max(deadline - self._clock.monotonic(), 0.0)):
                return
            now = self._clock.monotonic()
            if self._until is not None and now >= self._until:
                self.cut = "until"
            elif now >= self._last_event + self._idle:
                self.cut = "idle"
            else:
                continue
            try:
                # socket.socket's own shutdown, also for TLS: it only ends the blocked read.
                socket.socket.shutdown(stream_socket, socket.SHUT_RDWR)
            except OSError:
                pass  # already closed: the read has ended anyway
            return


def _content_type(headers: Mapping[str, str]) -> str:
    return str(headers.get("content-type", "")).partition(";")[0].strip().lower()


class _CappedText:
    """What httpx-sse reads of a stream: its text, failing once one event grows past ``limit``."""

    def __init__(self, response: httpx.Response, limit: int, method: str) -> None:
        self._response = response
        self._limit = limit
        self._method = method
        self._since_event = 0

    @property
    def headers(self) -> httpx.Headers:
        """The response's headers (httpx-sse checks the content type)."""
        return self._response.headers

    def iter_text(self) -> Iterator[str]:
        """The stream's text, piece by piece."""
        for text in self._response.iter_text():
            self._since_event += len(text)
            if self._since_event > self._limit:
                raise ResponseTooLarge(
                    f"{self._method}: an event longer than {self._limit} characters"
                )
            yield text

    def event_arrived(self) -> None:
        """An event ended: the next one counts from here."""
        self._since_event = 0


def _result(frame: Any, method: str, kind: CallKind, headers: Mapping[str, str], now: float) -> Any:
    """The result of a JSON-RPC response, or its error classified."""
    if isinstance(frame, Mapping) and "result" in frame:
        return frame["result"]
    error = frame.get("error") if isinstance(frame, Mapping) else None
    if not isinstance(error, Mapping):
        raise OutcomeUnknown(f"{method}: the answer is not a JSON-RPC response")
    code = error.get("code")
    message = error.get("message")
    detail = f"{method}: JSON-RPC error {code}: {message}"
    retry_after = parse_retry_after(headers, now)
    failure: type[AgentError] = NotSent
    if code == -31403:
        failure = IdentityRefused
    elif code == -32004 and kind in (CallKind.SEND, CallKind.ANSWER):
        failure = AgentBusy
    elif code == -32603 and kind == CallKind.ANSWER:
        failure = AnswerRejected
    elif code == -32001 and kind == CallKind.FOLLOW:
        failure = SessionGone
    raise failure(detail, retry_after=retry_after, rpc_code=code if isinstance(code, int) else None)


def _connection_failure(error: httpx.HTTPError, header_timeout: float) -> AgentError:
    """A call that got no answer: never sent if no connection opened, else unknown."""
    if isinstance(error, (httpx.ConnectError, httpx.ConnectTimeout, httpx.UnsupportedProtocol)):
        return NotSent(f"could not connect ({error!r})")
    if isinstance(error, httpx.TimeoutException):
        return OutcomeUnknown(f"no response headers within {header_timeout:g} s")
    return OutcomeUnknown(f"connection lost before an answer ({error!r})")


def _stream_failure(seen_event: bool, detail: str) -> AgentError:
    return StreamDropped(detail) if seen_event else OutcomeUnknown(detail)
