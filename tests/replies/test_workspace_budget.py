"""A reply within the workspace's Slack budget: ThreadReply with a WorkspaceBudget, against the stand-in.

Every stream of a workspace shares Slack's per-method limits. The budget
here is kept in memory (the ``Documents`` port's semantics, no Firestore);
tests/replies/test_workspace_limits.py runs the whole stack on Firestore.
"""

from __future__ import annotations

import copy
import itertools
import time
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from slack_sdk import WebClient

from local.slack_standin.client import SlackStandin
from shared.core import agent_session
from shared.core.reply import TextAppended
from shared.core.tool_steps import StepFinished, StepStarted
from shared.errors import DocumentExists, PreconditionFailed
from shared.ports import Snapshot
from shared.slack.pacing import ReplyLimits
from shared.slack.reply import ThreadReply
from shared.slack.session_status import AgentSessions, ThreadStatus
from shared.slack.tiers import MARGIN, TIERS, WINDOW_SECONDS, Budget
from shared.slack.workspace_budget import BUDGETS, WorkspaceBudget
from shared.system import SystemClock, ThreadRuntime
from tests.replies.support import CHANNEL, bot_replies, cards, shown_text

TEAM = "T0KOURIER"
FAST = ReplyLimits(stream_interval=0.05, update_interval=1.0)
SOON = 2.0
"""Seconds until a slot frees, in the tests where one does."""


class MemoryDocuments:
    """The ``Documents`` port's get, create and conditional update, in memory."""

    def __init__(self) -> None:
        self.docs: dict[tuple[str, str], Snapshot] = {}
        self._writes = itertools.count()

    def get(self, collection: str, key: str) -> Snapshot | None:
        return self.docs.get((collection, key))

    def create(self, collection: str, key: str, data: Mapping[str, Any]) -> None:
        if (collection, key) in self.docs:
            raise DocumentExists(key)
        self.docs[(collection, key)] = self._snapshot(dict(data))

    def update(
        self,
        collection: str,
        key: str,
        data: Mapping[str, Any],
        *,
        if_updated_at: datetime | None = None,
    ) -> datetime:
        stored = self.docs.get((collection, key))
        if stored is None or (if_updated_at is not None and stored.update_time != if_updated_at):
            raise PreconditionFailed(key)
        written = self._snapshot({**stored.data, **data})
        self.docs[(collection, key)] = written
        return written.update_time

    def _snapshot(self, data: dict[str, Any]) -> Snapshot:
        written = datetime(2026, 1, 1, tzinfo=UTC) + timedelta(microseconds=next(self._writes))
        return Snapshot(copy.deepcopy(data), written)


def spent(method: str, frees_at: float) -> WorkspaceBudget:
    """A budget whose ``method`` calls are all spent until ``frees_at``."""
    documents = MemoryDocuments()
    oldest = frees_at - WINDOW_SECONDS - MARGIN
    budget = Budget(calls={method: [oldest] * TIERS[method]})
    documents.create(BUDGETS, TEAM, budget.to_state())
    return WorkspaceBudget(documents, SystemClock())  # type: ignore[arg-type]


def new_reply(slack: WebClient, thread_ts: str, budget: WorkspaceBudget) -> ThreadReply:
    return ThreadReply(
        slack,
        CHANNEL,
        thread_ts,
        "U0ALICE",
        TEAM,
        clock=SystemClock(),
        runtime=ThreadRuntime(),
        status=ThreadStatus(slack, CHANNEL, thread_ts, AgentSessions()),
        limits=FAST,
        budget=budget,
    )


def test_an_answer_complete_before_a_stream_may_start_is_posted_whole(
    standin: SlackStandin, slack: WebClient, thread_ts: str
) -> None:
    reply = new_reply(slack, thread_ts, spent("chat.startStream", time.time() + 600))
    reply.working()
    reply.show([TextAppended("The checkout service ")])
    reply.show([StepStarted("call-1", "restart", "checkout")])
    reply.show([StepFinished("call-1", "restart", True, "restarted")])
    reply.show([TextAppended("is back.")])
    reply.finish()
    (message,) = bot_replies(standin, thread_ts)
    assert message.stream is None
    assert shown_text(message) == "The checkout service is back."
    assert cards([message]) == [("call-1", "restart", "complete")]
    assert not standin.calls("chat.startStream")


def test_text_queued_while_no_stream_may_start_streams_once_a_start_frees_unprompted(
    standin: SlackStandin, slack: WebClient, thread_ts: str
) -> None:
    frees_at = time.time() + SOON
    reply = new_reply(slack, thread_ts, spent("chat.startStream", frees_at))
    reply.working()
    reply.show([TextAppended("First words, then more.")])  # and nothing more until the stream shows
    assert not standin.calls("chat.startStream")

    def streaming() -> bool:
        return any(m.stream == "streaming" for m in bot_replies(standin, thread_ts))

    standin.wait_for(streaming, timeout=60, interval=0.1)
    reply.show([TextAppended(" The end.")])
    reply.finish()
    (message,) = bot_replies(standin, thread_ts)
    assert message.stream == "stopped"
    assert message.text == "First words, then more. The end."
    (start,) = standin.calls("chat.startStream")
    assert start.at >= frees_at - 0.05  # not before the budget allowed it


def test_a_stream_stops_only_once_the_budget_allows_it(
    standin: SlackStandin, slack: WebClient, thread_ts: str
) -> None:
    frees_at = time.time() + SOON
    reply = new_reply(slack, thread_ts, spent("chat.stopStream", frees_at))
    reply.show([TextAppended("An answer that streams.")])
    reply.finish()
    (message,) = bot_replies(standin, thread_ts)
    assert message.stream == "stopped" and message.text == "An answer that streams."
    (stop,) = standin.calls("chat.stopStream")
    assert stop.at >= frees_at - 0.05
    assert all(call.status_code != 429 for call in standin.calls())


def test_a_working_status_is_skipped_while_the_budget_is_spent_and_the_last_one_waits(
    standin: SlackStandin, slack: WebClient, thread_ts: str
) -> None:
    frees_at = time.time() + SOON
    status = ThreadStatus(
        slack,
        CHANNEL,
        thread_ts,
        AgentSessions(),
        budget=spent("agents.sessions.setStatus", frees_at),
        team=TEAM,
    )
    status.show(agent_session.working("U0ALICE", "restart checkout"))
    assert not standin.calls("agents.sessions.setStatus")
    status.show(agent_session.ended("answered"))
    (call,) = standin.calls("agents.sessions.setStatus")
    assert call.params["status"] == "active"
    assert call.at >= frees_at - 0.05  # not before the budget allowed it
