"""Firestore writes (and reads) per turn: each document is written when something in it changes.

Platform behaviour this stands for: Firestore bills every document write and
sustains about one write a second on one document. A turn writes its
session when the session changes hands (the claim, the release) and when it
learns what the thread's conversation is (the agent's context and the agent
it lives in), not at every checkpoint; and it checkpoints a task once when
the agent names it. A function reads a session or turn it wrote only when
it must learn what someone else did: it writes what it knows under a
precondition on the update time its last write returned.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from google.cloud import firestore

from local.emulators import EmulatorEnv
from shared import handlers
from shared.errors import StoreUnavailable
from shared.firestore import FirestoreDocuments
from shared.ports import Chat, Snapshot, Write
from shared.slack.tiers import MARGIN
from shared.slack.workspace_budget import BUDGETS
from shared.store import SESSIONS, TURNS
from tests.a2a.agents import Exchange, ScriptedAgent, artifact_update, result, status_update, task
from tests.shell.conftest import Shell, make_deps

SLACK_MESSAGES = ("chat_startStream", "chat_postMessage")
TEAM = "T0KOURIER"
COUNTED = ("chat.startStream", "chat.stopStream", "agents.sessions.setStatus")
"""The Slack methods the workspace's budget counts."""


@dataclass
class Written:
    """One document write Firestore took, or one Slack call, in the order they happened."""

    collection: str
    key: str
    data: Mapping[str, Any] = field(default_factory=dict)


class CountedDocuments:
    """Firestore, logging each document write it took (and each read, in ``reads``)."""

    def __init__(
        self,
        documents: FirestoreDocuments,
        log: list[Written],
        reads: list[tuple[str, str]] | None = None,
    ) -> None:
        self._documents = documents
        self._log = log
        self._reads = [] if reads is None else reads

    def __getattr__(self, name: str) -> Any:
        return getattr(self._documents, name)

    def get(self, collection: str, key: str) -> Snapshot | None:
        self._reads.append((collection, key))
        return self._documents.get(collection, key)

    def create(self, collection: str, key: str, data: Mapping[str, Any]) -> None:
        self._documents.create(collection, key, data)
        self._log.append(Written(collection, key, data))

    def set(self, collection: str, key: str, data: Mapping[str, Any]) -> None:
        self._documents.set(collection, key, data)
        self._log.append(Written(collection, key, data))

    def update(
        self,
        collection: str,
        key: str,
        data: Mapping[str, Any],
        *,
        if_updated_at: datetime | None = None,
    ) -> datetime:
        written = self._documents.update(collection, key, data, if_updated_at=if_updated_at)
        self._log.append(Written(collection, key, data))
        return written

    def commit(self, writes: Sequence[Write]) -> list[datetime]:
        written = self._documents.commit(writes)
        for write in writes:
            self._log.append(Written(write.collection, write.key, write.data))
        return written


class LoggedChat:
    """Slack, logging which Web API methods were called, among the writes."""

    def __init__(self, chat: Chat, log: list[Written]) -> None:
        self._chat = chat
        self._log = log

    def __getattr__(self, name: str) -> Callable[..., Any]:
        method = getattr(self._chat, name)

        def call(**kwargs: Any) -> Any:
            answer = method(**kwargs)
            self._log.append(Written("slack", name))
            return answer

        return call


def names_a_task_then_answers(exchange: Exchange) -> None:
    """A 1.0 agent that names its task and context, works a while, then answers and completes."""
    if exchange.rpc_method == "GetTask":
        artifact = {"artifactId": "a1", "parts": [{"text": "hello from the agent"}]}
        exchange.json(result(task(state="TASK_STATE_COMPLETED", artifacts=[artifact])))
        return
    assert exchange.rpc_method == "SendStreamingMessage", exchange.rpc_method
    exchange.sse(
        [
            result({"task": task(state="TASK_STATE_WORKING")}),
            result(status_update("TASK_STATE_WORKING")),
            result(status_update("TASK_STATE_WORKING")),
            result(artifact_update("hello from the agent")),
            result(status_update("TASK_STATE_COMPLETED")),
        ]
    )


def one_turn(
    firestore_documents: FirestoreDocuments,
    slack_chat: Chat,
    agent: ScriptedAgent,
    standin: Any,
    reads: list[tuple[str, str]] | None = None,
) -> tuple[list[Written], dict[str, str]]:
    """A turn in a new thread, carried to its end: the writes and Slack calls, and the turn."""
    log: list[Written] = []
    agent.script = names_a_task_then_answers
    deps, turns, tasks = make_deps(
        CountedDocuments(firestore_documents, log, reads),
        LoggedChat(slack_chat, log),  # type: ignore[arg-type]
        agent,
        KOURIER_CHECKPOINT_SECONDS=600,  # no checkpoint for time: only those something forces
    )
    shell = Shell(deps, standin, agent, turns, tasks)
    thread = shell.mention("check X")
    [published] = shell.turns.published
    assert handlers.turn_send(shell.deps, published) == "ack"
    assert shell.bot_texts(thread) == ["hello from the agent"]
    return log, published


def test_a_turn_writes_its_session_when_it_changes_hands_and_when_it_learns_its_context(
    firestore_documents: FirestoreDocuments, slack_chat: Chat, agent: ScriptedAgent, standin: Any
) -> None:
    log, published = one_turn(firestore_documents, slack_chat, agent, standin)

    session_writes = [
        w for w in log if (w.collection, w.key) == (SESSIONS, published["session_id"])
    ]
    claim, learnt, release = session_writes  # not one write per checkpoint, nor one to bind
    assert claim.data["active_turn"] == published["turn_id"]
    assert learnt.data["context_id"] == "c1" and learnt.data["incarnation"]
    assert release.data["active_turn"] is None


def test_a_turn_reads_its_session_and_its_document_only_where_another_function_may_have_written(
    firestore_documents: FirestoreDocuments, slack_chat: Chat, agent: ScriptedAgent, standin: Any
) -> None:
    reads: list[tuple[str, str]] = []
    log, published = one_turn(firestore_documents, slack_chat, agent, standin, reads)

    turn_writes = [w for w in log if (w.collection, w.key) == (TURNS, published["turn_id"])]
    turn_reads = reads.count((TURNS, published["turn_id"]))
    session_reads = reads.count((SESSIONS, published["session_id"]))
    # The turn: the trigger, the claimed turn and the turn at its release (each could have
    # been written by another function), not once more before each of its fenced writes.
    assert len(turn_writes) > turn_reads
    assert turn_reads == 3
    # The session: the claim, and before the turn is sent and before the reply's first
    # message (a stop may have taken it); not at each session change or checkpoint.
    assert session_reads == 3


def test_a_task_is_checkpointed_once_when_the_agent_names_it(
    firestore_documents: FirestoreDocuments, slack_chat: Chat, agent: ScriptedAgent, standin: Any
) -> None:
    log, published = one_turn(firestore_documents, slack_chat, agent, standin)

    first_message = next(
        i for i, w in enumerate(log) if w.collection == "slack" and w.key in SLACK_MESSAGES
    )
    checkpoints = [
        w
        for w in log[:first_message]
        if (w.collection, w.key) == (TURNS, published["turn_id"]) and w.data.get("checkpoint")
    ]
    assert len(checkpoints) == 1  # the two status updates after it name nothing new


def test_a_short_turn_counts_its_slack_calls_in_one_write_of_the_workspace_budget(
    emulators: EmulatorEnv,
    firestore_documents: FirestoreDocuments,
    slack_chat: Chat,
    agent: ScriptedAgent,
    standin: Any,
) -> None:
    # The first status reserves the stream's start and stop and the last status
    # while the workspace is quiet; each call Slack took still counts in the budget
    # for a whole window after it.
    # quiet: no turn of another test counts
    firestore.Client(project=emulators.project).collection(BUDGETS).document(TEAM).delete()
    log, _ = one_turn(firestore_documents, slack_chat, agent, standin)

    counted_calls = {method.replace(".", "_") for method in COUNTED}
    assert [w.key for w in log if w.collection == "slack" and w.key in counted_calls] == [
        "agents_sessions_setStatus",
        "chat_startStream",
        "chat_stopStream",
        "agents_sessions_setStatus",
    ]
    assert len([w for w in log if w.collection == BUDGETS]) == 1  # not one per call
    budget = firestore_documents.get(BUDGETS, TEAM)
    assert budget is not None
    for method in COUNTED:
        calls = sorted(call.at for call in standin.calls(method))
        counted = sorted(budget.data["calls"][method])
        assert len(counted) >= len(calls) > 0
        # each call held in the window (which is MARGIN longer than Slack's) by a slot
        # dated no earlier than MARGIN before it
        assert all(at >= call - MARGIN for at, call in zip(counted[-len(calls) :], calls))


class ContextWriteFails(CountedDocuments):
    """Firestore, unavailable once for the session write that keeps the agent's context."""

    def __init__(self, documents: FirestoreDocuments, log: list[Written]) -> None:
        super().__init__(documents, log)
        self.failed = False

    def update(
        self,
        collection: str,
        key: str,
        data: Mapping[str, Any],
        *,
        if_updated_at: datetime | None = None,
    ) -> datetime:
        if collection == SESSIONS and data.get("context_id") and not self.failed:
            self.failed = True
            raise StoreUnavailable("Firestore: ServiceUnavailable (injected)")
        return super().update(collection, key, data, if_updated_at=if_updated_at)


def test_a_turn_taken_over_before_its_context_was_kept_binds_its_session_to_the_agent(
    firestore_documents: FirestoreDocuments, slack_chat: Chat, agent: ScriptedAgent, standin: Any
) -> None:
    # The binding is written with the context; the function that would write both failed
    # after the agent named its task, so the one taking over must bind the session itself:
    # a context kept without its agent would read as a conversation of an unknown agent.
    documents = ContextWriteFails(firestore_documents, [])
    agent.script = names_a_task_then_answers
    deps, turns, tasks = make_deps(documents, slack_chat, agent)
    shell = Shell(deps, standin, agent, turns, tasks)
    thread = shell.mention("check X")
    [published] = shell.turns.published

    assert handlers.turn_send(shell.deps, published) == "retry"
    assert handlers.turn_send(shell.deps, published) == "ack"

    assert documents.failed
    assert shell.bot_texts(thread) == ["hello from the agent"]
    session = shell.deps.store.session(published["session_id"])
    assert session is not None and session.context_id == "c1" and session.incarnation
