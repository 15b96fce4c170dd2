"""Checkpoints: any answer's checkpoint is stored in documents Firestore accepts, and read back whole.

Platform behaviour this stands for: Firestore refuses a document over 1 MiB.
A checkpoint holds the answer several times over (the agent's text, the
reply's Slack Markdown, each message's text), so a long answer or thousands
of tool calls outgrow one document; the write must not fail for ever.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Callable
from typing import Any

import pytest
from google.cloud import firestore

from local.emulators import EmulatorEnv
from shared import handlers
from shared.checkpoint import (
    CHECKPOINTS,
    INLINE_CHARS,
    PART_BYTES,
    Checkpoint,
    CheckpointStore,
    Stored,
)
from shared.core.reply import ReplyAssembler
from shared.core.turn_machine import TurnState
from shared.firestore import FirestoreDocuments
from shared.ports import Chat
from shared.slack.pacing import ReplyLimits
from shared.slack.reply import ThreadReply
from shared.slack.session_status import AgentSessions, ThreadStatus
from shared.store import TURNS
from shared.system import SystemClock, ThreadRuntime
from tests.a2a.agents import Exchange, ScriptedAgent, artifact_update, status_update, task
from tests.a2a.agents import result as rpc_result
from tests.core.reply_builders import call, chunk, result, text
from tests.shell.conftest import CHANNEL, Shell, make_deps
from tests.shell.test_notices import Died, DyingChat, lease_runs_out

ANSWER_BYTES = 1_000_000
TOOL_CALLS = 2_000


class MemorySlack:
    """Takes every Web API call and answers with a new ts (nothing is shown)."""

    def __init__(self) -> None:
        self._ts = itertools.count(1)

    def _answer(self, **_: Any) -> dict[str, Any]:
        return {"ok": True, "ts": f"1700000000.{next(self._ts):06d}"}

    chat_postMessage = chat_update = chat_startStream = chat_appendStream = _answer
    chat_stopStream = assistant_threads_setStatus = chat_postEphemeral = _answer
    agents_sessions_setStatus = agents_sessions_rename = _answer


def checkpoint_of_a_long_answer() -> Checkpoint:
    """The checkpoint of a turn whose agent wrote 1 MB and made 2,000 tool calls."""
    assembler = ReplyAssembler()
    reply = ThreadReply(
        MemorySlack(),  # type: ignore[arg-type]
        "C0SHELL0001",
        "1700000000.000000",
        "U0ALICE",
        "T0KOURIER",
        clock=SystemClock(),
        runtime=ThreadRuntime(),
        status=ThreadStatus(
            MemorySlack(),  # type: ignore[arg-type]
            "C0SHELL0001",
            "1700000000.000000",
            AgentSessions(),
        ),
        limits=ReplyLimits(stream_interval=0.0, update_interval=0.0),
    )
    text_per_call = ANSWER_BYTES // TOOL_CALLS
    for index in range(TOOL_CALLS):
        call_id = f"call-{index}"
        words = "".join(
            hashlib.sha256(f"{call_id}-{k}".encode()).hexdigest()
            for k in range(text_per_call // 64 + 1)
        )
        events = [
            chunk("answer", text(words[:text_per_call] + "\n"), append=index > 0),
            chunk("answer", call(call_id, "search", {"q": f"query {index}"}), append=True),
            chunk("answer", result(call_id, "search", {"found": "x" * 150}), append=True),
        ]
        for event in events:
            reply.show(assembler.feed(event))
    reply.suspend()
    return Checkpoint(
        machine=TurnState(started_at=1700000000.0, has_context=True).to_dict(),
        reply=assembler.to_state(),
        slack=reply.to_state(),
        snapshot="working|2026-12-01|1|6000|0",
    )


def test_a_checkpoint_of_a_1_mb_answer_and_2000_tool_calls_fits_and_reads_back(
    emulators: EmulatorEnv,
) -> None:
    checkpoint = checkpoint_of_a_long_answer()
    assert len(checkpoint.to_json()) > 3 * 1024 * 1024  # today it went inline: 3 MiB
    db = firestore.Client(project=emulators.project)
    documents = FirestoreDocuments(db)
    store = CheckpointStore(documents, SystemClock())
    turn_id = f"C0SHELL0001-{id(checkpoint)}.000001"

    first = store.save(turn_id, 7, checkpoint, last=None)
    second = store.save(turn_id, 7, checkpoint, last=first)
    documents.set(TURNS, turn_id, second.fields())  # the turn points at the second

    assert first.checkpoint is None and first.checkpoint_parts is not None
    assert second.checkpoint_parts is not None
    assert first.checkpoint_parts["slot"] != second.checkpoint_parts["slot"]
    parts = [
        snapshot.to_dict() or {}
        for snapshot in db.collection(CHECKPOINTS).stream()
        if snapshot.id.startswith(turn_id)
    ]
    assert parts and all(len(part["data"]) <= PART_BYTES for part in parts)
    read = documents.get(TURNS, turn_id)
    assert read is not None
    pointer = Stored(read.data["checkpoint"], read.data["checkpoint_parts"])
    assert store.load(turn_id, pointer) == checkpoint


def test_a_small_checkpoint_stays_on_the_turn_and_one_of_the_previous_release_reads(
    emulators: EmulatorEnv,
) -> None:
    store = CheckpointStore(
        FirestoreDocuments(firestore.Client(project=emulators.project)), SystemClock()
    )
    checkpoint = Checkpoint(machine={"phase": "follow"}, reply={"a": 1}, slack={"b": 2})
    stored = store.save("turn-small", 1, checkpoint, last=None)

    assert stored.checkpoint_parts is None
    assert stored.checkpoint is not None and len(stored.checkpoint) <= INLINE_CHARS
    assert store.load("turn-small", stored) == checkpoint
    previous_release = json.dumps(  # version 0: no version, two keys nobody read
        {
            "machine": {"phase": "follow"},
            "reply": {"a": 1},
            "slack": {"b": 2},
            "snapshot": None,
            "observed_at": 1700000000.0,
            "caught_up": True,
            "answering": None,
        }
    )
    assert Checkpoint.from_json(previous_release) == checkpoint


def two_halves() -> Callable[[Exchange], None]:
    """A 1.0 agent whose task writes a first half, works on, then writes the second and completes.

    The send's stream carries the first half and then stays silent (the
    function hands over at its deadline); GetTask shows the task as it
    stands, and SubscribeToTask carries the rest.
    """
    first = {"artifactId": "a1", "parts": [{"text": "first half. "}]}
    whole = {"artifactId": "a1", "parts": [{"text": "first half. second half."}]}
    done: list[bool] = []

    def answer(exchange: Exchange) -> None:
        match exchange.rpc_method:
            case "SendStreamingMessage":
                exchange.start_stream()
                exchange.event(rpc_result({"task": task(state="TASK_STATE_WORKING")}))
                exchange.event(rpc_result(artifact_update("first half. ")))
                exchange.hang()
            case "GetTask" if done:
                exchange.json(rpc_result(task(state="TASK_STATE_COMPLETED", artifacts=[whole])))
            case "GetTask":
                exchange.json(rpc_result(task(state="TASK_STATE_WORKING", artifacts=[first])))
            case "SubscribeToTask":
                done.append(True)
                exchange.sse(
                    [
                        rpc_result({"task": task(state="TASK_STATE_WORKING", artifacts=[first])}),
                        rpc_result(artifact_update("second half.", append=True)),
                        rpc_result(status_update("TASK_STATE_COMPLETED")),
                    ]
                )
            case _:
                exchange.status(404)

    return answer


def test_a_turn_handed_over_by_the_previous_release_resumes_and_shows_each_part_once(
    firestore_documents: FirestoreDocuments, slack_chat: Chat, agent: ScriptedAgent, standin: Any
) -> None:
    # A deploy in the middle of a long stream: the function that handed the
    # turn over ran the previous release, whose checkpoint had no version.
    deps, turns, tasks = make_deps(
        firestore_documents, slack_chat, agent, KOURIER_FOLLOW_BUDGET_SECONDS=2
    )
    agent.script = two_halves()
    shell = Shell(deps, standin, agent, turns, tasks)
    thread = shell.mention("check X")
    [published] = shell.turns.published
    assert handlers.turn_send(deps, published) == "ack"
    [(target, body, _)] = shell.tasks.scheduled
    assert target == "stream_follow"
    handed_over = deps.store.turn(published["turn_id"])
    assert handed_over is not None and handed_over.checkpoint is not None
    current = json.loads(handed_over.checkpoint)
    previous_release = {
        **{key: value for key, value in current.items() if key != "version"},
        "observed_at": 1700000000.0,
        "caught_up": True,
    }
    firestore_documents.update(
        TURNS, published["turn_id"], {"checkpoint": json.dumps(previous_release)}
    )

    assert handlers.stream_follow(deps, body) == "ack"

    assert shell.bot_texts(thread) == ["first half. second half."]
    done = deps.store.turn(published["turn_id"])
    assert done is not None and (done.status, done.outcome) == ("done", "completed")


def takes_its_first_text_back_while_no_one_follows(exchange: Exchange) -> None:
    """A 1.0 agent whose send names its task with text, then (its stream dropped) takes that
    text back and answers in another artifact."""
    if exchange.rpc_method == "GetTask":
        artifacts = [
            {"artifactId": "a1", "parts": [{"text": ""}]},
            {"artifactId": "a2", "parts": [{"text": "whiskey tango"}]},
        ]
        exchange.json(rpc_result(task(state="TASK_STATE_COMPLETED", artifacts=artifacts)))
        return
    assert exchange.rpc_method == "SendStreamingMessage", exchange.rpc_method
    named = task(
        state="TASK_STATE_WORKING", artifacts=[{"artifactId": "a1", "parts": [{"text": "oscar"}]}]
    )
    exchange.sse([rpc_result({"task": named})])


def test_the_text_of_the_event_naming_the_task_shows_after_its_function_dies_at_once(
    firestore_documents: FirestoreDocuments, slack_chat: Chat, agent: ScriptedAgent, standin: Any
) -> None:
    # Seed 6649: the event that names the task is checkpointed before any call that can
    # fail, and its function dies at the first Slack call that would show its text. The
    # checkpoint was written after the event: the turn received that text, so the agent's
    # take-back, made while no one followed the stream, is not applied (contract, Replies:
    # a snapshot whose text is a prefix of the text received is taken as older). The
    # function taking over shows the text, as one whose stream merely dropped would.
    chat = DyingChat(slack_chat)
    chat.before = lambda method, args: method == "chat_startStream"
    deps, turns, tasks = make_deps(firestore_documents, chat, agent)  # type: ignore[arg-type]
    agent.script = takes_its_first_text_back_while_no_one_follows
    shell = Shell(deps, standin, agent, turns, tasks)
    thread = shell.mention("check X")
    [published] = shell.turns.published
    with pytest.raises(Died):
        handlers.turn_send(deps, published)
    assert shell.bot_texts(thread) == []
    lease_runs_out(shell, published["session_id"])

    assert handlers.turn_send(deps, published) == "ack"

    assert shell.bot_texts(thread) == ["oscar\n\nwhiskey tango"]


class DiesOnceStreamRecorded:
    """Firestore, with the instance killed right after the turn records a stream it started."""

    def __init__(self, documents: FirestoreDocuments) -> None:
        self._documents = documents
        self.armed = True

    def __getattr__(self, method: str) -> Any:
        call = getattr(self._documents, method)

        def called(*args: Any, **kwargs: Any) -> Any:
            answer = call(*args, **kwargs)
            if self.armed and "'started_streams': ['" in repr((args, kwargs)):
                self.armed = False
                raise Died(f"after {method}")
            return answer

        return called


def answers_in_a_message(exchange: Exchange) -> None:
    """A 1.0 agent that answers with a message (no task)."""
    assert exchange.rpc_method == "SendStreamingMessage", exchange.rpc_method
    message = {"role": "ROLE_AGENT", "parts": [{"text": "oscar tango"}], "messageId": "m1"}
    exchange.sse([rpc_result({"message": message})])


def test_a_stream_its_function_left_before_the_first_checkpoint_shows_the_answer_once(
    firestore_documents: FirestoreDocuments, slack_chat: Chat, agent: ScriptedAgent, standin: Any
) -> None:
    # Seed 18734: a function streams the answer and dies as the turn records the stream
    # (``keep_stream``), before the turn's first checkpoint. The function taking over begins
    # the turn afresh; it must carry the answer on in that stream, stopped, not show it
    # again in a new one below a stream left open until Slack cuts it.
    documents = DiesOnceStreamRecorded(firestore_documents)
    deps, turns, tasks = make_deps(documents, slack_chat, agent)  # type: ignore[arg-type]
    agent.script = answers_in_a_message
    shell = Shell(deps, standin, agent, turns, tasks)
    thread = shell.mention("check X")
    [published] = shell.turns.published
    with pytest.raises(Died):
        handlers.turn_send(deps, published)
    assert shell.bot_texts(thread) == ["oscar tango"]
    lease_runs_out(shell, published["session_id"])

    assert handlers.turn_send(deps, published) == "ack"

    assert shell.bot_texts(thread) == ["oscar tango"]
    replies = [message for message in standin.thread(CHANNEL, thread) if message.is_bot]
    assert all(message.stream != "streaming" for message in replies), "a stream left open"
