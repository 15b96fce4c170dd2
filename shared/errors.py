"""One error hierarchy for Agent Kourier.

Every error the product raises on purpose derives from ``KourierError``. The
functions map them to HTTP answers: a ``RetryableError`` makes the platform
(Pub/Sub, Cloud Tasks) deliver the event again; anything else is final and is
acknowledged so that a poison event cannot loop forever.
"""

from __future__ import annotations


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
