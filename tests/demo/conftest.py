"""The local stack as ``./kourier up`` runs it, talked to with ``./kourier say`` as a person would.

One stack serves the suite: the emulators, the five functions, the Slack
stand-in and the demo agent, on this suite's ports (29300-29399), with the
demo's timings shortened further so a hand-over and a busy notice come
within seconds. Each test runs the ``kourier`` command itself, in a
subprocess, and reads what it printed, the thread in the stand-in, and what
the demo agent received.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from local.emulators import EmulatorPorts
from local.slack_standin.client import SlackStandin
from local.slack_standin.models import Message
from local.stack import DEMO_CHANNEL, REPO, Stack, StackPorts, running_stack

PORTS = StackPorts(
    chat_ingress=29300,
    turn_send=29301,
    stream_follow=29302,
    reconcile=29303,
    timeout=29304,
    slack=29310,
    agent=29311,
    emulators=EmulatorPorts().shifted(21000),
)
FOLLOW_BUDGET_SECONDS = 15
"""How long turn_send follows a stream here before it hands over to stream_follow."""
BUSY_NOTICE_SECONDS = 5
"""How long a busy agent refuses a turn here before the thread is told."""
COMMAND_TIMEOUT = 400.0
"""How long one ``./kourier say`` may take: generous, for a loaded machine."""

SEND_METHODS = ("SendStreamingMessage", "message/stream")


@pytest.fixture(scope="session")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("KOURIER_", "SLACK_"))}
    timings = {
        "KOURIER_FOLLOW_BUDGET_SECONDS": str(FOLLOW_BUDGET_SECONDS),
        "KOURIER_BUSY_NOTICE_SECONDS": str(BUSY_NOTICE_SECONDS),
    }
    state_dir = tmp_path_factory.mktemp("demo")
    with running_stack(PORTS, state_dir, environ=environ, extra_env=timings) as running:
        yield running


@dataclass(frozen=True)
class Said:
    """What one ``./kourier say`` printed."""

    stdout: str
    stderr: str
    status: int

    @property
    def thread(self) -> str:
        """The thread's ts, from the line that continues it."""
        found = re.search(r"continue: \./kourier say --thread (\S+) ", self.stdout)
        assert found, f"no continue line in:\n{self.stdout}\n{self.stderr}"
        return found.group(1)


@dataclass
class Kourier:
    """Runs the ``kourier`` command against the suite's stack, and reads the stack."""

    stack: Stack
    standin: SlackStandin

    def run(self, *args: str, env: dict[str, str] | None = None) -> Said:
        """``./kourier <args>`` in the repository, as a person runs it (no KOURIER_CONFIG)."""
        ports = {f"KOURIER_PORT_{n.upper()}": str(getattr(PORTS, n)) for n in ("slack", "agent")}
        inherited = {k: v for k, v in os.environ.items() if k != "KOURIER_CONFIG"}
        completed = subprocess.run(
            [str(REPO / "kourier"), *args],
            cwd=REPO,
            env={**inherited, **ports, **(env or {})},
            capture_output=True,
            text=True,
            timeout=COMMAND_TIMEOUT,
            check=False,
        )
        return Said(completed.stdout, completed.stderr, completed.returncode)

    def say(self, *args: str) -> Said:
        """``./kourier say <args>``, which must succeed."""
        said = self.run("say", *args)
        assert said.status == 0, f"kourier say {args} failed:\n{said.stdout}\n{said.stderr}"
        return said

    def bot_messages(self, thread: str) -> list[Message]:
        """The bot's messages in ``thread``, oldest first."""
        return [m for m in self.standin.thread(DEMO_CHANNEL, thread) if m.is_bot]

    def received(self) -> list[dict[str, Any]]:
        """Every request the demo agent received, oldest first."""
        assert self.stack.agent_url is not None
        return list(httpx.get(self.stack.agent_url + "_demo/received", timeout=10).json())

    def sends_of(self, task_id: str) -> list[dict[str, Any]]:
        """The sends to the task ``task_id`` (the answers to its pauses)."""
        return [
            r
            for r in self.received()
            if r["method"] in SEND_METHODS and r["params"]["message"].get("taskId") == task_id
        ]

    def sends_containing(self, text: str) -> list[dict[str, Any]]:
        """The sends whose text holds ``text``."""
        return [
            r
            for r in self.received()
            if r["method"] in SEND_METHODS
            and text in "".join(p.get("text", "") for p in r["params"]["message"]["parts"])
        ]

    def log(self, function: str) -> str:
        """What ``function`` logged so far."""
        return (self.stack.log_dir / f"{function}.log").read_text()


@pytest.fixture
def kourier(stack: Stack) -> Iterator[Kourier]:
    with SlackStandin(f"http://127.0.0.1:{stack.ports.slack}") as standin:
        yield Kourier(stack, standin)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if Path(str(item.fspath)).parent == Path(__file__).parent:
            item.add_marker(pytest.mark.emulators)
