"""Property-based tests of a reply over random agent runs and random deliveries.

An agent run is a random sequence of text chunks, replaces, take-backs, updates
without text, tool calls and results (one, two or none per call), written in
one of the places real agents use: append chunks of one artifact (ADK's
default), a fresh artifact per part (ADK's newer converter), working status
messages with or without messageId (ADK's older converter, kagent 0.9), or a
status message and an artifact chunk both. The agent's task is kept the way
a2a-sdk's task store keeps it, whole numbers read back as floats included.
The run is a new turn, or an answer to a paused task that was, or could not
be, read before the answer was sent.

The delivery drops events (a dropped stream, reconnected with a snapshot),
delivers replace chunks and status updates twice, adds fresh snapshots (a
replayed send, GetTask) and stale ones (a snapshot older than the stream, from
before appends only), saves and restores the reply's state between events (a
follow in another function), and ends with the canonical task.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from shared.core.model import (
    Artifact,
    ArtifactUpdate,
    DataPart,
    Message,
    Part,
    Role,
    StatusUpdate,
    StreamEvent,
    Task,
    TaskState,
    TaskStatus,
    TextPart,
)
from shared.core.reply import ReplyAssembler, ReplyChange, TextAppended, TextReplaced
from shared.core.tool_ledger import ToolPartLedger
from shared.core.tool_parts import read_tool_part
from shared.core.tool_steps import StepFinished, StepStarted
from tests.core.reply_builders import CONTEXT_ID, TASK_ID, call, result

MODES = ("turn", "answer_read", "answer_unread")
STYLES = ("append", "fresh", "status", "status_no_id", "both")
OPS = (
    "append",
    "append",
    "replace",
    "take_back",
    "no_text",
    "new_artifact",
    "call",
    "call",
    "result",
    "result",
)
TEXT = st.text(alphabet="ab ", max_size=3)
PAUSED_CALL = "p1"


@dataclass
class TaskStore:
    """The agent's task, kept the way a2a-sdk's task store keeps it."""

    history: list[Message]
    artifacts: dict[str, list[Part]] = field(default_factory=dict)
    state: TaskState = TaskState.WORKING
    status_message: Message | None = None

    def apply(self, event: StreamEvent) -> None:
        if isinstance(event, ArtifactUpdate):
            parts = list(event.artifact.parts)
            if event.append:
                self.artifacts[event.artifact.artifact_id].extend(parts)
            else:
                self.artifacts[event.artifact.artifact_id] = parts
        elif isinstance(event, StatusUpdate):
            if self.status_message is not None:
                self.history.append(self.status_message)
            self.state = event.status.state
            self.status_message = event.status.message

    def snapshot(self) -> Task:
        artifacts = tuple(
            Artifact(key, tuple(_as_stored(p) for p in parts))
            for key, parts in self.artifacts.items()
        )
        status = TaskStatus(self.state, _as_stored_message(self.status_message))
        history = tuple(_as_stored_message(message) for message in self.history)
        return Task(TASK_ID, CONTEXT_ID, status, artifacts, history)  # type: ignore[arg-type]


def _as_stored(part: Part) -> Part:
    """The part as a store reads it back: whole numbers in data become floats."""
    return DataPart(_floats(part.data), part.metadata) if isinstance(part, DataPart) else part


def _as_stored_message(message: Message | None) -> Message | None:
    if message is None:
        return None
    return Message(
        message.role, tuple(_as_stored(p) for p in message.parts), message_id=message.message_id
    )


def _floats(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {key: _floats(item) for key, item in value.items()}
    if isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    return value


def text_of(artifact: Artifact) -> str:
    return "".join(part.text for part in artifact.parts if isinstance(part, TextPart))


def texts(task: Task) -> dict[str, str]:
    return {artifact.artifact_id: text_of(artifact) for artifact in task.artifacts}


@dataclass
class Run:
    """One agent run: its events, the task after each, and what a person must see."""

    mode: str
    paused: Task | None
    states: list[Task]
    """states[0] is the task before the first event; states[i + 1] the task after events[i]."""
    events: list[StreamEvent] = field(default_factory=list)
    calls: dict[str, Any] = field(default_factory=dict)
    """Call ID to arguments, for every call whose step must show its arguments."""
    responses: dict[str, list[Any]] = field(default_factory=dict)
    """Call ID to the responses of this turn's results, in the order the agent sent them."""
    carried_by: dict[tuple[str, int], list[int]] = field(default_factory=dict)
    """(call ID, result number) to the indexes of the events that carry that result."""


class Agent:
    """Writes events in one style, keeping the task store and the run up to date."""

    def __init__(self, store: TaskStore, style: str, run: Run) -> None:
        self.store, self.style, self.run = store, style, run
        self.serial = 0

    def emit(self, event: StreamEvent) -> int:
        self.store.apply(event)
        self.run.events.append(event)
        self.run.states.append(self.store.snapshot())
        return len(self.run.events) - 1

    def chunk(self, artifact_id: str, parts: list[Part], append: bool) -> int:
        return self.emit(
            ArtifactUpdate(TASK_ID, CONTEXT_ID, Artifact(artifact_id, tuple(parts)), append=append)
        )

    def status(self, state: TaskState, message: Message | None) -> int:
        return self.emit(StatusUpdate(TASK_ID, CONTEXT_ID, TaskStatus(state, message)))

    def tool_part(self, part: DataPart, artifact_first: bool = False) -> list[int]:
        """Write a tool part in the agent's style; ``artifact_first`` orders "both"."""
        self.serial += 1
        message_id = None if self.style == "status_no_id" else f"s-{self.serial}"
        in_message = self.style in ("status", "status_no_id", "both")
        indexes = []
        if in_message and not artifact_first:
            indexes.append(
                self.status(TaskState.WORKING, Message(Role.AGENT, (part,), message_id=message_id))
            )
        if self.style in ("append", "both"):
            indexes.append(self.chunk("run", [part], append=True))
        if self.style == "fresh":
            indexes.append(self.chunk(f"tool-{self.serial}", [part], append=False))
        if in_message and artifact_first:
            indexes.append(
                self.status(TaskState.WORKING, Message(Role.AGENT, (part,), message_id=message_id))
            )
        return indexes


@st.composite
def runs(draw: st.DrawFn, modes: tuple[str, ...]) -> Run:
    mode = draw(st.sampled_from(modes))
    style = draw(st.sampled_from(STYLES))
    store = TaskStore(history=[Message(Role.USER, (TextPart("first"),), message_id="u-1")])
    paused: Task | None = None
    open_calls: dict[str, int] = {}
    agent = Agent(store, style, Run(mode, None, [store.snapshot()]))
    if mode != "turn":
        agent.chunk("run", [TextPart("Which file?")], append=False)
        agent.tool_part(call(PAUSED_CALL, name="delete_file", args={"path": "x"}))
        agent.tool_part(
            result(PAUSED_CALL, name="delete_file", response={"error": "needs approval"})
        )
        pause = Message(Role.AGENT, (TextPart("Approve?"),), message_id="pause")
        agent.status(TaskState.INPUT_REQUIRED, pause)
        paused = store.snapshot()
        store.history += [pause, Message(Role.USER, (TextPart("yes"),), message_id="u-2")]
        store.status_message, store.state = None, TaskState.WORKING
        open_calls[PAUSED_CALL] = 0
    run = Run(mode, paused if mode == "answer_read" else None, [store.snapshot()])
    if mode == "answer_read":
        run.calls[PAUSED_CALL] = {"path": "x"}
    agent.run = run
    text_artifacts = ["run"]
    if mode == "turn":
        agent.chunk("run", [TextPart(draw(TEXT))], append=False)
    for op in draw(st.lists(st.sampled_from(OPS), max_size=12)):
        target = draw(st.sampled_from(text_artifacts))
        if op == "append":
            agent.chunk(target, [TextPart(draw(TEXT))], append=True)
        elif op in ("replace", "take_back"):
            new_text = TextPart(draw(TEXT) if op == "replace" else "")
            tool_parts = [p for p in store.artifacts[target] if read_tool_part(p) is not None]
            at = draw(st.integers(0, len(tool_parts)))
            agent.chunk(target, [*tool_parts[:at], new_text, *tool_parts[at:]], append=False)
        elif op == "no_text":
            agent.chunk(target, [DataPart({"progress": len(run.events)})], append=True)
        elif op == "new_artifact":
            text_artifacts.append(f"extra-{len(run.events)}")
            agent.chunk(text_artifacts[-1], [TextPart(draw(TEXT))], append=False)
        elif op == "call":
            call_id = f"c{len(run.calls) + 1}"
            run.calls[call_id] = {"n": len(run.calls) + 1}
            open_calls[call_id] = 0
            agent.tool_part(
                call(call_id, args=run.calls[call_id]), artifact_first=draw(st.booleans())
            )
        elif op == "result" and (
            choices := sorted(key for key, count in open_calls.items() if count < 2)
        ):
            call_id = draw(st.sampled_from(choices))
            number = open_calls[call_id]
            open_calls[call_id] += 1
            response: dict[str, Any] = {"of": call_id, "number": number}
            if draw(st.booleans()):
                response["error"] = "boom"
            name = "delete_file" if call_id == PAUSED_CALL else "search"
            run.responses.setdefault(call_id, []).append(response)
            tool_result = result(call_id, name=name, response=response)
            run.carried_by[(call_id, number)] = agent.tool_part(
                tool_result, artifact_first=draw(st.booleans())
            )
    agent.status(TaskState.COMPLETED, None)
    return run


@dataclass(frozen=True)
class Delivery:
    """What happens around one event on its way to the reply."""

    action: str
    """deliver, drop (the stream is down), or twice (a replace chunk or status update repeated)."""
    snapshot_after: bool
    stale_snapshot_pick: int | None
    restore_before: bool


DELIVERIES = st.builds(
    Delivery,
    action=st.sampled_from(("deliver", "deliver", "deliver", "drop", "twice")),
    snapshot_after=st.booleans(),
    stale_snapshot_pick=st.none() | st.integers(0, 50),
    restore_before=st.booleans(),
)


@st.composite
def delivered_runs(draw: st.DrawFn, modes: tuple[str, ...] = MODES) -> tuple[Run, list[Delivery]]:
    run = draw(runs(modes))
    return run, draw(st.lists(DELIVERIES, min_size=len(run.events), max_size=len(run.events)))


@dataclass
class Outcome:
    changes: list[ReplyChange]
    assembler: ReplyAssembler
    delivered: set[int]
    """Indexes of the events the stream delivered."""
    drop_windows: list[tuple[int, int]]
    """(state before the first dropped event, state at the reconnect snapshot)."""
    fed: list[StreamEvent]


def deliver(run: Run, plan: list[Delivery], restore_everywhere: bool | None = None) -> Outcome:
    """Feed ``run`` to a reply as ``plan`` says; restore decides save-and-restore when given."""
    assembler = ReplyAssembler() if run.mode == "turn" else ReplyAssembler.for_answer(run.paused)
    outcome = Outcome([], assembler, set(), [], [])

    def feed(event: StreamEvent) -> None:
        outcome.fed.append(event)
        outcome.changes.extend(outcome.assembler.feed(event))

    dropped_since: int | None = None
    for now, (event, delivery) in enumerate(zip(run.events, plan, strict=True)):
        # run.states[now] is the task before this event, run.states[now + 1] the task after it.
        if restore_everywhere if restore_everywhere is not None else delivery.restore_before:
            outcome.assembler = ReplyAssembler.from_state(
                json.loads(json.dumps(outcome.assembler.to_state()))
            )
        if delivery.action == "drop":
            dropped_since = now if dropped_since is None else dropped_since
            continue
        if dropped_since is not None:
            outcome.drop_windows.append((dropped_since, now))
            feed(run.states[now])
            dropped_since = None
        if delivery.stale_snapshot_pick is not None:
            older = [s for s in range(now) if _only_grew(run.states[s], run.states[now])]
            if older:
                feed(run.states[older[delivery.stale_snapshot_pick % len(older)]])
        feed(event)
        outcome.delivered.add(now)
        repeatable = isinstance(event, StatusUpdate) or (
            isinstance(event, ArtifactUpdate) and not event.append
        )
        if delivery.action == "twice" and repeatable:
            feed(event)
        if delivery.snapshot_after:
            feed(run.states[now + 1])
    if dropped_since is not None:
        outcome.drop_windows.append((dropped_since, len(run.events)))
    feed(run.states[-1])
    outcome.changes.extend(outcome.assembler.finish())
    return outcome


def _only_grew(older: Task, newer: Task) -> bool:
    """Whether every artifact's text in ``older`` is a prefix of its text in ``newer``."""
    newer_texts = texts(newer)
    return all(newer_texts.get(key, "").startswith(value) for key, value in texts(older).items())


def expected_answer(run: Run) -> str:
    """The canonical task's text, without what the paused task showed when it was read."""
    shown_before = texts(run.paused) if run.paused is not None else {}
    shown = []
    for key, value in texts(run.states[-1]).items():
        before = shown_before.get(key)
        shown.append(
            value[len(before) :] if before is not None and value.startswith(before) else value
        )
    return "\n\n".join(value for value in shown if value)


def take_back_missed(run: Run, outcome: Outcome) -> bool:
    """Whether text was taken back while the stream was down (the contract does not apply it)."""
    for start, end in outcome.drop_windows:
        before, after = texts(run.states[start]), texts(run.states[end])
        if any(
            before.get(key, value) != value and before[key].startswith(value)
            for key, value in after.items()
        ):
            return True
    return False


PROPERTY_SETTINGS = settings(max_examples=400, deadline=None)


@PROPERTY_SETTINGS
@given(delivered_runs())
def test_every_tool_call_and_result_is_delivered_exactly_once(
    scenario: tuple[Run, list[Delivery]],
) -> None:
    run, plan = scenario
    changes = deliver(run, plan).changes
    started = [change for change in changes if isinstance(change, StepStarted)]
    finished = [change for change in changes if isinstance(change, StepFinished)]
    assert all(count == 1 for count in Counter(step.call_id for step in started).values()), started
    assert all(count == 1 for count in Counter(step.call_id for step in finished).values()), (
        finished
    )
    for step in finished:
        start = next(
            change
            for change in changes
            if isinstance(change, StepStarted) and change.call_id == step.call_id
        )
        assert changes.index(start) < changes.index(step)
        assert step.ok is ("error" not in step.response)
    started_args = {step.call_id: step.args for step in started}
    for call_id, args in run.calls.items():
        if call_id != PAUSED_CALL or call_id in run.responses:
            assert started_args[call_id] == args
    assert {step.call_id for step in finished} >= set(run.responses)
    if run.mode == "turn":
        assert {step.call_id for step in started} == set(run.calls)


@PROPERTY_SETTINGS
@given(delivered_runs())
def test_a_steps_outcome_is_its_first_result(scenario: tuple[Run, list[Delivery]]) -> None:
    run, plan = scenario
    outcome = deliver(run, plan)
    outcomes = {
        change.call_id: change.response
        for change in outcome.changes
        if isinstance(change, StepFinished)
    }
    for call_id, responses in run.responses.items():
        if call_id == PAUSED_CALL and run.mode == "answer_unread":
            continue  # without the paused task, its artifacts replay the pause's own result
        assert outcomes[call_id] in responses
        if any(index in outcome.delivered for index in run.carried_by[(call_id, 0)]):
            assert outcomes[call_id] == responses[0]


@PROPERTY_SETTINGS
@given(delivered_runs())
def test_the_final_text_equals_the_canonical_tasks_text(
    scenario: tuple[Run, list[Delivery]],
) -> None:
    run, plan = scenario
    outcome = deliver(run, plan)
    shown = ""
    for change in outcome.changes:
        if isinstance(change, TextAppended):
            shown += change.text
        elif isinstance(change, TextReplaced):
            shown = change.text
    assert shown == outcome.assembler.answer_text
    if not take_back_missed(run, outcome):
        assert outcome.assembler.answer_text == expected_answer(run)


@PROPERTY_SETTINGS
@given(delivered_runs())
def test_serialising_the_state_between_any_two_events_changes_nothing(
    scenario: tuple[Run, list[Delivery]],
) -> None:
    run, plan = scenario
    kept = deliver(run, plan, restore_everywhere=False)
    restored = deliver(run, plan, restore_everywhere=True)
    assert restored.changes == kept.changes
    assert restored.assembler.to_state() == kept.assembler.to_state()


@PROPERTY_SETTINGS
@given(delivered_runs(modes=("turn",)))
def test_no_tool_part_is_delivered_twice_and_every_call_is_delivered(
    scenario: tuple[Run, list[Delivery]],
) -> None:
    run, plan = scenario
    ledger = ToolPartLedger()
    delivered = []
    for event in deliver(run, plan).fed:
        if isinstance(event, Task):
            delivered += ledger.read_snapshot(event)
        elif isinstance(event, StatusUpdate):
            delivered += ledger.read_status(event)
        elif isinstance(event, ArtifactUpdate):
            delivered += ledger.read_chunk(event)
    assert all(count == 1 for count in Counter(part.fingerprint for part in delivered).values())
    assert sorted(
        part.call_id or "" for part in delivered if part.kind.value == "function_call"
    ) == sorted(run.calls)
