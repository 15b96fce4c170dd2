"""A function killed at each stage of a turn: the turn still ends once.

Each test kills the function carrying the turn (SIGKILL, as a crash or an
out-of-memory kill would) at a moment it observes from the agent's side or
from Slack, and starts it again on its port. Nothing tells the stack:
recovery is Pub/Sub's redelivery and the reconcile sweep, which takes the
turn over once the dead function's lease has run out.
"""

from __future__ import annotations

import contextlib
import time

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from tests.faults.agent import DEFAULT_PIECES, Script, Text, ToolCall, canonical_answer

from .conftest import CHANNEL, TURN_WAIT, Faults, expected_reply, read_reply


def assert_sent_once(faults: Faults, ts: str) -> None:
    """The agent received the turn once, as a thread's first turn, and ran one task for it, alone."""
    [send] = faults.agent.sends()
    assert send.message["messageId"] == faults.message_id(ts)
    assert "taskId" not in send.message and "contextId" not in send.message
    [task] = faults.agent.tasks_of(faults.message_id(ts))
    assert getattr(faults.turn(ts), "task_id", None) == task.id
    assert not faults.agent.overlaps


def test_killed_before_the_send_the_turn_is_sent_once(faults: Faults) -> None:
    faults.stack.restart("turn_send")  # a fresh process has not read the agent's card yet
    script = faults.agent.use(Script(hold_card=True))
    posted = faults.say("killed before the send")
    assert script.reached.wait(TURN_WAIT), "turn_send asked for the agent's card"
    assert not faults.agent.sends()

    faults.stack.restart("turn_send")
    script.released.set()

    replies = faults.wait_until_answered(posted.ts)
    assert read_reply(replies) == expected_reply(DEFAULT_PIECES)
    assert_sent_once(faults, posted.ts)


def shows(faults: Faults, thread_ts: str, text: str) -> bool:
    """Whether the thread's answer shows ``text`` and a step card (still streaming or not)."""
    reply = read_reply(faults.bot_messages(thread_ts))
    return text in reply.answer and bool(reply.steps)


def test_killed_mid_stream_the_answer_shows_each_part_once(faults: Faults) -> None:
    script = faults.agent.use(Script(hold_send_after=6))  # task, working, text, call, result, text
    posted = faults.say("killed mid-stream")
    assert script.reached.wait(TURN_WAIT)
    faults.standin.wait_for(
        lambda: shows(faults, posted.ts, "The disk is full on db-2; "), timeout=TURN_WAIT
    )

    faults.stack.restart("turn_send")
    script.released.set()

    replies = faults.wait_until_answered(posted.ts)
    assert read_reply(replies) == expected_reply(DEFAULT_PIECES)
    assert_sent_once(faults, posted.ts)


def test_killed_after_the_terminal_event_the_answer_shows_once(faults: Faults) -> None:
    script = faults.agent.use(
        Script(hold_send_after=8)
    )  # every event, completed included; no close
    posted = faults.say("killed after the terminal event")
    assert script.reached.wait(TURN_WAIT)
    faults.standin.wait_for(
        lambda: shows(faults, posted.ts, canonical_answer(DEFAULT_PIECES)), timeout=TURN_WAIT
    )

    faults.stack.restart("turn_send")
    script.released.set()

    replies = faults.wait_until_answered(posted.ts)
    assert read_reply(replies) == expected_reply(DEFAULT_PIECES)
    assert_sent_once(faults, posted.ts)


def test_killed_before_the_slack_post_the_answer_is_posted_once(faults: Faults) -> None:
    faults.standin.set_rate_limit("chat.stopStream", 1, 3600)
    slack = WebClient(
        token=faults.stack.function_env["SLACK_BOT_TOKEN"], base_url=faults.standin.api_url
    )
    with contextlib.suppress(SlackApiError):
        slack.chat_stopStream(channel=CHANNEL, ts="1.000000")  # uses up the one call allowed
    started = time.time()
    posted = faults.say("killed before the Slack post")

    def refused_stop() -> bool:
        calls = faults.standin.calls("chat.stopStream")
        return any(call.status_code == 429 and call.at >= started for call in calls)

    faults.standin.wait_for(refused_stop, timeout=TURN_WAIT)
    assert (
        getattr(faults.turn(posted.ts), "status", None) == "running"
    )  # the answer is not posted yet

    faults.stack.restart("turn_send")
    faults.standin.clear_rate_limit("chat.stopStream")

    replies = faults.wait_until_answered(posted.ts)
    assert read_reply(replies) == expected_reply(DEFAULT_PIECES)
    assert_sent_once(faults, posted.ts)


def test_stream_follow_killed_while_following_the_answer_shows_once(faults: Faults) -> None:
    pieces = [Text(f"Part {n} of a long answer. ") for n in range(1, 8)]
    pieces.insert(3, ToolCall("call-long", "long_tool", seconds=1.0))
    faults.agent.use(Script(pieces=pieces, gap=1.0))
    posted = faults.say("stream_follow killed")
    faults.standin.wait_for(
        lambda: len(faults.agent.calls("SubscribeToTask")) >= 1, timeout=TURN_WAIT
    )
    faults.standin.wait_for(
        lambda: "Part 5" in read_reply(faults.bot_messages(posted.ts)).answer, timeout=TURN_WAIT
    )

    faults.stack.restart("stream_follow")

    replies = faults.wait_until_answered(posted.ts)
    assert read_reply(replies) == expected_reply(pieces)
    assert_sent_once(faults, posted.ts)
