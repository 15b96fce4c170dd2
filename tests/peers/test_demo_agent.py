"""The demo agent: turns within a context, what it records, long runs, task methods."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from local.demo_agent import strip_actor_prefix
from tests.peers import wire
from tests.peers.launch import PeerKind

SLACK_PREFIX = "[Slack: Ada Lovelace (U123) <ada@example.com>]\n"


@pytest.fixture(scope="module")
def demo(peer_url: Callable[[PeerKind], str]) -> str:
    """The base URL of a running demo agent."""
    return peer_url("demo")


def _send(
    demo: str, text: str, version: wire.ProtocolVersion = "1.0", context_id: str | None = None
) -> wire.StreamSummary:
    body = wire.stream_request([wire.text_part(text, version)], version, context_id=context_id)
    return wire.summarize(wire.stream(demo, body, version))


def _wait_for_state(demo: str, task_id: str, state: str) -> dict[str, Any]:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        task: dict[str, Any] = wire.call(demo, "GetTask", {"id": task_id}, "1.0")
        if task["status"]["state"] == state:
            return task
        time.sleep(0.2)
    raise AssertionError(f"task {task_id} never reached {state}")


def test_a_follow_up_in_the_same_context_is_the_next_turn(demo: str) -> None:
    first = _send(demo, SLACK_PREFIX + "Remember the number seven.")
    follow_up = _send(
        demo, SLACK_PREFIX + "Which number was it?", "0.3", context_id=first.context_id
    )
    elsewhere = _send(demo, SLACK_PREFIX + "Hello from another thread.")

    assert "This is turn 1 in this conversation." in first.artifact_text
    assert follow_up.context_id == first.context_id
    assert "This is turn 2 in this conversation." in follow_up.artifact_text
    assert "> Which number was it?" in follow_up.artifact_text
    assert "Remember" not in follow_up.artifact_text
    assert elsewhere.context_id != first.context_id
    assert "This is turn 1 in this conversation." in elsewhere.artifact_text


def test_the_answer_streams_in_appended_chunks_around_one_tool_step(demo: str) -> None:
    body = wire.stream_request([wire.text_part(SLACK_PREFIX + "one two three", "1.0")], "1.0")
    frames = wire.stream(demo, body, "1.0")

    updates = [
        frame["result"]["artifactUpdate"] for frame in frames if "artifactUpdate" in frame["result"]
    ]
    assert len(updates) > 3
    assert {update["artifact"]["artifactId"] for update in updates} == {
        updates[0]["artifact"]["artifactId"]
    }
    assert [update.get("append", False) for update in updates] == [False] + [True] * (
        len(updates) - 1
    )
    assert updates[-1]["lastChunk"] is True
    kinds = [wire.tool_kind(part) for update in updates for part in update["artifact"]["parts"]]
    call_index, result_index = kinds.index("function_call"), kinds.index("function_response")
    assert 0 < call_index < result_index < len(kinds) - 1
    summary = wire.summarize(frames)
    assert summary.tool_parts("function_response")[0]["response"] == {"words": 3}
    assert "Your message has 3 words." in summary.artifact_text


def test_it_records_every_request_with_its_headers_and_metadata(demo: str) -> None:
    assert httpx.delete(demo + "/_demo/received").status_code == 204
    headers = {
        "X-User-Id": "kourier-user",
        "Authorization": "Bearer secret-token",
        "traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
        "A2A-Extensions": "https://kagent.dev/extensions/hitl/v1",
    }
    actor = {"id": "U123", "platform": "slack", "name": "Ada Lovelace"}
    httpx.get(demo + "/.well-known/agent-card.json", headers=headers).raise_for_status()
    body = wire.stream_request(
        [wire.text_part(SLACK_PREFIX + "hi", "1.0")],
        "1.0",
        metadata={"agentkourier.dev/actor": actor},
    )
    wire.stream(demo, body, "1.0", headers)

    card_fetch, send = httpx.get(demo + "/_demo/received").json()
    assert card_fetch["path"] == "/.well-known/agent-card.json"
    assert card_fetch["headers"]["x-user-id"] == "kourier-user"
    assert send["method"] == "SendStreamingMessage"
    assert send["params"]["message"]["metadata"] == {"agentkourier.dev/actor": actor}
    assert send["params"]["message"]["messageId"] == body["params"]["message"]["messageId"]
    for name, value in headers.items():
        assert send["headers"][name.lower()] == value
    assert send["headers"]["a2a-version"] == "1.0"
    assert httpx.delete(demo + "/_demo/received").status_code == 204
    assert httpx.get(demo + "/_demo/received").json() == []


def test_a_long_run_sends_heartbeats_while_its_tool_runs(demo: str) -> None:
    body = wire.stream_request([wire.text_part(SLACK_PREFIX + "long 5 please", "0.3")], "0.3")
    frames = [frame["result"] for frame in wire.stream(demo, body, "0.3")]

    call_at = next(i for i, r in enumerate(frames) if "function_call" in str(r.get("artifact")))
    result_at = next(
        i for i, r in enumerate(frames) if "function_response" in str(r.get("artifact"))
    )
    heartbeats = [
        r
        for r in frames[call_at:result_at]
        if r["kind"] == "status-update" and r["status"]["state"] == "working"
    ]
    assert len(heartbeats) >= 2
    assert all("still running" in r["status"]["message"]["parts"][0]["text"] for r in heartbeats)
    assert frames[-1]["status"]["state"] == "completed" and frames[-1]["final"] is True


def test_a_running_task_can_be_read_listed_followed_and_cancelled(demo: str) -> None:
    message = wire.stream_request([wire.text_part(SLACK_PREFIX + "long 60", "1.0")], "1.0")[
        "params"
    ]
    started = wire.call(
        demo, "SendMessage", message | {"configuration": {"returnImmediately": True}}, "1.0"
    )
    task_id, context_id = started["task"]["id"], started["task"]["contextId"]
    _wait_for_state(demo, task_id, "TASK_STATE_WORKING")

    (snapshot,) = wire.stream(
        demo,
        {"jsonrpc": "2.0", "id": 1, "method": "SubscribeToTask", "params": {"id": task_id}},
        "1.0",
        max_frames=1,
    )
    (legacy_snapshot,) = wire.stream(
        demo,
        {"jsonrpc": "2.0", "id": 2, "method": "tasks/resubscribe", "params": {"id": task_id}},
        "0.3",
        max_frames=1,
    )
    listed = wire.call(demo, "ListTasks", {"contextId": context_id, "historyLength": 10}, "1.0")
    cancelled = wire.call(demo, "CancelTask", {"id": task_id}, "1.0")

    assert snapshot["result"]["task"]["id"] == task_id
    assert (
        legacy_snapshot["result"]["kind"] == "task" and legacy_snapshot["result"]["id"] == task_id
    )
    (listed_task,) = listed["tasks"]
    assert listed_task["id"] == task_id
    assert message["message"]["messageId"] in [m["messageId"] for m in listed_task["history"]]
    assert cancelled["status"]["state"] == "TASK_STATE_CANCELED"
    assert _wait_for_state(demo, task_id, "TASK_STATE_CANCELED")["contextId"] == context_id


@pytest.mark.parametrize(
    ("received", "written"),
    [
        (SLACK_PREFIX + "hello\nsecond line", "hello\nsecond line"),
        ("no prefix here", "no prefix here"),
        ("[not a prefix] hello\nthere", "[not a prefix] hello\nthere"),
    ],
)
def test_only_an_actor_prefix_line_is_left_out_of_the_quote(received: str, written: str) -> None:
    assert strip_actor_prefix(received) == written


HITL = "https://kagent.dev/extensions/hitl/v1"


def _pause(
    demo: str, text: str, headers: dict[str, str]
) -> tuple[wire.StreamSummary, dict[str, Any]]:
    """Sends ``text`` and returns the stream's summary and its pause's status message."""
    body = wire.stream_request([wire.text_part(SLACK_PREFIX + text, "1.0")], "1.0")
    frames = wire.stream(demo, body, "1.0", headers)
    status = frames[-1]["result"]["statusUpdate"]["status"]
    assert status["state"] == "TASK_STATE_INPUT_REQUIRED"
    return wire.summarize(frames), status["message"]


def _answer(summary: wire.StreamSummary, text: str, payload: dict[str, Any]) -> dict[str, Any]:
    """The answer Kourier would send to the paused task of ``summary``."""
    body = wire.stream_request(
        [wire.text_part(text, "1.0")],
        "1.0",
        context_id=summary.context_id,
        task_id=summary.task_id,
        metadata={HITL: payload, "agentkourier.dev/actor": {"id": "U123", "platform": "slack"}},
    )
    body["params"]["message"]["extensions"] = [HITL]
    return body


def test_the_card_lists_kagents_extension_as_optional(demo: str) -> None:
    card = httpx.get(demo + "/.well-known/agent-card.json").json()

    [extension] = card["capabilities"]["extensions"]
    assert extension["uri"] == HITL and not extension.get("required")


def test_a_pause_carries_kagents_payload_only_when_asked_for_it(demo: str) -> None:
    asked, message = _pause(demo, "approve", {"A2A-Extensions": HITL})
    _, plain = _pause(demo, "approve", {})

    [call] = asked.tool_parts("function_call")
    request = message["metadata"][HITL]
    assert message["extensions"] == [HITL] and message["role"] == "ROLE_AGENT"
    assert request == {
        "type": "tool_approval_request",
        "hint": "Restart the checkout service?",
        "tools": [
            {
                "id": request["tools"][0]["id"],
                "call_id": call["id"],
                "name": "restart_service",
                "args": {"service": "checkout", "namespace": "shop"},
            }
        ],
    }
    assert request["tools"][0]["id"].startswith("adk-")
    assert message["parts"] == [{"text": "Restart the checkout service?"}]
    assert plain["parts"] == [{"text": "Human input is required before the agent can continue."}]
    assert "extensions" not in plain and "metadata" not in plain


def test_an_answer_that_does_not_fit_is_refused_with_32603_and_the_task_still_waits(
    demo: str,
) -> None:
    summary, message = _pause(demo, "approvals", {"A2A-Extensions": HITL})
    tools = [tool["id"] for tool in message["metadata"][HITL]["tools"]]
    partial = {"type": "tool_approval_response", "approvals": [{"id": tools[0], "approved": True}]}
    whole = {
        "type": "tool_approval_response",
        "approvals": [{"id": tool, "approved": True} for tool in tools],
    }

    refused = httpx.post(
        demo + "/", json=_answer(summary, "approved", partial), headers={"A2A-Version": "1.0"}
    ).json()
    task = wire.call(demo, "GetTask", {"id": summary.task_id}, "1.0")
    resumed = wire.summarize(
        wire.stream(demo, _answer(summary, "approved", whole), "1.0", {"A2A-Extensions": HITL})
    )

    assert refused["error"]["code"] == -32603
    assert task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    assert resumed.final_state == "completed"
    assert "- `delete_pod`: approved, so it ran." in resumed.artifact_text


def test_a_busy_message_is_refused_with_32004_until_its_seconds_are_up(demo: str) -> None:
    body = wire.stream_request([wire.text_part(SLACK_PREFIX + "busy 1", "1.0")], "1.0")

    refused = httpx.post(demo + "/", json=body, headers={"A2A-Version": "1.0"}).json()
    deadline = time.monotonic() + 60
    while True:
        again = httpx.post(demo + "/", json=body, headers={"A2A-Version": "1.0"})
        if again.headers["content-type"].startswith("text/event-stream"):
            break
        assert again.json()["error"]["code"] == -32004 and time.monotonic() < deadline
        time.sleep(0.2)

    assert refused["error"]["code"] == -32004
    assert "I was busy for 1 seconds" in again.text
