"""Whether a trigger request comes from its sender: a bearer token, or an HMAC of the body.

Alertmanager sends ``Authorization: Bearer <token>`` (its ``http_config``
``authorization``); Grafana signs the raw body with HMAC-SHA256 and sends the
lowercase hex digest in ``X-Grafana-Alerting-Signature``, over
``<unix time>:<body>`` when a timestamp header is set (then a stale time is
refused, so a captured request cannot be replayed later). Both compare in
constant time. Any failure raises ``TriggerRejected`` with a reason for the
log; the sender only ever sees 401.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping

from shared.config import Trigger
from shared.errors import TriggerRejected


def verify_request(
    trigger: Trigger, secret: str, body: bytes, headers: Mapping[str, str], now: float
) -> None:
    """Raise TriggerRejected unless the request carries ``trigger``'s proof of its sender."""
    lowered = {name.lower(): value for name, value in headers.items()}
    if trigger.auth.type == "bearer":
        scheme, _, token = lowered.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not _same(token.strip(), secret):
            raise TriggerRejected("no valid bearer token")
        return
    signature = lowered.get(trigger.signature_header.lower(), "").strip().lower()
    signature = signature.removeprefix("sha256=")
    message = body
    stamp_header = trigger.auth.timestamp_header
    if stamp_header:
        stamp = lowered.get(stamp_header.lower(), "").strip()
        if not stamp.isdigit():
            raise TriggerRejected(f"no timestamp in {stamp_header}")
        if abs(now - int(stamp)) > trigger.auth.max_skew.total_seconds():
            raise TriggerRejected("stale timestamp")
        message = stamp.encode() + b":" + body
    expected = hmac.new(secret.encode(), message, hashlib.sha256).hexdigest()
    if not _same(signature, expected):
        raise TriggerRejected(f"no valid signature in {trigger.signature_header}")


def _same(given: str, expected: str) -> bool:
    return bool(given) and hmac.compare_digest(given.encode(), expected.encode())
