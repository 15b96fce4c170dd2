"""The shell tier: the functions' handlers, run in-process on real parts.

Firestore is the emulator (through ``FirestoreDocuments``), Slack the
stand-in process (through slack_sdk's ``WebClient``, as in production), and
the agent a scripted raw-HTTP agent. Only the hand-offs are recorded
(``RecordedTurns``, ``RecordedTasks``): a test delivers them itself, when and
as often as Pub/Sub and Cloud Tasks would. A message enters as Slack sends
it: a signed Events API callback to ``ingress.handle_event``.

Ports of this tier: emulators 21380-21390, the stand-in 21410, agents from
tests/a2a's range (23000-23999).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from google.cloud import firestore

from local.emulators import EmulatorEnv, EmulatorPorts, exported, running_emulators
from local.slack_standin import SlackStandin, StandinProcess
from shared import ingress
from shared.a2a.transport import HttpLink
from shared.bootstrap import Deps
from shared.config import parse_config
from shared.firestore import FirestoreDocuments
from shared.ports import Chat, Documents, TaskTarget
from shared.settings import Settings
from shared.slack.web import web_client
from shared.slack.workspace_budget import BUDGETS
from shared.system import SystemClock, SystemIds, ThreadRuntime
from tests.a2a.agents import ScriptedAgent, scripted_agent

EMULATOR_PORTS = EmulatorPorts().shifted(13000)
STANDIN_PORT = 21410
CHANNEL = "C0SHELL0001"
BOT_TOKEN = "xoxb-shell-token"
SIGNING_SECRET = "shell-signing-secret"
BINDING = "shell"


@pytest.fixture(scope="session")
def emulators(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmulatorEnv]:
    """The emulators (only Firestore is used), their variables in os.environ."""
    with (
        running_emulators(EMULATOR_PORTS, tmp_path_factory.mktemp("emulator-logs")) as env,
        exported(env),
    ):
        yield env


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
def agent() -> Iterator[ScriptedAgent]:
    with scripted_agent() as running:
        yield running


@dataclass
class RecordedTurns:
    """The turns topic: what was published, for the test to deliver."""

    published: list[dict[str, str]] = field(default_factory=list)

    def publish_turn(self, session_id: str, turn_id: str) -> None:
        self.published.append({"session_id": session_id, "turn_id": turn_id})


@dataclass
class RecordedTasks:
    """Cloud Tasks: what was scheduled, with its name de-duplication."""

    scheduled: list[tuple[TaskTarget, dict[str, Any], datetime | None]] = field(
        default_factory=list
    )
    names: set[str] = field(default_factory=set)

    def schedule(
        self,
        target: TaskTarget,
        body: Mapping[str, Any],
        *,
        name: str | None = None,
        at: datetime | None = None,
    ) -> bool:
        if name is not None:
            if name in self.names:
                return False
            self.names.add(name)
        self.scheduled.append((target, dict(body), at))
        return True


@dataclass
class Shell:
    """One process of Kourier on real parts, and the thread it talks in."""

    deps: Deps
    standin: SlackStandin
    agent: ScriptedAgent
    turns: RecordedTurns
    tasks: RecordedTasks

    def mention(self, text: str, thread_ts: str | None = None) -> str:
        """Alice mentions the bot in the channel; Slack's callback reaches the ingress.

        Returns:
            The message's ts (the thread's, without ``thread_ts``).
        """
        ts = self.write(text, thread_ts)
        self.deliver(text, ts, thread_ts)
        return ts

    def write(self, text: str, thread_ts: str | None = None) -> str:
        """Alice writes a mention of the bot in Slack (no callback yet); its ts."""
        return self.standin.say(CHANNEL, text, thread_ts=thread_ts).ts

    def deliver(self, text: str, ts: str, thread_ts: str | None = None) -> None:
        """Slack's callback for a mention Alice wrote reaches the ingress."""
        event = {
            "type": "app_mention",
            "user": "U0ALICE",
            "channel": CHANNEL,
            "ts": ts,
            "text": f"<@{self.deps.bot_user_id}> {text}",
        }
        if thread_ts is not None:
            event["thread_ts"] = thread_ts
        envelope = {
            "type": "event_callback",
            "event_id": f"Ev{ts.replace('.', '')}",
            "team_id": "T0KOURIER",
            "event": event,
        }
        body = json.dumps(envelope).encode()
        reply = ingress.handle_event(self.deps, body, signed_headers(body))
        assert reply.status == 200

    def bot_texts(self, thread_ts: str) -> list[str]:
        """What the bot wrote in the thread, as a person reads it, oldest first."""
        return [
            message.text or ""
            for message in self.standin.thread(CHANNEL, thread_ts)
            if message.is_bot
        ]


def signed_headers(body: bytes) -> dict[str, str]:
    """Headers Slack sends with a callback, signed with the app's signing secret now."""
    timestamp = str(int(time.time()))
    base = f"v0:{timestamp}:{body.decode()}".encode()
    digest = hmac.new(SIGNING_SECRET.encode(), base, hashlib.sha256).hexdigest()
    return {"X-Slack-Request-Timestamp": timestamp, "X-Slack-Signature": f"v0={digest}"}


def make_deps(
    documents: Documents,
    chat: Chat,
    agent: ScriptedAgent,
    interactions: str = "{}",
    **settings: Any,
) -> tuple[Deps, RecordedTurns, RecordedTasks]:
    """A process's Deps on the given store and chat, with recorded hand-offs.

    ``interactions``: the Binding's (YAML), what the agent may ask people (nothing by default).
    """
    config = parse_config(
        f"""
agentBackends:
  - name: scripted
    url: {agent.url}
bindings:
  - name: {BINDING}
    channels: [{CHANNEL}]
    agentBackend: scripted
    identity: {{userId: kourier-shell}}
    interactions: {interactions}
""",
        source="shell tier",
    )
    turns, tasks = RecordedTurns(), RecordedTasks()
    http = httpx.Client(follow_redirects=False)
    deps = Deps(
        settings=Settings.model_validate({"SLACK_SIGNING_SECRET": SIGNING_SECRET, **settings}),
        config=config,
        clock=SystemClock(),
        ids=SystemIds(),
        runtime=ThreadRuntime(),
        documents=documents,
        turns=turns,
        tasks=tasks,
        chat=chat,
        http=http,
        agent_link=HttpLink(http),
    )
    return deps, turns, tasks


@pytest.fixture
def firestore_documents(emulators: EmulatorEnv) -> FirestoreDocuments:
    """The emulator's database, where each test starts with the workspace's Slack budget unspent
    (else the tests before it, in the same minute, can spend the 50 statuses it allows)."""
    client = firestore.Client(project=emulators.project)
    for budget in client.collection(BUDGETS).list_documents():
        budget.delete()
    return FirestoreDocuments(client)


@pytest.fixture
def slack_chat(standin: SlackStandin) -> Chat:
    return web_client(standin.api_url, BOT_TOKEN)
