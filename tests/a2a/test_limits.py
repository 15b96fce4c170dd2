"""What an agent may send: every answer and every event is bounded, in size and in time.

A Cloud Function instance has 512 MiB; one answer read whole, or an event
that never ends, would exhaust it, and the platform would start the same
read again on the next delivery. A body that trickles in for ever would hold
the function past its timeout (Cloud Run keeps running the handler after
answering 504).
"""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from shared.a2a.client import LIST_PAGE_LIMIT, LIST_SECONDS
from shared.a2a.errors import LookupIncomplete, OutcomeUnknown, ResponseTooLarge
from shared.core import notices
from shared.core.model import OutgoingMessage
from shared.core.turn_machine import Failure
from shared.system import SystemClock
from tests.a2a.agents import Exchange, ScriptedAgent, result, status_update, task
from tests.a2a.conftest import MakeClient

LIMIT = 64 * 1024
TURN = OutgoingMessage(message_id="m1", text="hello")


def endless_event(exchange: Exchange) -> None:
    """An event whose data line never ends, as long as the client reads."""
    exchange.start_stream()
    exchange.event(result(status_update("TASK_STATE_WORKING")))
    exchange.chunk(b'data: {"jsonrpc": "2.0", "id": "1", "result": "')
    while not exchange.agent.stopping.is_set():
        if not exchange.chunk(b"x" * 16384):
            return  # the client hung up


def test_an_event_past_the_limit_ends_the_stream_as_too_large_without_reading_on(
    agent: ScriptedAgent, make_client: MakeClient
) -> None:
    agent.script = endless_event
    client = make_client(agent.url, max_response_bytes=LIMIT, idle_timeout=600)
    events = client.send(TURN)

    next(events)  # the first event is read as usual
    with pytest.raises(ResponseTooLarge) as raised:
        next(events)

    assert raised.value.reason == notices.RESPONSE_TOO_LARGE
    assert raised.value.failure is Failure.REFUSED, "the turn fails at once, never re-read"


def test_events_under_the_limit_are_read_however_many_there_are(
    agent: ScriptedAgent, make_client: MakeClient
) -> None:
    padded = task(state="TASK_STATE_WORKING", metadata={"pad": "x" * (LIMIT // 4)})
    frames = [result({"task": padded}) for _ in range(40)]
    frames.append(result({"task": task(state="TASK_STATE_COMPLETED")}))
    agent.script = lambda exchange: exchange.sse(frames)
    assert len(json.dumps(frames)) > LIMIT

    events = list(make_client(agent.url, max_response_bytes=LIMIT).send(TURN))

    assert len(events) == 41


def test_a_json_answer_past_the_limit_is_too_large(
    agent: ScriptedAgent, make_client: MakeClient
) -> None:
    big = task(state="TASK_STATE_WORKING", metadata={"log": "x" * (2 * LIMIT)})
    agent.script = lambda exchange: exchange.json(result(big))

    with pytest.raises(ResponseTooLarge):
        make_client(agent.url, max_response_bytes=LIMIT).get_task("t1")


def test_a_json_answer_that_trickles_in_for_ever_fails_at_the_call_deadline(
    agent: ScriptedAgent, make_client: MakeClient
) -> None:
    def trickle(exchange: Exchange) -> None:
        exchange.start_stream(headers={"Content-Type": "application/json"})
        exchange.chunk(b'{"jsonrpc": "2.0", "id": "1", "result": {"id": "t1", "x": "')
        while not exchange.agent.stopping.is_set():
            if not exchange.chunk(b"x"):
                return
            exchange.wait(0.2)

    agent.script = trickle

    with pytest.raises(OutcomeUnknown, match="took longer than 2 s"):
        make_client(agent.url, call_seconds=2).get_task("t1")


class SlowAgentClock(SystemClock):
    """The machine's clock, plus the time the scripted agent says each answer took."""

    def __init__(self) -> None:
        self.spent = 0.0

    def monotonic(self) -> float:
        return super().monotonic() + self.spent


def endless_pages(clock: SlowAgentClock | None) -> Callable[[Exchange], None]:
    """ListTasks answered with another page for ever (each taking a minute, with ``clock``)."""

    def answer(exchange: Exchange) -> None:
        if clock is not None:
            clock.spent += 60.0
        page = int(exchange.params.get("pageToken") or 0)
        exchange.json(result({"tasks": [task(f"t{page}")], "nextPageToken": str(page + 1)}))

    return answer


def list_calls(agent: ScriptedAgent) -> int:
    return sum(1 for request in agent.posts() if request.body.get("method") == "ListTasks")


def test_a_listtasks_walk_stops_after_its_page_limit(
    agent: ScriptedAgent, make_client: MakeClient
) -> None:
    # An agent may answer a next page for ever; recovery searches a bounded number,
    # and a walk cut there is incomplete, never "absent" (which would send the turn again).
    agent.script = endless_pages(None)
    client = make_client(agent.url)

    with pytest.raises(LookupIncomplete):
        client.task_holding_message("c1", "m-unknown")
    assert list_calls(agent) == LIST_PAGE_LIMIT


def test_a_listtasks_walk_whose_pages_come_slowly_gives_up_at_its_deadline(
    agent: ScriptedAgent, make_client: MakeClient
) -> None:
    # Each page within its own call deadline, the walk as a whole past LIST_SECONDS:
    # the outcome stays unknown (retried later), and no further page is asked.
    clock = SlowAgentClock()
    agent.script = endless_pages(clock)
    client = make_client(agent.url, clock=clock)

    with pytest.raises(OutcomeUnknown):
        client.task_holding_message("c1", "m-unknown")
    # A minute a page: the page that would start past LIST_SECONDS is never asked.
    assert 1 <= list_calls(agent) <= LIST_SECONDS // 60
