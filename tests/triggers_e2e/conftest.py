"""One local stack for the end-to-end tests of triggers (alerts that open threads).

The five functions run on the real emulators with the Slack stand-in and the
demo agent, as ``kourier up`` runs them, with this suite's own config: one
Binding per channel, all on the demo agent, and a trigger on each: an
Alertmanager one with a bearer token, one that starts a turn on resolution,
one capped at two threads an hour and one at one, one with label matchers,
a Grafana one signed with HMAC over a timestamp, and a generic one signed
with HMAC.
Ports are this suite's, 31300-31399.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar
from unittest import mock

import httpx
import pytest
from google.cloud import firestore

from local.emulators import EmulatorPorts
from local.processes import Process
from local.slack_standin.client import SlackStandin
from local.slack_standin.models import Message
from local.stack import Stack, StackPorts, running_stack

PORTS = StackPorts(
    chat_ingress=31300,
    turn_send=31301,
    stream_follow=31302,
    reconcile=31303,
    timeout=31304,
    slack=31310,
    agent=31311,
    emulators=EmulatorPorts().shifted(23000),
)
WAIT = 90.0
"""How long a test waits for something to show: generous, for a loaded machine."""

BEARER = "am-token-for-tests"
HMAC_SECRET = "hmac-secret-for-tests"
CHANNELS = {
    "am": "C0ALERTS",
    "am-resolve-turn": "C0RESOLVE",
    "flood": "C0FLOOD",
    "critical-only": "C0MATCH",
    "grafana": "C0GRAFANA",
    "generic": "C0GENERIC",
    "one-an-hour": "C0ONEANHOUR",
}
TRIGGERS = """
triggers:
  - name: am
    source: alertmanager
    binding: am
    auth: {type: bearer, secretRef: {name: am-token}}
  - name: am-resolve-turn
    source: alertmanager
    binding: am-resolve-turn
    auth: {type: bearer, secretRef: {name: am-token}}
    resolvedStartsTurn: true
  - name: flood
    source: alertmanager
    binding: flood
    auth: {type: bearer, secretRef: {name: am-token}}
    limits: {threadsPerHour: 2}
  - name: critical-only
    source: alertmanager
    binding: critical-only
    auth: {type: bearer, secretRef: {name: am-token}}
    matchers: ["severity=critical", "region=~eu-.*"]
  - name: grafana
    source: grafana
    binding: grafana
    auth:
      type: hmac
      secretRef: {name: hook-hmac}
      timestampHeader: X-Grafana-Alerting-Timestamp
  - name: generic
    source: generic
    binding: generic
    auth: {type: hmac, secretRef: {name: hook-hmac}}
  - name: one-an-hour
    source: alertmanager
    binding: one-an-hour
    auth: {type: bearer, secretRef: {name: am-token}}
    limits: {threadsPerHour: 1}
"""

T = TypeVar("T")


def config(agent_url: str) -> str:
    """The suite's config: a Binding per trigger's channel, on the demo agent."""
    bindings = "".join(
        f"""
  - name: {name}
    channels: [{channel}]
    agentBackend: demo
    identity: {{userId: kourier-alerts}}"""
        for name, channel in CHANNELS.items()
    )
    return f"""\
agentBackends:
  - name: demo
    url: {agent_url}
bindings:{bindings}
{TRIGGERS}"""


@pytest.fixture(scope="session")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    state_dir = tmp_path_factory.mktemp("triggers")
    agent_url = f"http://127.0.0.1:{PORTS.agent}/"
    agent = Process(
        "demo-agent",
        [sys.executable, "-m", "local.demo_agent", "--port", str(PORTS.agent)],
        state_dir / "logs" / "demo-agent.log",
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
    )
    try:
        agent.wait_http(agent_url + ".well-known/agent-card.json")
        config_file = state_dir / "kourier.yaml"
        config_file.write_text(config(agent_url))
        environ = {k: v for k, v in os.environ.items() if not k.startswith(("KOURIER_", "SLACK_"))}
        environ |= {
            "KOURIER_CONFIG": str(config_file),
            "KOURIER_SECRET_AM_TOKEN": BEARER,
            "KOURIER_SECRET_HOOK_HMAC": HMAC_SECRET,
            "SLACK_STANDIN_CHANNELS": ",".join(CHANNELS.values()),
        }
        with running_stack(PORTS, state_dir, environ=environ) as running:
            yield running
    finally:
        agent.stop()


@pytest.fixture
def standin(stack: Stack) -> Iterator[SlackStandin]:
    with SlackStandin(f"http://127.0.0.1:{stack.ports.slack}") as client:
        yield client


@pytest.fixture(scope="session")
def db(stack: Stack) -> firestore.Client:
    emulator = {
        k: stack.function_env[k] for k in ("FIRESTORE_EMULATOR_HOST", "GOOGLE_CLOUD_PROJECT")
    }
    with mock.patch.dict(os.environ, emulator):
        return firestore.Client(project=emulator["GOOGLE_CLOUD_PROJECT"])


@dataclass
class Sender:
    """Posts notifications to the stack's triggers as Alertmanager and Grafana do."""

    stack: Stack

    def post(
        self, trigger: str, body: bytes | dict[str, Any], headers: dict[str, str] | None = None
    ) -> httpx.Response:
        """POST ``body`` to ``/triggers/<trigger>`` with ``headers`` (none: the right proof)."""
        raw = body if isinstance(body, bytes) else json.dumps(body).encode()
        if headers is None:
            headers = self.proof(trigger, raw)
        url = f"{self.stack.ingress_url}triggers/{trigger}"
        return httpx.post(
            url, content=raw, headers={"Content-Type": "application/json", **headers}, timeout=60
        )

    @staticmethod
    def proof(trigger: str, raw: bytes) -> dict[str, str]:
        """The headers the trigger's sender adds: a bearer token, or an HMAC signature."""
        if trigger == "grafana":
            stamp = str(int(time.time()))
            return {
                "X-Grafana-Alerting-Timestamp": stamp,
                "X-Grafana-Alerting-Signature": _signed(stamp.encode() + b":" + raw),
            }
        if trigger == "generic":
            return {"X-Kourier-Signature": _signed(raw)}
        return {"Authorization": f"Bearer {BEARER}"}


def _signed(message: bytes) -> str:
    return hmac.new(HMAC_SECRET.encode(), message, hashlib.sha256).hexdigest()


@pytest.fixture
def sender(stack: Stack) -> Sender:
    return Sender(stack)


class DemoAgent:
    """What the demo agent received (its /_demo/received record)."""

    def __init__(self, url: str) -> None:
        self.url = url

    def sends(self) -> list[dict[str, Any]]:
        """Every streaming send it received, oldest first."""
        received = httpx.get(self.url + "_demo/received", timeout=10).json()
        return [
            r for r in received if r.get("method") in ("SendStreamingMessage", "message/stream")
        ]

    def sends_containing(self, text: str) -> list[dict[str, Any]]:
        """The sends whose message text contains ``text``."""
        return [s for s in self.sends() if text in text_of(s["params"]["message"])]


def text_of(message: dict[str, Any]) -> str:
    """The text parts of a wire message, joined."""
    return "".join(part.get("text", "") for part in message.get("parts", []))


@pytest.fixture
def agent(stack: Stack) -> DemoAgent:
    return DemoAgent(f"http://127.0.0.1:{PORTS.agent}/")


def wait_for(standin: SlackStandin, found: Callable[[], T | None], what: str) -> T:
    """Wait for ``found`` to return something; fail naming ``what``."""
    try:
        return standin.wait_for(found, timeout=WAIT, interval=0.3)
    except TimeoutError:
        raise AssertionError(f"no {what} within {WAIT} s") from None


def bot_roots(standin: SlackStandin, channel: str) -> list[Message]:
    """The bot's top-level messages in ``channel``, oldest first."""
    return [m for m in standin.history(channel) if m.is_bot]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if Path(str(item.fspath)).parent == Path(__file__).parent:
            item.add_marker(pytest.mark.emulators)
