"""Structured JSON logs, one line per event, as Cloud Logging reads them.

Each line carries ``severity`` (Cloud Logging's level field), ``message``
(the event name) and, inside a request that Google traced, the trace as
``logging.googleapis.com/trace``. Log-based metrics count events by name,
e.g. ``credential_rejected`` for agentkourier_credential_rejections_total.
"""

from __future__ import annotations

import logging
import sys
from typing import Any

import structlog

from shared.settings import get_settings

_configured = False


def _cloud_fields(_: Any, method: str, event: dict[str, Any]) -> dict[str, Any]:
    event["severity"] = (
        method.upper()
        .replace("EXCEPTION", "ERROR")
        .replace("WARN", "WARNING")
        .replace("WARNINGING", "WARNING")
    )
    event["message"] = event.pop("event", "")
    trace = structlog.contextvars.get_contextvars().get("trace_id")
    if trace:
        event["logging.googleapis.com/trace"] = f"projects/{get_settings().project}/traces/{trace}"
    return event


def configure_logging() -> None:
    """Send structlog's JSON lines to stdout (once per process)."""
    global _configured
    if _configured:
        return
    _configured = True
    logging.basicConfig(stream=sys.stdout, level=logging.INFO, format="%(message)s")
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.TimeStamper(fmt="iso", key="time"),
            structlog.processors.format_exc_info,
            _cloud_fields,
            structlog.processors.JSONRenderer(),
        ],
        logger_factory=structlog.PrintLoggerFactory(sys.stdout),
        cache_logger_on_first_use=True,
    )
