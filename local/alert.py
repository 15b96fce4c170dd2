"""``kourier alert``: send an Alertmanager notification to the local stack, then show its thread.

Without ``--file`` it sends a sample notification, shaped as Alertmanager
0.34 posts one (webhook payload version 4), for one alert group on the demo
trigger: the first opens a thread and starts a turn, the same again is a
repeat and adds nothing (as Alertmanager's repeat_interval would), and
``--resolved`` sends the group resolved, which posts into the same thread.
The alert's ``startsAt`` is the start of the current hour, so a repeat within
the hour is the same firing. It then prints the thread as ``kourier say`` does,
once the agent's answer has settled.
"""

from __future__ import annotations

import json
import os
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

from local.say import Say, run
from local.slack_standin.client import SlackStandin
from local.stack import DEMO_ALERT_TOKEN, DEMO_APPROVER, DEMO_CHANNEL, DEMO_TRIGGER, StackPorts

REPLY_WAIT_SECONDS = 120.0
"""How long to wait for the agent to begin its answer in the alert's thread."""


def sample_notification(resolved: bool, at: datetime) -> dict[str, Any]:
    """The demo alert group, firing or resolved."""
    started = at.replace(minute=0, second=0, microsecond=0)
    labels = {
        "alertname": "CheckoutErrors",
        "env": "demo",
        "severity": "critical",
        "team": "payments",
        "service": "checkout-api",
        "region": "eu-west-1",
    }
    status = "resolved" if resolved else "firing"
    return {
        "version": "4",
        "groupKey": '{}/{team="payments"}:{alertname="CheckoutErrors", env="demo"}',
        "truncatedAlerts": 0,
        "status": status,
        "receiver": "agent-kourier",
        "notification_reason": "all alerts resolved" if resolved else "first notification",
        "groupLabels": {"alertname": "CheckoutErrors", "env": "demo"},
        "commonLabels": labels,
        "commonAnnotations": {
            "summary": "5xx ratio 7.3% on checkout-api (eu-west-1)",
            "description": "More than 5% of checkout requests failed for 5 minutes.",
            "runbook_url": "https://runbooks.example.com/checkout-errors",
        },
        "routeLabels": {},
        "externalURL": "http://alertmanager.example.com",
        "alerts": [
            {
                "status": status,
                "labels": labels,
                "annotations": {"summary": "5xx ratio 7.3% on checkout-api (eu-west-1)"},
                "startsAt": started.isoformat().replace("+00:00", "Z"),
                "endsAt": at.isoformat().replace("+00:00", "Z")
                if resolved
                else "0001-01-01T00:00:00Z",
                "generatorURL": "http://prometheus.example.com/graph?g0.expr=checkout_5xx_ratio",
                "fingerprint": "3f9a1c0b7d2e4a61",
            }
        ],
    }


def main(resolved: bool, file: str | None, trigger: str = DEMO_TRIGGER) -> int:
    """Send the notification, print what Kourier answered and the thread it went to."""
    ports = StackPorts.from_env()
    try:
        body = (
            Path(file).read_bytes()
            if file
            else json.dumps(sample_notification(resolved, datetime.now(UTC))).encode()
        )
    except OSError as error:
        print(f"kourier alert: cannot read {file}: {error.strerror}")
        return 1
    token = os.environ.get("KOURIER_SECRET_DEMO_ALERTS_TOKEN", DEMO_ALERT_TOKEN)
    url = f"{ports.function_url('chat_ingress')}triggers/{trigger}"
    try:
        answer = httpx.post(
            url,
            content=body,
            headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
            timeout=60,
        )
    except httpx.HTTPError as error:
        print(
            f"kourier alert: the stack does not answer at {url} ({error}); is `./kourier up` running?"
        )
        return 1
    reply = (
        answer.json()
        if answer.headers.get("content-type", "").startswith("application/json")
        else {}
    )
    print(f"{url}: HTTP {answer.status_code}: {reply.get('outcome') or answer.text}")
    thread = reply.get("thread")
    if not thread:
        return 0 if answer.status_code == 200 else 1
    with SlackStandin(f"http://127.0.0.1:{ports.slack}") as standin:
        _wait_for_a_reply(standin, DEMO_CHANNEL, thread)
        run(Say(channel=DEMO_CHANNEL, user=DEMO_APPROVER, thread=thread), standin)
    return 0


def _wait_for_a_reply(standin: SlackStandin, channel: str, thread: str) -> None:
    """Wait until the bot has replied in the thread (``say`` then waits for it to settle)."""
    deadline = time.monotonic() + REPLY_WAIT_SECONDS
    while time.monotonic() < deadline:
        if any(m.is_bot for m in standin.thread(channel, thread)[1:]):
            return
        time.sleep(0.3)
