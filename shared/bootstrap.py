"""The composition root: the one place where the real adapters are built and wired.

Theory of operation: a process builds one ``Deps`` on first use
(``deps()``), from the settings in its environment: the Firestore, Pub/Sub,
Cloud Tasks and Slack clients, one HTTP client and one card cache for the
agents, the system clock, random ids and threads. Logging is configured
here too, once. Everything below the entry points takes what it needs from
the ``Deps`` it is given and keeps no client, cache or clock of its own, so
a test or the simulator runs the same code on a ``Deps`` it builds itself
(``Deps(...)`` with in-memory ports; one per simulated process, so process
caches live and die with it as they do on the platform).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache, cached_property

import httpx
from google.cloud import firestore
from google.cloud.pubsub_v1 import PublisherClient
from google.cloud.pubsub_v1.types import BatchSettings

from shared.a2a.discovery import CardCache
from shared.a2a.transport import AgentLink, HttpLink
from shared.config import KourierConfig, load_config
from shared.firestore import FirestoreDocuments
from shared.handoff import CloudTasksQueue, PubSubTurnQueue, make_tasks_client
from shared.logs import configure_logging
from shared.ports import Chat, Clock, Documents, Ids, Runtime, TaskQueue, TurnQueue
from shared.settings import Settings
from shared.slack.session_status import AgentSessions
from shared.slack.web import web_client
from shared.slack.workspace_budget import WorkspaceBudget
from shared.store import Store
from shared.system import SystemClock, SystemIds, ThreadRuntime


@dataclass(frozen=True, eq=False)
class Deps:
    """Everything the shell reaches outside itself, for one process."""

    settings: Settings
    config: KourierConfig
    clock: Clock
    ids: Ids
    runtime: Runtime
    documents: Documents
    turns: TurnQueue
    tasks: TaskQueue
    chat: Chat
    http: httpx.Client
    """The HTTP client (one connection pool per process): health checks."""
    agent_link: AgentLink
    """How calls reach the agents: HTTP over ``http`` (the simulator may hand answers decoded)."""
    cards: CardCache = field(default_factory=CardCache)
    """The agents' cards, cached for the life of the process."""

    @cached_property
    def store(self) -> Store:
        """Sessions, turns, event IDs and people, on ``documents``."""
        return Store(self.documents, self.clock, self.settings.log_firestore_writes)

    @cached_property
    def slack_budget(self) -> WorkspaceBudget:
        """Each workspace's Slack budget (stream starts, stops, appends), shared by all instances."""
        return WorkspaceBudget(self.documents, self.clock, self.settings.log_firestore_writes)

    @cached_property
    def agent_sessions(self) -> AgentSessions:
        """What this process learnt about Slack's agent sessions (refused: said once)."""
        return AgentSessions()

    @cached_property
    def bot_user_id(self) -> str:
        """Our bot's own Slack user ID (auth.test, once), to ignore our own messages."""
        return str(self.chat.auth_test()["user_id"])


@cache
def deps() -> Deps:
    """The real adapters of this process, built on first use."""
    settings = Settings()
    configure_logging(settings.project)
    http = httpx.Client(follow_redirects=False)
    return Deps(
        settings=settings,
        config=load_config(settings.config_path),
        clock=SystemClock(),
        ids=SystemIds(),
        runtime=ThreadRuntime(),
        documents=FirestoreDocuments(
            firestore.Client(project=settings.project, database=settings.firestore_database)
        ),
        # Each publish is sent at once: the client's default batching holds a message up to
        # 10 ms for others, and every publish here is awaited before the function answers.
        turns=PubSubTurnQueue(
            settings, PublisherClient(batch_settings=BatchSettings(max_messages=1))
        ),
        tasks=CloudTasksQueue(settings, make_tasks_client(settings)),
        chat=web_client(settings.slack_api_url, settings.slack_bot_token.get_secret_value()),
        http=http,
        agent_link=HttpLink(http),
    )
