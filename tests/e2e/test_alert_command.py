"""``./kourier alert`` against the local stack, as a new user runs it after ``./kourier up``."""

from __future__ import annotations

import os
import subprocess
import sys

from local.slack_standin.client import SlackStandin
from local.stack import DEMO_CHANNEL, REPO, Stack
from shared.core import notices

from .conftest import DemoAgent


def kourier_alert(stack: Stack, *args: str) -> str:
    """Run the command on the stack's ports; return what it printed."""
    env = {
        **os.environ,
        "KOURIER_PORT_CHAT_INGRESS": str(stack.ports.chat_ingress),
        "KOURIER_PORT_SLACK": str(stack.ports.slack),
    }
    env.pop("KOURIER_SECRET_DEMO_ALERTS_TOKEN", None)
    done = subprocess.run(
        [sys.executable, "-m", "local.cli", "alert", *args],
        env=env,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_kourier_alert_opens_a_thread_the_demo_agent_looks_into_then_repeats_and_resolves(
    stack: Stack, standin: SlackStandin, agent: DemoAgent
) -> None:
    opened = kourier_alert(stack)

    assert "HTTP 200: opened a thread" in opened
    assert "🚨 *CheckoutErrors* · critical · firing" in opened
    assert "Looking into **CheckoutErrors** (critical)" in opened
    assert "went out 12 minutes before the alert began" in opened, "the agent's finished answer"
    [root] = [m for m in standin.history(DEMO_CHANNEL) if m.is_bot and "CheckoutErrors" in m.text]
    [send] = agent.sends_containing("alertmanager alert from trigger demo-alerts")
    assert "agentkourier.dev/actor" not in (send["params"]["message"].get("metadata") or {})

    assert "HTTP 200: nothing: repeat" in kourier_alert(stack)
    resolved = kourier_alert(stack, "--resolved")

    assert "HTTP 200: resolved the thread" in resolved
    assert notices.ALERTS_RESOLVED in resolved
    assert standin.thread(DEMO_CHANNEL, root.ts)[-1].text == notices.ALERTS_RESOLVED
    assert len(agent.sends_containing("alertmanager alert from trigger demo-alerts")) == 1
