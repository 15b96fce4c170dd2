"""Text the agent sends that no store or chat can carry as it is.

Platform behaviour this stands for: an agent written in JavaScript slices
strings in UTF-16 code units, so a stream can cut an emoji between its two
halves and send each half alone, escaped (``"\\ud83d"``). Firestore, the
logs and Slack take only valid Unicode; a half kept as it is made the turn's
checkpoint fail, and the turn with it.
"""

from __future__ import annotations

from typing import Any

from shared import handlers
from shared.firestore import FirestoreDocuments
from shared.ports import Chat
from shared.store import TURNS
from tests.a2a.agents import Exchange, ScriptedAgent, artifact_update, result, status_update, task
from tests.shell.conftest import Shell, make_deps


def cuts_an_emoji_in_two(exchange: Exchange) -> None:
    """A 1.0 agent whose answer's emoji streams in two chunks, one half in each."""
    if exchange.rpc_method == "GetTask":  # the task as it keeps it: the emoji whole
        artifact = {"artifactId": "a1", "parts": [{"text": "All good \U0001f600 see you"}]}
        exchange.json(result(task(state="TASK_STATE_COMPLETED", artifacts=[artifact])))
        return
    assert exchange.rpc_method == "SendStreamingMessage", exchange.rpc_method
    exchange.sse(
        [
            result({"task": task(state="TASK_STATE_WORKING")}),
            result(artifact_update("All good \ud83d")),
            result(artifact_update("\ude00 see you", append=True)),
            result(status_update("TASK_STATE_COMPLETED")),
        ]
    )


def test_an_emoji_streamed_in_two_halves_ends_whole_and_the_turn_answers(
    firestore_documents: FirestoreDocuments, slack_chat: Chat, agent: ScriptedAgent, standin: Any
) -> None:
    agent.script = cuts_an_emoji_in_two
    deps, turns, tasks = make_deps(firestore_documents, slack_chat, agent)
    shell = Shell(deps, standin, agent, turns, tasks)
    thread = shell.mention("how is it going?")
    [published] = shell.turns.published

    assert handlers.turn_send(shell.deps, published) == "ack"

    # While it streamed, each half was read as U+FFFD; the task's own text is the answer.
    assert shell.bot_texts(thread) == ["All good \U0001f600 see you"]
    turn = firestore_documents.get(TURNS, published["turn_id"])
    assert turn is not None and turn.data["status"] == "done"
