"""One local stack for the end-to-end tests of questions and tool approvals.

The five functions run as functions-framework processes on the real
emulators, with the Slack stand-in, as ``kourier up`` runs them, but with
this suite's own config: for each dialect of the scripted ``HitlAgent``, a
Binding that allows questions and tool approvals (approver U0ALICE), two
with the same and timeouts of seconds, and one with no interactions; and
Bindings for the real google-adk and kagent-adk peers, reached through the
agent's forwarding endpoints. Each Binding has its own channel. Ports are
this suite's, 27000-27999.
"""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeVar
from unittest import mock

import pytest
from google.cloud import firestore

from local.emulators import EmulatorPorts
from local.slack_standin.client import SlackStandin
from local.slack_standin.models import Ephemeral, Message, Posted
from local.stack import Stack, StackPorts, running_stack
from shared.questions import AUDIT
from tests.hitl_e2e.agent import (
    ADK_PEER,
    KAGENT_PEER,
    Conversation,
    HitlAgent,
    Stage,
    running_agent,
)

PORTS = StackPorts(
    chat_ingress=27300,
    turn_send=27301,
    stream_follow=27302,
    reconcile=27303,
    timeout=27304,
    slack=27310,
    agent=27311,  # unused: the stack is given its own config
    emulators=EmulatorPorts().shifted(19000),
)
AGENT_PORT = 27320
ADK_PEER_PORT = 27330
KAGENT_PEER_PORT = 27331

ALICE = "U0ALICE"
"""The Bindings' one approver."""
BOB = "U0BOB"
"""In the workspace, and no approver."""
SHORT_TIMEOUT = "3s"
"""How long a prompt waits on the hasty Bindings."""
DEADLINE_TIMEOUT = "10s"
"""How long a prompt waits on the deadline Bindings: time for a test to act, then the timer."""
WAIT = 90.0
"""How long a test waits for something to show: generous, for a loaded machine."""

T = TypeVar("T")
Interactions = Literal["asks", "hasty", "deadline", "plain"]
"""What a Binding allows: questions and approvals waiting 10 minutes, 3 or 10 seconds, or nothing."""

BACKENDS: dict[str, str] = {
    "a2a": "a2a",
    "kagent-v1": "kagent",
    "a2a-unlisted": "a2a-unlisted",
}
"""Each scripted backend by the key tests use, and its name in the config."""
CHANNELS: dict[tuple[str, Interactions], str] = {
    (backend, interactions): f"C0{backend.upper().replace('-', '')}{interactions.upper()}"
    for backend in BACKENDS
    for interactions in ("asks", "hasty", "deadline", "plain")
}
ADK_CHANNEL = "C0ADKPEER"
KAGENT_CHANNEL = "C0KAGENTPEER"

INTERACTIONS: dict[Interactions, str] = {
    "asks": f"""
    interactions:
      questions: {{timeout: 10m}}
      toolApprovals: {{approvers: [{ALICE}], timeout: 10m}}""",
    "hasty": f"""
    interactions:
      questions: {{timeout: {SHORT_TIMEOUT}}}
      toolApprovals: {{approvers: [{ALICE}], timeout: {SHORT_TIMEOUT}}}""",
    "deadline": f"""
    interactions:
      questions: {{timeout: {DEADLINE_TIMEOUT}}}
      toolApprovals: {{approvers: [{ALICE}], timeout: {DEADLINE_TIMEOUT}}}""",
    "plain": "",
}


def config() -> str:
    """The suite's backends and bindings file."""
    backends = f"""\
agentBackends:
  - name: a2a
    url: http://127.0.0.1:{AGENT_PORT}/a2a
    dialect: a2a
  - name: a2a-unlisted
    url: http://127.0.0.1:{AGENT_PORT}/a2a-unlisted
    dialect: a2a
  - name: kagent
    url: http://127.0.0.1:{AGENT_PORT}/kagent
    dialect: kagent-v1
    namespace: kourier
    agent: hitl
  - name: adk-peer
    url: http://127.0.0.1:{AGENT_PORT}{ADK_PEER}
    dialect: a2a
  - name: kagent-peer
    url: http://127.0.0.1:{AGENT_PORT}{KAGENT_PEER}
    dialect: kagent-v1
    namespace: default
    agent: scripted
bindings:"""
    bindings = [
        _binding(f"{BACKENDS[key]}-{kind}", channel, BACKENDS[key], INTERACTIONS[kind])
        for (key, kind), channel in CHANNELS.items()
    ]
    bindings.append(_binding("adk-peer", ADK_CHANNEL, "adk-peer", INTERACTIONS["asks"]))
    bindings.append(_binding("kagent-peer", KAGENT_CHANNEL, "kagent-peer", INTERACTIONS["asks"]))
    return backends + "".join(bindings) + "\n"


def _binding(name: str, channel: str, backend: str, interactions: str) -> str:
    return f"""
  - name: {name}
    channels: [{channel}]
    agentBackend: {backend}
    identity: {{userId: kourier-hitl}}{interactions}"""


@pytest.fixture(scope="session")
def agent() -> Iterator[HitlAgent]:
    with running_agent(AGENT_PORT) as running:
        yield running


@pytest.fixture(scope="session")
def stack(tmp_path_factory: pytest.TempPathFactory, agent: HitlAgent) -> Iterator[Stack]:
    state_dir = tmp_path_factory.mktemp("hitl")
    config_file = state_dir / "kourier.yaml"
    config_file.write_text(config())
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("KOURIER_", "SLACK_"))}
    environ["KOURIER_CONFIG"] = str(config_file)
    with running_stack(PORTS, state_dir, environ=environ) as running:
        yield running


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
class Thread:
    """One Slack thread started by Alice, and the bot's messages in it."""

    standin: SlackStandin
    channel: str
    posted: Posted

    @property
    def ts(self) -> str:
        """The thread's ts."""
        return self.posted.ts

    def bot_messages(self) -> list[Message]:
        """The bot's messages in the thread, oldest first."""
        return [m for m in self.standin.thread(self.channel, self.ts) if m.is_bot]

    def prompt(self) -> Message:
        """Wait for the prompt (the bot's message with blocks, not a notice's context block)."""
        return self.wait_for_message(
            lambda m: bool(m.blocks) and m.stream is None and m.blocks[0]["type"] != "context",
            "a prompt",
        )

    def notice(self, text: str) -> Message:
        """Wait for the bot's message that reads ``text``."""
        return self.wait_for_message(lambda m: m.text == text, repr(text))

    def answer(self, text: str) -> Message:
        """Wait for a streamed reply that holds ``text`` and has stopped streaming."""
        return self.wait_for_message(
            lambda m: text in m.text and m.stream in (None, "stopped"), f"an answer with {text!r}"
        )

    def updated(self, prompt: Message, shows: str) -> Message:
        """Wait until the prompt, edited in place, shows ``shows``."""
        return self.wait_for_message(
            lambda m: m.ts == prompt.ts and m.edited and shows in m.rendered,
            f"the prompt showing {shows!r}",
        )

    def click(
        self, message: Message, action: str, user: str = ALICE, values: list[str] | None = None
    ) -> None:
        """``user`` clicks the element whose action_id ends with ``:<action>``."""
        [action_id] = [a for a in message.action_ids() if a.endswith(f":{action}")]
        interaction = self.standin.click(
            self.channel, message.ts, action_id, user=user, values=values
        )
        assert interaction.delivery.status == 200, interaction.delivery

    def reply(self, text: str) -> Posted:
        """Alice replies in the thread without mentioning the bot."""
        posted = self.standin.say(self.channel, text, thread_ts=self.ts, as_mention=False)
        assert posted.statuses == [200]
        return posted

    def ephemerals(self, user: str) -> list[Ephemeral]:
        """What only ``user`` saw in this channel."""
        return self.standin.ephemerals(channel=self.channel, user=user)

    def wait_for_message(self, matches: Callable[[Message], bool], what: str) -> Message:
        """Wait for the bot's message that ``matches``; fail with the thread as it stood."""

        def found() -> Message | None:
            return next((m for m in self.bot_messages() if matches(m)), None)

        try:
            return self.standin.wait_for(found, timeout=WAIT, interval=0.2)
        except TimeoutError:
            shown = [(m.ts, m.stream, m.edited, m.rendered) for m in self.bot_messages()]
            raise AssertionError(
                f"no {what} within {WAIT} s; the bot's messages: {shown}"
            ) from None


@dataclass
class Hitl:
    """What a test drives: the agent's script, Slack, and Firestore."""

    agent: HitlAgent
    standin: SlackStandin
    db: firestore.Client
    log_dir: Path

    def start(
        self, channel: str, token: str, *stages: Stage, text: str = ""
    ) -> tuple[Conversation, Thread]:
        """Script the agent for ``token``, and have Alice mention the bot with it in ``channel``."""
        conversation = self.agent.expect(token, *stages)
        posted = self.standin.say(channel, f"{token} {text}".strip())
        assert posted.statuses == [200]
        return conversation, Thread(self.standin, channel, posted)

    def wait_for(self, condition: Callable[[], T], what: str) -> T:
        """Wait until ``condition()`` is truthy, and return what it returned."""
        try:
            return self.standin.wait_for(condition, timeout=WAIT, interval=0.2)
        except TimeoutError:
            raise AssertionError(f"not {what} within {WAIT} s") from None

    def logged(self, function: str, event: str) -> list[dict[str, Any]]:
        """The structured lines ``function`` logged for ``event``, oldest first."""
        lines = (self.log_dir / f"{function}.log").read_text().splitlines()
        records = [json.loads(line) for line in lines if line.startswith("{")]
        return [record for record in records if record.get("message") == event]

    def audit(self, task_id: str) -> list[dict[str, Any]]:
        """The audit records of a task's decisions, oldest first."""
        found = (
            self.db.collection(AUDIT)
            .where(filter=firestore.FieldFilter("task_id", "==", task_id))
            .get()
        )
        return sorted((doc.to_dict() or {} for doc in found), key=lambda r: str(r["at"]))


@pytest.fixture
def hitl(agent: HitlAgent, standin: SlackStandin, db: firestore.Client, stack: Stack) -> Hitl:
    return Hitl(agent, standin, db, stack.log_dir)


@contextmanager
def function_stopped(stack: Stack, function: str) -> Iterator[None]:
    """``function``'s processes stopped (SIGSTOP) for the block: calls to it wait, unanswered."""
    port = str(getattr(stack.ports, function))
    pids = [
        int(entry.name)
        for entry in Path("/proc").iterdir()
        if entry.name.isdigit() and _serves(entry / "cmdline", function, port)
    ]
    assert pids, f"no process serves {function}"
    for pid in pids:
        os.kill(pid, signal.SIGSTOP)
    try:
        yield
    finally:
        for pid in pids:
            with suppress(ProcessLookupError):  # killed meanwhile (a restart, as a deploy does)
                os.kill(pid, signal.SIGCONT)


def _serves(cmdline: Path, function: str, port: str) -> bool:
    try:
        argv = cmdline.read_bytes().split(b"\0")
    except OSError:
        return False
    return any(b"functions-framework" in arg for arg in argv) and all(
        f"{flag}\0{value}".encode() in b"\0".join(argv)
        for flag, value in (("--target", function), ("--port", port))
    )


def channel(backend: str, interactions: Interactions = "asks") -> str:
    """The channel of the Binding of ``backend`` (a key of ``BACKENDS``) with ``interactions``."""
    return CHANNELS[(backend, interactions)]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if Path(str(item.fspath)).parent == Path(__file__).parent:
            item.add_marker(pytest.mark.emulators)
