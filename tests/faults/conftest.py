"""One local stack for the fault-injection tests, bound to a faulty scripted agent.

The five functions run as functions-framework processes on the real
emulators, as ``kourier up`` runs them, with every delay of the turn engine
cut to seconds (``TIMINGS``) and the reconcile sweep every
``RECONCILE_EVERY`` seconds. The agent runs in this process (``FaultyAgent``)
and each test sets its ``Script``. A second Binding, on ``HITL_CHANNEL``,
reaches the scripted agent that pauses for people (``HitlAgent``), with
questions and approvals that wait longer than a lease. Each test starts and ends with the stack
quiet: no turn waiting or running. Ports are this suite's, 24000-24999.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from unittest import mock

import pytest
from google.cloud import firestore, pubsub_v1, tasks_v2

from local.emulators import EmulatorPorts
from local.slack_standin.client import SlackStandin
from local.slack_standin.models import Message, Posted
from local.stack import DEMO_CHANNEL, Stack, StackPorts, running_stack
from shared.core import notices
from shared.firestore import FirestoreDocuments
from shared.handoff import make_tasks_client
from shared.settings import Settings
from shared.slack.workspace_budget import BUDGETS
from shared.store import SESSIONS, TURNS, Store, Turn
from shared.system import SystemClock
from tests.faults.agent import (
    V03_PATH,
    FaultyAgent,
    Piece,
    Script,
    canonical_answer,
    running_agent,
    tool_names,
)
from tests.hitl_e2e.agent import HitlAgent
from tests.hitl_e2e.agent import running_agent as running_hitl_agent

PORTS = StackPorts(
    chat_ingress=24300,
    turn_send=24301,
    stream_follow=24302,
    reconcile=24303,
    timeout=24304,
    slack=24310,
    agent=24311,  # not started: the stack is given a config of its own
    emulators=EmulatorPorts().shifted(16000),
)
AGENT_PORT = 24320
HITL_AGENT_PORT = 24321
CHANNEL = DEMO_CHANNEL
BINDING = "faults"
HITL_CHANNEL = "C0FAULTSHITL"
HITL_BINDING = "faults-hitl"
APPROVER = "U0ALICE"
CHANNEL_03 = "C0FAULTS03"
BINDING_03 = "faults-03"
"""The binding whose agent is the same faulty agent speaking A2A 0.3."""
VERSIONS = {"1.0": (CHANNEL, BINDING), "0.3": (CHANNEL_03, BINDING_03)}
BOUNDED_CHANNEL = "C0FAULTSBOUND"
BOUNDED_BINDING = "faults-bounded"
"""The binding whose turns may take ``MAX_TURN`` seconds at most."""
MAX_TURN = 8.0

FOLLOW_BUDGET = 4.0
"""Seconds a function follows a stream before it hands over."""
LEASE_MARGIN = 6.0
"""A dead function's turn is taken over this long after its budget ran out."""
BUSY_NOTICE = 3.0
NO_SIGN_OF_LIFE = 12.0
"""Seconds a task whose stream was lost may show no change before it is cancelled (an hour in
production); more than twice the longest quiet spell of any test's task."""
MAX_AGENT_RESPONSE_BYTES = 1 << 20
QUEUED_PER_THREAD = 5
QUEUED_PER_USER = 8
TIMINGS = {
    "KOURIER_MAX_QUEUED_TURNS_PER_THREAD": str(QUEUED_PER_THREAD),
    "KOURIER_MAX_QUEUED_TURNS_PER_USER": str(QUEUED_PER_USER),
    "KOURIER_MAX_AGENT_RESPONSE_BYTES": str(MAX_AGENT_RESPONSE_BYTES),
    "KOURIER_FOLLOW_BUDGET_SECONDS": str(FOLLOW_BUDGET),
    "KOURIER_LEASE_MARGIN_SECONDS": str(LEASE_MARGIN),
    "KOURIER_CHECKPOINT_SECONDS": "1",
    "KOURIER_BACKOFF_START_SECONDS": "0.3",
    "KOURIER_BACKOFF_CAP_SECONDS": "1.5",
    "KOURIER_POLL_CAP_SECONDS": "1",
    "KOURIER_BUSY_NOTICE_SECONDS": str(BUSY_NOTICE),
    "KOURIER_GIVE_UP_SECONDS": "120",
    "KOURIER_REREAD_AFTER_DROP_SECONDS": "0.3",
    "KOURIER_INLINE_WAIT_SECONDS": "0.5",
    "KOURIER_NO_SIGN_OF_LIFE_SECONDS": str(NO_SIGN_OF_LIFE),
}
RECONCILE_EVERY = 1.5
PAUSE_TIMEOUT = 20.0
"""How long a prompt waits on ``HITL_CHANNEL``: twice the lease (``FOLLOW_BUDGET + LEASE_MARGIN``)."""
SCRIPTED_FAILURES = ("chat.startStream", "chat.postMessage", "chat.update")
"""The Slack methods tests script failures of (lifted after each test)."""
TURN_WAIT = 90.0
"""How long a test waits for a turn to end: generous, for a loaded machine."""

CONFIG = f"""\
agentBackends:
  - name: faulty
    url: http://127.0.0.1:{AGENT_PORT}/
  - name: hitl
    url: http://127.0.0.1:{HITL_AGENT_PORT}/a2a
  - name: faulty-03
    url: http://127.0.0.1:{AGENT_PORT}{V03_PATH}
bindings:
  - name: {BINDING}
    channels: [{CHANNEL}]
    agentBackend: faulty
    identity: {{userId: kourier-faults}}
  - name: {HITL_BINDING}
    channels: [{HITL_CHANNEL}]
    agentBackend: hitl
    identity: {{userId: kourier-faults}}
    interactions:
      questions: {{timeout: {PAUSE_TIMEOUT:g}s}}
      toolApprovals: {{approvers: [{APPROVER}], timeout: {PAUSE_TIMEOUT:g}s}}
  - name: {BINDING_03}
    channels: [{CHANNEL_03}]
    agentBackend: faulty-03
    identity: {{userId: kourier-faults}}
  - name: {BOUNDED_BINDING}
    channels: [{BOUNDED_CHANNEL}]
    agentBackend: faulty
    identity: {{userId: kourier-faults}}
    maxTurnDuration: {MAX_TURN:g}s
"""


@dataclass(frozen=True)
class Seen:
    """What a person reads of the bot in one thread."""

    answer: str
    """The text of the bot's answer messages, joined."""
    steps: list[tuple[str, str]]
    """Each step card: its title and status."""
    notices: list[str]
    """Kourier's own notices, in order."""
    unfinished_steps: list[str]
    """Step cards left running when their stream stopped (Slack shows them as failed)."""


KNOWN_NOTICES = (
    {value for value in vars(notices).values() if isinstance(value, str)}
    | {
        sentence
        for value in vars(notices).values()
        if isinstance(value, notices.CancelNotice)
        for sentence in (value.stopped, value.not_stopped)
    }
    | {notices.task_failed(category) for category in notices.FailureCategory}
)


def read_reply(messages: list[Message]) -> Seen:
    """Split the bot's messages into the answer, its steps and the notices."""
    failed = notices.TURN_FAILED.split("{")[0]
    notice_texts = [
        m.text for m in messages if m.text in KNOWN_NOTICES or m.text.startswith(failed)
    ]
    answer = [m for m in messages if m.text not in notice_texts]
    return Seen(
        answer="".join(m.text for m in answer),
        steps=[(card.title, card.status) for m in answer for card in m.tasks],
        notices=notice_texts,
        unfinished_steps=[card.title for m in answer for card in m.tasks if card.left_unfinished],
    )


def expected_reply(pieces: list[Piece], *notice_texts: str) -> Seen:
    """What a person should read for a run of ``pieces``: each part once."""
    return Seen(
        answer=canonical_answer(pieces),
        steps=[(name, "complete") for name in tool_names(pieces)],
        notices=list(notice_texts),
        unfinished_steps=[],
    )


class Faults:
    """What a test does to the stack, and reads back from Slack, Firestore and the queues."""

    def __init__(self, stack: Stack, standin: SlackStandin, agent: FaultyAgent) -> None:
        self.stack = stack
        self.standin = standin
        self.agent = agent
        self.version = "1.0"
        """The A2A version of the agent the test talks to (``VERSIONS``)."""
        self.channel, self.binding = VERSIONS[self.version]
        """Where the test writes: the channel of that version's binding."""
        emulators = {
            name: stack.function_env[name]
            for name in (
                "FIRESTORE_EMULATOR_HOST",
                "PUBSUB_EMULATOR_HOST",
                "CLOUD_TASKS_EMULATOR_HOST",
            )
        }
        self.settings = Settings(
            **emulators, GOOGLE_CLOUD_PROJECT=stack.function_env["GOOGLE_CLOUD_PROJECT"]
        )
        with mock.patch.dict(os.environ, emulators):  # Google's clients read them when built
            self.db = firestore.Client(project=self.settings.project)
            self._publisher = pubsub_v1.PublisherClient()
        self.store = Store(FirestoreDocuments(self.db), SystemClock())
        self.tasks = make_tasks_client(self.settings)

    # Slack ----------------------------------------------------------------------

    def say(self, text: str, thread_ts: str | None = None) -> Posted:
        """Alice mentions the bot in the channel (or in a thread)."""
        posted = self.standin.say(self.channel, text, thread_ts=thread_ts)
        assert posted.statuses == [200]
        return posted

    def bot_messages(self, thread_ts: str) -> list[Message]:
        """The bot's messages in a thread, oldest first."""
        return [m for m in self.standin.thread(self.channel, thread_ts) if m.is_bot]

    def wait_until_answered(
        self, thread_ts: str, *message_ts: str, timeout: float = TURN_WAIT
    ) -> list[Message]:
        """The bot's messages once the turns of ``message_ts`` (default: the thread's first) are done
        and none of them streams any more."""
        wanted = message_ts or (thread_ts,)

        def answered() -> list[Message]:
            if not all(getattr(self.turn(ts), "status", None) == "done" for ts in wanted):
                return []
            replies = self.bot_messages(thread_ts)
            return replies if all(m.stream in (None, "stopped") for m in replies) else []

        try:
            return self.standin.wait_for(answered, timeout=timeout, interval=0.2)
        except TimeoutError:
            turns = {ts: getattr(self.turn(ts), "status", None) for ts in wanted}
            shown = [
                (m.stream, m.text, [(c.title, c.status) for c in m.tasks])
                for m in self.bot_messages(thread_ts)
            ]
            raise AssertionError(
                f"not answered in {timeout} s: turns {turns}, bot messages {shown}"
            ) from None

    # Firestore and Pub/Sub --------------------------------------------------------

    def turn(self, ts: str) -> Turn | None:
        """The turn of the chat message ``ts``."""
        return self.store.turn(f"{self.channel}-{ts}")

    def ended_turn(self, turn_id: str) -> Turn:
        """The turn ``turn_id`` once it is done: a turn ends just after the thread is told why."""

        def ended() -> Turn | None:
            turn = self.store.turn(turn_id)
            return turn if turn is not None and turn.status == "done" else None

        try:
            return self.standin.wait_for(ended, timeout=TURN_WAIT, interval=0.2)
        except TimeoutError:
            raise AssertionError(f"turn {turn_id} not done in {TURN_WAIT} s") from None

    def message_id(self, ts: str) -> str:
        """The A2A messageId of the chat message ``ts``."""
        turn = self.turn(ts)
        assert turn is not None
        return turn.message_id

    def publish_turn(self, thread_ts: str, ts: str) -> None:
        """Publish a turn's message on the turns topic again, as the ingress did."""
        topic = self._publisher.topic_path(self.settings.project, self.settings.turns_topic)
        payload = {
            "session_id": f"{self.binding}-{self.channel}-{thread_ts}",
            "turn_id": f"{self.channel}-{ts}",
        }
        self._publisher.publish(topic, json.dumps(payload).encode()).result(timeout=30)

    def quiet(self) -> bool:
        """Whether no turn waits or runs."""
        busy = ["received", "waiting", "running"]
        unfinished = self.db.collection(TURNS).where(
            filter=firestore.FieldFilter("status", "in", busy)
        )
        if list(unfinished.limit(1).stream()):
            return False
        return not any(
            (d.to_dict() or {}).get("active_turn") for d in self.db.collection(SESSIONS).stream()
        )

    def forget_slack_budgets(self) -> None:
        """The workspace's Slack budget starts unspent, as in a quiet minute.

        The tests post turns faster than Slack's tiers allow in a real
        workspace (20 stream starts a minute): without this, a test would
        find its answer posted whole, not streamed, because of the tests
        before it.
        """
        for document in self.db.collection(BUDGETS).list_documents():
            document.delete()

    # Cloud Tasks ------------------------------------------------------------------

    def queue_path(self, queue: str) -> str:
        """The full name of a Cloud Tasks queue."""
        return self.tasks.queue_path(self.settings.project, self.settings.location, queue)

    def pending_tasks(self, queue: str) -> list[tasks_v2.Task]:
        """The tasks waiting in a queue, with their bodies."""
        view = tasks_v2.Task.View.FULL
        request = tasks_v2.ListTasksRequest(parent=self.queue_path(queue), response_view=view)
        return list(self.tasks.list_tasks(request=request))

    def create_twin(self, task: tasks_v2.Task) -> None:
        """Create a task identical to ``task`` but for its name."""
        twin = tasks_v2.Task(
            name=f"{task.name}-twin",
            http_request=task.http_request,
            schedule_time=task.schedule_time,
        )
        self.tasks.create_task(parent=task.name.rsplit("/tasks/", 1)[0], task=twin)


@pytest.fixture(scope="session")
def agent() -> Iterator[FaultyAgent]:
    with running_agent(AGENT_PORT) as running:
        yield running


@pytest.fixture(scope="session")
def hitl_agent() -> Iterator[HitlAgent]:
    with running_hitl_agent(HITL_AGENT_PORT) as running:
        yield running


@pytest.fixture(scope="session")
def stack(
    tmp_path_factory: pytest.TempPathFactory, agent: FaultyAgent, hitl_agent: HitlAgent
) -> Iterator[Stack]:
    state_dir = tmp_path_factory.mktemp("faults")
    config = state_dir / "kourier.yaml"
    config.write_text(CONFIG)
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("KOURIER_", "SLACK_"))}
    environ["KOURIER_CONFIG"] = str(config)
    with running_stack(
        PORTS, state_dir, environ=environ, extra_env=TIMINGS, reconcile_every=RECONCILE_EVERY
    ) as running:
        yield running


@pytest.fixture(scope="session")
def session_faults(stack: Stack, agent: FaultyAgent) -> Iterator[Faults]:
    with SlackStandin(f"http://127.0.0.1:{stack.ports.slack}") as standin:
        yield Faults(stack, standin, agent)


@pytest.fixture
def faults(session_faults: Faults) -> Iterator[Faults]:
    """The stack, with a well-behaved agent that forgot earlier tests; left quiet after the test."""
    helper = session_faults
    helper.version = "1.0"
    helper.channel, helper.binding = VERSIONS[helper.version]
    helper.agent.use(Script())
    helper.agent.forget()
    yield helper
    helper.agent.script.released.set()
    helper.standin.clear_rate_limit("chat.stopStream")
    for method in SCRIPTED_FAILURES:
        helper.standin.clear_failures(method)
    for queue in (helper.settings.follow_queue, helper.settings.timers_queue):
        helper.tasks.resume_queue(name=helper.queue_path(queue))
    helper.standin.wait_for(helper.quiet, timeout=TURN_WAIT)
    helper.forget_slack_budgets()


@pytest.fixture(params=list(VERSIONS))
def either_version(faults: Faults, request: pytest.FixtureRequest) -> Faults:
    """``faults``, writing in the channel whose agent speaks A2A 1.0, then 0.3."""
    faults.version = request.param
    faults.channel, faults.binding = VERSIONS[faults.version]
    return faults


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if Path(str(item.fspath)).parent == Path(__file__).parent:
            item.add_marker(pytest.mark.emulators)
