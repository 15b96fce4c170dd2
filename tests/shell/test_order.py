"""Two messages of a thread stored at once reach the agent in Slack order.

Platform behaviour this stands for: Slack delivers the events of two
messages written moments apart to two chat_ingress instances at once, and
Pub/Sub delivers the later one's trigger to turn_send while the earlier one's
ingress is still storing its turn. turn_send's claim reads the session, then
the waiting turns, then writes the session under a precondition; the
earlier message's commit can land after the read of the waiting turns, and
the session may not exist yet (the thread's first messages: seed 1674).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from shared import handlers
from shared.firestore import FirestoreDocuments
from shared.ports import Chat, QueryOp
from shared.store import TURNS
from tests.a2a.agents import ScriptedAgent
from tests.shell.conftest import Shell, make_deps
from tests.shell.test_retries import answers_hello


class BetweenClaimReadAndWrite:
    """Firestore, where ``meanwhile`` runs once, right after a claim read the waiting turns."""

    def __init__(self, documents: FirestoreDocuments) -> None:
        self._documents = documents
        self.meanwhile: Callable[[], None] | None = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._documents, name)

    def query(
        self, collection: str, field: str, op: QueryOp, value: Any, *, limit: int | None = None
    ) -> list[dict[str, Any]]:
        found = self._documents.query(collection, field, op, value, limit=limit)
        if collection == TURNS and field == "session_id" and self.meanwhile is not None:
            meanwhile, self.meanwhile = self.meanwhile, None
            meanwhile()
        return found


def texts_sent(agent: ScriptedAgent) -> list[str]:
    """The text of each message the agent was sent, in order."""
    return [
        post.body["params"]["message"]["parts"][0]["text"]
        for post in agent.posts()
        if post.body.get("method") == "SendStreamingMessage"
    ]


def test_an_earlier_message_stored_while_a_later_one_is_claimed_goes_first(
    firestore_documents: FirestoreDocuments, slack_chat: Chat, agent: ScriptedAgent, standin: Any
) -> None:
    documents = BetweenClaimReadAndWrite(firestore_documents)
    agent.script = answers_hello
    deps, turns, tasks = make_deps(documents, slack_chat, agent)
    shell = Shell(deps, standin, agent, turns, tasks)
    thread = shell.mention("first")
    assert handlers.turn_send(deps, turns.published[-1]) == "ack"
    earlier = shell.write("second", thread)
    later = shell.write("third", thread)
    shell.deliver("third", later, thread)
    trigger = turns.published[-1]
    documents.meanwhile = lambda: shell.deliver("second", earlier, thread)

    assert handlers.turn_send(deps, trigger) == "ack"
    assert handlers.turn_send(deps, turns.published[-1]) == "ack"

    sent = texts_sent(agent)
    assert [text.splitlines()[-1] for text in sent] == ["first", "second", "third"], sent
