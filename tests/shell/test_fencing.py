"""Fencing: a function that stalled past its lease, and was taken over, changes nothing when it wakes.

Platform behaviour this stands for: Cloud Run answers 504 at a function's
time limit but does not stop the instance, whose CPU may be throttled for
minutes; the code then goes on where it was. Meanwhile the lease ran out,
the sweep re-published the turn and another function carried it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

import pytest

from shared import engine, handlers, stops
from shared.bootstrap import Deps
from shared.core import notices
from shared.core import session as sessions
from shared.core.model import HITL_EXTENSION
from shared.core.session import CloseQuestion, Session
from shared.errors import Superseded
from shared.fence import Fence, FencedChat
from shared.firestore import FirestoreDocuments
from shared.ports import Chat, Snapshot, Write
from shared.questions import QUESTIONS
from shared.slack.events import StopPress
from shared.store import SESSIONS, TURNS
from tests.a2a.agents import Exchange, ScriptedAgent, result, status_update, task
from tests.shell.conftest import CHANNEL, Shell, make_deps
from tests.shell.test_retries import sends, shell_with


def test_a_function_that_wakes_after_a_takeover_writes_sends_and_posts_nothing(
    firestore_documents: FirestoreDocuments, slack_chat: Chat, agent: ScriptedAgent, standin: Any
) -> None:
    shell = shell_with(firestore_documents, slack_chat, agent, standin)
    thread = shell.mention("check X")
    [published] = shell.turns.published
    deps, session_id = shell.deps, published["session_id"]
    # The first function claims the turn, then stalls before it does anything.
    claim = engine.claim_next_turn(deps, session_id, published["turn_id"])
    assert claim is not None
    stalled = engine.TurnRun(deps, claim.session, claim.turn, engine.function_deadline(deps))

    def lease_ran_out(current: Session | None) -> Session | None:
        assert current is not None
        current.lease_until = deps.clock.now() - timedelta(seconds=1)
        return current

    deps.store.change_session(session_id, lease_ran_out)
    assert handlers.turn_send(deps, published) == "ack"  # the sweep's trigger: taken over
    assert shell.bot_texts(thread) == ["hello from the agent"]
    done = deps.store.turn(published["turn_id"])
    assert done is not None and done.status == "done"

    with pytest.raises(Superseded):
        stalled.start()  # it wakes

    assert shell.bot_texts(thread) == ["hello from the agent"]
    assert sends(agent) == 1
    after = deps.store.turn(published["turn_id"])
    assert after is not None
    assert (after.status, after.outcome, after.checkpoint) == ("done", done.outcome, None)


class ReadsCounted:
    """Firestore, listing each document read."""

    def __init__(self, documents: FirestoreDocuments) -> None:
        self._documents = documents
        self.reads: list[tuple[str, str]] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self._documents, name)

    def get(self, collection: str, key: str) -> Snapshot | None:
        self.reads.append((collection, key))
        return self._documents.get(collection, key)


def another_instance(documents: Any, slack_chat: Chat, agent: ScriptedAgent) -> Deps:
    """A second function instance: a store of its own, which remembers what it read and wrote."""
    deps, _, _ = make_deps(documents, slack_chat, agent)
    return deps


def lease_ran_out_in(deps: Deps, session_id: str) -> None:
    def lease_ran_out(current: Session | None) -> Session | None:
        assert current is not None
        current.lease_until = deps.clock.now() - timedelta(seconds=1)
        return current

    deps.store.change_session(session_id, lease_ran_out)


def test_a_function_that_wrote_with_no_read_first_is_refused_after_a_takeover(
    firestore_documents: FirestoreDocuments, slack_chat: Chat, agent: ScriptedAgent, standin: Any
) -> None:
    shell = shell_with(firestore_documents, slack_chat, agent, standin)
    thread = shell.mention("check X")
    [published] = shell.turns.published
    session_id, turn_id = published["session_id"], published["turn_id"]
    documents = ReadsCounted(firestore_documents)
    stalled = another_instance(documents, slack_chat, agent)
    claim = engine.claim_next_turn(stalled, session_id, turn_id)
    assert claim is not None
    generation = claim.session.generation

    def close_question(current: Session | None) -> Session:
        return sessions.carried(current, turn_id, generation, CloseQuestion())

    stalled.store.change_session(session_id, close_question)  # read: the claim created it
    reads_before = list(documents.reads)
    # Its writes need no read: it writes what it last read or wrote, under a precondition.
    stalled.store.write_turn(turn_id, generation, status="running")
    stalled.store.change_session(session_id, close_question)
    stalled.store.write_turn(turn_id, generation, status="running")
    assert documents.reads == reads_before
    lease_ran_out_in(shell.deps, session_id)
    assert handlers.turn_send(shell.deps, published) == "ack"  # taken over, carried to its end
    done = shell.deps.store.turn(turn_id)
    assert done is not None and done.status == "done"
    documents.reads.clear()

    with pytest.raises(Superseded):
        stalled.store.write_turn(turn_id, generation, status="running")  # it wakes
    with pytest.raises(Superseded):
        stalled.store.change_session(session_id, close_question)
    with pytest.raises(Superseded):
        stalled.store.renew_lease(session_id, turn_id, generation, timedelta(minutes=10))

    # Each refusal read what had changed when its precondition failed (or its decision
    # on what it remembered was a refusal), and wrote nothing.
    assert documents.reads == [(TURNS, turn_id), (SESSIONS, session_id), (SESSIONS, session_id)]
    after = shell.deps.store.turn(turn_id)
    assert after is not None
    assert (after.status, after.outcome, after.fence) == ("done", done.outcome, done.fence)
    assert shell.bot_texts(thread) == ["hello from the agent"]


def test_a_session_remembered_busy_is_read_again_before_a_claim_gives_up(
    firestore_documents: FirestoreDocuments, slack_chat: Chat, agent: ScriptedAgent, standin: Any
) -> None:
    # A store decides to write on what it remembers, never to do nothing: the session it
    # remembers busy was released since, and the thread's next turn must be claimed.
    shell = shell_with(firestore_documents, slack_chat, agent, standin)
    thread = shell.mention("check X")
    [first] = shell.turns.published
    session_id = first["session_id"]
    died = another_instance(firestore_documents, slack_chat, agent)
    claim = engine.claim_next_turn(died, session_id, first["turn_id"])
    assert claim is not None
    generation = claim.session.generation
    busy = died.store.change_session(  # the carrier's store remembers the session as it wrote it
        session_id,
        lambda current: sessions.carried(current, first["turn_id"], generation, CloseQuestion()),
    )
    assert busy is not None and busy.active_turn == first["turn_id"]
    lease_ran_out_in(shell.deps, session_id)
    assert handlers.turn_send(shell.deps, first) == "ack"  # taken over, ended, released
    shell.mention("and Y?", thread_ts=thread)
    second = shell.turns.published[-1]
    assert second["turn_id"] != first["turn_id"]

    claim = engine.claim_next_turn(died, session_id, second["turn_id"])

    assert claim is not None and claim.turn.id == second["turn_id"]


def test_a_carrier_a_stop_took_the_session_from_is_refused_at_its_next_checkpoint(
    firestore_documents: FirestoreDocuments, slack_chat: Chat, agent: ScriptedAgent, standin: Any
) -> None:
    # A checkpoint reads the session only when the turn it writes shows a stop: while a
    # lease runs, only a stop, recorded on the turn first, takes the session from its carrier.
    shell = shell_with(firestore_documents, slack_chat, agent, standin)
    shell.mention("check X")
    [published] = shell.turns.published
    session_id, turn_id = published["session_id"], published["turn_id"]
    carrier = another_instance(firestore_documents, slack_chat, agent)
    claim = engine.claim_next_turn(carrier, session_id, turn_id)
    assert claim is not None
    run = engine.TurnRun(carrier, claim.session, claim.turn, engine.function_deadline(carrier))
    run.claim.write_turn(status="running", attempted=True)
    run.claim.save(run.carried, force=True)  # still its own: no stop recorded

    store, at, lease = shell.deps.store, shell.deps.clock.now(), shell.deps.settings.lease
    assert store.request_stop(turn_id, "U0ALICE", [])
    taken = store.change_session(
        session_id, lambda current: sessions.interrupt(current, turn_id, at, lease)
    )
    assert taken is not None and taken.generation > claim.session.generation

    with pytest.raises(Superseded):
        run.claim.save(run.carried, force=True)


class ManualClock:
    """A clock that moves only when told (the fence reads ``monotonic``)."""

    def __init__(self) -> None:
        self.seconds = 1000.0

    def monotonic(self) -> float:
        return self.seconds

    def __getattr__(self, name: str) -> Any:
        raise AttributeError(name)


class CountingChat:
    def __init__(self) -> None:
        self.calls = 0

    def chat_postMessage(self, **kwargs: Any) -> dict[str, Any]:
        self.calls += 1
        return {"ok": True, "ts": "1.0"}


def test_a_function_past_its_lease_makes_no_slack_call() -> None:
    clock, chat = ManualClock(), CountingChat()
    claimed = clock.seconds
    clock.seconds += 1  # the claim's write took a second
    fence = Fence(clock, claimed, timedelta(seconds=540))  # type: ignore[arg-type]
    fenced = FencedChat(chat, fence)  # type: ignore[arg-type]

    clock.seconds = claimed + 534  # within the lease, less 5 s for other clocks
    fenced.chat_postMessage(channel="C1", text="in time")
    clock.seconds = claimed + 535  # the lease may have run out by another instance's clock
    with pytest.raises(Superseded):
        fenced.chat_postMessage(channel="C1", text="too late")
    fence.renewed(clock.seconds)  # a fenced write renewed the lease
    fenced.chat_postMessage(channel="C1", text="renewed")

    assert chat.calls == 2


def test_a_lease_is_due_for_renewal_once_half_of_it_is_spent() -> None:
    # A checkpoint renews the lease only then: a run hands over long before its lease runs
    # out, so a short turn never writes its session for a renewal.
    clock = ManualClock()
    claimed = clock.seconds
    fence = Fence(clock, claimed, timedelta(seconds=540))  # type: ignore[arg-type]

    clock.seconds = claimed + 267  # 268 of the 535 s it counts on are left
    assert not fence.renewal_due()
    clock.seconds = claimed + 268
    assert fence.renewal_due()
    fence.renewed(clock.seconds)
    assert not fence.renewal_due()


class RecordingChat:
    """Records the Slack calls that went out (the ``Chat`` methods a reply streams with)."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def __getattr__(self, method: str) -> Any:
        def call(**kwargs: Any) -> dict[str, Any]:
            self.calls.append(method)
            return {"ok": True, "ts": "1.0"}

        return call


def test_a_carrier_whose_turn_a_stop_took_changes_no_step_card_while_its_lease_runs() -> None:
    # A person's stop takes the turn from its carrier while the carrier's lease still runs
    # (seed 17: the old carrier appended a running step to a stream after the stop's function
    # had closed the reply, and the step was left running). Text alone is fenced by time.
    clock, chat = ManualClock(), RecordingChat()
    taken = False

    def still_ours() -> None:
        if taken:
            raise Superseded("a stop took the turn")

    fence = Fence(clock, clock.seconds, timedelta(seconds=540), still_ours)  # type: ignore[arg-type]
    fenced = FencedChat(chat, fence)  # type: ignore[arg-type]
    step = {"type": "task_update", "id": "call-1", "title": "read_runbook", "status": "in_progress"}
    card = {"type": "task_card", "task_id": "call-1", "title": "read_runbook", "status": "complete"}
    fenced.chat_appendStream(channel="C1", ts="2.0", chunks=[step])
    taken = True  # the stop's function took the turn; this lease still runs

    for changes_a_card in (
        lambda: fenced.chat_appendStream(channel="C1", ts="2.0", chunks=[step]),
        lambda: fenced.chat_stopStream(channel="C1", ts="2.0", chunks=[step]),
        lambda: fenced.chat_update(channel="C1", ts="3.0", blocks=[card]),
    ):
        with pytest.raises(Superseded):
            changes_a_card()
    fenced.chat_appendStream(
        channel="C1", ts="2.0", chunks=[{"type": "markdown_text", "text": "a"}]
    )

    assert chat.calls == ["chat_appendStream", "chat_appendStream"]


def test_a_card_change_that_waited_out_a_rate_limit_is_not_retried_once_a_stop_took_the_turn(
    standin: Any, slack_chat: Chat
) -> None:
    # Seeds 153, 224, 373: chat.update of a step's card answered 429 (Retry-After 16 s); the
    # person stopped the turn meanwhile and the stop's function closed the card; then slack_sdk
    # retried the carrier's update, checked by the fence only before its first attempt, and
    # showed the step running again. The fence is checked again before each retry.
    channel = "C0SHELL0001"
    card = {"type": "task_card", "task_id": "call-1", "title": "read_runbook", "status": "complete"}
    running = {**card, "status": "in_progress"}
    thread_ts = standin.say(channel, "check X").ts
    posted = slack_chat.chat_postMessage(
        channel=channel, thread_ts=thread_ts, text="steps", blocks=[card]
    )
    standin.set_rate_limit("chat.update", 1, 1.0)
    slack_chat.chat_update(channel=channel, ts=posted["ts"], text="steps", blocks=[card])
    checks: list[bool] = []

    def still_ours() -> None:
        checks.append(True)
        if len(checks) > 1:  # the stop took the turn while the update waited
            raise Superseded("a stop took the turn")

    clock = ManualClock()
    fence = Fence(clock, clock.seconds, timedelta(seconds=540), still_ours)  # type: ignore[arg-type]
    fenced = FencedChat(slack_chat, fence)
    with pytest.raises(Superseded):
        fenced.chat_update(channel=channel, ts=posted["ts"], text="steps", blocks=[running])

    assert len(checks) == 2  # before the call, and before its retry
    [message] = [m for m in standin.thread(channel, thread_ts) if m.ts == posted["ts"]]
    assert [block["status"] for block in message.blocks] == ["complete"]


class StoppedWhileLookingUp:
    """Slack, whose users.info answers only after ``during`` ran (a 429's Retry-After wait)."""

    def __init__(self, chat: Chat) -> None:
        self._chat = chat
        self.during: Any = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._chat, name)

    def users_info(self, *, user: str) -> Any:
        if self.during is not None:
            self.during()
        return self._chat.users_info(user=user)


def test_a_carrier_whose_turn_a_stop_took_while_it_looked_up_the_author_sends_nothing(
    firestore_documents: FirestoreDocuments, slack_chat: Chat, agent: ScriptedAgent, standin: Any
) -> None:
    # Seed 4979: users.info answered 429 with a Retry-After of 29 s; the person stopped the
    # turn meanwhile, the stop ended it and the next turn was sent; then the waiting
    # carrier sent the stopped turn to the agent, after the turn that came after it.
    chat = StoppedWhileLookingUp(slack_chat)
    shell = shell_with(firestore_documents, chat, agent, standin)  # type: ignore[arg-type]
    shell.mention("check X")
    [published] = shell.turns.published
    deps, session_id, turn_id = shell.deps, published["session_id"], published["turn_id"]
    deps.store.cache_user("U0ALICE", {}, timedelta(0))  # not known yet: users.info is asked
    claim = engine.claim_next_turn(deps, session_id, turn_id)
    assert claim is not None
    run = engine.TurnRun(deps, claim.session, claim.turn, engine.function_deadline(deps))
    asked: list[bool] = []

    def stopped() -> None:
        asked.append(True)
        at, lease = deps.clock.now(), deps.settings.lease
        assert deps.store.request_stop(turn_id, "U0ALICE", [])
        deps.store.change_session(
            session_id, lambda current: sessions.interrupt(current, turn_id, at, lease)
        )

    chat.during = stopped
    with pytest.raises(Superseded):
        run.start()

    assert asked == [True]
    assert sends(agent) == 0


class StoppedBeforeTheQuestion:
    """Firestore, where a person's stop takes the turn just before its carrier stores a question."""

    def __init__(self, documents: FirestoreDocuments, stop: Callable[[], None]) -> None:
        self._documents = documents
        self._stop: Callable[[], None] | None = stop

    def __getattr__(self, name: str) -> Any:
        return getattr(self._documents, name)

    def _before_writing(self, collections: set[str]) -> None:
        if QUESTIONS in collections and self._stop is not None:
            stop, self._stop = self._stop, None
            stop()

    def set(self, collection: str, key: str, data: Mapping[str, Any]) -> None:
        self._before_writing({collection})
        self._documents.set(collection, key, data)

    def commit(self, writes: Sequence[Write]) -> list[datetime]:
        self._before_writing({write.collection for write in writes})
        return self._documents.commit(writes)


WHICH_REGION = {"role": "ROLE_AGENT", "parts": [{"text": "Which region?"}], "messageId": "m1"}
DELETE_FILE = {
    "role": "ROLE_AGENT",
    "parts": [{"text": "Approve this tool call?"}],
    "messageId": "m1",
    "metadata": {
        HITL_EXTENSION: {
            "type": "tool_approval_request",
            "tools": [{"id": "t1", "name": "delete_file", "args": {"path": "/tmp/x"}}],
        }
    },
    "extensions": [HITL_EXTENSION],
}


def pauses_with(message: dict[str, Any]) -> Callable[[Exchange], None]:
    """A 1.0 agent whose task pauses with ``message`` until it is cancelled."""
    cancelled: list[bool] = []

    def script(exchange: Exchange) -> None:
        paused = status_update("TASK_STATE_INPUT_REQUIRED", message=message)
        if exchange.rpc_method == "SendStreamingMessage":
            exchange.sse([result({"task": task(state="TASK_STATE_WORKING")}), result(paused)])
        elif exchange.rpc_method == "CancelTask":
            cancelled.append(True)
            exchange.json(result(task(state="TASK_STATE_CANCELED")))
        else:
            assert exchange.rpc_method == "GetTask", exchange.rpc_method
            state = "TASK_STATE_CANCELED" if cancelled else "TASK_STATE_INPUT_REQUIRED"
            status = {} if cancelled else {"message": message}
            exchange.json(result({**task(state=state), "status": {"state": state, **status}}))

    return script


def alice_stops(
    documents: FirestoreDocuments,
    slack_chat: Chat,
    agent: ScriptedAgent,
    interactions: str,
    thread: list[str],
) -> Callable[[], None]:
    """Alice pressing stop in ``thread`` (its ts, once known), carried out by another instance."""
    stopper, _, stop_tasks = make_deps(documents, slack_chat, agent, interactions)

    def stop() -> None:
        press = StopPress(CHANNEL, thread[0], "U0ALICE", stopper.clock.now(), [])
        stops.take_stop(stopper, press)
        [body] = [body for _, body, _ in stop_tasks.scheduled if body.get("stop")]
        assert handlers.stream_follow(stopper, body) == "ack"

    return stop


@pytest.mark.parametrize(
    ("pause", "interactions"),
    [
        (WHICH_REGION, "{questions: {timeout: 300s}}"),  # asked: the turn waits for people
        (DELETE_FILE, "{}"),  # no approvals allowed: every tool denied at once, and answered
    ],
    ids=["question", "approval denied at once"],
)
def test_a_question_a_carrier_would_store_after_a_stop_took_its_turn_is_never_left_open(
    firestore_documents: FirestoreDocuments,
    slack_chat: Chat,
    agent: ScriptedAgent,
    standin: Any,
    pause: dict[str, Any],
    interactions: str,
) -> None:
    # Seed 1158 (on a branch whose writes moved the faults drawn): the carrier read the task's
    # pause and decided to ask; a person pressed stop, and the stop's function took the turn,
    # closed the turn's questions (there were none yet), told the thread and ended the turn;
    # then the carrier stored its question, which nothing closed: open (or being answered)
    # for good on a stopped turn.
    agent.script = pauses_with(pause)
    thread: list[str] = []
    stop = alice_stops(firestore_documents, slack_chat, agent, interactions, thread)
    documents = StoppedBeforeTheQuestion(firestore_documents, stop)
    deps, turns, tasks = make_deps(documents, slack_chat, agent, interactions)  # type: ignore[arg-type]
    shell = Shell(deps, standin, agent, turns, tasks)
    thread.append(shell.mention("check X"))
    [published] = shell.turns.published

    assert handlers.turn_send(deps, published) == "ack"

    stopped = deps.store.turn(published["turn_id"])
    assert stopped is not None and (stopped.status, stopped.outcome) == ("done", "stopped")
    assert shell.bot_texts(thread[0]) == [
        notices.STOPPED.after(True).format(who="<@U0ALICE>")
    ]  # no prompt: nothing to click
    left = firestore_documents.query(QUESTIONS, "turn_id", "==", published["turn_id"])
    assert [question["status"] for question in left if question["status"] != "closed"] == []
    session = deps.store.session(published["session_id"])
    assert session is not None and session.open_question is None
    assert sends(agent) == 1  # no decision reached the agent


class StoppedAsThePromptIsPosted:
    """Slack, where a person's stop takes the turn right after its first prompt was posted."""

    def __init__(self, chat: Chat, stop: Callable[[], None]) -> None:
        self._chat = chat
        self._stop: Callable[[], None] | None = stop

    def __getattr__(self, name: str) -> Any:
        return getattr(self._chat, name)

    def chat_postMessage(self, **kwargs: Any) -> Any:
        posted = self._chat.chat_postMessage(**kwargs)
        prompt = any(block.get("type") == "actions" for block in kwargs.get("blocks") or ())
        if prompt and self._stop is not None:
            stop, self._stop = self._stop, None
            stop()
        return posted


def test_a_prompt_posted_as_a_stop_took_its_turn_is_left_with_nothing_to_click(
    firestore_documents: FirestoreDocuments, slack_chat: Chat, agent: ScriptedAgent, standin: Any
) -> None:
    # The carrier posted the approval's prompt; before it wrote where the prompt is, a
    # person's stop closed the question, not knowing the prompt, so it ended no prompt: the
    # buttons stayed, and a click on them was refused as on a closed question. The carrier
    # then showed the thread's agent session waiting on people, after the stop's end.
    interactions = "{toolApprovals: {approvers: [U0ALICE], timeout: 300s}}"
    agent.script = pauses_with(DELETE_FILE)
    thread: list[str] = []
    stop = alice_stops(firestore_documents, slack_chat, agent, interactions, thread)
    chat = StoppedAsThePromptIsPosted(slack_chat, stop)
    deps, turns, tasks = make_deps(firestore_documents, chat, agent, interactions)  # type: ignore[arg-type]
    shell = Shell(deps, standin, agent, turns, tasks)
    thread.append(shell.mention("check X"))
    [published] = shell.turns.published

    assert handlers.turn_send(deps, published) == "ack"

    [prompt, told] = [message for message in standin.thread(CHANNEL, thread[0]) if message.is_bot]
    assert told.text == notices.STOPPED.after(True).format(who="<@U0ALICE>")
    assert [block["type"] for block in prompt.blocks if block["type"] == "actions"] == []
    assert "Stopped by <@U0ALICE>" in str(prompt.blocks[-1])
    session = standin.agent_session(CHANNEL, thread[0])
    assert session is not None and session.status == "active"  # as the stop's end left it
    assert sends(agent) == 1  # no decision reached the agent
