"""The end's notice of a turn is shown exactly once, wherever its function dies.

Platform behaviour each test stands for: a function instance can be killed
between any two of its calls (``Died`` escapes the handler, as an instance
gone takes nothing with it); Cloud Tasks delivers the stop's task again,
and the reconcile sweep hands a turn whose lease ran out to another
function. The thread is Slack's (the stand-in), read back by the taker with
``conversations.replies``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest

from shared import handlers, stops
from shared.bootstrap import Deps
from shared.core import notices
from shared.firestore import FirestoreDocuments
from shared.ports import Chat
from shared.store import SESSIONS
from tests.a2a.agents import Exchange, ScriptedAgent, result, status_update, task
from tests.shell.conftest import BINDING, Shell, make_deps


class Died(BaseException):
    """The function's instance was killed (nothing of it goes on)."""


class DyingChat:
    """Slack's Web API, with the instance killed around the call ``dies_at`` picks (once)."""

    def __init__(self, chat: Chat) -> None:
        self._chat = chat
        self.before: Callable[[str, dict[str, Any]], bool] = lambda method, args: False
        self.after: Callable[[str, dict[str, Any]], bool] = lambda method, args: False

    def __getattr__(self, method: str) -> Any:
        call = getattr(self._chat, method)

        def called(**args: Any) -> Any:
            if self.before(method, args):
                self.before = lambda method, args: False
                raise Died(f"before {method}")
            answer = call(**args)
            if self.after(method, args):
                self.after = lambda method, args: False
                raise Died(f"after {method}")
            return answer

        return called


def finishes_silently(exchange: Exchange) -> None:
    """A 1.0 agent whose task completes without any output."""
    if exchange.rpc_method == "GetTask":
        exchange.json(result(task(state="TASK_STATE_COMPLETED")))
        return
    exchange.sse(
        [
            result({"task": task(state="TASK_STATE_WORKING")}),
            result(status_update("TASK_STATE_COMPLETED")),
        ]
    )


def shell_on(
    documents: FirestoreDocuments, chat: DyingChat, agent: ScriptedAgent, standin: Any
) -> Shell:
    agent.script = finishes_silently
    deps, turns, tasks = make_deps(documents, chat, agent)  # type: ignore[arg-type]
    return Shell(deps, standin, agent, turns, tasks)


def posts(text: str) -> Callable[[str, dict[str, Any]], bool]:
    """Whether a call posts a message whose text starts with ``text``."""
    return lambda method, args: (
        method == "chat_postMessage" and str(args.get("text") or "").startswith(text)
    )


def lease_runs_out(shell: Shell, session_id: str) -> None:
    """The dead function's lease runs out: the sweep hands the turn to another function."""
    shell.deps.documents.update(SESSIONS, session_id, {"lease_until": shell.deps.clock.now()})


DIES = pytest.mark.parametrize(
    "dies",
    ["before", "after"],
    ids=["dies between record and post", "dies right after posting"],
)
"""Where the function telling an end is killed: the notice recorded as being told but not
posted, or posted and the turn never recorded done."""


def dies_posting(chat: DyingChat, dies: str, text: str) -> list[str]:
    """Kill the instance ``dies`` the post of ``text``; what the thread shows after the death."""
    if dies == "before":
        chat.before = posts(text)
        return []
    chat.after = posts(text)
    return [text]


@DIES
def test_the_no_output_notice_shows_once_wherever_its_function_dies(
    firestore_documents: FirestoreDocuments,
    slack_chat: Chat,
    agent: ScriptedAgent,
    standin: Any,
    dies: str,
) -> None:
    chat = DyingChat(slack_chat)
    shell = shell_on(firestore_documents, chat, agent, standin)
    thread = shell.mention("check X")
    [published] = shell.turns.published
    shown = dies_posting(chat, dies, notices.NO_OUTPUT)

    with pytest.raises(Died):
        handlers.turn_send(shell.deps, published)
    assert shell.bot_texts(thread) == shown
    lease_runs_out(shell, published["session_id"])

    assert handlers.turn_send(shell.deps, published) == "ack"
    assert shell.bot_texts(thread) == [notices.NO_OUTPUT]
    turn = shell.deps.store.turn(published["turn_id"])
    assert turn is not None and turn.status == "done" and turn.outcome == "completed"


def a_stopped_turn(shell: Shell, chat: DyingChat) -> tuple[str, dict[str, Any]]:
    """A turn whose carrier died while it worked, and Alice's stop of it; the thread's ts."""
    thread = shell.mention("check X")
    [published] = shell.turns.published
    chat.before = lambda method, args: (
        method
        in (
            "agents_sessions_setStatus",
            "assistant_threads_setStatus",
        )
    )
    with pytest.raises(Died):
        handlers.turn_send(shell.deps, published)  # claimed and running, then gone
    assert shell.deps.store.request_stop(published["turn_id"], "U0ALICE", [])
    body = {"session_id": published["session_id"], "turn_id": published["turn_id"], "stop": True}
    assert stops.stop_task_name(published["turn_id"])  # the task Cloud Tasks delivers (again)
    return thread, body


@DIES
def test_a_stop_notice_shows_once_wherever_its_function_dies(
    firestore_documents: FirestoreDocuments,
    slack_chat: Chat,
    agent: ScriptedAgent,
    standin: Any,
    dies: str,
) -> None:
    chat = DyingChat(slack_chat)
    shell = shell_on(firestore_documents, chat, agent, standin)
    thread, body = a_stopped_turn(shell, chat)
    told = notices.STOPPED.after(False).replace("{who}", "<@U0ALICE>")
    shown = dies_posting(chat, dies, told)

    with pytest.raises(Died):
        handlers.stream_follow(shell.deps, body)
    assert shell.bot_texts(thread) == shown

    assert handlers.stream_follow(shell.deps, body) == "ack"  # the stop's task, again
    assert shell.bot_texts(thread) == [told]
    turn = shell.deps.store.turn(body["turn_id"])
    assert turn is not None and turn.status == "done" and turn.outcome == "stopped"


def test_a_taker_that_cannot_read_the_thread_back_tells_the_end_rather_than_lose_it(
    firestore_documents: FirestoreDocuments, slack_chat: Chat, agent: ScriptedAgent, standin: Any
) -> None:
    chat = DyingChat(slack_chat)
    shell = shell_on(firestore_documents, chat, agent, standin)
    thread = shell.mention("check X")
    [published] = shell.turns.published
    chat.before = posts(notices.NO_OUTPUT)
    with pytest.raises(Died):
        handlers.turn_send(shell.deps, published)
    lease_runs_out(shell, published["session_id"])
    standin.fail("conversations.replies", error="internal_error", status=500, times=10)

    assert handlers.turn_send(shell.deps, published) == "ack"
    assert shell.bot_texts(thread).count(notices.NO_OUTPUT) == 1


def a_turn_at_work(
    documents: FirestoreDocuments, slack_chat: Chat, agent: ScriptedAgent, standin: Any
) -> tuple[DyingChat, Shell, str, dict[str, Any]]:
    """A turn mentioned, not carried yet: its chat, shell, thread ts and published message."""
    chat = DyingChat(slack_chat)
    shell = shell_on(documents, chat, agent, standin)
    thread = shell.mention("check X")
    [published] = shell.turns.published
    return chat, shell, thread, published


def a_stop_of(
    published: dict[str, Any], documents: FirestoreDocuments, slack_chat: Chat, agent: ScriptedAgent
) -> tuple[Deps, dict[str, Any]]:
    """The instance that carries out a stop of the ``published`` turn, and its task's body."""
    body = {"session_id": published["session_id"], "turn_id": published["turn_id"], "stop": True}
    stop, _, _ = make_deps(documents, slack_chat, agent)  # the stop's own instance
    return stop, body


def test_a_carrier_that_finds_its_turn_stopped_leaves_the_end_to_the_stop(
    firestore_documents: FirestoreDocuments, slack_chat: Chat, agent: ScriptedAgent, standin: Any
) -> None:
    """Alice stops the turn while its carrier, alive, is about to tell its end.

    The stop's function reads the thread back before the carrier's notice
    lands (a Slack call in flight): the carrier must not post it at all.
    """
    chat, shell, thread, published = a_turn_at_work(firestore_documents, slack_chat, agent, standin)
    stop, body = a_stop_of(published, firestore_documents, slack_chat, agent)
    meanwhile: list[str] = []

    def alice_stops_it(method: str, args: dict[str, Any]) -> bool:
        if not meanwhile and method == "agents_sessions_setStatus":  # the carrier at work
            meanwhile.append("stopped")
            assert shell.deps.store.request_stop(published["turn_id"], "U0ALICE", [])
        elif meanwhile == ["stopped"] and method == "chat_postMessage":  # its post in flight
            meanwhile.append("stop carried out")
            assert handlers.stream_follow(stop, body) == "ack"
        return False

    chat.before = alice_stops_it
    handlers.turn_send(shell.deps, published)
    if meanwhile == ["stopped"]:  # the carrier posted nothing: the stop's task comes now
        assert handlers.stream_follow(stop, body) == "ack"

    assert len(shell.bot_texts(thread)) == 1, shell.bot_texts(thread)
    turn = shell.deps.store.turn(published["turn_id"])
    assert turn is not None and turn.status == "done"


def test_a_stop_pressed_while_the_carrier_posts_the_end_leaves_the_end_to_the_carrier(
    firestore_documents: FirestoreDocuments, slack_chat: Chat, agent: ScriptedAgent, standin: Any
) -> None:
    """Alice stops the turn just after its carrier, alive, recorded its end as told.

    The carrier's notice is in flight (seed 14342): the stop's function, which
    would read the thread back before it lands and post it again, leaves the
    end to the carrier, whose post the stop came too late for.
    """
    chat, shell, thread, published = a_turn_at_work(firestore_documents, slack_chat, agent, standin)
    stop, body = a_stop_of(published, firestore_documents, slack_chat, agent)
    meanwhile: list[str] = []

    def alice_stops_it(method: str, args: dict[str, Any]) -> bool:
        if not meanwhile and method == "chat_postMessage" and args.get("metadata"):
            meanwhile.append("stopped")  # the end's notice, marked: its post in flight
            assert shell.deps.store.request_stop(published["turn_id"], "U0ALICE", [])
            assert handlers.stream_follow(stop, body) == "ack"
        return False

    chat.before = alice_stops_it
    assert handlers.turn_send(shell.deps, published) == "ack"

    assert meanwhile == ["stopped"]
    assert shell.bot_texts(thread) == [notices.NO_OUTPUT]
    turn = shell.deps.store.turn(published["turn_id"])
    assert turn is not None and turn.status == "done" and turn.outcome == "completed"


GONE = notices.turn_failed(notices.BINDING_GONE)


def binding_renamed(shell: Shell) -> Any:
    """The process's Deps after a deploy that renamed the thread's Binding."""
    config = shell.deps.config
    bindings = [b.model_copy(update={"name": f"{BINDING}-renamed"}) for b in config.bindings]
    return replace(shell.deps, config=config.model_copy(update={"bindings": bindings}))


@DIES
def test_the_binding_gone_notice_shows_once_wherever_its_function_dies(
    firestore_documents: FirestoreDocuments,
    slack_chat: Chat,
    agent: ScriptedAgent,
    standin: Any,
    dies: str,
) -> None:
    chat = DyingChat(slack_chat)
    shell = shell_on(firestore_documents, chat, agent, standin)
    thread = shell.mention("check X")
    [published] = shell.turns.published
    deployed = binding_renamed(shell)
    shown = dies_posting(chat, dies, GONE)

    with pytest.raises(Died):
        handlers.turn_send(deployed, published)
    assert shell.bot_texts(thread) == shown
    lease_runs_out(shell, published["session_id"])

    assert handlers.turn_send(deployed, published) == "ack"
    assert shell.bot_texts(thread) == [GONE]
    turn = shell.deps.store.turn(published["turn_id"])
    assert turn is not None and turn.status == "done" and turn.outcome == "binding_gone"
