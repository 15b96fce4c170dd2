"""The classified outcomes of a failed call to an agent.

One class per row of the agent contract's Errors table, plus the discovery
failures, all under ``AgentError``. The turn engine acts on the class alone: its ``failure`` is the turn
machine's name for it.
Each error has two texts: ``reason``, the only one that may reach a chat
thread (a sentence from ``shared.core.notices``), and ``str(error)``, the
detail for logs and for ``kourier agent check``, which may quote the agent's
own error message. An agent's message never goes into ``reason``.
"""

from __future__ import annotations

import email.utils
import math
from collections.abc import Mapping
from datetime import UTC

from shared.core import notices
from shared.core.turn_machine import Failure
from shared.errors import KourierError

RETRY_AFTER_CAP_SECONDS = 86400.0
"""A Retry-After is honoured up to a day (agent contract, Errors)."""


class AgentError(KourierError):
    """A call to an agent failed; the subclass says what Kourier does next.

    Attributes:
        reason: The user-visible sentence for this failure.
        retry_after: Seconds the agent asked to wait (Retry-After), capped at a day.
        http_status: The HTTP status of the answer, when there was one.
        rpc_code: The JSON-RPC error code, when the agent sent one.
    """

    reason: str = notices.UNREACHABLE
    failure: Failure = Failure.NOT_SENT

    def __init__(
        self,
        detail: str,
        *,
        retry_after: float | None = None,
        http_status: int | None = None,
        rpc_code: int | None = None,
    ) -> None:
        super().__init__(detail)
        self.retry_after = retry_after
        self.http_status = http_status
        self.rpc_code = rpc_code


class CredentialsRejected(AgentError):
    """HTTP 401 or 403, at any call: the turn fails without a retry."""

    reason = notices.CREDENTIALS_REJECTED
    failure = Failure.CREDENTIALS


class IdentityRefused(AgentError):
    """JSON-RPC -31403: the identity is refused for this session."""

    reason = notices.IDENTITY_REFUSED
    failure = Failure.IDENTITY


class AgentBusy(AgentError):
    """JSON-RPC -32004 to a send: send the same message again after a backoff."""

    reason = notices.AGENT_BUSY
    failure = Failure.BUSY


class AnswerRejected(AgentError):
    """JSON-RPC -32603 to an answer: cancel the paused task and tell the thread."""

    reason = notices.REQUEST_FAILED
    failure = Failure.ANSWER_REJECTED


class SessionGone(AgentError):
    """JSON-RPC -32001 while a task is followed (GetTask, SubscribeToTask)."""

    reason = notices.SESSION_GONE
    failure = Failure.SESSION_GONE


class NotSent(AgentError):
    """The agent refused the call before any event, so it did nothing.

    Another HTTP 4xx than 401, 403, 408 and 429, a redirect, a connection
    that could not be opened, or a JSON-RPC error that no other class names
    (for example -32601 for a method the agent lacks, or -32004 to a
    SubscribeToTask of a finished task, as a2a-sdk answers). Retried, then
    failed after 15 minutes.
    """


class OutcomeUnknown(AgentError):
    """HTTP 5xx, 408, 429, no headers in time, or a connection lost before any event.

    The agent may or may not have acted on the call.
    """

    failure = Failure.UNKNOWN


class StreamDropped(AgentError):
    """A stream failed after at least one event: follow the task with GetTask."""

    failure = Failure.DROPPED


class ResponseTooLarge(AgentError):
    """An answer, or one event of a stream, larger than Kourier reads: the turn fails at once.

    Reading it again would fail again, so it is not retried.
    """

    reason = notices.RESPONSE_TOO_LARGE
    failure = Failure.REFUSED


class LookupIncomplete(AgentError):
    """ListTasks stopped at its page limit before the turn was found.

    Whether the agent has the turn is unknown: the lookup is retried, and
    the turn fails after 15 minutes. It is never taken as absent, which
    would send the turn again.
    """


class MethodUnavailable(AgentError):
    """The protocol version on the wire has no such method (ListTasks on 0.3)."""


class DiscoveryFailed(AgentError):
    """The agent card could not be fetched or read: retried, then failed."""

    failure = Failure.UNREACHABLE


class CardUnusable(DiscoveryFailed):
    """The card breaks a discovery rule: the turn fails with ``reason`` at once.

    ``reason`` is the contract's text, e.g. ``NO_JSONRPC_INTERFACE``.
    """

    failure = Failure.REFUSED

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason


def parse_retry_after(headers: Mapping[str, str], now: float) -> float | None:
    """Seconds to wait from a Retry-After header (seconds or HTTP date), capped at a day.

    Args:
        headers: The response headers.
        now: The current Unix time (an HTTP date is read against it).

    Returns:
        The delay, or None when the header is absent or unreadable.
    """
    value = headers.get("retry-after", "").strip()
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            moment = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        seconds = moment.timestamp() - now
    if math.isnan(seconds):
        return None
    return min(max(seconds, 0.0), RETRY_AFTER_CAP_SECONDS)
