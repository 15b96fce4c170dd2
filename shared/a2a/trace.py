"""The W3C trace context that calls to agents carry, when a trace is active.

A function sets ``current_trace`` from its incoming request's headers (see
``trace_from_headers``); every call to an agent made in that context then
carries ``traceparent`` and ``tracestate``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from contextvars import ContextVar
from dataclasses import dataclass

_TRACEPARENT = re.compile(r"^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$")


@dataclass(frozen=True)
class TraceContext:
    """The two W3C trace context headers."""

    traceparent: str
    tracestate: str | None = None

    def as_headers(self) -> dict[str, str]:
        """The headers to send."""
        headers = {"traceparent": self.traceparent}
        if self.tracestate:
            headers["tracestate"] = self.tracestate
        return headers


current_trace: ContextVar[TraceContext | None] = ContextVar("current_trace", default=None)


def trace_from_headers(headers: Mapping[str, str]) -> TraceContext | None:
    """The trace context of a request, or None when it has no valid traceparent.

    Args:
        headers: The request headers (case-insensitive mapping, as Flask's).
    """
    traceparent = (headers.get("traceparent") or "").strip().lower()
    if not _TRACEPARENT.match(traceparent):
        return None
    return TraceContext(traceparent, (headers.get("tracestate") or "").strip() or None)
