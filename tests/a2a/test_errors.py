"""Each row of the contract's Errors table, against an agent that misbehaves in exactly that way."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest
from structlog.testing import capture_logs

from shared.a2a.errors import (
    AgentBusy,
    AgentError,
    AnswerRejected,
    CardUnusable,
    CredentialsRejected,
    DiscoveryFailed,
    IdentityRefused,
    LookupIncomplete,
    MethodUnavailable,
    NotSent,
    OutcomeUnknown,
    ResponseTooLarge,
    SessionGone,
    StreamDropped,
    parse_retry_after,
)
from shared.core import notices
from shared.core.model import HITL_EXTENSION, OutgoingMessage, StatusUpdate, Task, TaskState
from shared.core.turn_machine import Failure
from tests.a2a.agents import (
    Exchange,
    ScriptedAgent,
    artifact_update,
    error,
    result,
    status_update,
    task,
)
from tests.a2a.conftest import MakeClient

TURN = OutgoingMessage(message_id="m1", text="hello")
ANSWER = OutgoingMessage(message_id="m2", text="approved", context_id="c1", task_id="t1")


def _send(
    agent: ScriptedAgent, make_client: MakeClient, message: OutgoingMessage = TURN, **kwargs: float
) -> list:
    return list(make_client(agent.url, **kwargs).send(message))


@pytest.mark.parametrize("status", [401, 403])
def test_401_or_403_is_credentials_rejected_and_counted(
    agent: ScriptedAgent, make_client: MakeClient, status: int
) -> None:
    agent.script = lambda exchange: exchange.json({"detail": "bad token"}, code=status)

    with capture_logs() as logs, pytest.raises(CredentialsRejected) as raised:
        _send(agent, make_client)

    assert raised.value.reason == notices.CREDENTIALS_REJECTED
    assert notices.turn_failed(raised.value.reason) == (
        "Agent Kourier could not carry this message: "
        "the agent rejected Agent Kourier's credentials."
    )
    [counted] = [entry for entry in logs if entry["event"] == "credential_rejected"]
    assert counted["http_status"] == status


def test_403_to_the_card_fetch_is_credentials_rejected(
    agent: ScriptedAgent, make_client: MakeClient
) -> None:
    agent.card_script = lambda exchange: exchange.status(403)

    with capture_logs() as logs, pytest.raises(CredentialsRejected):
        _send(agent, make_client)

    assert [entry["http_status"] for entry in logs if entry["event"] == "credential_rejected"] == [
        403
    ]
    assert agent.posts() == []


def test_401_to_get_task_is_credentials_rejected(
    agent: ScriptedAgent, make_client: MakeClient
) -> None:
    agent.script = lambda exchange: exchange.status(401)
    with pytest.raises(CredentialsRejected):
        make_client(agent.url).get_task("t1")


def test_minus_31403_is_identity_refused(agent: ScriptedAgent, make_client: MakeClient) -> None:
    agent.script = lambda exchange: exchange.sse([error(-31403, "user U9 may not use session c1")])

    with pytest.raises(IdentityRefused) as raised:
        _send(agent, make_client)

    assert raised.value.reason == notices.IDENTITY_REFUSED
    assert "U9" not in raised.value.reason  # the agent's words stay in the logs


def test_minus_32004_to_a_send_is_busy_with_its_retry_after(
    agent: ScriptedAgent, make_client: MakeClient
) -> None:
    agent.script = lambda exchange: exchange.json(
        error(-32004, "a task is running"), headers={"Retry-After": "7"}
    )

    with pytest.raises(AgentBusy) as raised:
        _send(agent, make_client)

    assert raised.value.retry_after == 7
    assert raised.value.reason == notices.AGENT_BUSY


def test_minus_32004_to_a_subscribe_is_not_busy(
    agent: ScriptedAgent, make_client: MakeClient
) -> None:
    """a2a-sdk answers -32004 to SubscribeToTask of a finished task; that is no reason to wait."""
    agent.script = lambda exchange: exchange.json(error(-32004, "Task t1 is in terminal state"))

    with pytest.raises(NotSent) as raised:
        list(make_client(agent.url).subscribe("t1"))

    assert raised.value.rpc_code == -32004


def test_minus_32603_to_an_answer_is_answer_rejected(
    agent: ScriptedAgent, make_client: MakeClient
) -> None:
    agent.script = lambda exchange: exchange.sse([error(-32603, "bad answer")])

    with pytest.raises(AnswerRejected):
        _send(agent, make_client, ANSWER)


def test_minus_32603_to_a_new_turn_is_not_sent(
    agent: ScriptedAgent, make_client: MakeClient
) -> None:
    agent.script = lambda exchange: exchange.sse([error(-32603, "internal")])

    with pytest.raises(NotSent) as raised:
        _send(agent, make_client)

    assert raised.value.rpc_code == -32603


def test_minus_32001_while_following_is_session_gone(
    agent: ScriptedAgent, make_client: MakeClient
) -> None:
    agent.script = lambda exchange: exchange.json(error(-32001, "Task not found"))
    client = make_client(agent.url)

    with pytest.raises(SessionGone) as on_get:
        client.get_task("t1")
    with pytest.raises(SessionGone):
        list(client.subscribe("t1"))

    assert on_get.value.reason == notices.SESSION_GONE


@pytest.mark.parametrize("status", [400, 404, 405, 422])
def test_another_4xx_before_any_event_is_not_sent(
    agent: ScriptedAgent, make_client: MakeClient, status: int
) -> None:
    agent.script = lambda exchange: exchange.status(status)

    with pytest.raises(NotSent) as raised:
        _send(agent, make_client)

    assert raised.value.http_status == status
    assert raised.value.reason == notices.UNREACHABLE


@pytest.mark.parametrize("status", [500, 502, 503, 408, 429])
def test_5xx_408_and_429_before_any_event_are_outcome_unknown(
    agent: ScriptedAgent, make_client: MakeClient, status: int
) -> None:
    agent.script = lambda exchange: exchange.status(status)

    with pytest.raises(OutcomeUnknown) as raised:
        _send(agent, make_client)

    assert raised.value.http_status == status


def test_connection_dropped_before_any_event_is_outcome_unknown(
    agent: ScriptedAgent, make_client: MakeClient
) -> None:
    def headers_then_drop(exchange: Exchange) -> None:
        exchange.start_stream()
        exchange.drop()

    agent.script = headers_then_drop

    with pytest.raises(OutcomeUnknown):
        _send(agent, make_client)


def test_connection_dropped_after_an_event_is_stream_dropped(
    agent: ScriptedAgent, make_client: MakeClient
) -> None:
    def one_event_then_drop(exchange: Exchange) -> None:
        exchange.start_stream()
        exchange.event(result({"task": task(state="TASK_STATE_WORKING")}))
        exchange.drop()

    agent.script = one_event_then_drop
    stream = make_client(agent.url).send(TURN)

    assert isinstance(next(stream), Task)
    with pytest.raises(StreamDropped):
        next(stream)


def test_an_error_event_after_an_event_is_stream_dropped(
    agent: ScriptedAgent, make_client: MakeClient
) -> None:
    agent.script = lambda exchange: exchange.sse(
        [result({"task": task(state="TASK_STATE_WORKING")}), error(-32001, "lost it")]
    )

    with pytest.raises(StreamDropped):
        _send(agent, make_client)


def test_a_redirect_is_a_failed_call_and_is_not_followed(
    agent: ScriptedAgent, make_client: MakeClient
) -> None:
    agent.script = lambda exchange: exchange.status(307, {"Location": agent.url + "moved"})

    with pytest.raises(NotSent) as raised:
        _send(agent, make_client)

    assert raised.value.http_status == 307
    assert "redirect" in str(raised.value)
    assert [r.path for r in agent.posts()] == ["/"]


def test_slow_headers_fail_the_call_as_a_lost_connection(
    agent: ScriptedAgent, make_client: MakeClient
) -> None:
    def slow(exchange: Exchange) -> None:
        exchange.wait(10)
        exchange.sse([result({"task": task()})])

    agent.script = slow
    client = make_client(agent.url, header_timeout=0.5)
    started = time.monotonic()

    with pytest.raises(OutcomeUnknown) as raised:
        list(client.send(TURN))

    assert "no response headers within 0.5 s" in str(raised.value)
    assert time.monotonic() - started < 8


def test_a_quiet_gap_longer_than_the_header_timeout_is_not_cut(
    agent: ScriptedAgent, make_client: MakeClient
) -> None:
    """The 30 s rule is for headers only: a stream may then be quiet up to the idle limit."""

    def slow_events(exchange: Exchange) -> None:
        exchange.start_stream()
        exchange.event(result({"task": task(state="TASK_STATE_WORKING")}))
        exchange.wait(1.5)
        exchange.event(result(status_update("TASK_STATE_COMPLETED")))
        exchange.end()

    agent.script = slow_events

    events = list(make_client(agent.url, header_timeout=0.3, idle_timeout=30).send(TURN))

    assert isinstance(events[-1], StatusUpdate) and events[-1].status.state == TaskState.COMPLETED


def test_silence_past_the_idle_limit_cuts_the_stream(
    agent: ScriptedAgent, make_client: MakeClient
) -> None:
    def one_event_then_silence(exchange: Exchange) -> None:
        exchange.start_stream()
        exchange.event(result({"task": task(state="TASK_STATE_WORKING")}))
        exchange.hang()

    agent.script = one_event_then_silence
    started = time.monotonic()

    with pytest.raises(StreamDropped) as raised:
        _send(agent, make_client, idle_timeout=1.0)

    assert "no event for 1 s" in str(raised.value)
    assert time.monotonic() - started < 20


def test_keep_alive_comments_do_not_count_as_events(
    agent: ScriptedAgent, make_client: MakeClient
) -> None:
    """A hung agent whose server still sends SSE pings is cut all the same."""

    def pings_only(exchange: Exchange) -> None:
        exchange.start_stream()
        while not agent.stopping.is_set():
            exchange.comment()
            exchange.wait(0.2)

    agent.script = pings_only

    with pytest.raises(OutcomeUnknown) as raised:
        _send(agent, make_client, idle_timeout=1.0)

    assert "no event for 1 s" in str(raised.value)


def test_an_error_as_plain_json_to_a_streaming_call_is_classified(
    agent: ScriptedAgent, make_client: MakeClient
) -> None:
    agent.script = lambda exchange: exchange.json(error(-31403, "no"))

    with pytest.raises(IdentityRefused):
        _send(agent, make_client)


def test_a_body_that_is_neither_json_nor_sse_is_outcome_unknown(
    agent: ScriptedAgent, make_client: MakeClient
) -> None:
    agent.script = lambda exchange: exchange.status(
        200, {"Content-Type": "text/html"}, b"<html>hi</html>"
    )

    with pytest.raises(OutcomeUnknown):
        _send(agent, make_client)


def test_retry_after_in_seconds_as_a_date_and_capped_at_a_day(
    agent: ScriptedAgent, make_client: MakeClient
) -> None:
    in_90_seconds = format_datetime(datetime.now(UTC) + timedelta(seconds=90), usegmt=True)
    for header, low, high in (("120", 120, 120), (in_90_seconds, 80, 90), ("999999", 86400, 86400)):
        agent.script = lambda exchange, value=header: exchange.status(503, {"Retry-After": value})
        with pytest.raises(OutcomeUnknown) as raised:
            _send(agent, make_client)
        assert raised.value.retry_after is not None
        assert low <= raised.value.retry_after <= high, header


def test_retry_after_parsing() -> None:
    now = datetime(2026, 1, 1, tzinfo=UTC).timestamp()
    assert parse_retry_after({"retry-after": "Thu, 01 Jan 2026 00:01:00 GMT"}, now=now) == 60
    assert parse_retry_after({"retry-after": "Wed, 31 Dec 2025 23:00:00 GMT"}, now=now) == 0
    assert parse_retry_after({"retry-after": "Sat, 01 Jan 2028 00:00:00 GMT"}, now=now) == 86400
    assert parse_retry_after({"retry-after": "soon"}, now=now) is None
    assert parse_retry_after({}, now=now) is None


def test_the_hitl_extension_is_asked_for_on_a_message_that_names_it(
    agent: ScriptedAgent, make_client: MakeClient
) -> None:
    agent.script = lambda exchange: exchange.sse([result(status_update("TASK_STATE_COMPLETED"))])
    answer = OutgoingMessage(
        message_id="m3",
        text="approved",
        context_id="c1",
        task_id="t1",
        extension_metadata={HITL_EXTENSION: {"type": "tool_approval_response", "approvals": []}},
    )
    client = make_client(agent.url)

    list(client.send(answer))
    agent.script = lambda exchange: exchange.json(result(task(state="TASK_STATE_COMPLETED")))
    client.get_task("t1")

    sent, read = agent.posts()
    assert sent.headers["a2a-extensions"] == HITL_EXTENSION
    assert sent.body["params"]["message"]["extensions"] == [HITL_EXTENSION]
    assert sent.body["params"]["message"]["taskId"] == "t1"
    assert (
        sent.body["params"]["message"]["metadata"][HITL_EXTENSION]["type"]
        == "tool_approval_response"
    )
    assert "a2a-extensions" not in read.headers


def test_an_unknown_event_is_skipped(agent: ScriptedAgent, make_client: MakeClient) -> None:
    agent.script = lambda exchange: exchange.sse(
        [
            result({"somethingNew": {}}),
            result(status_update("TASK_STATE_COMPLETED")),
            result(artifact_update("x")),
        ]
    )

    events = _send(agent, make_client)

    assert [type(e).__name__ for e in events] == ["StatusUpdate", "ArtifactUpdate"]


@pytest.mark.parametrize(
    ("error", "failure"),
    [
        (CredentialsRejected("401"), Failure.CREDENTIALS),
        (IdentityRefused("-31403"), Failure.IDENTITY),
        (CardUnusable(notices.NO_JSONRPC_INTERFACE, "no JSONRPC interface"), Failure.REFUSED),
        (DiscoveryFailed("card 503"), Failure.UNREACHABLE),
        (AgentBusy("-32004"), Failure.BUSY),
        (AnswerRejected("-32603"), Failure.ANSWER_REJECTED),
        (SessionGone("-32001"), Failure.SESSION_GONE),
        (StreamDropped("cut"), Failure.DROPPED),
        (OutcomeUnknown("502"), Failure.UNKNOWN),
        (ResponseTooLarge("too big"), Failure.REFUSED),
        (NotSent("400"), Failure.NOT_SENT),
        (LookupIncomplete("page limit"), Failure.NOT_SENT),
        (MethodUnavailable("ListTasks on 0.3"), Failure.NOT_SENT),
    ],
)
def test_each_error_names_what_the_turn_does_next(error: AgentError, failure: Failure) -> None:
    assert error.failure is failure
