"""Events a turn must not follow: another task's, and the Messages the contract ignores.

Each test runs on both A2A versions (the same faulty agent, spelled 1.0 or 0.3).
"""

from __future__ import annotations

from tests.faults.agent import COMPLETED, Script, message, other_status, other_task

from .conftest import Faults, expected_reply, read_reply


def test_another_tasks_events_neither_end_the_turn_nor_feed_its_answer(
    either_version: Faults,
) -> None:
    faults = either_version
    script = faults.agent.use(
        Script(
            # The send's stream: its task submitted and working, then another
            # task's completed status and Task, and the stream ends while the
            # turn's own task runs on.
            foreign={2: [other_status(COMPLETED), other_task(COMPLETED, "Another task's text.")]},
            close_send_after=2,
        )
    )
    posted = faults.say("the one task this turn follows")

    seen = read_reply(faults.wait_until_answered(posted.ts))

    assert seen == expected_reply(script.pieces)
    assert not faults.agent.calls("GetTask") or all(
        call.params["id"] != "task-other" for call in faults.agent.calls("GetTask")
    )
    turn = faults.turn(posted.ts)
    assert turn is not None and turn.outcome == "completed" and turn.task_id != "task-other"


def test_ignored_messages_are_not_followed_and_their_context_is_not_learnt(
    either_version: Faults,
) -> None:
    faults = either_version
    first = faults.say("a thread with a context")
    faults.wait_until_answered(first.ts)
    session = faults.store.session(f"{faults.binding}-{faults.channel}-{first.ts}")
    assert session is not None and session.context_id
    script = faults.agent.use(
        Script(
            foreign={
                0: [
                    message("ROLE_AGENT", "names a task", "task-elsewhere", "ctx-elsewhere"),
                    message("ROLE_USER", "from the user", None, "ctx-user"),
                ]
            }
        )
    )

    second = faults.say("a turn whose stream carries ignored messages", thread_ts=first.ts)
    messages = faults.wait_until_answered(first.ts, second.ts)

    second_reply = [m for m in messages if float(m.ts) > float(second.ts)]
    assert read_reply(second_reply) == expected_reply(script.pieces)
    followed = [c.params.get("id") for c in faults.agent.calls("GetTask")]
    followed += [c.params.get("id") for c in faults.agent.calls("SubscribeToTask")]
    assert "task-elsewhere" not in followed
    after = faults.store.session(session.id)
    assert after is not None and after.context_id == session.context_id


def test_a_stream_of_ignored_messages_alone_is_sent_again_with_the_same_message_id(
    either_version: Faults,
) -> None:
    faults = either_version
    script = faults.agent.use(
        Script(
            first_answer=[
                message("ROLE_USER", "an echo of the turn"),
                message("ROLE_AGENT", "a message naming a task", "task-elsewhere"),
            ]
        )
    )
    posted = faults.say("a turn answered at first with ignored messages alone")

    seen = read_reply(faults.wait_until_answered(posted.ts))

    assert seen == expected_reply(script.pieces)
    message_id = faults.message_id(posted.ts)
    assert len(faults.agent.sends(message_id)) == 2
    assert len(faults.agent.tasks_of(message_id)) == 1
