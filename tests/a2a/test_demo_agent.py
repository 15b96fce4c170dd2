"""The client against a real a2a-sdk 1.3.0 server (the demo agent), over A2A 1.0 and 0.3."""

from __future__ import annotations

import time
import uuid
from typing import Any

import httpx
import pytest

from shared.a2a.errors import MethodUnavailable
from shared.a2a.trace import TraceContext, current_trace
from shared.core.model import (
    ACTOR_METADATA_KEY,
    HITL_EXTENSION,
    Actor,
    ArtifactUpdate,
    DataPart,
    OutgoingMessage,
    StatusUpdate,
    StreamEvent,
    Task,
    TaskState,
    TextPart,
)
from tests.a2a.conftest import MakeClient

SAY_HELLO = "Say hello to see what else I can show you."


def _turn(text: str, context_id: str | None = None) -> OutgoingMessage:
    return OutgoingMessage(
        message_id=f"m-{uuid.uuid4().hex}",
        text=text,
        context_id=context_id,
        actor=Actor(id="U123", name="Ada Lovelace", email="ada@example.com"),
    )


def _task_id(events: list[StreamEvent]) -> str:
    for event in events:
        if isinstance(event, Task):
            return event.id
        if isinstance(event, (StatusUpdate, ArtifactUpdate)) and event.task_id:
            return event.task_id
    raise AssertionError(f"no task named in {events}")


def _artifact_text(events: list[StreamEvent]) -> str:
    text = ""
    for event in events:
        if isinstance(event, ArtifactUpdate):
            chunk = "".join(p.text for p in event.artifact.parts if isinstance(p, TextPart))
            text = text + chunk if event.append else chunk
    return text


def _received(url: str) -> list[dict[str, Any]]:
    return list(httpx.get(url + "_demo/received").json())


def test_streamed_send_yields_the_task_its_text_and_tool_parts(
    demo_agent: str, make_client: MakeClient
) -> None:
    client = make_client(demo_agent)

    events = list(client.send(_turn("morning brave new world")))

    assert isinstance(events[0], Task) and events[0].status.state == TaskState.SUBMITTED
    last = events[-1]
    assert isinstance(last, StatusUpdate) and last.status.state == TaskState.COMPLETED
    assert all(e.context_id == events[0].context_id for e in events)
    text = _artifact_text(events)
    assert "> morning brave new world" in text
    assert text.endswith("Your message has 4 words. That is all for this turn. " + SAY_HELLO)
    tool_parts = [
        part
        for e in events
        if isinstance(e, ArtifactUpdate)
        for part in e.artifact.parts
        if isinstance(part, DataPart)
    ]
    assert [p.metadata["adk_type"] for p in tool_parts] == ["function_call", "function_response"]
    assert tool_parts[1].data["response"] == {
        "words": 4
    }  # 4, not 4.0, though Struct sends a double


def test_the_wire_carries_what_the_contract_says_is_sent(
    demo_agent: str, make_client: MakeClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KOURIER_SECRET_DEMO_TOKEN", "s3cret")
    monkeypatch.setenv("KOURIER_SECRET_DEMO_API_KEY", "k3y")
    client = make_client(
        demo_agent,
        identity={"tokenSecretRef": {"name": "demo-token"}},
        backend={
            "headers": {
                "X-Team": "blue",
                "X-Api-Key": {"valueSecretRef": {"name": "demo-api-key"}},
            }
        },
    )
    version = client.protocol_version
    httpx.delete(demo_agent + "_demo/received")
    message = _turn("what is sent?")
    token = current_trace.set(
        TraceContext("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "k=v")
    )
    try:
        list(client.send(message))
    finally:
        current_trace.reset(token)

    [sent] = [r for r in _received(demo_agent) if r["http_method"] == "POST"]
    headers = sent["headers"]
    assert headers["authorization"] == "Bearer s3cret"
    assert "x-user-id" not in headers
    assert headers["x-team"] == "blue"
    assert headers["x-api-key"] == "k3y", "a static header's secret, read as tokenSecretRef is"
    assert headers["traceparent"] == "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
    assert headers["tracestate"] == "k=v"
    # The demo's card lists kagent's HITL extension; the 0.3 card these tests give it does not.
    assert headers.get("a2a-extensions") == (HITL_EXTENSION if version == "1.0" else None)
    wire_message = sent["params"]["message"]
    assert wire_message["messageId"] == message.message_id
    assert "contextId" not in wire_message and "taskId" not in wire_message
    assert wire_message["metadata"] == {
        ACTOR_METADATA_KEY: {
            "id": "U123",
            "platform": "slack",
            "name": "Ada Lovelace",
            "email": "ada@example.com",
        }
    }
    if version == "1.0":
        assert sent["method"] == "SendStreamingMessage"
        assert headers["a2a-version"] == "1.0"
        assert wire_message["role"] == "ROLE_USER"
        assert wire_message["parts"] == [{"text": "what is sent?"}]
    else:
        assert sent["method"] == "message/stream"
        assert "a2a-version" not in headers
        assert wire_message["role"] == "user"
        assert wire_message["parts"] == [{"kind": "text", "text": "what is sent?"}]


def test_get_task_reads_the_finished_task(demo_agent: str, make_client: MakeClient) -> None:
    client = make_client(demo_agent)
    message = _turn("read me back")
    events = list(client.send(message))

    task = client.get_task(_task_id(events))

    assert task.status.state == TaskState.COMPLETED
    assert task.context_id == events[0].context_id
    assert message.message_id in [m.message_id for m in task.history]
    texts = "".join(p.text for a in task.artifacts for p in a.parts if isinstance(p, TextPart))
    assert texts.endswith("Your message has 3 words. That is all for this turn. " + SAY_HELLO)
    assert len(client.get_task(task.id, history_length=1).history) == 1


def test_subscribe_follows_a_task_after_its_stream_is_left(
    demo_agent: str, make_client: MakeClient
) -> None:
    client = make_client(demo_agent)
    stream = client.send(_turn("long 2 please"))
    first = next(stream)
    stream.close()  # as a dropped stream: the agent goes on
    assert isinstance(first, Task)

    events = list(client.subscribe(first.id))

    assert isinstance(events[0], Task) and events[0].id == first.id
    assert events[0].status.state == TaskState.WORKING
    last = events[-1]
    assert isinstance(last, StatusUpdate) and last.status.state == TaskState.COMPLETED
    assert _artifact_text(events[1:]).endswith("That is all for this turn.")


def test_cancel_stops_a_running_task(demo_agent: str, make_client: MakeClient) -> None:
    client = make_client(demo_agent)
    stream = client.send(_turn("long 60 please"))
    first = next(stream)
    stream.close()
    assert isinstance(first, Task)

    canceled = client.cancel(first.id)

    assert canceled.id == first.id
    assert canceled.status.state == TaskState.CANCELED
    assert client.get_task(first.id).status.state == TaskState.CANCELED


def test_list_tasks_follows_pages_and_finds_a_turn_by_message_id(
    demo_agent: str, make_client: MakeClient
) -> None:
    client = make_client(demo_agent, list_page_size=2)
    if client.protocol_version == "0.3":
        assert not client.supports_list_tasks
        with pytest.raises(MethodUnavailable):
            client.list_tasks("any")
        return
    first = _turn("turn one")
    events = list(client.send(first))
    context_id = events[0].context_id
    assert context_id
    later = [_turn(f"turn {n}", context_id) for n in ("two", "three")]
    task_ids = [_task_id(events)] + [_task_id(list(client.send(m))) for m in later]
    list(client.send(_turn("another conversation")))
    httpx.delete(demo_agent + "_demo/received")

    listed = client.list_tasks(context_id)

    assert listed.complete and sorted(t.id for t in listed.tasks) == sorted(task_ids)
    calls = [r for r in _received(demo_agent) if r["method"] == "ListTasks"]
    assert (
        len(calls) == 2
        and "pageToken" not in calls[0]["params"]
        and calls[1]["params"]["pageToken"]
    )
    found = client.task_holding_message(context_id, later[0].message_id)
    assert found is not None and found.id == task_ids[1]
    assert client.task_holding_message(context_id, "never-sent") is None


def test_until_ends_a_stream_quietly_at_the_callers_deadline(
    demo_agent: str, make_client: MakeClient
) -> None:
    client = make_client(demo_agent)
    started = time.monotonic()

    events = list(client.send(_turn("long 60 please"), until=started + 1.0))

    assert events and not any(
        isinstance(e, StatusUpdate) and e.status.state.is_terminal for e in events
    )
    assert time.monotonic() - started < 20
    client.cancel(_task_id(events))
