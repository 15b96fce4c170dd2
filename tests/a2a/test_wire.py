"""Wire tolerance: the shapes real servers send, read into the one internal model."""

from __future__ import annotations

from typing import Any

import pytest

from shared.a2a import wire
from shared.core.model import (
    ArtifactUpdate,
    DataPart,
    FilePart,
    Message,
    OutgoingMessage,
    Role,
    StatusUpdate,
    Task,
    TaskState,
    TextPart,
)
from tests.a2a.agents import Exchange, ScriptedAgent, result
from tests.a2a.conftest import MakeClient, card_03

TURN = OutgoingMessage(message_id="m1", text="hello")


def test_a_10_stream_as_real_servers_send_it(agent: ScriptedAgent, make_client: MakeClient) -> None:
    def quirky(exchange: Exchange) -> None:
        exchange.start_stream()
        # An artifact update first, no task; append and lastChunk absent.
        exchange.event(
            result(
                {
                    "artifactUpdate": {
                        "taskId": "t1",
                        "contextId": "c1",
                        "artifact": {"artifactId": "a1", "parts": [{"text": "Hel"}]},
                    }
                }
            )
        )
        # A working status whose message has no parts key, no taskId, no contextId.
        exchange.event(
            result(
                {
                    "statusUpdate": {
                        "taskId": "t1",
                        "contextId": "c1",
                        "status": {
                            "state": "TASK_STATE_WORKING",
                            "message": {"messageId": "s1", "role": "ROLE_AGENT"},
                            "timestamp": "2026-11-30T05:00:00.5+00:00",
                        },
                    }
                }
            )
        )
        # A tool result whose numbers came back as doubles.
        exchange.event(
            result(
                {
                    "statusUpdate": {
                        "taskId": "t1",
                        "contextId": "c1",
                        "status": {
                            "state": "TASK_STATE_WORKING",
                            "timestamp": "2026-11-30T05:00:00.500000Z",
                            "message": {
                                "role": "ROLE_AGENT",
                                "parts": [
                                    {
                                        "data": {"words": 4.0, "ratio": 0.5, "items": [1.0, 2.0]},
                                        "metadata": {"adk_type": "function_response"},
                                    }
                                ],
                            },
                        },
                    }
                }
            )
        )
        exchange.event(
            result(
                {
                    "artifactUpdate": {
                        "taskId": "t1",
                        "contextId": "c1",
                        "append": True,
                        "lastChunk": True,
                        "artifact": {
                            "artifactId": "a1",
                            "parts": [
                                {"text": "lo"},
                                {"url": "https://x/f.png", "mediaType": "image/png"},
                            ],
                        },
                    }
                }
            )
        )
        exchange.event(
            result(
                {
                    "statusUpdate": {
                        "taskId": "t1",
                        "contextId": "c1",
                        "status": {"state": "TASK_STATE_COMPLETED"},
                    }
                }
            )
        )
        exchange.end()

    agent.script = quirky

    first, working, tool, chunk, done = list(make_client(agent.url).send(TURN))

    assert isinstance(first, ArtifactUpdate)
    assert first.append is False and first.last_chunk is None
    assert first.artifact.parts == (TextPart("Hel"),)
    assert isinstance(working, StatusUpdate) and working.final is None
    assert working.status.message == Message(role=Role.AGENT, message_id="s1")
    assert isinstance(tool, StatusUpdate)
    assert working.status.timestamp == tool.status.timestamp == "2026-11-30T05:00:00.500000Z"
    assert tool.status.message is not None
    [data] = tool.status.message.parts
    assert isinstance(data, DataPart)
    assert data.data == {"words": 4, "ratio": 0.5, "items": [1, 2]}
    assert type(data.data["words"]) is int
    assert isinstance(chunk, ArtifactUpdate) and chunk.append and chunk.last_chunk
    assert chunk.artifact.parts == (TextPart("lo"), FilePart())
    assert isinstance(done, StatusUpdate) and done.status.state == TaskState.COMPLETED


def test_a_03_stream_as_kagent_sends_it(agent: ScriptedAgent, make_client: MakeClient) -> None:
    agent.card = card_03(agent.url)

    def kagent_like(exchange: Exchange) -> None:
        user = exchange.params["message"]
        exchange.sse(
            [
                result(
                    {
                        "kind": "status-update",
                        "taskId": "t1",
                        "contextId": "c1",
                        "final": False,
                        "status": {
                            "state": "submitted",
                            "message": user,
                            "timestamp": "2026-11-30T05:00:00+00:00",
                        },
                    }
                ),
                result(
                    {
                        "kind": "status-update",
                        "taskId": "t1",
                        "contextId": "c1",
                        "final": False,
                        "status": {
                            "state": "working",
                            "message": {
                                "kind": "message",
                                "role": "agent",
                                "messageId": "x",
                                "parts": [
                                    {
                                        "kind": "data",
                                        "data": {"name": "count_words", "args": {"text": "hi"}},
                                        "metadata": {"kagent_type": "function_call"},
                                    },
                                    {"kind": "file", "file": {"uri": "https://x"}},
                                ],
                            },
                        },
                    }
                ),
                result(
                    {
                        "kind": "artifact-update",
                        "taskId": "t1",
                        "contextId": "c1",
                        "append": False,
                        "lastChunk": True,
                        "artifact": {
                            "artifactId": "a1",
                            "parts": [{"kind": "text", "text": "Done."}],
                        },
                    }
                ),
                result(
                    {
                        "kind": "status-update",
                        "taskId": "t1",
                        "contextId": "c1",
                        "final": True,
                        "status": {"state": "completed"},
                    }
                ),
            ]
        )

    agent.script = kagent_like

    submitted, working, artifact, completed = list(make_client(agent.url).send(TURN))

    assert isinstance(submitted, StatusUpdate) and submitted.status.state == TaskState.SUBMITTED
    assert submitted.status.message is not None
    assert submitted.status.message.role == Role.USER
    assert submitted.status.message.text == "hello"
    assert submitted.status.timestamp == "2026-11-30T05:00:00Z"
    assert submitted.final is False
    assert isinstance(working, StatusUpdate) and working.status.message is not None
    call, file = working.status.message.parts
    assert isinstance(call, DataPart) and call.metadata == {"kagent_type": "function_call"}
    assert isinstance(file, FilePart)
    assert isinstance(artifact, ArtifactUpdate) and artifact.artifact.parts == (TextPart("Done."),)
    assert isinstance(completed, StatusUpdate) and completed.final is True


def test_a_message_reply_is_read_in_both_spellings() -> None:
    v10 = wire.event_from_json(
        {
            "message": {
                "messageId": "r1",
                "role": "ROLE_AGENT",
                "contextId": "c9",
                "parts": [{"text": "hi"}],
            }
        }
    )
    v03 = wire.event_from_json(
        {
            "kind": "message",
            "messageId": "r1",
            "role": "agent",
            "contextId": "c9",
            "parts": [{"kind": "text", "text": "hi"}],
        }
    )

    assert (
        v10
        == v03
        == Message(role=Role.AGENT, parts=(TextPart("hi"),), message_id="r1", context_id="c9")
    )


@pytest.mark.parametrize("role", [None, "", "ROLE_UNSPECIFIED", "system", "tool", 7], ids=repr)
def test_a_message_without_an_agent_or_user_role_is_not_read_as_the_agents(role: Any) -> None:
    v10: dict[str, Any] = {"messageId": "r1", "parts": [{"text": "hi"}]}
    v03: dict[str, Any] = {
        "kind": "message",
        "messageId": "r1",
        "parts": [{"kind": "text", "text": "hi"}],
    }
    if role is not None:
        v10["role"] = v03["role"] = role
    for event in (wire.event_from_json({"message": v10}), wire.event_from_json(v03)):
        assert isinstance(event, Message) and event.role is Role.UNSPECIFIED


def test_roles_are_read_in_both_spellings() -> None:
    for spelled, role in (
        ("ROLE_AGENT", Role.AGENT),
        ("agent", Role.AGENT),
        (" Role_User ", Role.USER),
        ("user", Role.USER),
    ):
        message = wire.message_from_json({"role": spelled, "parts": []})
        assert message is not None and message.role is role


def test_a_task_is_read_in_both_spellings() -> None:
    v10 = wire.event_from_json(
        {
            "task": {
                "id": "t1",
                "contextId": "c1",
                "status": {"state": "TASK_STATE_INPUT_REQUIRED"},
                "history": [{"role": "ROLE_USER", "messageId": "m1", "parts": [{"text": "q"}]}],
                "artifacts": [{"artifactId": "a", "parts": [{"text": "x"}]}],
            }
        }
    )
    v03 = wire.task_from_json(
        {
            "kind": "task",
            "id": "t1",
            "contextId": "c1",
            "status": {"state": "input-required"},
            "history": [
                {
                    "kind": "message",
                    "role": "user",
                    "messageId": "m1",
                    "parts": [{"kind": "text", "text": "q"}],
                }
            ],
            "artifacts": [{"artifactId": "a", "parts": [{"kind": "text", "text": "x"}]}],
        }
    )

    assert isinstance(v10, Task) and v10 == v03
    assert v10.status.state == TaskState.INPUT_REQUIRED
    assert v10.history[0].role == Role.USER


@pytest.mark.parametrize(
    ("spelled", "state"),
    [
        ("TASK_STATE_SUBMITTED", TaskState.SUBMITTED),
        ("TASK_STATE_WORKING", TaskState.WORKING),
        ("TASK_STATE_INPUT_REQUIRED", TaskState.INPUT_REQUIRED),
        ("TASK_STATE_AUTH_REQUIRED", TaskState.AUTH_REQUIRED),
        ("TASK_STATE_COMPLETED", TaskState.COMPLETED),
        ("TASK_STATE_FAILED", TaskState.FAILED),
        ("TASK_STATE_REJECTED", TaskState.REJECTED),
        ("TASK_STATE_CANCELED", TaskState.CANCELED),
        ("input-required", TaskState.INPUT_REQUIRED),
        ("auth-required", TaskState.AUTH_REQUIRED),
        ("canceled", TaskState.CANCELED),
        ("cancelled", TaskState.CANCELED),
        ("TASK_STATE_UNSPECIFIED", TaskState.UNKNOWN),
        ("unknown", TaskState.UNKNOWN),
        ("paused-for-lunch", TaskState.UNKNOWN),
        (None, TaskState.UNKNOWN),
    ],
)
def test_states_in_every_spelling(spelled: str | None, state: TaskState) -> None:
    assert wire.state_from_json(spelled) == state


def test_what_is_sent_for_each_version() -> None:
    answer = OutgoingMessage(message_id="m2", text="yes", context_id="c1", task_id="t1")

    assert wire.send_params(answer, "1.0") == {
        "message": {
            "messageId": "m2",
            "role": "ROLE_USER",
            "parts": [{"text": "yes"}],
            "contextId": "c1",
            "taskId": "t1",
        }
    }
    assert wire.send_params(answer, "0.3") == {
        "message": {
            "messageId": "m2",
            "kind": "message",
            "role": "user",
            "parts": [{"kind": "text", "text": "yes"}],
            "contextId": "c1",
            "taskId": "t1",
        }
    }


def test_unreadable_results_are_none() -> None:
    assert wire.event_from_json("text") is None
    assert wire.event_from_json({"kind": "artifact-update", "taskId": "t1"}) is None
    assert wire.task_from_json({"id": "t1"}) is None
    tasks, token = wire.list_page_from_json(
        {"tasks": [{"id": "t1", "status": {"state": "completed"}}, 3], "nextPageToken": ""}
    )
    assert [(t.id, t.status.state) for t in tasks] == [("t1", TaskState.COMPLETED)]
    assert token is None


@pytest.mark.parametrize("raw", [True, False])
def test_a_lone_surrogate_is_read_as_the_replacement_character(raw: bool) -> None:
    # An agent that cuts a string between an emoji's two UTF-16 halves sends each half alone
    # (JSON.stringify escapes them); neither Firestore, the logs nor Slack can carry one.
    text = '{"parts": [{"text": "Hello \\ud83d"}, {"text": "\\uDE00 world \\ud83d\\ude00"}]}'
    read = wire.loads(text.encode() if raw else text)
    assert read == {"parts": [{"text": "Hello \ufffd"}, {"text": "\ufffd world \U0001f600"}]}
