"""A reply as the person sees it in Slack: ThreadReply, driven by ReplyAssembler, against the stand-in.

Each test feeds agent events to the pure assembler and shows its changes
with the real ThreadReply, through slack_sdk, to the stand-in process; then
reads the thread back as a person sees it.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable
from typing import Any

import pytest
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from local.slack_standin.client import SlackStandin
from shared.core import notices
from shared.core.model import StreamEvent, TaskState
from shared.core.redaction import mark
from shared.core.reply import ReplyAssembler, TextAppended
from shared.core.reply_course import reply_mark
from shared.core.step_cards import read_shown
from shared.feedback import feedback_blocks
from shared.slack.layout import EMPTIED
from shared.slack.left_behind import LeftBehind
from shared.slack.pacing import ReplyLimits
from shared.slack.reply import ThreadReply
from shared.slack.session_status import AgentSessions, ThreadStatus
from shared.slack.thread_read_back import ThreadReadBack
from shared.system import SystemClock, ThreadRuntime
from tests.core.reply_builders import artifact, call, chunk, result, snapshot, text
from tests.replies.support import (
    CHANNEL,
    bot_replies,
    cards,
    final_cards,
    joined_answer,
    seams_in_code,
    shown_text,
)

FAST = ReplyLimits(stream_interval=0.05, update_interval=1.0)


def new_reply(
    slack: WebClient,
    thread_ts: str,
    limits: ReplyLimits = FAST,
    person: bool = True,
    *,
    keep_posting: Callable[[], None] | None = None,
    mark: dict[str, object] | None = None,
    keep_shown_steps: Callable[[dict[str, object]], None] | None = None,
    keep_stream: Callable[[str, dict[str, object]], None] | None = None,
) -> ThreadReply:
    """A reply to Alice (or, without ``person``, to no one: a turn an alert started).

    ``keep_posting``, ``mark``, ``keep_shown_steps`` and ``keep_stream``: as the turn gives
    them (``ThreadReply``).
    """
    user, team = ("U0ALICE", "T0KOURIER") if person else (None, None)
    return ThreadReply(
        slack,
        CHANNEL,
        thread_ts,
        user,
        team,
        clock=SystemClock(),
        runtime=ThreadRuntime(),
        status=ThreadStatus(slack, CHANNEL, thread_ts, AgentSessions()),
        limits=limits,
        keep_posting=keep_posting,
        mark=mark,
        keep_shown_steps=keep_shown_steps,
        keep_stream=keep_stream,
    )


def play(
    reply: ThreadReply, assembler: ReplyAssembler, events: Iterable[StreamEvent], pause: float = 0.0
) -> None:
    """Show each event's changes, as the turn engine does."""
    for event in events:
        reply.show(assembler.feed(event))
        time.sleep(pause)


def lines(count: int, prefix: str = "line") -> list[str]:
    """Numbered lines of text, each ending a line."""
    return [f"{prefix} {index:04d} of the answer, some words to read.\n" for index in range(count)]


def test_a_streamed_answer_shows_its_text_once_and_each_step_once(
    standin: SlackStandin, slack: WebClient, thread_ts: str
) -> None:
    reply = new_reply(slack, thread_ts)
    assembler = ReplyAssembler()
    reply.working()
    session = standin.agent_session(CHANNEL, thread_ts)
    assert session is not None and session.status == "processing"

    play(
        reply,
        assembler,
        [
            chunk("answer", text("Let me look. ")),
            chunk("answer", call("call-1", "search", {"q": "weather"}), append=True),
            chunk("answer", result("call-1", "search", {"sunny": True}), append=True),
            chunk("answer", text("It is **sunny**."), append=True),
        ],
    )
    reply.show(assembler.finish())
    reply.finish()

    [message] = bot_replies(standin, thread_ts)
    assert message.stream == "stopped"
    assert shown_text(message) == "Let me look. It is **sunny**."
    assert cards([message]) == [("call-1", "search", "complete")]
    assert message.tasks[0].details == '{"q": "weather"}'
    assert message.tasks[0].output == '{"sunny": true}'
    assert standin.thread_status(CHANNEL, thread_ts) is None, "no older status line"
    session = standin.agent_session(CHANNEL, thread_ts)
    assert session is not None and session.status == "processing", "the turn sets the next one"


def test_an_answer_streamed_longer_than_the_rollover_limit_arrives_whole_in_order(
    standin: SlackStandin, slack: WebClient, thread_ts: str
) -> None:
    reply = new_reply(slack, thread_ts, ReplyLimits(stream_seconds=1.0, stream_interval=0.05))
    assembler = ReplyAssembler()
    before = lines(5)
    code = ["```python\n", *lines(6, "    print")]
    after = ["```\n", *lines(5, "after")]
    answer = "".join(before + code + after)

    play(reply, assembler, [chunk("answer", text(before[0]))])
    play(
        reply, assembler, [chunk("answer", text(piece), append=True) for piece in before[1:] + code]
    )
    play(reply, assembler, [chunk("answer", call("call-1", "build"), append=True)])
    time.sleep(1.5)  # past the limit, inside the code block, with a step running
    play(reply, assembler, [chunk("answer", text(piece), append=True) for piece in after[:3]])
    time.sleep(1.5)
    play(reply, assembler, [chunk("answer", result("call-1", "build"), append=True)])
    play(reply, assembler, [chunk("answer", text(piece), append=True) for piece in after[3:]])
    reply.show(assembler.finish())
    reply.finish()

    messages = bot_replies(standin, thread_ts)
    assert len(messages) >= 3
    assert all(message.stream == "stopped" for message in messages)
    assert joined_answer(messages) == answer
    assert seams_in_code(messages) >= 1, "the code block was closed and opened again"
    assert "unfinished" not in [status for _, _, status in cards(messages)]
    assert final_cards(messages) == {"call-1": "complete"}
    assert messages[-1].task("call-1") is not None, "the running step went on in the continuation"


def test_an_answer_larger_than_slacks_size_cap_arrives_whole_across_continuations(
    standin: SlackStandin, slack: WebClient, thread_ts: str
) -> None:
    standin.configure(stream_max_chars=2_500)
    reply = new_reply(slack, thread_ts)  # its own limit (11,000 characters) is above Slack's here
    assembler = ReplyAssembler()
    pieces = [*lines(60), "```\n", *lines(80, "    code"), "```\n", *lines(60, "end")]
    answer = "".join(pieces)

    play(reply, assembler, [chunk("answer", text(pieces[0]))])
    play(reply, assembler, [chunk("answer", text(piece), append=True) for piece in pieces[1:]])
    reply.finish()

    messages = bot_replies(standin, thread_ts)
    assert len(answer) > 3 * 2_500 and len(messages) >= 4
    assert all(len(message.text) <= 2_500 for message in messages)
    assert joined_answer(messages) == answer
    assert seams_in_code(messages) >= 1
    assert any(call.error == "msg_too_long" for call in standin.calls())


def test_an_answer_larger_than_the_message_limit_rolls_over_before_slack_refuses_it(
    standin: SlackStandin, slack: WebClient, thread_ts: str
) -> None:
    reply = new_reply(slack, thread_ts, ReplyLimits(message_chars=1_000, stream_interval=0.05))
    assembler = ReplyAssembler()
    answer = "".join(lines(100))

    play(reply, assembler, [chunk("answer", text(answer))])  # one chunk larger than any message
    reply.finish()

    messages = bot_replies(standin, thread_ts)
    assert len(messages) >= 5
    assert all(len(message.text) <= 1_000 for message in messages)
    assert joined_answer(messages) == answer
    assert not [call for call in standin.calls() if not call.ok]


def test_a_stream_slack_already_cut_continues_in_a_new_message(
    standin: SlackStandin, slack: WebClient, thread_ts: str
) -> None:
    standin.configure(stream_lifetime_seconds=1.0)
    reply = new_reply(slack, thread_ts)  # rolls over only after 240 s: Slack cuts it first
    assembler = ReplyAssembler()
    first, second = "".join(lines(3)), "".join(lines(3, "later"))

    play(
        reply,
        assembler,
        [chunk("answer", text(first)), chunk("answer", call("call-1", "wait"), append=True)],
    )
    time.sleep(1.5)
    play(
        reply,
        assembler,
        [
            chunk("answer", text(second), append=True),
            chunk("answer", result("call-1", "wait"), append=True),
        ],
    )
    reply.finish()

    messages = bot_replies(standin, thread_ts)
    assert len(messages) >= 2
    assert joined_answer(messages) == first + second
    assert final_cards(messages) == {"call-1": "complete"}
    assert any(call.error == "message_not_in_streaming_state" for call in standin.calls())


def test_text_already_shown_that_changes_is_edited_in_place_and_later_steps_are_task_cards(
    standin: SlackStandin, slack: WebClient, thread_ts: str
) -> None:
    reply = new_reply(slack, thread_ts)
    assembler = ReplyAssembler()

    play(
        reply,
        assembler,
        [
            chunk("answer", call("call-1", "search"), text("A draft that the agent ")),
            chunk("answer", result("call-1", "search"), append=True),
            chunk("answer", text("will take back."), append=True),
        ],
        pause=0.1,
    )
    play(
        reply,
        assembler,
        [
            chunk(
                "answer",
                call("call-1", "search"),
                result("call-1", "search"),
                text("The final answer."),
            ),
            chunk("other", call("call-2", "fetch")),
            chunk("answer", text(" More after the fetch."), append=True),
            chunk("other", result("call-2", "fetch", {"error": "timed out"}), append=True),
        ],
    )
    reply.show(assembler.finish())
    reply.finish()

    messages = bot_replies(standin, thread_ts)
    streamed, posted = messages
    assert streamed.stream == "stopped" and streamed.edited
    assert shown_text(streamed) == "The final answer."
    assert joined_answer(messages) == "The final answer. More after the fetch."
    assert cards(messages) == [("call-1", "search", "complete"), ("call-2", "fetch", "error")]
    assert [block["type"] for block in posted.blocks] == ["task_card", "markdown"]
    assert "chat.update" in [call.method for call in standin.calls()]


class Died(BaseException):
    """The function's instance was killed (nothing of it goes on)."""


def test_a_reply_taken_over_from_a_checkpoint_kept_as_it_fell_back_stops_its_stream(
    standin: SlackStandin, slack: WebClient, thread_ts: str
) -> None:
    # The changes are taken into the reply's state before the checkpoint that ``show`` keeps
    # first (the event that names the task): a change that makes the reply fall back is in
    # it, its stream not stopped yet. The function dies right after; the one taking over
    # stops that stream and shows the final text there, once, with the step closed.
    first = new_reply(slack, thread_ts)
    assembler = ReplyAssembler()
    play(first, assembler, [chunk("answer", call("call-1", "search"), text("A draft."))])
    first.suspend()
    kept: dict[str, Any] = {}

    def checkpoint_then_die() -> None:
        kept.update(
            json.loads(json.dumps({"reply": assembler.to_state(), "slack": first.to_state()}))
        )
        raise Died

    replaced = chunk("answer", call("call-1", "search"), text("The final answer."))
    with pytest.raises(Died):
        first.show(assembler.feed(replaced), first=checkpoint_then_die)
    first.close()
    [streamed] = bot_replies(standin, thread_ts)
    assert streamed.stream == "streaming" and shown_text(streamed) == "A draft."

    second = new_reply(slack, thread_ts)
    second.restore(kept["slack"], LeftBehind(died=True))
    assembler = ReplyAssembler.from_state(kept["reply"])
    play(second, assembler, [chunk("answer", result("call-1", "search"), append=True)])
    second.show(assembler.finish())
    second.finish()

    messages = bot_replies(standin, thread_ts)
    assert messages[0].stream == "stopped"
    assert joined_answer(messages) == "The final answer."
    assert final_cards(messages) == {"call-1": "complete"}


def test_where_no_stream_can_start_the_reply_is_posted_and_edited_at_most_once_a_second(
    standin: SlackStandin, slack: WebClient, thread_ts: str
) -> None:
    reply = new_reply(slack, thread_ts, person=False)  # a channel stream needs a person
    assembler = ReplyAssembler()
    pieces = lines(60)
    started = time.monotonic()

    play(reply, assembler, [chunk("answer", text(pieces[0]))])
    play(
        reply,
        assembler,
        [chunk("answer", text(piece), append=True) for piece in pieces[1:20]],
        pause=0.05,
    )
    play(
        reply,
        assembler,
        [chunk("answer", call("call-1", "lookup", {"id": 7}), append=True)],
        pause=0.05,
    )
    play(
        reply,
        assembler,
        [chunk("answer", text(piece), append=True) for piece in pieces[20:40]],
        pause=0.05,
    )
    play(reply, assembler, [chunk("answer", result("call-1", "lookup", {"found": 1}), append=True)])
    play(
        reply,
        assembler,
        [chunk("answer", text(piece), append=True) for piece in pieces[40:]],
        pause=0.05,
    )
    reply.show(assembler.finish())
    reply.finish()
    elapsed = time.monotonic() - started

    [message] = bot_replies(standin, thread_ts)
    assert message.stream is None
    assert [block["type"] for block in message.blocks] == ["markdown", "task_card", "markdown"]
    assert message.blocks[0]["text"] == "".join(pieces[:20])
    assert joined_answer([message]) == "".join(pieces), "the last state was written"
    assert cards([message]) == [("call-1", "lookup", "complete")]
    updates = standin.calls("chat.update")
    assert 1 <= len(updates) <= elapsed + 2, f"{len(updates)} updates in {elapsed:.1f} s"
    assert not standin.calls("chat.startStream")


def test_rate_limited_calls_wait_for_retry_after_and_lose_or_reorder_nothing(
    standin: SlackStandin, slack: WebClient, thread_ts: str
) -> None:
    standin.set_rate_limit("chat.appendStream", 1, 1.0)
    reply = new_reply(
        slack, thread_ts, ReplyLimits()
    )  # appends every 0.6 s: every other one is refused
    assembler = ReplyAssembler()
    pieces = lines(30)

    play(reply, assembler, [chunk("answer", text(pieces[0]))])
    play(
        reply,
        assembler,
        [chunk("answer", text(piece), append=True) for piece in pieces[1:15]],
        pause=0.1,
    )
    play(reply, assembler, [chunk("answer", call("call-1", "sum"), append=True)], pause=0.1)
    play(reply, assembler, [chunk("answer", result("call-1", "sum"), append=True)], pause=0.1)
    play(
        reply,
        assembler,
        [chunk("answer", text(piece), append=True) for piece in pieces[15:]],
        pause=0.1,
    )
    reply.finish()

    [message] = bot_replies(standin, thread_ts)
    assert shown_text(message) == "".join(pieces)
    assert final_cards([message]) == {"call-1": "complete"}
    streaming = [
        call
        for call in standin.calls()
        if call.method.startswith("chat.") and "Stream" in call.method
    ]
    assert [call for call in streaming if call.status_code == 429], "Slack answered 429"
    taken = "".join(
        chunk["text"]
        for call in streaming
        if call.ok
        for chunk in call.params.get("chunks") or []
        if chunk["type"] == "markdown_text"
    )
    assert taken == "".join(pieces), "each piece was taken once, in order"


def test_the_status_is_set_again_while_nothing_is_posted_and_never_after(
    standin: SlackStandin, slack: WebClient, thread_ts: str
) -> None:
    # The older status line, where the workspace refuses agent sessions.
    standin.configure(agent_sessions=False)
    try:
        reply = new_reply(slack, thread_ts, ReplyLimits(status_refresh=0.5, stream_interval=0.05))

        reply.working()
        standin.wait_for(lambda: len(standin.calls("assistant.threads.setStatus")) >= 3, timeout=30)
        reply.show([TextAppended("Here it is.")])
        reply.finish()
        time.sleep(1.0)
    finally:
        standin.configure(agent_sessions=True)

    calls = [call.method for call in standin.calls()]
    assert calls.index("chat.startStream") > max(
        index for index, method in enumerate(calls) if method == "assistant.threads.setStatus"
    ), "no status once the answer is posted"


def test_a_reply_closed_after_its_run_failed_calls_slack_no_more(
    standin: SlackStandin, slack: WebClient, thread_ts: str
) -> None:
    # A function whose run failed (here Slack refused the stream) must leave
    # the thread to the one that takes the turn over: no status set again, no
    # queued text sent from the dead run.
    standin.configure(agent_sessions=False)  # the older status line, set again and again
    try:
        reply = new_reply(slack, thread_ts, ReplyLimits(status_refresh=0.3, stream_interval=0.05))
        reply.working()
        standin.wait_for(lambda: len(standin.calls("assistant.threads.setStatus")) >= 2, timeout=30)
        standin.fail("chat.startStream")  # the reply falls back to ordinary messages,
        standin.fail("chat.postMessage")  # and Slack refuses those too
        with pytest.raises(SlackApiError):
            reply.show([TextAppended("Here it is.")])

        reply.close()
        calls = len(standin.calls())
        time.sleep(1.5)  # five status refreshes, and the queued text due many times over
    finally:
        standin.configure(agent_sessions=True)

    assert len(standin.calls()) == calls
    assert not bot_replies(standin, thread_ts)


def test_another_function_continues_the_same_streamed_message_from_the_state(
    standin: SlackStandin, slack: WebClient, thread_ts: str
) -> None:
    first = new_reply(slack, thread_ts)
    assembler = ReplyAssembler()
    play(
        first,
        assembler,
        [
            chunk("answer", text("Part one:\n")),
            chunk("answer", call("call-1", "slow"), append=True),
            chunk("answer", text("| a | b |\n|---|---|\n| 1 | 2 |\n"), append=True),
        ],
    )
    first.suspend()
    state = json.loads(json.dumps({"reply": assembler.to_state(), "slack": first.to_state()}))

    second = new_reply(slack, thread_ts)
    second.restore(state["slack"], LeftBehind())
    assembler = ReplyAssembler.from_state(state["reply"])
    play(
        second,
        assembler,
        [
            chunk("answer", result("call-1", "slow"), append=True),
            chunk("answer", text("part two."), append=True),
        ],
    )
    second.finish()

    [message] = bot_replies(standin, thread_ts)
    assert shown_text(message) == "Part one:\n```\na | b\n--+--\n1 | 2\n```\npart two."
    assert cards([message]) == [("call-1", "slow", "complete")]


def test_a_function_taking_over_a_posted_reply_writes_again_what_the_one_that_died_edited(
    standin: SlackStandin, slack: WebClient, thread_ts: str
) -> None:
    # Seed 656: the text taken back, the reply posts and edits; its function edits the
    # emptied message after its last checkpoint and dies. The one that takes over lays the
    # answer out in a new message after the step; the old message must not keep the text.
    first = new_reply(slack, thread_ts)
    assembler = ReplyAssembler()
    play(first, assembler, [chunk("answer", text("A draft."))])
    play(first, assembler, [chunk("answer", text(""))])  # taken back: posted and edited now
    first.suspend()
    state = json.loads(json.dumps({"reply": assembler.to_state(), "slack": first.to_state()}))
    play(first, assembler, [chunk("answer", text("The answer."), append=True)])
    first.suspend()  # written in the emptied message, after the checkpoint
    first.close()  # and its function dies

    second = new_reply(slack, thread_ts)
    second.restore(state["slack"], LeftBehind(died=True))
    assembler = ReplyAssembler.from_state(state["reply"])
    play(second, assembler, [chunk("answer", call("call-1", "search"), text("The answer."))])
    play(second, assembler, [chunk("answer", result("call-1", "search"), append=True)])
    second.show(assembler.finish())
    second.finish()

    messages = bot_replies(standin, thread_ts)
    assert joined_answer(messages).replace(EMPTIED, "") == "The answer."
    assert cards(messages) == [("call-1", "search", "complete")]


def test_a_function_taking_over_a_streamed_reply_writes_again_what_the_one_that_died_edited(
    standin: SlackStandin, slack: WebClient, thread_ts: str
) -> None:
    # Seed 5877: the streamed answer went on in a second message; after the last checkpoint
    # the agent replaced its text, so the function fell back and edited the first message,
    # and died. The replace was the agent's draft: the one taking over shows the text of the
    # checkpoint again, and the first message must not keep the draft.
    first = new_reply(slack, thread_ts, ReplyLimits(message_chars=1_000, stream_interval=0.05))
    assembler = ReplyAssembler()
    answer = "".join(lines(30))
    play(first, assembler, [chunk("answer", text(answer))])  # streamed in two messages or more
    first.suspend()
    state = json.loads(json.dumps({"reply": assembler.to_state(), "slack": first.to_state()}))
    play(first, assembler, [chunk("answer", text("A draft."))])  # replaced: falls back
    first.show(assembler.finish())
    first.suspend()  # the first message edited to show the draft, after the checkpoint
    first.close()  # and its function dies
    assert "A draft." in joined_answer(bot_replies(standin, thread_ts))

    second = new_reply(slack, thread_ts, ReplyLimits(message_chars=1_000, stream_interval=0.05))
    second.restore(state["slack"], LeftBehind(died=True))
    assembler = ReplyAssembler.from_state(state["reply"])
    play(second, assembler, [chunk("answer", text("The end."), append=True)])
    second.show(assembler.finish())
    second.finish()

    messages = bot_replies(standin, thread_ts)
    assert len(messages) >= 2
    assert joined_answer(messages) == answer + "The end."


def test_a_posted_answer_the_agent_takes_back_whole_shows_no_text_of_it(
    standin: SlackStandin, slack: WebClient, thread_ts: str
) -> None:
    # Seed 2972: no stream could start, so the draft was posted; the agent took it all back
    # within the update interval, and the end's write left the posted draft as it was.
    reply = new_reply(slack, thread_ts, person=False)
    assembler = ReplyAssembler()

    play(reply, assembler, [chunk("answer", text("A draft."))])
    play(reply, assembler, [chunk("answer", text(""))])  # taken back, before the next edit
    reply.show(assembler.finish())
    reply.finish()

    [message] = bot_replies(standin, thread_ts)
    assert assembler.answer_text == ""
    assert message.edited and shown_text(message) == EMPTIED
    assert message.text == EMPTIED, "its notification text holds no draft either"


def test_a_posted_answer_taken_back_to_a_shorter_one_empties_its_later_messages(
    standin: SlackStandin, slack: WebClient, thread_ts: str
) -> None:
    limits = ReplyLimits(message_chars=1_000, update_interval=1.0)
    reply = new_reply(slack, thread_ts, limits, person=False)
    assembler = ReplyAssembler()
    buttons = feedback_blocks("C1-1.2", "sim")

    play(reply, assembler, [chunk("answer", text("".join(lines(60))))])  # posted in 3 messages
    play(reply, assembler, [chunk("answer", text("The short answer."))])  # replaced, shorter
    reply.show(assembler.finish())
    reply.finish(buttons)

    first, *rest = bot_replies(standin, thread_ts)
    assert len(rest) >= 2
    assert shown_text(first) == "The short answer."
    assert [shown_text(message) for message in rest] == [EMPTIED] * len(rest)
    assert rest[-1].blocks[-1]["type"] == "context_actions", "the buttons end its last message"


def test_step_summaries_hide_secrets(
    standin: SlackStandin, slack: WebClient, thread_ts: str
) -> None:
    reply = new_reply(slack, thread_ts)
    assembler = ReplyAssembler()

    play(
        reply,
        assembler,
        [
            chunk("answer", call("call-1", "deploy", {"service": "api", "api_key": "k-12345"})),
            chunk(
                "answer",
                result("call-1", "deploy", {"log": "used token xoxb-1111-2222-abcdefgh"}),
                append=True,
            ),
        ],
    )
    reply.finish()

    [message] = bot_replies(standin, thread_ts)
    [card] = message.tasks
    assert card.details == f'{{"service": "api", "api_key": "{mark("k-12345")}"}}'
    assert card.output == f'{{"log": "used token {mark("xoxb-1111-2222-abcdefgh")}"}}'


def test_an_idle_stream_is_stopped_in_time_and_its_running_step_closes_in_the_next_message(
    standin: SlackStandin, slack: WebClient, thread_ts: str
) -> None:
    reply = new_reply(slack, thread_ts, ReplyLimits(stream_seconds=1.0, stream_interval=0.05))
    assembler = ReplyAssembler()

    play(
        reply,
        assembler,
        [
            chunk("answer", text("Building.\n")),
            chunk("answer", call("call-1", "build"), append=True),
        ],
    )
    [first] = standin.wait_for(
        lambda: [m for m in bot_replies(standin, thread_ts) if m.stream == "stopped"], timeout=30
    )
    assert first.tasks[0].status == "complete" and not first.tasks[0].left_unfinished
    play(reply, assembler, [chunk("answer", result("call-1", "build"), append=True)])
    reply.finish()

    messages = bot_replies(standin, thread_ts)
    assert len(messages) == 2
    assert cards(messages) == [("call-1", "build", "complete"), ("call-1", "build", "complete")]
    assert messages[0].tasks[0].output == "continued in the next message"
    assert joined_answer(messages) == "Building.\n"


# Slack reads <!here>, <!channel>, <!everyone>, <!subteam^…>, <@U…> and <#C…>
# as mentions that notify people, and <url|label> as a link whose label hides
# its address (documented for mrkdwn; in standard Markdown <@U…> is observed
# to mention). The stand-in counts them wherever Slack may read them.
COMMANDING_TEXT = (
    "Heads up <!here>, <!channel> and <!EVERYONE>, <!subteam^S0TEAM|@sre>, <@U0BOB> in <#C0OTHER>:"
    " approve at <https://evil.example/approve|the approval page>. Still fine: a < b, List<int>.\n"
)


def test_agent_text_and_steps_notify_no_one_and_hide_no_link(
    standin: SlackStandin, slack: WebClient, thread_ts: str
) -> None:
    reply = new_reply(slack, thread_ts)
    assembler = ReplyAssembler()
    # The text arrives cut inside each sequence, as a token-by-token agent sends it.
    pieces = [COMMANDING_TEXT[i : i + 3] for i in range(0, len(COMMANDING_TEXT), 3)]

    play(
        reply,
        assembler,
        [
            chunk("answer", text(pieces[0])),
            *(chunk("answer", text(piece), append=True) for piece in pieces[1:]),
            chunk("answer", call("call-1", "<!channel>", {"q": "<!here>"}), append=True),
            chunk("answer", result("call-1", "<!channel>", {"a": "<@U0BOB>"}), append=True),
        ],
    )
    reply.show(assembler.finish())
    reply.finish()

    [message] = bot_replies(standin, thread_ts)
    assert message.commands == []
    assert shown_text(message).replace("\u2060", "") == COMMANDING_TEXT, "it reads the same"
    assert "a < b, List<int>." in shown_text(message), "other angle brackets are left alone"


def test_an_answer_posted_instead_of_streamed_notifies_no_one_in_its_fallback_text_either(
    standin: SlackStandin, slack: WebClient, thread_ts: str
) -> None:
    reply = new_reply(slack, thread_ts, person=False)
    assembler = ReplyAssembler()

    play(reply, assembler, [chunk("answer", text(COMMANDING_TEXT))])
    reply.finish()

    [message] = bot_replies(standin, thread_ts)
    assert message.blocks and message.commands == []
    assert shown_text(message).replace("\u2060", "") == COMMANDING_TEXT


def test_a_notice_of_kouriers_own_is_marked_and_an_answer_saying_the_same_is_not(
    standin: SlackStandin, slack: WebClient, thread_ts: str
) -> None:
    reply = new_reply(slack, thread_ts)
    assembler = ReplyAssembler()
    forged = "Approved by <@U0ALICE>. " + notices.NO_OUTPUT

    play(reply, assembler, [chunk("answer", text(forged))])
    reply.notice(notices.NO_OUTPUT)

    answer, notice = bot_replies(standin, thread_ts)
    assert notice.text == notices.NO_OUTPUT, "the notification reads the notice"
    [block] = notice.blocks
    assert block["type"] == "context" and block["elements"] == [
        {"type": "mrkdwn", "text": f"*{notices.KOURIER_MARK}*"},
        {"type": "plain_text", "text": notices.NO_OUTPUT, "emoji": False},
    ]
    assert answer.blocks == [] and "context" not in json.dumps(answer.model_dump())
    assert answer.commands == [], "the forged approval mentions no one"


def test_a_step_with_no_result_when_the_turn_ends_is_not_shown_as_complete(
    standin: SlackStandin, slack: WebClient, thread_ts: str
) -> None:
    reply = new_reply(slack, thread_ts)
    assembler = ReplyAssembler()
    play(
        reply,
        assembler,
        [
            chunk("answer", text("Checking. ")),
            chunk("answer", call("call-1", "read_runbook"), append=True),
            chunk("answer", text("Done."), append=True),
        ],
    )
    reply.show(assembler.finish())
    reply.finish()

    [message] = bot_replies(standin, thread_ts)
    [card] = message.tasks
    assert (card.title, card.status, card.output) == (
        "read_runbook",
        "error",
        notices.STEP_NO_RESULT,
    )
    assert not card.left_unfinished


def test_a_posted_step_with_no_result_when_the_turn_ends_is_not_shown_as_complete(
    standin: SlackStandin, slack: WebClient, thread_ts: str
) -> None:
    reply = new_reply(slack, thread_ts, person=False)  # no stream: the reply is posted
    assembler = ReplyAssembler()
    play(reply, assembler, [chunk("answer", text("Checking. "), call("call-1", "read_runbook"))])
    reply.show(assembler.finish())
    reply.finish()

    [message] = bot_replies(standin, thread_ts)
    [card] = [block for block in message.blocks if block["type"] == "task_card"]
    assert card["status"] == "error"
    assert notices.STEP_NO_RESULT in json.dumps(card["output"])


def test_a_step_with_no_result_when_the_task_pauses_waits_for_the_answer(
    standin: SlackStandin, slack: WebClient, thread_ts: str
) -> None:
    reply = new_reply(slack, thread_ts)
    assembler = ReplyAssembler()
    play(reply, assembler, [chunk("answer", call("call-1", "delete_file"))])
    reply.finish(paused=True)

    [message] = bot_replies(standin, thread_ts)
    [card] = message.tasks
    assert (card.status, card.output) == ("complete", notices.STEP_WAITS_FOR_ANSWER)
    assert not card.left_unfinished


def test_a_step_a_function_that_died_showed_running_is_closed_where_it_showed(
    standin: SlackStandin, slack: WebClient, thread_ts: str
) -> None:
    # Seed 272: a step shows running after the last checkpoint, and its function dies. The
    # function taking over finds the stream too old and rolls it over: the step, which its
    # checkpoint does not know, must not be left running in the stopped message.
    kept: dict[str, object] = {}
    limits = ReplyLimits(stream_interval=0.05, update_interval=1.0, stream_seconds=1.0)
    first = new_reply(
        slack,
        thread_ts,
        limits,
        keep_shown_steps=lambda shown: kept.update(json.loads(json.dumps(shown))),
    )
    assembler = ReplyAssembler()
    play(first, assembler, [chunk("answer", text("Part one:\n"))])
    first.suspend()
    state = json.loads(json.dumps({"reply": assembler.to_state(), "slack": first.to_state()}))
    play(first, assembler, [chunk("answer", call("call-1", "slow"), append=True)])
    first.suspend()  # shown running, after the checkpoint
    first.close()  # and its function dies
    time.sleep(1.1)

    second = new_reply(slack, thread_ts, limits)
    second.restore(
        state["slack"], LeftBehind(died=True, shown=read_shown(kept))
    )  # too old: rolled over
    assembler = ReplyAssembler.from_state(state["reply"])
    play(second, assembler, [chunk("answer", text("part two."), append=True)])
    second.show(assembler.finish())
    second.finish()

    messages = bot_replies(standin, thread_ts)
    assert cards(messages) == [
        ("call-1", "slow", "complete"),  # closed as continued in the next message
        ("call-1", "slow", "error"),  # no result came
    ]


def test_a_step_a_function_that_died_closed_to_continue_below_is_closed_by_a_stop(
    standin: SlackStandin, slack: WebClient, thread_ts: str
) -> None:
    # Seeds 93, 741: a step shows running after the last checkpoint; its function falls back,
    # stops the stream with the step "continued below", and dies before it posts the card.
    # A person's stop ends the reply from that checkpoint, which does not know the step: it
    # must still close it, below, not leave it only "continued below".
    kept: dict[str, object] = {}
    first = new_reply(
        slack,
        thread_ts,
        FAST,
        keep_shown_steps=lambda shown: kept.update(json.loads(json.dumps(shown))),
    )
    assembler = ReplyAssembler()
    play(first, assembler, [chunk("answer", text("Part one:\n"))])
    first.suspend()
    state = json.loads(json.dumps(first.to_state()))
    play(first, assembler, [chunk("answer", call("call-1", "slow"), append=True)])
    first.suspend()  # shown running, after the checkpoint
    first.close()  # it falls back: the stream stops with the step continued below, and it dies
    (stream,) = first.posted
    closed = {
        "type": "task_update",
        "id": "call-1",
        "title": "slow",
        "status": "complete",
        "output": "continued below",
    }
    kept["call-1"] = {"ts": stream, "update": closed}
    slack.chat_stopStream(channel=CHANNEL, ts=stream, chunks=[closed])

    second = new_reply(slack, thread_ts)
    second.restore(state, LeftBehind(shown=read_shown(kept)))  # a person's stop took the turn
    second.stopped([])

    assert cards(bot_replies(standin, thread_ts)) == [
        ("call-1", "slow", "complete"),  # continued below
        ("call-1", "slow", "error"),  # no result came
    ]


@pytest.mark.parametrize("taker", ["taken over", "stopped"])
def test_a_message_posted_after_the_last_checkpoint_is_continued_by_the_function_taking_over(
    standin: SlackStandin, slack: WebClient, thread_ts: str, taker: str
) -> None:
    # Seeds 946, 246: a function posts a message of the reply (its text and a step's card,
    # running) and dies, or a person's stop takes the turn from it, before its next
    # checkpoint names that message. The function taking over must not show the text and
    # the step again in a new message, nor leave the card running.
    mark = reply_mark("C1-1.5", None)
    posting: list[bool] = []
    first = posted_reply(slack, thread_ts, mark, keep_posting=lambda: posting.append(True))
    state = json.loads(json.dumps(first.to_state()))  # the checkpoint: nothing posted yet
    events = [
        chunk("answer", text("Looking.\n")),
        chunk("answer", call("call-1", "lookup"), append=True),
    ]
    play(first, ReplyAssembler(), events)
    first.suspend()  # posted, marked as the reply's
    first.close()  # and its function dies
    assert posting == [True]  # recorded before the post

    second = posted_reply(slack, thread_ts, mark)
    thread = ThreadReadBack(slack, CHANNEL, thread_ts).read_back(since=None)
    if taker == "taken over":
        second.restore(state, LeftBehind(died=True, thread=thread))
        assembler = ReplyAssembler()  # the events read again
        play(
            second,
            assembler,
            [*events, chunk("answer", result("call-1", "lookup", 7), append=True)],
        )
        second.show(assembler.finish())
        second.finish()
    else:
        second.restore(state, LeftBehind(thread=thread))
        second.stopped([])

    messages = bot_replies(standin, thread_ts)
    assert len(messages) == 1, [shown_text(m) for m in messages]
    if taker == "taken over":
        assert joined_answer(messages) == "Looking.\n"
        assert cards(messages) == [("call-1", "lookup", "complete")]
    else:  # the stop ends the reply where its checkpoint stands: the step it never knew is gone
        assert cards(messages) == []


@pytest.mark.parametrize("taker", ["taken over", "stopped"])
def test_a_stream_started_after_the_last_checkpoint_is_continued_by_the_function_taking_over(
    standin: SlackStandin, slack: WebClient, thread_ts: str, taker: str
) -> None:
    # Seeds 3713, 9846: a function rolls its stream over after the last checkpoint, and the
    # new stream shows a step and text; then it dies, or a person's stop takes the turn from
    # it, before a checkpoint names that stream. chat.startStream takes no metadata, so only
    # the turn's record of the streams the reply started (``keep_stream``) names it. The
    # function taking over must not show the text and the step again in another message,
    # nor leave that stream open with the card running.
    kept: dict[str, object] = {}
    streams: list[str] = []
    limits = ReplyLimits(stream_interval=0.05, update_interval=1.0, stream_seconds=1.0)

    def keep_stream(ts: str, shown: dict[str, object]) -> None:
        streams.append(ts)
        kept.update(json.loads(json.dumps(shown)))

    first = new_reply(
        slack,
        thread_ts,
        limits,
        keep_shown_steps=lambda shown: kept.update(json.loads(json.dumps(shown))),
        keep_stream=keep_stream,
    )
    assembler = ReplyAssembler()
    play(first, assembler, [chunk("answer", text("Part one.\n"))])
    first.suspend()
    state = json.loads(json.dumps({"reply": assembler.to_state(), "slack": first.to_state()}))
    time.sleep(1.1)  # the stream is too old: the next text rolls it over
    events = [
        chunk("answer", call("call-1", "lookup"), append=True),
        chunk("answer", text("Part two."), append=True),
    ]
    play(first, assembler, events)
    first.suspend()  # a new stream, which no checkpoint names
    first.close()  # and its function dies
    assert len(streams) == 2, "each stream recorded as it started"

    second = new_reply(slack, thread_ts, limits)
    if taker == "taken over":
        second.restore(
            state["slack"], LeftBehind(died=True, shown=read_shown(kept), streams=streams)
        )
        assembler = ReplyAssembler.from_state(state["reply"])  # the events read again
        play(second, assembler, [*events, chunk("answer", result("call-1", "lookup", 7))])
        second.show(assembler.finish())
        second.finish()
    else:
        second.restore(state["slack"], LeftBehind(shown=read_shown(kept), streams=streams))
        second.stopped([])

    messages = bot_replies(standin, thread_ts)
    assert all(message.stream != "streaming" for message in messages), "a stream left open"
    read = [message for message in messages if shown_text(message) != EMPTIED]  # the step's below
    # a stop ends the reply where its checkpoint stands, the text it never knew gone
    answer = "Part one.\nPart two." if taker == "taken over" else "Part one.\n"
    assert joined_answer(read) == answer, [shown_text(m) for m in messages]
    shown = [(task.status, task.output) for message in messages for task in message.tasks]
    shown += [
        (block["status"], json.dumps(block.get("output")))
        for message in messages
        for block in message.blocks
        if block["type"] == "task_card"
    ]
    once = [status for status, output in shown if "continued" not in str(output)]
    assert once == ["complete" if taker == "taken over" else "error"], shown


def test_a_stream_left_open_before_the_first_checkpoint_and_the_checkpoints_own_are_stopped(
    standin: SlackStandin, slack: WebClient, thread_ts: str
) -> None:
    # Seed 18734: a function starts a stream (recorded as it started) and dies before the
    # turn's first checkpoint; the next function begins the turn afresh, knowing nothing
    # of that stream, streams the answer in a new one, keeps a checkpoint naming it, and
    # dies too. The function taking over adopts the older stream: it must stop both,
    # and not edit the checkpoint's stream while Slack still streams it (refused with
    # streaming_state_conflict on every take-over, until the turn failed).
    streams: list[str] = []
    events = [chunk("answer", text("Part one.\n"))]

    def keep_stream(ts: str, shown: dict[str, object]) -> None:
        streams.append(ts)

    dead = new_reply(slack, thread_ts, keep_stream=keep_stream)
    play(dead, ReplyAssembler(), events)
    dead.suspend()
    dead.close()  # its function dies before any checkpoint
    afresh = new_reply(slack, thread_ts, keep_stream=keep_stream)
    assembler = ReplyAssembler()
    play(afresh, assembler, events)
    afresh.suspend()
    state = json.loads(json.dumps({"reply": assembler.to_state(), "slack": afresh.to_state()}))
    afresh.close()  # and its function dies too
    assert len(streams) == 2, "each stream recorded as it started"

    taker = new_reply(slack, thread_ts)
    taker.restore(state["slack"], LeftBehind(died=True, streams=streams))
    assembler = ReplyAssembler.from_state(state["reply"])
    play(taker, assembler, [chunk("answer", text("Part two."), append=True)])
    taker.show(assembler.finish())
    taker.finish()

    messages = bot_replies(standin, thread_ts)
    assert all(message.stream != "streaming" for message in messages), "a stream left open"
    read = [message for message in messages if shown_text(message) != EMPTIED]
    assert joined_answer(read) == "Part one.\nPart two.", [shown_text(m) for m in messages]


def posted_reply(
    slack: WebClient,
    thread_ts: str,
    mark: dict[str, object],
    keep_posting: Callable[[], None] | None = None,
    keep_shown_steps: Callable[[dict[str, object]], None] | None = None,
) -> ThreadReply:
    """A reply posted and edited (no person to stream to), its messages marked ``mark``."""
    return new_reply(
        slack,
        thread_ts,
        person=False,
        keep_posting=keep_posting,
        mark=mark,
        keep_shown_steps=keep_shown_steps,
    )


def test_a_card_shown_final_in_a_named_message_after_the_checkpoint_keeps_it_when_taken_over(
    standin: SlackStandin, slack: WebClient, thread_ts: str
) -> None:
    # After its last checkpoint, a function of a posted reply shows a step's card final in
    # the message that checkpoint names, and dies. The function taking over writes that
    # message whole: it must keep the card there, not drop it (the step, shown final,
    # would then show nowhere final).
    kept: dict[str, object] = {}
    first = posted_reply(
        slack,
        thread_ts,
        reply_mark("C1-1.5", None),
        keep_shown_steps=lambda shown: kept.update(json.loads(json.dumps(shown))),
    )
    assembler = ReplyAssembler()
    play(first, assembler, [chunk("answer", text("Looking.\n"))])
    first.suspend()  # posted
    state = json.loads(json.dumps(first.to_state()))  # the checkpoint names it
    events = [
        chunk("answer", call("call-1", "lookup"), append=True),
        chunk("answer", result("call-1", "lookup", 7), append=True),
    ]
    play(first, assembler, events)
    first.suspend()  # the card, final, in that message
    first.close()  # and its function dies

    second = posted_reply(slack, thread_ts, reply_mark("C1-1.5", None))
    second.restore(state, LeftBehind(died=True, shown=read_shown(kept)))
    second.finish()

    (message,) = bot_replies(standin, thread_ts)
    assert shown_text(message) == "Looking.\n"
    assert cards([message]) == [("call-1", "lookup", "complete")]


def test_a_reply_taken_over_keeps_its_feedback_buttons_when_its_stream_is_written_whole(
    standin: SlackStandin, slack: WebClient, thread_ts: str
) -> None:
    # The function taking over writes the stopped stream whole (its function may have
    # streamed more after the checkpoint): chat.update with text alone would drop the
    # blocks chat.stopStream just showed (Slack's rule for text without blocks).
    first = new_reply(slack, thread_ts)
    assembler = ReplyAssembler()
    play(first, assembler, [chunk("answer", text("The answer is 42."))])
    first.suspend()
    state = json.loads(json.dumps({"reply": assembler.to_state(), "slack": first.to_state()}))
    first.close()  # and its function dies

    second = new_reply(slack, thread_ts)
    second.restore(state["slack"], LeftBehind(died=True))
    assembler = ReplyAssembler.from_state(state["reply"])
    second.show(assembler.finish())
    second.finish(feedback_blocks("C1-1.2", "sim"))

    [message] = bot_replies(standin, thread_ts)
    assert shown_text(message) == "The answer is 42."
    assert message.blocks and message.blocks[-1]["type"] == "context_actions", message.blocks


def test_a_step_running_when_the_thread_is_told_mid_answer_finishes_at_its_result(
    standin: SlackStandin, slack: WebClient, thread_ts: str
) -> None:
    """Seeds 4972, 5469: the context-changed notice closed a running step "No result"."""
    reply = new_reply(slack, thread_ts)
    assembler = ReplyAssembler()
    play(
        reply,
        assembler,
        [chunk("answer", text("Checking. ")), chunk("answer", call("call-1", "read"), append=True)],
    )
    reply.tell(notices.CONTEXT_CHANGED_NOTICE)
    play(
        reply,
        assembler,
        [
            chunk("answer", result("call-1", "read"), append=True),
            chunk("answer", text("Done."), append=True),
        ],
    )
    reply.show(assembler.finish())
    reply.finish()

    first, notice, rest = bot_replies(standin, thread_ts)
    assert notice.text == notices.CONTEXT_CHANGED_NOTICE
    assert final_cards([first, rest]) == {"call-1": "complete"}
    assert first.tasks[0].output == "continued in the next message"
    assert joined_answer([first, rest]) == "Checking. Done."


def test_an_answer_whose_shown_text_changed_ends_with_its_feedback_buttons(
    standin: SlackStandin, slack: WebClient, thread_ts: str
) -> None:
    # A replaced text falls the reply back to edits: the stream's message takes the new
    # text with chat.update, and its last message must still end with the buttons.
    reply = new_reply(slack, thread_ts)
    assembler = ReplyAssembler()
    play(reply, assembler, [chunk("answer", text("The answer is 41."))], pause=0.2)
    play(reply, assembler, [chunk("answer", text("The answer is 42."))])
    reply.show(assembler.finish())
    reply.finish(feedback_blocks("C1-1.2", "sim"))

    messages = bot_replies(standin, thread_ts)
    assert joined_answer(messages) == "The answer is 42.", [shown_text(m) for m in messages]
    last = messages[-1]
    assert last.blocks and last.blocks[-1]["type"] == "context_actions", last.blocks


@pytest.mark.parametrize("person", [False, True], ids=["posted", "streamed"])
def test_a_step_running_when_a_person_stops_the_turn_shows_the_result_the_stopped_task_holds(
    standin: SlackStandin, slack: WebClient, thread_ts: str, person: bool
) -> None:
    # Seeds 899, 1820, 2449, 5002: the carrier read the step's result while its card waited
    # for its next edit; a person's stop took the turn, and the stop's function, from the
    # checkpoint before that read, closed the step "No result came from the agent". It ends
    # the reply with the results the task holds as CancelTask answers it (canonical).
    limits = ReplyLimits(stream_interval=5.0, update_interval=1.0)  # the card waits its turn
    carrier, assembler = new_reply(slack, thread_ts, limits, person), ReplyAssembler()
    play(carrier, assembler, [chunk("answer", text("Let me look. "), call("call-1", "search"))])
    carrier.suspend()  # shown running
    checkpoint = json.loads(
        json.dumps({"slack": carrier.to_state(), "reply": assembler.to_state()})
    )
    play(carrier, assembler, [chunk("answer", result("call-1", "search"), append=True)])
    carrier.close()  # the stop took the turn before the card showed the result

    stop = new_reply(slack, thread_ts, limits, person)
    stop.restore(checkpoint["slack"], LeftBehind())
    cancelled = snapshot(
        artifact("answer", text("Let me look. "), call("call-1", "search"), result("call-1")),
        state=TaskState.CANCELED,
    )
    stop.stopped([], ReplyAssembler.from_state(checkpoint["reply"]).results_in(cancelled))

    assert final_cards(bot_replies(standin, thread_ts)) == {"call-1": "complete"}
