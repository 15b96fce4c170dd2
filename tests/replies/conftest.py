"""Fixtures: a Slack stand-in with slack_sdk's client as Kourier builds it; the whole stack with a replay agent."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from google.cloud import firestore
from slack_sdk import WebClient

from local.emulators import EmulatorEnv, exported
from local.replay_agent import ReplayAgent, running_replay_stack
from local.slack_standin import SlackStandin, StandinProcess
from local.stack import Stack
from shared.slack.web import web_client
from shared.store import TURNS
from tests.replies.support import BOT_TOKEN, CHANNEL, STACK_PORTS, STANDIN_PORT


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


@pytest.fixture(scope="session")
def replay_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Stack, ReplayAgent]]:
    """The whole local stack, its agent a replay of recorded streams."""
    with running_replay_stack(STACK_PORTS, tmp_path_factory.mktemp("replay-stack")) as running:
        yield running


@pytest.fixture
def replay(replay_stack: tuple[Stack, ReplayAgent]) -> ReplayAgent:
    """The replay agent of the stack."""
    return replay_stack[1]


@pytest.fixture
def stack_standin(replay_stack: tuple[Stack, ReplayAgent]) -> Iterator[SlackStandin]:
    """The stack's Slack stand-in."""
    with SlackStandin(f"http://127.0.0.1:{replay_stack[0].ports.slack}") as client:
        yield client


@pytest.fixture
def turns(replay_stack: tuple[Stack, ReplayAgent]) -> firestore.CollectionReference:
    """The stack's turns in Firestore."""
    env = EmulatorEnv(replay_stack[0].ports.emulators)
    with exported(env):  # the client finds the emulator when it is made
        return firestore.Client(project=env.project).collection(TURNS)
