"""A deploy that removes or renames a Binding ends its threads' turns, and says so.

A turn, a session and a question name the Binding they began under. When a
new config no longer has it, what was under way cannot go on (its agent,
identity and approvers came from the Binding): each of its turns ends with a
notice, the session is freed, and a click on its prompt changes nothing.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

from shared.core import notices
from tests.hitl_e2e.agent import HitlAgent, Say, Stage, hitl_pause
from tests.hitl_e2e.conftest import Thread, function_stopped

from .conftest import BINDING, CHANNEL, CONFIG, HITL_BINDING, HITL_CHANNEL, TURN_WAIT, Faults
from .test_leases import approval

GONE = notices.turn_failed(notices.BINDING_GONE)
CONFIG_READERS = ("turn_send", "stream_follow", "timeout", "chat_ingress")
"""The functions that read the config; chat_ingress last, as its health check asks the others."""


@contextmanager
def deployed(faults: Faults, config: str) -> Iterator[None]:
    """The functions run ``config`` for the block (a deploy starts them anew), then the suite's."""

    def deploy(text: str) -> None:
        Path(faults.stack.config_path).write_text(text)
        for function in CONFIG_READERS:
            faults.stack.restart(function)

    deploy(config)
    try:
        yield
    finally:
        deploy(CONFIG)


def renamed(binding: str) -> str:
    """The suite's config with ``binding`` under another name (same channel, same agent)."""
    return CONFIG.replace(f"- name: {binding}\n", f"- name: {binding}-renamed\n")


def test_turns_under_a_binding_a_deploy_renamed_end_with_a_notice(faults: Faults) -> None:
    with ExitStack() as after:
        with function_stopped(faults.stack, "turn_send"):  # nothing is carried before the deploy
            first = faults.say("the first message, stored before the deploy")
            second = faults.say("the second, waiting behind it", thread_ts=first.ts)
            after.enter_context(deployed(faults, renamed(BINDING)))
        faults.wait_until_answered(first.ts, first.ts, second.ts)
        shown = [m.text for m in faults.bot_messages(first.ts)]

    assert shown == [GONE, GONE]
    for posted in (first, second):
        turn = faults.turn(posted.ts)
        assert turn is not None and turn.outcome == "binding_gone"
    assert not faults.agent.sends()
    session_id = f"{BINDING}-{CHANNEL}-{first.ts}"
    # The session is released just after its last turn is written done.
    faults.standin.wait_for(
        lambda: getattr(faults.store.session(session_id), "active_turn", "") is None,
        timeout=TURN_WAIT,
    )


def test_a_prompt_under_a_binding_a_deploy_renamed_is_closed(
    faults: Faults, hitl_agent: HitlAgent
) -> None:
    token = f"renamed-{uuid.uuid4().hex[:8]}"
    conversation = hitl_agent.expect(
        token,
        Stage(pause=hitl_pause(approval("t1"))),
        Stage(pieces=(Say("Deleted."),)),
    )
    posted = faults.standin.say(HITL_CHANNEL, token)
    thread = Thread(faults.standin, HITL_CHANNEL, posted)
    prompt = thread.prompt()

    with deployed(faults, renamed(HITL_BINDING)):
        thread.click(prompt, "approve:0")  # answered at once, not a 500 Slack retries
        assert [e.text for e in thread.ephemerals("U0ALICE")] == [notices.QUESTION_CLOSED]
        thread.notice(GONE)  # at the question's timeout, the turn ends
        turn = faults.ended_turn(f"{HITL_CHANNEL}-{posted.ts}")

    assert turn.outcome == "binding_gone"
    assert not conversation.answers()
