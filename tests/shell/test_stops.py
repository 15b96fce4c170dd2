"""A stop pressed as one turn ends and the thread's next begins stops only what it was for.

Platform behaviour the tests stand for: Slack stamps ``agent_session_stopped``
with its own clock (``event_ts``), while a turn's start is stamped by the
clock of the function that began it, which may be off by a fraction of a
second; the button shows until the ended turn's status reaches Slack. The
thread is Slack's (the stand-in), the store Firestore's emulator, and the
press reaches the ingress as Slack's callback.
"""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest

from shared import handlers, ingress, stops
from shared.core import notices
from shared.firestore import FirestoreDocuments
from shared.ports import Chat
from shared.store import Turn
from tests.a2a.agents import ScriptedAgent
from tests.shell.conftest import CHANNEL, Shell, signed_headers
from tests.shell.test_notices import Died, DyingChat, posts, shell_on


def a_second_turn_just_begun(shell: Shell, chat: DyingChat) -> Turn:
    """Alice's first turn answered; her next message in the thread begun, and still carried."""
    thread = shell.mention("check X")
    [first] = shell.turns.published
    assert handlers.turn_send(shell.deps, first) == "ack"
    shell.mention("and then Y", thread_ts=thread)
    second = shell.turns.published[-1]
    assert second["turn_id"] != first["turn_id"]
    chat.before = posts(notices.NO_OUTPUT)
    with pytest.raises(Died):  # begun (its start recorded), then its instance gone: still carried
        handlers.turn_send(shell.deps, second)
    turn = shell.deps.store.turn(second["turn_id"])
    assert turn is not None and turn.status == "running" and turn.started_at is not None
    return turn


def press_stop(shell: Shell, turn: Turn, after_start: timedelta) -> None:
    """Alice presses the thread's stop button, stamped by Slack ``after_start`` the turn's start.

    No stream of the app was streaming: Slack names none it stopped.
    """
    assert turn.started_at is not None
    event = {
        "type": "agent_session_stopped",
        "channel": CHANNEL,
        "user": "U0ALICE",
        "thread_ts": turn.thread_ts,
        "streaming_message_ts": [],
        "event_ts": f"{(turn.started_at + after_start).timestamp():.6f}",
    }
    envelope = {
        "type": "event_callback",
        "event_id": f"EvStop{turn.ts.replace('.', '')}",
        "team_id": "T0KOURIER",
        "event": event,
    }
    body = json.dumps(envelope).encode()
    assert ingress.handle_event(shell.deps, body, signed_headers(body)).status == 200


def stop_tasks(shell: Shell, turn: Turn) -> list[dict[str, Any]]:
    return [body for _, body, _ in shell.tasks.scheduled if body.get("turn_id") == turn.id]


def test_a_stop_pressed_as_the_next_turn_began_does_not_stop_it_and_says_so(
    firestore_documents: FirestoreDocuments, slack_chat: Chat, agent: ScriptedAgent, standin: Any
) -> None:
    """Seeds 9330 and 12419: the press came before the turn began, by a clock that says after."""
    chat = DyingChat(slack_chat)
    shell = shell_on(firestore_documents, chat, agent, standin)
    second = a_second_turn_just_begun(shell, chat)

    press_stop(shell, second, timedelta(seconds=0.1))

    turn = shell.deps.store.turn(second.id)
    assert turn is not None and turn.stop is None
    assert stop_tasks(shell, second) == []
    told = [e.text for e in standin.ephemerals(CHANNEL, "U0ALICE")]
    assert told == [notices.STOP_AS_TURN_BEGAN]


def test_a_stop_pressed_while_the_next_turn_runs_stops_it(
    firestore_documents: FirestoreDocuments, slack_chat: Chat, agent: ScriptedAgent, standin: Any
) -> None:
    chat = DyingChat(slack_chat)
    shell = shell_on(firestore_documents, chat, agent, standin)
    second = a_second_turn_just_begun(shell, chat)

    press_stop(shell, second, timedelta(seconds=2))

    turn = shell.deps.store.turn(second.id)
    assert turn is not None and turn.stopped_by == "U0ALICE"
    assert stop_tasks(shell, second) == [
        {"session_id": turn.session_id, "turn_id": turn.id, "stop": True}
    ]
    assert shell.tasks.names == {stops.stop_task_name(turn.id)}
    assert standin.ephemerals(CHANNEL, "U0ALICE") == []
