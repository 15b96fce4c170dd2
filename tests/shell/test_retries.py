"""Failures for now are delivered again; failures for good end with a notice, never a loop.

Platform behaviour each test stands for: Pub/Sub delivers a message again
when turn_send answers an error (after a backoff of seconds), and the
reconcile sweep re-publishes a session whose lease has run out. Firestore
can be unavailable or abort a write for a while; Slack can answer 5xx.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any
from urllib.error import URLError

import pytest
from slack_sdk.errors import SlackApiError
from slack_sdk.web import SlackResponse
from structlog.testing import capture_logs

from shared import handlers
from shared.core import notices
from shared.core.telling import mark
from shared.core.timers import QuestionTimer, Timer, WaitTimer
from shared.errors import StoreUnavailable, is_transient
from shared.firestore import FirestoreDocuments
from shared.handoff import HandoffUnavailable, read_timer, timer_name
from shared.ports import Chat
from shared.store import SESSIONS, TURNS
from tests.a2a.agents import Exchange, ScriptedAgent, artifact_update, result, status_update, task
from tests.shell.conftest import CHANNEL, Shell, make_deps
from tests.shell.test_notices import Died, DyingChat, lease_runs_out, posts


class RunningWriteFails:
    """Firestore, unavailable for the write that marks a turn running (``times`` times)."""

    def __init__(self, documents: FirestoreDocuments, times: int) -> None:
        self._documents = documents
        self.left = times

    def __getattr__(self, name: str) -> Any:
        return getattr(self._documents, name)

    def update(
        self,
        collection: str,
        key: str,
        data: Mapping[str, Any],
        *,
        if_updated_at: datetime | None = None,
    ) -> datetime:
        if collection == TURNS and data.get("status") == "running" and self.left > 0:
            self.left -= 1
            raise StoreUnavailable("Firestore: ServiceUnavailable (injected)")
        return self._documents.update(collection, key, data, if_updated_at=if_updated_at)


def answers_hello(exchange: Exchange) -> None:
    """A 1.0 agent that answers every message with one artifact, then completes."""
    if exchange.rpc_method == "GetTask":
        artifact = {"artifactId": "a1", "parts": [{"text": "hello from the agent"}]}
        exchange.json(result(task(state="TASK_STATE_COMPLETED", artifacts=[artifact])))
        return
    assert exchange.rpc_method == "SendStreamingMessage", exchange.rpc_method
    exchange.sse(
        [
            result({"task": task(state="TASK_STATE_WORKING")}),
            result(artifact_update("hello from the agent")),
            result(status_update("TASK_STATE_COMPLETED")),
        ]
    )


def sends(agent: ScriptedAgent) -> int:
    """How many messages the agent was sent."""
    return sum(1 for post in agent.posts() if post.body.get("method") == "SendStreamingMessage")


def shell_with(
    documents: Any, slack_chat: Chat, agent: ScriptedAgent, standin: Any, **settings: Any
) -> Shell:
    agent.script = answers_hello
    deps, turns, tasks = make_deps(documents, slack_chat, agent, **settings)
    return Shell(deps, standin, agent, turns, tasks)


def test_a_turn_that_fails_for_now_is_delivered_again_and_carried_at_once(
    firestore_documents: FirestoreDocuments, slack_chat: Chat, agent: ScriptedAgent, standin: Any
) -> None:
    documents = RunningWriteFails(firestore_documents, times=1)
    shell = shell_with(documents, slack_chat, agent, standin)
    thread = shell.mention("check X")
    [published] = shell.turns.published

    assert handlers.turn_send(shell.deps, published) == "retry"
    session = shell.deps.store.session(published["session_id"])
    assert session is not None and session.lease_until is not None
    assert session.lease_until <= shell.deps.clock.now()  # let go: no wait for the lease

    assert handlers.turn_send(shell.deps, published) == "ack"
    assert shell.bot_texts(thread) == ["hello from the agent"]
    assert sends(agent) == 1
    turn = shell.deps.store.turn(published["turn_id"])
    assert turn is not None and turn.status == "done" and turn.takeovers == 1


def test_a_turn_that_fails_on_every_attempt_ends_with_a_notice(
    firestore_documents: FirestoreDocuments, slack_chat: Chat, agent: ScriptedAgent, standin: Any
) -> None:
    documents = RunningWriteFails(firestore_documents, times=100)
    shell = shell_with(documents, slack_chat, agent, standin, KOURIER_MAX_TAKEOVERS=2)
    thread = shell.mention("check X")
    [published] = shell.turns.published

    answers = [handlers.turn_send(shell.deps, published) for _ in range(4)]

    assert answers == ["retry", "retry", "retry", "ack"]
    assert shell.bot_texts(thread) == [
        "Agent Kourier could not carry this message: it failed on every attempt."
    ]
    assert notices.turn_failed(notices.KEPT_FAILING) == shell.bot_texts(thread)[0]
    [notice] = [message for message in standin.thread(CHANNEL, thread) if message.is_bot]
    assert notice.blocks[0]["type"] == "context", "marked as Kourier's, as no agent answer can be"
    assert notice.blocks[0]["elements"][0]["text"] == f"*{notices.KOURIER_MARK}*"
    turn = shell.deps.store.turn(published["turn_id"])
    assert turn is not None and turn.status == "done" and turn.outcome == "kept_failing"
    session = shell.deps.store.session(published["session_id"])
    assert session is not None and session.active_turn is None
    assert sends(agent) == 0
    assert handlers.turn_send(shell.deps, published) == "ack"  # nothing left to carry
    assert len(shell.bot_texts(thread)) == 1


def test_poison_input_is_acknowledged_and_logged(
    firestore_documents: FirestoreDocuments, slack_chat: Chat, agent: ScriptedAgent, standin: Any
) -> None:
    shell = shell_with(firestore_documents, slack_chat, agent, standin)

    with capture_logs() as logs:
        answer = handlers.turn_send(shell.deps, {"session": "not a turn message"})

    assert answer == "ack"
    assert [entry["event"] for entry in logs] == ["event_failed"]


def test_a_timer_no_one_sets_is_poison(
    firestore_documents: FirestoreDocuments, slack_chat: Chat, agent: ScriptedAgent, standin: Any
) -> None:
    shell = shell_with(firestore_documents, slack_chat, agent, standin)
    body = {"session_id": "s", "turn_id": "t", "generation": 1, "timer": "nap-3"}

    with capture_logs() as logs:
        answer = handlers.timeout(shell.deps, body)

    assert answer == "ack"
    assert [entry["event"] for entry in logs] == ["event_failed"]


@pytest.mark.parametrize(
    ("timer", "name"),
    [(WaitTimer(3), "wait-3"), (QuestionTimer("c23a6ce4f374"), "question-c23a6ce4f374")],
)
def test_timers_keep_the_names_of_tasks_already_set(timer: Timer, name: str) -> None:
    assert timer_name(timer) == name
    assert read_timer(name) == timer


@pytest.mark.parametrize("name", ["wait-", "wait-x", "question-", "nap-3", ""])
def test_a_name_that_is_no_timer_is_refused(name: str) -> None:
    with pytest.raises(ValueError, match="no timer is named"):
        read_timer(name)


def slack_error(status: int, code: str) -> SlackApiError:
    response = SlackResponse(
        client=None,
        http_verb="POST",
        api_url="https://slack.com/api/chat.postMessage",
        req_args={},
        data={"ok": False, "error": code},
        headers={},
        status_code=status,
    )
    return SlackApiError(code, response)


@pytest.mark.parametrize(
    ("error", "transient"),
    [
        (StoreUnavailable("Firestore: Aborted"), True),
        (HandoffUnavailable("Pub/Sub: DeadlineExceeded"), True),
        (slack_error(503, "service_unavailable"), True),
        (slack_error(429, "ratelimited"), True),
        (slack_error(200, "channel_not_found"), False),
        (URLError("connection refused"), True),
        (TimeoutError("read timed out"), True),
        (KeyError("session_id"), False),
        (RuntimeError("a bug"), False),
    ],
)
def test_the_error_mapping_retries_what_may_pass_and_acknowledges_the_rest(
    error: BaseException, transient: bool
) -> None:
    assert is_transient(error) is transient


class EndingWriteFails(RunningWriteFails):
    """Firestore, unavailable for the running write for good, and once for the turn's end."""

    def __init__(self, documents: FirestoreDocuments) -> None:
        super().__init__(documents, times=100)
        self.ending_left = 1

    def update(
        self,
        collection: str,
        key: str,
        data: Mapping[str, Any],
        *,
        if_updated_at: datetime | None = None,
    ) -> datetime:
        if collection == TURNS and data.get("outcome") == "kept_failing" and self.ending_left:
            self.ending_left -= 1
            raise StoreUnavailable("Firestore: ServiceUnavailable (injected)")
        return super().update(collection, key, data, if_updated_at=if_updated_at)


def test_a_turn_that_kept_failing_tells_the_thread_once_even_if_its_end_is_not_recorded(
    firestore_documents: FirestoreDocuments, slack_chat: Chat, agent: ScriptedAgent, standin: Any
) -> None:
    documents = EndingWriteFails(firestore_documents)
    shell = shell_with(documents, slack_chat, agent, standin, KOURIER_MAX_TAKEOVERS=2)
    thread = shell.mention("check X")
    [published] = shell.turns.published

    answers = [handlers.turn_send(shell.deps, published) for _ in range(4)]
    assert answers == ["retry", "retry", "retry", "retry"]
    assert shell.bot_texts(thread) == [notices.turn_failed(notices.KEPT_FAILING)]
    # Its lease runs out (the function died, or failed to record the end), and the
    # sweep hands the turn to another function, which ends it without telling again.
    documents.update(SESSIONS, published["session_id"], {"lease_until": shell.deps.clock.now()})

    assert handlers.turn_send(shell.deps, published) == "ack"
    assert shell.bot_texts(thread) == [notices.turn_failed(notices.KEPT_FAILING)]
    turn = shell.deps.store.turn(published["turn_id"])
    assert turn is not None and turn.status == "done" and turn.outcome == "kept_failing"


KEPT_FAILING = notices.turn_failed(notices.KEPT_FAILING)


def a_turn_past_its_takeovers(
    firestore_documents: FirestoreDocuments, slack_chat: Chat, agent: ScriptedAgent, standin: Any
) -> tuple[Shell, DyingChat, str, dict[str, Any]]:
    """A turn that failed on every attempt but the last, whose function dies as ``chat`` says."""
    chat = DyingChat(slack_chat)
    documents = RunningWriteFails(firestore_documents, times=100)
    shell = shell_with(documents, chat, agent, standin, KOURIER_MAX_TAKEOVERS=2)  # type: ignore[arg-type]
    thread = shell.mention("check X")
    [published] = shell.turns.published
    answers = [handlers.turn_send(shell.deps, published) for _ in range(3)]
    assert answers == ["retry", "retry", "retry"]
    return shell, chat, thread, published


def test_the_kept_failing_notice_shows_once_when_its_function_dies_between_record_and_post(
    firestore_documents: FirestoreDocuments, slack_chat: Chat, agent: ScriptedAgent, standin: Any
) -> None:
    shell, chat, thread, published = a_turn_past_its_takeovers(
        firestore_documents, slack_chat, agent, standin
    )
    chat.before = posts(KEPT_FAILING)  # the attempt past the limit recorded, then the instance dies

    with pytest.raises(Died):
        handlers.turn_send(shell.deps, published)
    assert shell.bot_texts(thread) == []
    lease_runs_out(shell, published["session_id"])

    assert handlers.turn_send(shell.deps, published) == "ack"
    assert shell.bot_texts(thread) == [KEPT_FAILING]
    turn = shell.deps.store.turn(published["turn_id"])
    assert turn is not None and turn.status == "done" and turn.outcome == "kept_failing"


def test_the_kept_failing_notice_shows_once_when_its_function_dies_right_after_posting_it(
    firestore_documents: FirestoreDocuments, slack_chat: Chat, agent: ScriptedAgent, standin: Any
) -> None:
    shell, chat, thread, published = a_turn_past_its_takeovers(
        firestore_documents, slack_chat, agent, standin
    )
    chat.after = posts(KEPT_FAILING)  # posted, and the turn never recorded done

    with pytest.raises(Died):
        handlers.turn_send(shell.deps, published)
    [notice] = [message for message in standin.thread(CHANNEL, thread) if message.is_bot]
    assert notice.metadata == mark(published["turn_id"], "kept_failing"), "the taker reads it"
    lease_runs_out(shell, published["session_id"])

    assert handlers.turn_send(shell.deps, published) == "ack"
    assert shell.bot_texts(thread) == [KEPT_FAILING]
    turn = shell.deps.store.turn(published["turn_id"])
    assert turn is not None and turn.status == "done" and turn.outcome == "kept_failing"
