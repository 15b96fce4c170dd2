"""The whole local stack, as `./kourier up` runs it, on the test ports.

One stack serves the module's tests: real emulators, the five functions as
functions-framework processes, the Slack stand-in and the demo agent.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from google.cloud import firestore

from local.emulators import EmulatorPorts
from local.slack_standin.client import SlackStandin
from local.stack import Stack, StackPorts, running_stack

TEST_PORTS = StackPorts(
    chat_ingress=18300,
    turn_send=18301,
    stream_follow=18302,
    reconcile=18303,
    timeout=18304,
    slack=18310,
    agent=18311,
    emulators=EmulatorPorts().shifted(10000),
)


@pytest.fixture(scope="session")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    environ = {
        k: v
        for k, v in __import__("os").environ.items()
        if k not in ("SLACK_API_URL", "KOURIER_CONFIG")
    }
    with running_stack(TEST_PORTS, tmp_path_factory.mktemp("stack"), environ=environ) as running:
        yield running


@pytest.fixture
def standin(stack: Stack) -> Iterator[SlackStandin]:
    with SlackStandin(f"http://127.0.0.1:{stack.ports.slack}") as client:
        yield client


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
        return [s for s in self.sends() if text in _text_of(s["params"]["message"])]


def _text_of(message: dict[str, Any]) -> str:
    return "".join(part.get("text", "") for part in message.get("parts", []))


@pytest.fixture
def agent(stack: Stack) -> DemoAgent:
    assert stack.agent_url is not None
    return DemoAgent(stack.agent_url)


@pytest.fixture
def db(stack: Stack) -> firestore.Client:
    env = stack.function_env
    __import__("os").environ["FIRESTORE_EMULATOR_HOST"] = env["FIRESTORE_EMULATOR_HOST"]
    return firestore.Client(project=env["GOOGLE_CLOUD_PROJECT"])


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if Path(str(item.fspath)).parent == Path(__file__).parent:
            item.add_marker(pytest.mark.emulators)
