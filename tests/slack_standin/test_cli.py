"""The command line a person uses to talk to the bot through the stand-in."""

from __future__ import annotations

import re
import subprocess
import sys

from slack_sdk import WebClient

from local.slack_standin import SlackStandin
from local.slack_standin.process import REPO_ROOT
from tests.slack_standin.support import APPROVAL_BLOCKS, CHANNEL, Receiver


def run_cli(standin: SlackStandin, *args: str) -> str:
    command, *rest = args
    completed = subprocess.run(
        [sys.executable, "-m", "local.slack_standin", command, "--url", standin.base_url, *rest],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return completed.stdout


def test_say_show_and_click_from_a_terminal(
    slack: WebClient, standin: SlackStandin, receiver: Receiver
) -> None:
    said = run_cli(standin, "say", "--channel", CHANNEL, "--wait", "0.1", "are the pods healthy?")
    assert re.search(r"app_mention Ev\w+: 200", said)
    assert "<@U0KOURIER> are the pods healthy?" in said
    found = re.search(rf"--channel {CHANNEL} --thread (\d+\.\d+)", said)
    assert found is not None
    thread_ts = found.group(1)
    assert receiver.requests[0].json()["event"]["ts"] == thread_ts

    slack.chat_postMessage(
        channel=CHANNEL, thread_ts=thread_ts, text="Approve?", blocks=APPROVAL_BLOCKS
    )
    shown = run_cli(standin, "show", "--channel", CHANNEL, "--thread", thread_ts)
    assert "Agent Kourier" in shown and "[Approve] [Deny]" in shown
    assert "actions: approve, deny" in shown

    bot_ts = standin.thread(CHANNEL, thread_ts)[1].ts
    clicked = run_cli(standin, "click", "approve", "--channel", CHANNEL, "--ts", bot_ts)
    assert "block_actions: 200" in clicked
    assert receiver.requests[-1].payload()["actions"][0]["action_id"] == "approve"
