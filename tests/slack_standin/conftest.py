"""Fixtures: one stand-in process per session, and a tiny app that receives its callbacks."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from slack_sdk import WebClient

from local.slack_standin import SlackStandin, StandinProcess
from tests.slack_standin.support import BOT_TOKEN, SIGNING_SECRET, Receiver, free_port


@pytest.fixture(scope="session")
def receiver() -> Iterator[Receiver]:
    app = Receiver()
    yield app
    app.stop()


@pytest.fixture(scope="session")
def standin_session(
    receiver: Receiver, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[SlackStandin]:
    process = StandinProcess(
        port=free_port(),
        log_path=Path(tmp_path_factory.mktemp("standin")) / "standin.log",
        signing_secret=SIGNING_SECRET,
        bot_token=BOT_TOKEN,
        events_url=f"{receiver.url}/slack/events",
        interactivity_url=f"{receiver.url}/slack/interactivity",
        # Slack's 3-second limits are tested on their own; elsewhere a loaded
        # machine must not turn them into flakes.
        ack_timeout_seconds=20,
        trigger_lifetime_seconds=20,
    )
    with process as client:
        yield client


@pytest.fixture
def standin(standin_session: SlackStandin, receiver: Receiver) -> SlackStandin:
    """The stand-in, reset to its start state, with no requests received yet."""
    standin_session.reset()
    receiver.clear()
    return standin_session


@pytest.fixture
def slack(standin: SlackStandin) -> WebClient:
    """slack_sdk's real WebClient, pointed at the stand-in."""
    return WebClient(base_url=standin.api_url, token=BOT_TOKEN)
