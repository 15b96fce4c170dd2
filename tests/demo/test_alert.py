"""``./kourier alert``: an alert opens a thread the demo agent looks into, as a new user runs it."""

from __future__ import annotations

from shared.core import notices
from tests.demo.conftest import PORTS, Kourier, Said

SOURCE = "alertmanager alert from trigger demo-alerts"
"""What the untrusted block of the demo trigger's turns names as its source."""


def alert(kourier: Kourier, *args: str) -> Said:
    """``./kourier alert <args>`` on the suite's stack, which must succeed."""
    ingress = {"KOURIER_PORT_CHAT_INGRESS": str(PORTS.chat_ingress)}
    said = kourier.run("alert", *args, env=ingress)
    assert said.status == 0, f"kourier alert {args} failed:\n{said.stdout}\n{said.stderr}"
    return said


def test_an_alert_opens_a_thread_the_agent_looks_into_a_repeat_adds_nothing_and_it_resolves(
    kourier: Kourier,
) -> None:
    opened = alert(kourier)

    assert "HTTP 200: opened a thread" in opened.stdout
    assert "🚨 *CheckoutErrors* · critical · firing" in opened.stdout
    assert "Looking into **CheckoutErrors** (critical)" in opened.stdout
    assert "went out 12 minutes before the alert began" in opened.stdout, "the finished answer"
    [send] = kourier.sends_containing(SOURCE)
    assert "agentkourier.dev/actor" not in (send["params"]["message"].get("metadata") or {})

    repeated = alert(kourier)
    assert "HTTP 200: nothing: repeat" in repeated.stdout
    assert repeated.thread == opened.thread
    resolved = alert(kourier, "--resolved")

    assert "HTTP 200: resolved the thread" in resolved.stdout
    assert kourier.bot_messages(opened.thread)[-1].text == notices.ALERTS_RESOLVED
    assert len(kourier.sends_containing(SOURCE)) == 1, "a repeat and a resolution start no turn"
    follow_up = kourier.say("--thread", opened.thread, "what should we check next?")
    assert "This is turn 2 in this conversation." in follow_up.stdout


def test_the_alert_keyword_without_an_alert_says_how_to_send_one(kourier: Kourier) -> None:
    said = kourier.say("alert")

    assert "Run `./kourier alert` to send one." in said.stdout
