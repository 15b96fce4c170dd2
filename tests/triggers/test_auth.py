"""A trigger request proves its sender with a bearer token or an HMAC of its body."""

from __future__ import annotations

import hashlib
import hmac

import pytest

from shared.config import Trigger
from shared.errors import TriggerRejected
from shared.triggers.auth import verify_request

BODY = b'{"version": "4"}'
SECRET = "s3cret"
NOW = 1_790_000_000


def trigger(**auth: object) -> Trigger:
    source = auth.pop("source", "alertmanager")
    return Trigger.model_validate(
        {
            "name": "t",
            "source": source,
            "binding": "b",
            "auth": {"secretRef": {"name": "t"}, **auth},
        }
    )


def signed(message: bytes, secret: str = SECRET) -> str:
    return hmac.new(secret.encode(), message, hashlib.sha256).hexdigest()


@pytest.mark.parametrize(
    "headers",
    [{"Authorization": "Bearer s3cret"}, {"authorization": "bearer s3cret"}],
)
def test_the_right_bearer_token_passes(headers: dict[str, str]) -> None:
    verify_request(trigger(type="bearer"), SECRET, BODY, headers, NOW)


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"Authorization": "Bearer wrong"},
        {"Authorization": "Bearer "},
        {"Authorization": "Basic czNjcmV0"},
        {"Authorization": "s3cret"},
        {"X-Grafana-Alerting-Signature": signed(BODY)},
    ],
)
def test_anything_else_is_refused_by_a_bearer_trigger(headers: dict[str, str]) -> None:
    with pytest.raises(TriggerRejected):
        verify_request(trigger(type="bearer"), SECRET, BODY, headers, NOW)


def test_grafana_signs_the_body_in_its_own_header() -> None:
    grafana = trigger(type="hmac", source="grafana")
    verify_request(grafana, SECRET, BODY, {"X-Grafana-Alerting-Signature": signed(BODY)}, NOW)
    for wrong in (signed(BODY, "other"), signed(BODY + b" "), "", "zz"):
        with pytest.raises(TriggerRejected):
            verify_request(grafana, SECRET, BODY, {"X-Grafana-Alerting-Signature": wrong}, NOW)
    with pytest.raises(TriggerRejected):
        verify_request(grafana, SECRET, BODY, {"X-Kourier-Signature": signed(BODY)}, NOW)


def test_a_generic_trigger_takes_a_sha256_prefix_and_its_own_header() -> None:
    generic = trigger(type="hmac", source="generic", header="X-Hook-Signature")
    verify_request(generic, SECRET, BODY, {"X-Hook-Signature": "sha256=" + signed(BODY)}, NOW)


def test_a_signed_timestamp_must_be_fresh() -> None:
    stamped = trigger(type="hmac", source="grafana", timestampHeader="X-Grafana-Alerting-Timestamp")
    stamp = str(NOW - 60)
    headers = {
        "X-Grafana-Alerting-Signature": signed(stamp.encode() + b":" + BODY),
        "X-Grafana-Alerting-Timestamp": stamp,
    }
    verify_request(stamped, SECRET, BODY, headers, NOW)
    with pytest.raises(TriggerRejected, match="stale"):
        verify_request(stamped, SECRET, BODY, headers, NOW + 301)
    with pytest.raises(TriggerRejected, match="timestamp"):
        verify_request(stamped, SECRET, BODY, {"X-Grafana-Alerting-Signature": signed(BODY)}, NOW)
