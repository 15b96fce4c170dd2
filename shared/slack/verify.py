"""Verifying that a callback comes from Slack, before anything reads it.

Slack signs ``v0:{timestamp}:{raw body}`` with HMAC-SHA256 under the app's
signing secret; slack_sdk's SignatureVerifier checks it in constant time and
refuses timestamps more than five minutes away from our clock.
"""

from __future__ import annotations

from collections.abc import Mapping

from slack_sdk.signature import Clock, SignatureVerifier

from shared.errors import SlackRequestRejected


def verify_slack_request(
    signing_secret: str, body: bytes, headers: Mapping[str, str], clock: Clock | None = None
) -> None:
    """Raise SlackRequestRejected unless ``body`` is signed by Slack, recently."""
    if not signing_secret:
        raise SlackRequestRejected("no signing secret is configured")
    verifier = SignatureVerifier(signing_secret, clock or Clock())
    timestamp = headers.get("X-Slack-Request-Timestamp", "")
    signature = headers.get("X-Slack-Signature", "")
    if not timestamp.isdigit() or not verifier.is_valid(body, timestamp, signature):
        raise SlackRequestRejected("bad or stale Slack signature")
