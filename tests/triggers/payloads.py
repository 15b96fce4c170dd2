"""The real payloads of tests/data/alerts, and copies of them changed the way senders change them."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent.parent / "data" / "alerts"


def alertmanager() -> dict[str, Any]:
    """Alertmanager's v4 payload: CheckoutErrors, one alert firing (eu-west-1), one resolved."""
    payload: dict[str, Any] = json.loads((DATA / "alertmanager-v4.json").read_text())
    return payload


def grafana() -> dict[str, Any]:
    """Grafana's webhook payload: "High memory usage", one alert firing."""
    payload: dict[str, Any] = json.loads((DATA / "grafana-v1.json").read_text())
    return payload


def generic(**fields: Any) -> dict[str, Any]:
    """A generic webhook's alert."""
    return {
        "title": "Disk almost full on db-1",
        "severity": "warning",
        "summary": "/var/lib/postgresql is 93% full",
        "link": "https://grafana.example.com/d/disk?var-host=db-1",
        "fields": {"host": "db-1", "used_percent": 93, "mount": "/var/lib/postgresql"},
        **fields,
    }


def with_group(payload: dict[str, Any], group: str) -> dict[str, Any]:
    """The same notification for another alert group."""
    changed = copy.deepcopy(payload)
    changed["groupKey"] = changed["groupKey"].replace("CheckoutErrors", group)
    changed["groupKey"] = changed["groupKey"].replace("High memory usage", group)
    changed["commonLabels"]["alertname"] = group
    changed["groupLabels"]["alertname"] = group
    for alert in changed["alerts"]:
        alert["labels"]["alertname"] = group
    return changed


def all_resolved(payload: dict[str, Any], at: str = "2026-09-21T08:40:00Z") -> dict[str, Any]:
    """The group's notification once every alert resolved."""
    changed = copy.deepcopy(payload)
    changed["status"] = "resolved"
    if "state" in changed:
        changed["state"] = "ok"
    for alert in changed["alerts"]:
        alert["status"] = "resolved"
        if alert["endsAt"].startswith("0001-"):
            alert["endsAt"] = at
    return changed


def with_new_alert(payload: dict[str, Any], region: str, fingerprint: str) -> dict[str, Any]:
    """The group's notification with one more alert firing (Alertmanager: "new alerts added")."""
    changed = copy.deepcopy(payload)
    alert = copy.deepcopy(changed["alerts"][0])
    alert["status"] = "firing"
    alert["labels"]["region"] = region
    alert["annotations"]["summary"] = f"5xx ratio 6.0% on checkout-api ({region})"
    alert["fingerprint"] = fingerprint
    alert["startsAt"] = "2026-09-21T08:30:00.000Z"
    alert["endsAt"] = "0001-01-01T00:00:00Z"
    changed["alerts"].append(alert)
    changed["notification_reason"] = "new alerts added"
    return changed


def encoded(payload: dict[str, Any]) -> bytes:
    """The body as a sender posts it."""
    return json.dumps(payload).encode()
