"""The command line: a person talks to the bot through the stand-in; settings."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from slack_sdk import WebClient

from local.slack_standin import SlackStandin, StandinProcess
from local.slack_standin.process import REPO_ROOT
from tests.slack_standin.support import APPROVAL_BLOCKS, CHANNEL, Receiver, free_port


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


def test_settings_come_from_the_environment_and_flags(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("SLACK_STANDIN_STREAM_LIFETIME_SECONDS", "7")
    monkeypatch.setenv("SLACK_STANDIN_ACK_TIMEOUT_SECONDS", "9")
    monkeypatch.setenv("SLACK_STANDIN_USERS", "U0DAVE:Dave Bowman:dave@example.com")
    process = StandinProcess(
        port=free_port(), log_path=tmp_path / "standin.log", ack_timeout_seconds=2
    )
    with process as standin:
        settings = standin.configure()
        assert (settings.stream_lifetime_seconds, settings.ack_timeout_seconds) == (7, 2)
        assert settings.trigger_lifetime_seconds == 3  # Slack's own limit by default
        slack = WebClient(base_url=standin.api_url, token="xoxb-standin-token")
        assert slack.users_info(user="U0DAVE")["user"]["real_name"] == "Dave Bowman"
