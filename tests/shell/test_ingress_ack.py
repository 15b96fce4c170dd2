"""What chat_ingress does before Slack gets its 200: the least that keeps the promise.

A signed ``app_mention`` that starts a thread is stored with one Firestore
commit (the turn and the event mark together, no read first) and handed
off with one publish, with no Slack call. The promise still holds: the
``message`` twin adds nothing, a Slack retry adds no second turn, and a
retry after a failed hand-off hands the turn off again.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

import pytest

from local.slack_standin import SlackStandin
from shared import ingress
from shared.firestore import FirestoreDocuments
from shared.handoff import HandoffUnavailable
from shared.ports import Chat, Snapshot, Write
from shared.store import EVENTS, TURNS
from tests.a2a.agents import ScriptedAgent
from tests.shell.conftest import CHANNEL, RecordedTurns, make_deps, signed_headers


@dataclass
class CountedDocuments:
    """The emulator's documents, with every call the ingress makes written down."""

    documents: FirestoreDocuments
    calls: list[tuple[str, Any]] = field(default_factory=list)

    def get(self, collection: str, key: str) -> Snapshot | None:
        self.calls.append(("get", (collection, key)))
        return self.documents.get(collection, key)

    def create(self, collection: str, key: str, data: Mapping[str, Any]) -> None:
        self.calls.append(("create", (collection, key)))
        self.documents.create(collection, key, data)

    def set(self, collection: str, key: str, data: Mapping[str, Any]) -> None:
        self.calls.append(("set", (collection, key)))
        self.documents.set(collection, key, data)

    def update(
        self,
        collection: str,
        key: str,
        data: Mapping[str, Any],
        *,
        if_updated_at: datetime | None = None,
    ) -> datetime:
        self.calls.append(("update", (collection, key)))
        return self.documents.update(collection, key, data, if_updated_at=if_updated_at)

    def commit(self, writes: Sequence[Write]) -> list[datetime]:
        self.calls.append(("commit", [(type(w).__name__, w.collection, w.key) for w in writes]))
        return self.documents.commit(writes)

    def query(
        self, collection: str, field: str, op: Any, value: Any, *, limit: int | None = None
    ) -> list[dict[str, Any]]:
        self.calls.append(("query", (collection, field)))
        return self.documents.query(collection, field, op, value, limit=limit)


class FailingOnce(RecordedTurns):
    """The turns topic, unavailable for the first publish."""

    def publish_turn(self, session_id: str, turn_id: str) -> None:
        if not getattr(self, "failed", False):
            self.failed = True
            raise HandoffUnavailable("publish: ServiceUnavailable (injected)")
        super().publish_turn(session_id, turn_id)


def mention_event(
    standin: SlackStandin, bot: str, event_id: str, kind: str = "app_mention"
) -> tuple[bytes, str]:
    """A person's new message mentioning the bot, as Slack's signed callback body."""
    ts = standin.say(CHANNEL, "what is our error budget?").ts
    return callback(bot, event_id, ts, kind), ts


def callback(bot: str, event_id: str, ts: str, kind: str = "app_mention") -> bytes:
    event = {
        "type": kind,
        "user": "U0ALICE",
        "channel": CHANNEL,
        "ts": ts,
        "text": f"<@{bot}> what is our error budget?",
    }
    envelope = {
        "type": "event_callback",
        "event_id": event_id,
        "team_id": "T0KOURIER",
        "event": event,
    }
    return json.dumps(envelope).encode()


@pytest.fixture
def counted(firestore_documents: FirestoreDocuments) -> CountedDocuments:
    return CountedDocuments(firestore_documents)


def test_a_mention_is_acknowledged_with_one_commit_one_publish_and_no_slack_call(
    counted: CountedDocuments, slack_chat: Chat, agent: ScriptedAgent, standin: SlackStandin
) -> None:
    deps, turns, _ = make_deps(counted, slack_chat, agent)
    bot = deps.bot_user_id  # asked once per process, before any callback
    body, ts = mention_event(standin, bot, "EvAck1")
    slack_calls = len(standin.calls())

    reply = ingress.handle_event(deps, body, signed_headers(body))

    assert reply.status == 200
    turn_id = f"{CHANNEL}-{ts}"
    assert counted.calls == [
        ("commit", [("Create", EVENTS, "EvAck1"), ("Create", TURNS, turn_id)]),
    ]
    assert turns.published == [
        {"session_id": f"shell-{CHANNEL}-{ts}", "turn_id": turn_id},
    ]
    assert len(standin.calls()) == slack_calls
    stored = deps.store.turn(turn_id)
    assert stored is not None and stored.text == "what is our error budget?"


def test_the_twin_and_a_retry_of_a_handed_off_event_add_nothing(
    counted: CountedDocuments, slack_chat: Chat, agent: ScriptedAgent, standin: SlackStandin
) -> None:
    deps, turns, _ = make_deps(counted, slack_chat, agent)
    bot = deps.bot_user_id
    body, ts = mention_event(standin, bot, "EvAck2")
    assert ingress.handle_event(deps, body, signed_headers(body)).status == 200
    twin = callback(bot, "EvAck2twin", ts, kind="message")
    assert ingress.handle_event(deps, twin, signed_headers(twin)).status == 200
    deps.store.set_turn(f"{CHANNEL}-{ts}", status="running")  # turn_send claimed it

    assert ingress.handle_event(deps, body, signed_headers(body)).status == 200

    assert len(turns.published) == 1
    writes = [call for call in counted.calls if call[0] in ("commit", "create", "set", "update")]
    assert [call[0] for call in writes] == ["commit", "commit", "update", "commit"]


def test_a_retry_after_a_failed_hand_off_hands_the_turn_off_again(
    firestore_documents: FirestoreDocuments,
    slack_chat: Chat,
    agent: ScriptedAgent,
    standin: SlackStandin,
) -> None:
    turns = FailingOnce()
    deps = replace(make_deps(firestore_documents, slack_chat, agent)[0], turns=turns)
    body, ts = mention_event(standin, deps.bot_user_id, "EvAck3")
    with pytest.raises(HandoffUnavailable):  # chat_ingress answers 500: Slack retries
        ingress.handle_event(deps, body, signed_headers(body))
    assert turns.published == []

    assert ingress.handle_event(deps, body, signed_headers(body)).status == 200

    assert turns.published == [
        {"session_id": f"shell-{CHANNEL}-{ts}", "turn_id": f"{CHANNEL}-{ts}"},
    ]
