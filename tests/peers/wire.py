"""Raw A2A JSON-RPC over httpx, for the peer smoke tests and stream recordings.

Only what tests need to drive a peer: build a streamed send in either
protocol version, read its SSE ``data:`` payloads as JSON, and sum the frames
up (final state, text, tool parts) in terms common to 1.0 and 0.3. The
product's own client is elsewhere; this module stays deliberately small so
it can check the peers independently of it.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from typing import Any, Literal

import httpx
from httpx_sse import connect_sse

ProtocolVersion = Literal["1.0", "0.3"]
Framework = Literal["adk", "kagent"]
ADK_V2_EXTENSION = "https://google.github.io/adk-docs/a2a/a2a-extension/"
TOOL_TAGS = ("adk_type", "kagent_type", "kagent.dev/a2a/part-type")
CONFIRMATION_CALL = "adk_request_confirmation"
STREAM_TIMEOUT = httpx.Timeout(10.0, read=120.0)


def text_part(text: str, version: ProtocolVersion) -> dict[str, Any]:
    """A text part in the shape of ``version``."""
    return {"text": text} if version == "1.0" else {"kind": "text", "text": text}


def data_part(
    data: dict[str, Any], version: ProtocolVersion, metadata: dict[str, Any] | None = None
) -> dict[str, Any]:
    """A data part in the shape of ``version``."""
    part: dict[str, Any] = {"data": data} if version == "1.0" else {"kind": "data", "data": data}
    if metadata:
        part["metadata"] = metadata
    return part


def stream_request(
    parts: list[dict[str, Any]],
    version: ProtocolVersion,
    *,
    context_id: str | None = None,
    task_id: str | None = None,
    metadata: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A JSON-RPC streamed send of one user message.

    Args:
        parts: The message parts, already in the shape of ``version``.
        version: "1.0" (SendStreamingMessage) or "0.3" (message/stream).
        context_id: The context to continue, if any.
        task_id: The paused task to answer, if any.
        metadata: The message metadata, if any.

    Returns:
        The request body.
    """
    message: dict[str, Any] = {"messageId": f"msg-{uuid.uuid4().hex}", "parts": parts}
    if version == "1.0":
        message["role"] = "ROLE_USER"
    else:
        message |= {"role": "user", "kind": "message"}
    for key, value in (("contextId", context_id), ("taskId", task_id), ("metadata", metadata)):
        if value is not None:
            message[key] = value
    method = "SendStreamingMessage" if version == "1.0" else "message/stream"
    return {
        "jsonrpc": "2.0",
        "id": uuid.uuid4().hex,
        "method": method,
        "params": {"message": message},
    }


def version_headers(version: ProtocolVersion) -> dict[str, str]:
    """The headers every request of ``version`` carries."""
    return {"A2A-Version": "1.0"} if version == "1.0" else {}


def stream(
    base_url: str,
    body: dict[str, Any],
    version: ProtocolVersion,
    headers: dict[str, str] | None = None,
    max_frames: int | None = None,
) -> list[dict[str, Any]]:
    """Posts a streaming JSON-RPC request and returns its decoded ``data:`` payloads.

    Args:
        base_url: The peer's endpoint.
        body: The JSON-RPC request.
        version: The protocol version, for the version header.
        headers: More headers to send.
        max_frames: Stop reading (and hang up) after this many payloads.

    Raises:
        AssertionError: The peer answered with a JSON-RPC error or no stream.
    """
    all_headers = version_headers(version) | (headers or {})
    frames: list[dict[str, Any]] = []
    with (
        httpx.Client(timeout=STREAM_TIMEOUT) as client,
        connect_sse(client, "POST", base_url + "/", json=body, headers=all_headers) as source,
    ):
        content_type = source.response.headers.get("content-type", "")
        if not content_type.startswith("text/event-stream"):
            raise AssertionError(f"not a stream: {source.response.read()!r}")
        for event in source.iter_sse():
            if event.data:
                frames.append(json.loads(event.data))
            if len(frames) == max_frames:
                break
    return frames


def call(base_url: str, method: str, params: dict[str, Any], version: ProtocolVersion) -> Any:
    """A unary JSON-RPC call; returns its result or raises with its error."""
    body = {"jsonrpc": "2.0", "id": uuid.uuid4().hex, "method": method, "params": params}
    response = httpx.post(
        base_url + "/", json=body, headers=version_headers(version), timeout=STREAM_TIMEOUT
    )
    response.raise_for_status()
    reply = response.json()
    if "error" in reply:
        raise AssertionError(f"{method} failed: {reply['error']}")
    return reply["result"]


def _state(raw: str) -> str:
    """A task state in 0.3 spelling: TASK_STATE_INPUT_REQUIRED -> input-required."""
    return raw.removeprefix("TASK_STATE_").lower().replace("_", "-")


def tool_kind(part: dict[str, Any]) -> str | None:
    """ "function_call" or "function_response" for a tagged tool part, else None."""
    metadata = part.get("metadata") or {}
    kinds = [metadata[tag] for tag in TOOL_TAGS if tag in metadata]
    return kinds[0] if len(kinds) == 1 and "data" in part else None


@dataclass
class StreamSummary:
    """What a stream said, in terms common to both protocol versions."""

    task_id: str | None = None
    context_id: str | None = None
    states: list[str] = field(default_factory=list)
    artifact_parts: list[dict[str, Any]] = field(default_factory=list)
    status_parts: list[dict[str, Any]] = field(default_factory=list)
    pause_parts: list[dict[str, Any]] = field(default_factory=list)

    @property
    def final_state(self) -> str | None:
        """The last state the stream reported."""
        return self.states[-1] if self.states else None

    @property
    def artifact_text(self) -> str:
        """The text of every artifact part, joined in order."""
        return "".join(part["text"] for part in self.artifact_parts if "text" in part)

    def tool_parts(self, kind: str) -> list[dict[str, Any]]:
        """The data of the tool parts of ``kind`` in artifacts and working status messages."""
        parts = self.artifact_parts + self.status_parts
        return [part["data"] for part in parts if tool_kind(part) == kind]

    @property
    def confirmation_call(self) -> dict[str, Any]:
        """The data of ADK's adk_request_confirmation call in the input-required pause."""
        calls: list[dict[str, Any]] = [
            part["data"]
            for part in self.pause_parts
            if tool_kind(part) == "function_call" and part["data"].get("name") == CONFIRMATION_CALL
        ]
        (call,) = calls
        return call


def approval_part(
    framework: Framework, pause: StreamSummary, version: ProtocolVersion
) -> dict[str, Any]:
    """The data part that approves the tool call a confirm peer paused for.

    ADK takes a function_response to its confirmation call; kagent takes its
    own decision payload.
    """
    if framework == "kagent":
        return data_part({"decision_type": "approve"}, version)
    response = {
        "id": pause.confirmation_call["id"],
        "name": CONFIRMATION_CALL,
        "response": {"confirmed": True},
    }
    return data_part(response, version, {"adk_type": "function_response"})


def summarize(frames: list[dict[str, Any]]) -> StreamSummary:
    """Sums up the frames of one stream, in either protocol version."""
    summary = StreamSummary()
    for frame in frames:
        result = frame["result"]
        kind = result.get("kind")
        if kind is None:  # 1.0: the frame names its event.
            ((name, result),) = result.items()
            kind = {
                "task": "task",
                "statusUpdate": "status-update",
                "artifactUpdate": "artifact-update",
            }.get(name, "message")
        task_id = result.get("id") if kind == "task" else result.get("taskId")
        summary.task_id = task_id or summary.task_id
        summary.context_id = result.get("contextId") or summary.context_id
        if kind == "artifact-update":
            summary.artifact_parts += result["artifact"].get("parts", [])
        elif kind in ("status-update", "task"):
            status = result["status"]
            state = _state(status["state"])
            summary.states.append(state)
            message_parts = (status.get("message") or {}).get("parts", [])
            if state == "working":
                summary.status_parts += message_parts
            elif state == "input-required":
                summary.pause_parts += message_parts
    return summary
