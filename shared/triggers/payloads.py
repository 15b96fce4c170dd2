"""What an alert sender posts, read into one model: an ``AlertGroup``.

Theory of operation: Alertmanager (webhook payload version 4) and Grafana
(its webhook contact point, version 1) send one notification per alert
group: the group's identity (``groupKey``), whether any alert fires, the
labels and annotations all alerts share, and the alerts themselves, each
with a ``fingerprint`` (its label set) and ``startsAt`` (a new value is a new
firing). A generic webhook sends one alert: a title, a severity, free fields,
and optionally a key that names it across notifications. Each is read with a
pydantic model that ignores fields it does not know (senders add some with
every release), and a payload that lacks what Kourier needs is refused with
a message naming the field, e.g. ``alerts[0].status: Input should be
'firing' or 'resolved'``. Nothing here decides or renders; the text is kept
as sent, and escaped where it is shown.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, ValidationError

from shared.config import describe_errors
from shared.errors import PayloadRejected

Source = Literal["alertmanager", "grafana", "generic"]
Status = Literal["firing", "resolved"]


@dataclass(frozen=True)
class Link:
    """A link the sender gave, by what it leads to."""

    title: str
    url: str


@dataclass(frozen=True)
class Alert:
    """One alert of a group."""

    status: Status
    labels: Mapping[str, str]
    annotations: Mapping[str, str]
    fingerprint: str
    starts_at: str = ""
    ends_at: str = ""
    links: tuple[Link, ...] = ()
    values: str = ""
    """Grafana's text form of the evaluated values."""

    @property
    def identity(self) -> str:
        """One firing of one alert: its fingerprint and when it started."""
        return f"{self.fingerprint}@{self.starts_at}"

    @property
    def summary(self) -> str:
        """What the alert says about itself, in one line if it says anything."""
        return self.annotations.get("summary") or self.annotations.get("description") or ""

    def as_data(self) -> dict[str, Any]:
        """The alert's fields, for the agent."""
        data: dict[str, Any] = {
            "status": self.status,
            "fingerprint": self.fingerprint,
            "labels": dict(self.labels),
            "annotations": dict(self.annotations),
            "startsAt": self.starts_at,
            "endsAt": self.ends_at,
            "links": {link.title: link.url for link in self.links},
            "values": self.values,
        }
        return {k: v for k, v in data.items() if v}


@dataclass(frozen=True)
class AlertGroup:
    """One notification about one alert group."""

    source: Source
    group_key: str
    """The group's identity at its sender (receiver and groupKey)."""
    title: str
    severity: str
    summary: str
    labels: Mapping[str, str]
    """The labels every alert of the group has (Alertmanager's commonLabels)."""
    annotations: Mapping[str, str]
    alerts: tuple[Alert, ...]
    truncated: int = 0
    """Alerts the sender left out (its max_alerts)."""
    links: tuple[Link, ...] = ()

    @property
    def status(self) -> Status:
        """Firing while any alert fires, as the senders count it."""
        return "firing" if self.firing else "resolved"

    @property
    def firing(self) -> tuple[Alert, ...]:
        """The alerts that fire."""
        return tuple(a for a in self.alerts if a.status == "firing")

    @property
    def resolved(self) -> tuple[Alert, ...]:
        """The alerts that have resolved."""
        return tuple(a for a in self.alerts if a.status == "resolved")

    def keeping(self, alerts: tuple[Alert, ...]) -> AlertGroup:
        """The same notification with only ``alerts``."""
        return replace(self, alerts=alerts)

    def as_data(self) -> dict[str, Any]:
        """The group's fields, for the agent: everything the sender said that Kourier reads."""
        data: dict[str, Any] = {
            "source": self.source,
            "status": self.status,
            "title": self.title,
            "severity": self.severity,
            "summary": self.summary,
            "commonLabels": dict(self.labels),
            "commonAnnotations": dict(self.annotations),
            "links": {link.title: link.url for link in self.links},
            "alerts": [a.as_data() for a in self.alerts],
            "truncatedAlerts": self.truncated,
        }
        return {k: v for k, v in data.items() if v}


def read_payload(source: Source, body: bytes) -> AlertGroup:
    """The notification in ``body``; PayloadRejected names what is wrong with it."""
    try:
        raw = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        raise PayloadRejected("the body is not JSON") from None
    if not isinstance(raw, dict):
        raise PayloadRejected("the body is not a JSON object")
    reader = {"alertmanager": _alertmanager, "grafana": _grafana, "generic": _generic}[source]
    try:
        return reader(raw)
    except ValidationError as error:
        raise PayloadRejected(describe_errors(error)) from None


# Alertmanager and Grafana ------------------------------------------------------


class _Lenient(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class _SentAlert(_Lenient):
    status: Status
    labels: dict[str, str] = Field(default_factory=dict)
    annotations: dict[str, str] = Field(default_factory=dict)
    startsAt: str = ""
    endsAt: str = ""
    generatorURL: str = ""
    fingerprint: str = ""
    # Grafana only.
    dashboardURL: str = ""
    panelURL: str = ""
    silenceURL: str = ""
    valueString: str = ""


class _SentGroup(_Lenient):
    groupKey: str = Field(min_length=1)
    receiver: str = ""
    groupLabels: dict[str, str] = Field(default_factory=dict)
    commonLabels: dict[str, str] = Field(default_factory=dict)
    commonAnnotations: dict[str, str] = Field(default_factory=dict)
    externalURL: str = ""
    truncatedAlerts: int = Field(0, ge=0)
    alerts: list[_SentAlert] = Field(min_length=1)
    # Grafana only.
    title: str = ""


def _alertmanager(raw: dict[str, Any]) -> AlertGroup:
    sent = _SentGroup.model_validate(raw)
    alerts = tuple(_alert(a, (Link("Source", a.generatorURL),)) for a in sent.alerts)
    links = (
        _runbook(sent),
        _first_link(alerts, "Source"),
        Link("Alertmanager", sent.externalURL),
    )
    return _group("alertmanager", sent, alerts, links, fallback_title="Alertmanager alert")


def _grafana(raw: dict[str, Any]) -> AlertGroup:
    sent = _SentGroup.model_validate(raw)
    alerts = tuple(
        _alert(
            a,
            (
                Link("Dashboard", a.dashboardURL),
                Link("Panel", a.panelURL),
                Link("Rule", a.generatorURL),
                Link("Silence", a.silenceURL),
            ),
        )
        for a in sent.alerts
    )
    links = (
        _runbook(sent),
        _first_link(alerts, "Dashboard"),
        _first_link(alerts, "Panel"),
        _first_link(alerts, "Rule"),
        _first_link(alerts, "Silence"),
    )
    fallback = sent.title or "Grafana alert"
    return _group("grafana", sent, alerts, links, fallback_title=fallback)


def _alert(sent: _SentAlert, links: tuple[Link, ...]) -> Alert:
    return Alert(
        status=sent.status,
        labels=sent.labels,
        annotations=sent.annotations,
        fingerprint=sent.fingerprint or _fingerprint(sent.labels),
        starts_at=sent.startsAt,
        ends_at="" if sent.endsAt.startswith("0001-") else sent.endsAt,
        links=tuple(link for link in links if link.url),
        values=sent.valueString,
    )


def _group(
    source: Source,
    sent: _SentGroup,
    alerts: tuple[Alert, ...],
    links: tuple[Link, ...],
    fallback_title: str,
) -> AlertGroup:
    common = sent.commonLabels
    firing = [a for a in alerts if a.status == "firing"] or list(alerts)
    return AlertGroup(
        source=source,
        group_key=f"{sent.receiver}/{sent.groupKey}",
        title=common.get("alertname") or sent.groupLabels.get("alertname") or fallback_title,
        severity=common.get("severity") or firing[0].labels.get("severity", ""),
        summary=(
            sent.commonAnnotations.get("summary")
            or sent.commonAnnotations.get("description")
            or firing[0].summary
        ),
        labels={**sent.groupLabels, **common},
        annotations=sent.commonAnnotations,
        alerts=alerts,
        truncated=sent.truncatedAlerts,
        links=tuple(link for link in links if link.url),
    )


def _runbook(sent: _SentGroup) -> Link:
    found = [sent.commonAnnotations.get("runbook_url", "")]
    found += [a.annotations.get("runbook_url", "") for a in sent.alerts if a.status == "firing"]
    return Link("Runbook", next((url for url in found if url), ""))


def _first_link(alerts: tuple[Alert, ...], title: str) -> Link:
    found = (link for a in alerts for link in a.links if link.title == title)
    return next(found, Link(title, ""))


def _fingerprint(labels: Mapping[str, str]) -> str:
    canonical = json.dumps(sorted(labels.items()), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]


# A generic webhook ---------------------------------------------------------------

Scalar = str | int | float | StrictBool | None


class _Generic(_Lenient):
    title: str = Field(min_length=1)
    severity: str = ""
    status: Status = "firing"
    key: str = ""
    summary: str = ""
    link: str = ""
    startsAt: str = ""
    fields: dict[str, Scalar] = Field(default_factory=dict)


def _generic(raw: dict[str, Any]) -> AlertGroup:
    sent = _Generic.model_validate(raw)
    key = sent.key or sent.title
    labels = {name: _as_text(value) for name, value in sent.fields.items()}
    if sent.severity:
        labels["severity"] = sent.severity
    links = (Link("Link", sent.link),) if sent.link else ()
    alert = Alert(
        status=sent.status,
        labels=labels,
        annotations={"summary": sent.summary} if sent.summary else {},
        fingerprint=hashlib.sha256(key.encode()).hexdigest()[:16],
        starts_at=sent.startsAt,
        links=links,
    )
    return AlertGroup(
        source="generic",
        group_key=key,
        title=sent.title,
        severity=sent.severity,
        summary=sent.summary,
        labels=labels,
        annotations=alert.annotations,
        alerts=(alert,),
        links=links,
    )


def _as_text(value: Scalar) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value)
