"""Fixtures: one Slack stand-in process for the suite, and slack_sdk's client as Kourier builds it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from slack_sdk import WebClient

from local.slack_standin import SlackStandin, StandinProcess
from shared.slack.web import web_client

from tests.replies.support import BOT_TOKEN, CHANNEL, STANDIN_PORT


@pytest.fixture(scope="session")
def standin_session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SlackStandin]:
    process = StandinProcess(
        port=STANDIN_PORT,
        log_path=Path(tmp_path_factory.mktemp("standin")) / "standin.log",
        bot_token=BOT_TOKEN,
    )
    with process as client:
        yield client


@pytest.fixture
def standin(standin_session: SlackStandin) -> SlackStandin:
    """The stand-in, back in its start state."""
    standin_session.reset()
    return standin_session


@pytest.fixture
def slack(standin: SlackStandin) -> WebClient:
    """The WebClient Kourier uses (with its rate-limit retries), pointed at the stand-in."""
    return web_client(standin.api_url, BOT_TOKEN)


@pytest.fixture
def thread_ts(standin: SlackStandin) -> str:
    """A thread a person started, to reply in."""
    return standin.say(CHANNEL, "a question for the agent").ts
