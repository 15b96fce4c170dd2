"""The client against google-adk's A2A server (1.0) and kagent-adk (0.3), each its own process.

The peers run a scripted model (tests/peers/scripted_agents.py): a turn calls
one tool and answers at once, and the "-confirm" peers pause for approval
(input-required) before the tool runs, which gives a task that is still open
to subscribe to and cancel. Where the SDKs answer a call in their own way,
the test says which error the client reports for it.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import ExitStack

import pytest

from shared.a2a.errors import NotSent, SessionGone
from shared.core.model import (
    ArtifactUpdate,
    OutgoingMessage,
    StatusUpdate,
    StreamEvent,
    Task,
    TaskState,
    TextPart,
)
from tests.a2a.agents import free_port
from tests.a2a.conftest import MakeClient
from tests.peers.launch import PeerKind, running_peer

PeerUrl = Callable[[PeerKind], str]


@pytest.fixture(scope="module")
def peer_url() -> Iterator[PeerUrl]:
    """Starts each peer on first use, once per module; gives its URL."""
    urls: dict[PeerKind, str] = {}
    with ExitStack() as stack:

        def url_of(kind: PeerKind) -> str:
            if kind not in urls:
                urls[kind] = stack.enter_context(running_peer(kind, free_port()))
            return urls[kind]

        yield url_of


def _turn(text: str = "count these four words", context_id: str | None = None) -> OutgoingMessage:
    return OutgoingMessage(message_id=f"m-{uuid.uuid4().hex}", text=text, context_id=context_id)


def _task_of(events: list[StreamEvent]) -> tuple[str, str]:
    for event in events:
        task_id = event.id if isinstance(event, Task) else getattr(event, "task_id", None)
        if task_id and event.context_id:
            return task_id, event.context_id
    raise AssertionError(f"no task named in {events}")


def _final_state(events: list[StreamEvent]) -> TaskState:
    states = [e.status.state for e in events if isinstance(e, (Task, StatusUpdate))]
    return states[-1]


def _artifact_text(events: list[StreamEvent]) -> str:
    return "".join(
        p.text
        for e in events
        if isinstance(e, ArtifactUpdate)
        for p in e.artifact.parts
        if isinstance(p, TextPart)
    )


@pytest.mark.parametrize(("kind", "version"), [("adk", "1.0"), ("kagent", "0.3")])
def test_streamed_send_then_get_task(
    peer_url: PeerUrl, make_client: MakeClient, kind: PeerKind, version: str
) -> None:
    client = make_client(peer_url(kind))
    message = _turn()

    events = list(client.send(message))

    assert client.protocol_version == version
    assert _final_state(events) == TaskState.COMPLETED
    assert 'The count_words tool answered {"words": 4}. Done.' in _artifact_text(events)
    task_id, context_id = _task_of(events)
    task = client.get_task(task_id)
    assert task.status.state == TaskState.COMPLETED
    assert task.context_id == context_id
    assert message.message_id in [m.message_id for m in task.history]


@pytest.mark.parametrize(("kind", "code"), [("adk", -32004), ("kagent", -32602)])
def test_subscribe_to_a_finished_task_is_refused(
    peer_url: PeerUrl, make_client: MakeClient, kind: PeerKind, code: int
) -> None:
    """Neither SDK replays a finished task: a2a-sdk 1.x says -32004, 0.3.26 says -32602."""
    client = make_client(peer_url(kind))
    task_id, _ = _task_of(list(client.send(_turn())))

    with pytest.raises(NotSent) as raised:
        list(client.subscribe(task_id))

    assert raised.value.rpc_code == code


def test_adk_subscribe_to_a_paused_task_starts_with_its_snapshot(
    peer_url: PeerUrl, make_client: MakeClient
) -> None:
    client = make_client(peer_url("adk-confirm"))
    events = list(client.send(_turn("publish this note")))
    assert _final_state(events) == TaskState.INPUT_REQUIRED
    task_id, _ = _task_of(events)

    followed = list(client.subscribe(task_id, until=time.monotonic() + 2))

    assert isinstance(followed[0], Task)
    assert followed[0].id == task_id and followed[0].status.state == TaskState.INPUT_REQUIRED


def test_kagent_subscribe_to_a_paused_task_is_session_gone(
    peer_url: PeerUrl, make_client: MakeClient
) -> None:
    """a2a-sdk 0.3.26 answers -32001 when no stream of the task is live, though the task exists."""
    client = make_client(peer_url("kagent-confirm"))
    events = list(client.send(_turn("publish this note")))
    assert _final_state(events) == TaskState.INPUT_REQUIRED

    with pytest.raises(SessionGone):
        list(client.subscribe(_task_of(events)[0]))


def test_adk_cancel_of_a_paused_task(peer_url: PeerUrl, make_client: MakeClient) -> None:
    client = make_client(peer_url("adk-confirm"))
    task_id, _ = _task_of(list(client.send(_turn("publish this note"))))

    canceled = client.cancel(task_id)

    assert canceled.status.state == TaskState.CANCELED
    assert client.get_task(task_id).status.state == TaskState.CANCELED


def test_kagent_cancel_is_not_supported(peer_url: PeerUrl, make_client: MakeClient) -> None:
    """kagent-adk refuses every cancel with -32603; the task keeps its state."""
    client = make_client(peer_url("kagent-confirm"))
    task_id, _ = _task_of(list(client.send(_turn("publish this note"))))

    with pytest.raises(NotSent) as raised:
        client.cancel(task_id)

    assert raised.value.rpc_code == -32603
    assert client.get_task(task_id).status.state == TaskState.INPUT_REQUIRED


def test_adk_list_tasks_follows_pages(peer_url: PeerUrl, make_client: MakeClient) -> None:
    client = make_client(peer_url("adk"), list_page_size=2)
    first = _turn()
    task_id, context_id = _task_of(list(client.send(first)))
    later = [_turn(context_id=context_id) for _ in range(2)]
    task_ids = [task_id] + [_task_of(list(client.send(m)))[0] for m in later]

    listed = client.list_tasks(context_id)

    assert listed.complete and sorted(t.id for t in listed.tasks) == sorted(task_ids)
    found = client.task_holding_message(context_id, later[1].message_id)
    assert found is not None and found.id == task_ids[2]


def test_kagent_is_never_asked_for_list_tasks(peer_url: PeerUrl, make_client: MakeClient) -> None:
    assert make_client(peer_url("kagent")).supports_list_tasks is False
