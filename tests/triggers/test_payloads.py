"""Reading what Alertmanager, Grafana and a generic webhook post."""

from __future__ import annotations

import json

import pytest

from shared.errors import PayloadRejected
from shared.triggers.payloads import read_payload

from .payloads import alertmanager, all_resolved, encoded, generic, grafana


def test_alertmanager_v4_is_one_group_of_alerts_with_their_identities() -> None:
    group = read_payload("alertmanager", encoded(alertmanager()))

    assert group.source == "alertmanager"
    assert group.group_key == (
        'slack-bridge/{}/{team="payments"}:{alertname="CheckoutErrors", env="prod"}'
    )
    assert group.status == "firing"
    assert (group.title, group.severity) == ("CheckoutErrors", "critical")
    assert group.summary == "5xx ratio 7.3% on checkout-api (eu-west-1)"
    assert group.labels == {
        "alertname": "CheckoutErrors",
        "env": "prod",
        "severity": "critical",
        "team": "payments",
    }
    assert [(a.status, a.identity) for a in group.alerts] == [
        ("firing", "3f9a1c0b7d2e4a61@2026-09-21T08:14:30.482Z"),
        ("resolved", "b81e44d09c5f7a12@2026-09-21T08:02:00.117Z"),
    ]
    assert group.alerts[0].ends_at == "", "0001-01-01 means still firing"
    assert [link.title for link in group.links] == ["Runbook", "Source", "Alertmanager"]


def test_truncated_alerts_are_counted() -> None:
    payload = alertmanager()
    payload["truncatedAlerts"] = 7
    assert read_payload("alertmanager", encoded(payload)).truncated == 7


def test_a_group_with_nothing_firing_is_resolved() -> None:
    group = read_payload("alertmanager", encoded(all_resolved(alertmanager())))
    assert group.status == "resolved" and not group.firing


def test_grafana_is_read_with_its_own_links_and_values() -> None:
    group = read_payload("grafana", encoded(grafana()))

    assert group.title == "High memory usage"
    assert group.summary == "Memory above 90% in us-1"
    assert group.group_key.startswith("slack-bridge/{}:{alertname=")
    [alert] = group.alerts
    assert alert.identity == "c6eadffa33fcdf37@2026-09-21T09:51:03.157076+02:00"
    assert alert.values.startswith("[ var='B' labels={zone=us-1} value=92.4 ]")
    assert [link.title for link in group.links] == [
        "Runbook",
        "Dashboard",
        "Panel",
        "Rule",
        "Silence",
    ]


def test_a_generic_alert_is_a_group_of_one_named_by_its_key_or_title() -> None:
    group = read_payload("generic", encoded(generic()))

    assert group.group_key == "Disk almost full on db-1"
    assert (group.title, group.severity, group.status) == (
        "Disk almost full on db-1",
        "warning",
        "firing",
    )
    assert group.labels == {
        "host": "db-1",
        "used_percent": "93",
        "mount": "/var/lib/postgresql",
        "severity": "warning",
    }
    keyed = read_payload("generic", encoded(generic(key="disk-db-1", status="resolved")))
    assert keyed.group_key == "disk-db-1" and keyed.status == "resolved"


def test_unknown_fields_are_ignored() -> None:
    payload = alertmanager()
    payload["aFieldFromANewerRelease"] = {"x": 1}
    payload["alerts"][0]["anotherOne"] = [1, 2]
    assert read_payload("alertmanager", encoded(payload)).title == "CheckoutErrors"


@pytest.mark.parametrize(
    ("source", "body", "message"),
    [
        ("alertmanager", b"not json", "the body is not JSON"),
        ("alertmanager", b"[1, 2]", "the body is not a JSON object"),
        ("alertmanager", {"groupKey": "g", "alerts": []}, "alerts: List should have at least 1"),
        ("alertmanager", {"alerts": [{"status": "firing"}]}, "groupKey: Field required"),
        (
            "alertmanager",
            {"groupKey": "g", "alerts": [{"status": "burning"}]},
            "alerts[0].status: Input should be 'firing' or 'resolved'",
        ),
        (
            "grafana",
            {"groupKey": "g", "alerts": [{"status": "firing", "labels": {"zone": 1}}]},
            "alerts[0].labels.zone: Input should be a valid string",
        ),
        ("generic", {"severity": "warning"}, "title: Field required"),
        (
            "generic",
            {"title": "t", "fields": {"nested": {"a": 1}}},
            "fields.nested",
        ),
    ],
)
def test_a_payload_kourier_cannot_read_is_refused_naming_the_field(
    source: str, body: object, message: str
) -> None:
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    with pytest.raises(PayloadRejected) as refused:
        read_payload(source, raw)  # type: ignore[arg-type]
    assert message in str(refused.value)
