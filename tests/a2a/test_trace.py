"""The W3C trace context a function passes on to the agent."""

from __future__ import annotations

from shared.a2a.trace import TraceContext, trace_from_headers

TRACEPARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"


def test_a_valid_traceparent_is_passed_on_with_its_tracestate() -> None:
    trace = trace_from_headers({"traceparent": TRACEPARENT, "tracestate": "congo=t61rcWkgMzE"})

    assert trace == TraceContext(TRACEPARENT, "congo=t61rcWkgMzE")
    assert trace.as_headers() == {"traceparent": TRACEPARENT, "tracestate": "congo=t61rcWkgMzE"}


def test_a_tracestate_alone_or_a_malformed_traceparent_is_no_trace() -> None:
    assert trace_from_headers({"tracestate": "congo=t61rcWkgMzE"}) is None
    assert trace_from_headers({"traceparent": "00-not-a-trace-01"}) is None
    assert trace_from_headers({}) is None


def test_without_a_tracestate_only_traceparent_is_sent() -> None:
    trace = trace_from_headers({"traceparent": TRACEPARENT.upper()})

    assert trace is not None
    assert trace.as_headers() == {"traceparent": TRACEPARENT}
