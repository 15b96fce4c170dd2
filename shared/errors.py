"""One error hierarchy for Agent Kourier.

Every error the product raises on purpose derives from ``KourierError``. The
functions map them to HTTP answers: a ``RetryableError`` makes the platform
(Pub/Sub, Cloud Tasks) deliver the event again; anything else is final and is
acknowledged so that a poison event cannot loop forever.
"""

from __future__ import annotations

from urllib.error import URLError

from slack_sdk.errors import SlackApiError


class KourierError(Exception):
    """Root of every error Agent Kourier raises on purpose."""


class ConfigError(KourierError):
    """The configuration file or an environment setting is invalid."""


class RetryableError(KourierError):
    """A transient failure: the event should be delivered again."""


class TaskNameRefused(KourierError):
    """Cloud Tasks refused a task name this run made anew: a stale task holds it.

    The run stops there; its lease runs out and the sweep takes the turn
    over under a new generation, hence new names.
    """


class SlackRequestRejected(KourierError):
    """A Slack callback failed verification (signature, timestamp, shape)."""


class TriggerRejected(KourierError):
    """A trigger request failed authentication (bearer token or HMAC signature)."""


class PayloadRejected(KourierError):
    """A trigger's body is not a notification Kourier can read; the message names the field."""


class StoreUnavailable(RetryableError):
    """The document database failed for now (aborted, unavailable, deadline exceeded)."""


class DocumentExists(KourierError):
    """A document was to be created, and one with its key exists."""


class PreconditionFailed(KourierError):
    """A document changed (or vanished) since it was read: read it again and decide again."""


class Superseded(KourierError):
    """Another function carries the turn now: this one must stop without another side effect."""


TRANSIENT_CONNECTION_ERRORS: tuple[type[BaseException], ...] = (
    TimeoutError,
    ConnectionError,
    URLError,
)
"""A Web API call that got no answer, after slack_sdk's own retries of lost connections."""


def is_transient(error: BaseException) -> bool:
    """The error mapping: whether a later delivery of the same event may not meet ``error``.

    Transient: every ``RetryableError`` (the adapters raise them for Firestore
    aborted, unavailable or past a deadline, Pub/Sub and Cloud Tasks
    failures, contention that outlasted its retries), Slack's 5xx and 429
    after slack_sdk's own retries, and calls that got no answer. Anything
    else is poison: delivered again it fails again.
    """
    if isinstance(error, (RetryableError, *TRANSIENT_CONNECTION_ERRORS)):
        return True
    if isinstance(error, SlackApiError):
        status = int(getattr(error.response, "status_code", 0) or 0)
        return status >= 500 or status == 429
    return False
