"""Structured JSON logs, one line per event, as Cloud Logging reads them.

Each line carries ``severity`` (Cloud Logging's level field), ``message``
(the event name) and, inside a request that Google traced, the trace as
``logging.googleapis.com/trace``. Log-based metrics count events by name,
e.g. ``credential_rejected`` for agentkourier_credential_rejections_total.

No credential reaches a log line: every string of an event (details,
exceptions, URLs) is scrubbed, dropping a URL's ``user:password@`` and
redacting what ``shared.core.redaction`` finds, and the HTTP libraries'
own loggers (httpx logs every request's URL at INFO) speak only from
WARNING up.
"""

from __future__ import annotations

import logging
import re
import sys
from collections.abc import Mapping, MutableMapping
from typing import Any

import structlog

from shared.core.redaction import redact_text

QUIET_LOGGERS = ("httpx", "httpcore")
"""Libraries whose INFO lines carry URLs."""

_USERINFO = re.compile(r"\b([a-zA-Z][a-zA-Z0-9+.-]*://)[^\s/?#@]+@")

SEVERITY = {"exception": "ERROR", "warn": "WARNING"}
"""structlog's method names that are not Cloud Logging's severity names, upper-cased."""


def scrubbed(text: str) -> str:
    """``text`` as a log line may hold it: no URL userinfo, credentials redacted."""
    return redact_text(_USERINFO.sub(r"\1", text))


def _scrub(_: Any, __: str, event: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
    return {key: _scrubbed_value(value) for key, value in event.items()}


def _scrubbed_value(value: Any) -> Any:
    if isinstance(value, str):
        return scrubbed(value)
    if isinstance(value, dict):
        return {key: _scrubbed_value(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_scrubbed_value(item) for item in value]
    return value


class CloudFields:
    """Adds Cloud Logging's ``severity``, ``message`` and trace fields to an event."""

    def __init__(self, project: str) -> None:
        self._project = project

    def __call__(self, _: Any, method: str, event: MutableMapping[str, Any]) -> Mapping[str, Any]:
        event["severity"] = SEVERITY.get(method, method.upper())
        event["message"] = event.pop("event", "")
        trace = structlog.contextvars.get_contextvars().get("trace_id")
        if trace:
            event["logging.googleapis.com/trace"] = f"projects/{self._project}/traces/{trace}"
        return event


def configure_logging(project: str) -> None:
    """Send structlog's JSON lines to stdout (the composition root calls it once)."""
    logging.basicConfig(stream=sys.stdout, level=logging.INFO, format="%(message)s")
    for name in QUIET_LOGGERS:
        logging.getLogger(name).setLevel(logging.WARNING)
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.TimeStamper(fmt="iso", key="time"),
            structlog.processors.format_exc_info,
            _scrub,
            CloudFields(project),
            structlog.processors.JSONRenderer(),
        ],
        logger_factory=structlog.PrintLoggerFactory(sys.stdout),
        cache_logger_on_first_use=True,
    )
