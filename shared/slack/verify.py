"""Verifying that a callback comes from Slack, before anything reads it.

Slack signs ``v0:{timestamp}:{raw body}`` with HMAC-SHA256 under the app's
signing secret; slack_sdk's SignatureVerifier checks it in constant time and
refuses timestamps more than five minutes away from our clock.
"""

from __future__ import annotations

from collections.abc import Mapping

from slack_sdk import signature as slack_signature

from shared.errors import SlackRequestRejected
from shared.ports import Clock


class _VerifierClock(slack_signature.Clock):
    """slack_sdk's clock, read from ours."""

    def __init__(self, clock: Clock) -> None:
        self._clock = clock

    def now(self) -> float:
        return self._clock.time()


def verify_slack_request(
    signing_secret: str, body: bytes, headers: Mapping[str, str], clock: Clock
) -> None:
    """Raise SlackRequestRejected unless ``body`` is signed by Slack, recently."""
    if not signing_secret:
        raise SlackRequestRejected("no signing secret is configured")
    verifier = slack_signature.SignatureVerifier(signing_secret, _VerifierClock(clock))
    timestamp = headers.get("X-Slack-Request-Timestamp", "")
    signature = headers.get("X-Slack-Signature", "")
    if not timestamp.isdigit() or not verifier.is_valid(body, timestamp, signature):
        raise SlackRequestRejected("bad or stale Slack signature")
