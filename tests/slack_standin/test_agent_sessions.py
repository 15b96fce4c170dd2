"""Agent sessions on the stand-in: status, title, the stop button and feedback, as Slack has them.

Each test drives slack_sdk's real WebClient (the methods slack-sdk 3.48 has:
``agents_sessions_setStatus``, ``agents_sessions_rename``, ``chat_stopStream``
with ``session_status``) and reads back what a person would see.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError
from slack_sdk.models.blocks import (
    ContextActionsBlock,
    FeedbackButtonObject,
    FeedbackButtonsElement,
)
from slack_sdk.signature import SignatureVerifier

from local.slack_standin import SlackStandin, StandinError
from tests.slack_standin.support import CHANNEL, SIGNING_SECRET, Receiver


def slack_error(call: Callable[[], object]) -> str:
    """Slack's error code for a call it refuses."""
    with pytest.raises(SlackApiError) as raised:
        call()
    return str(raised.value.response["error"])


def feedback_block() -> dict[str, Any]:
    """Feedback buttons as slack_sdk's own models build them."""
    block = ContextActionsBlock(
        block_id="fb-1",
        elements=[
            FeedbackButtonsElement(
                action_id="answer_feedback",
                positive_button=FeedbackButtonObject(text="👍", value="up:turn-1"),
                negative_button=FeedbackButtonObject(text="👎", value="down:turn-1"),
            )
        ],
    )
    return block.to_dict()


def test_set_status_creates_the_session_with_its_title_and_initiator(
    slack: WebClient, standin: SlackStandin
) -> None:
    root = standin.say(CHANNEL, "why is checkout failing?")
    answer = slack.agents_sessions_setStatus(
        channel_id=CHANNEL,
        thread_ts=root.ts,
        status="processing",
        title="Checkout 5xx spike",
        initiator_user_id="U0ALICE",
    )
    assert (answer["status"], answer["agent_status"], answer["title"]) == (
        "processing",
        "processing",
        "Checkout 5xx spike",
    )
    session = standin.agent_session(CHANNEL, root.ts)
    assert session is not None
    assert (session.status, session.title, session.initiator_user_id) == (
        "processing",
        "Checkout 5xx spike",
        "U0ALICE",
    )
    assert session.stop_button
    # A later call sets the status only: title and initiator stay as created.
    slack.agents_sessions_setStatus(
        channel_id=CHANNEL, thread_ts=root.ts, status="suspended", title="ignored"
    )
    slack.agents_sessions_setStatus(channel_id=CHANNEL, thread_ts=root.ts, status="processing")
    slack.agents_sessions_setStatus(channel_id=CHANNEL, thread_ts=root.ts, status="active")
    session = standin.agent_session(CHANNEL, root.ts)
    assert session is not None
    assert (session.status, session.title, session.stop_button) == (
        "active",
        "Checkout 5xx spike",
        False,
    )
    assert session.statuses == ["processing", "suspended", "processing", "active"]


def test_set_status_errors_are_slacks(slack: WebClient, standin: SlackStandin) -> None:
    root = standin.say(CHANNEL, "hello")

    def set_status(**arguments: Any) -> Callable[[], object]:
        defaults = {"channel_id": CHANNEL, "thread_ts": root.ts, "status": "processing"}
        return lambda: slack.agents_sessions_setStatus(**{**defaults, **arguments})

    # Free text (the legacy status line) is no status: observed as invalid_arguments.
    assert slack_error(set_status(status="is working…")) == "invalid_arguments"
    assert slack_error(set_status(status="")) == "invalid_arguments"
    assert slack_error(set_status(channel_id="C0NOWHERE")) == "channel_not_found"
    assert slack_error(set_status(thread_ts=None)) == "thread_ts_required"
    assert slack_error(set_status(thread_ts="1.000001")) == "invalid_thread_ts"
    assert slack_error(set_status(title="x" * 201)) == "invalid_arguments"
    assert slack_error(set_status(initiator_user_id="U0NOBODY")) == "user_not_found"
    assert standin.agent_session(CHANNEL, root.ts) is None
    standin.configure(agent_sessions=False)
    assert slack_error(set_status()) == "feature_disabled"
    assert standin.agent_session(CHANNEL, root.ts) is None


def test_without_the_stop_subscription_there_is_a_warning_and_no_stop_button(
    slack: WebClient, standin: SlackStandin
) -> None:
    root = standin.say(CHANNEL, "hello")
    standin.configure(stop_event_subscribed=False)
    answer = slack.agents_sessions_setStatus(
        channel_id=CHANNEL, thread_ts=root.ts, status="processing"
    )
    assert answer["ok"] is True
    assert answer["response_metadata"]["warnings"] == [
        "missing_agent_session_stopped_event_subscription"
    ]
    session = standin.agent_session(CHANNEL, root.ts)
    assert session is not None and session.status == "processing" and not session.stop_button
    with pytest.raises(StandinError, match="no stop button"):
        standin.press_stop(CHANNEL, root.ts)


def test_rename_changes_the_title_of_an_existing_session(
    slack: WebClient, standin: SlackStandin
) -> None:
    root = standin.say(CHANNEL, "hello")

    def rename(**arguments: Any) -> Callable[[], object]:
        defaults = {"channel_id": CHANNEL, "thread_ts": root.ts, "title": "t"}
        return lambda: slack.agents_sessions_rename(**{**defaults, **arguments})

    assert slack_error(rename()) == "session_not_found"
    slack.agents_sessions_setStatus(channel_id=CHANNEL, thread_ts=root.ts, status="active")
    assert slack.agents_sessions_rename(
        channel_id=CHANNEL, thread_ts=root.ts, title="Checkout is down"
    )["title"] == ("Checkout is down")
    session = standin.agent_session(CHANNEL, root.ts)
    assert session is not None and session.title == "Checkout is down"
    assert slack_error(rename(title="")) == "invalid_arguments"
    assert slack_error(rename(title="x" * 201)) == "invalid_arguments"
    assert slack_error(rename(thread_ts=None)) == "thread_ts_required"
    assert slack_error(rename(channel_id="C0NOWHERE")) == "channel_not_found"
    standin.configure(agent_sessions=False)
    assert slack_error(rename()) == "feature_disabled"


def test_streams_make_and_move_the_session(slack: WebClient, standin: SlackStandin) -> None:
    root = standin.say(CHANNEL, "hello", user="U0BOB")
    recipient = {"recipient_user_id": "U0BOB", "recipient_team_id": "T0KOURIER"}
    first = slack.chat_startStream(
        channel=CHANNEL, thread_ts=root.ts, markdown_text="Looking", **recipient
    )
    session = standin.agent_session(CHANNEL, root.ts)
    assert session is not None
    assert (session.status, session.initiator_user_id) == ("processing", "U0BOB")
    # A roll-over keeps the session processing; the last stop makes it active by default.
    slack.chat_stopStream(channel=CHANNEL, ts=first["ts"], session_status="processing")
    second = slack.chat_startStream(
        channel=CHANNEL, thread_ts=root.ts, markdown_text="…on", **recipient
    )
    assert slack_error(
        lambda: slack.chat_stopStream(channel=CHANNEL, ts=second["ts"], session_status="done")
    ) == ("invalid_arguments")
    slack.chat_stopStream(channel=CHANNEL, ts=second["ts"])
    session = standin.agent_session(CHANNEL, root.ts)
    assert session is not None
    assert session.statuses == ["processing", "active"]
    assert [change.via for change in session.changes] == [
        "chat.startStream",
        "chat.stopStream",
        "chat.startStream",
        "chat.stopStream",
    ]


def test_a_workspace_without_agent_sessions_streams_without_one(
    slack: WebClient, standin: SlackStandin
) -> None:
    standin.configure(agent_sessions=False)
    root = standin.say(CHANNEL, "hello")
    started = slack.chat_startStream(
        channel=CHANNEL,
        thread_ts=root.ts,
        markdown_text="hi",
        recipient_user_id="U0ALICE",
        recipient_team_id="T0KOURIER",
    )
    slack.chat_stopStream(channel=CHANNEL, ts=started["ts"], session_status="active")
    slack.assistant_threads_setStatus(channel_id=CHANNEL, thread_ts=root.ts, status="is working…")
    assert standin.agent_session(CHANNEL, root.ts) is None


def test_the_legacy_status_line_moves_an_agent_session(
    slack: WebClient, standin: SlackStandin
) -> None:
    root = standin.say(CHANNEL, "hello")
    slack.assistant_threads_setStatus(channel_id=CHANNEL, thread_ts=root.ts, status="is working…")
    slack.assistant_threads_setStatus(channel_id=CHANNEL, thread_ts=root.ts, status="")
    session = standin.agent_session(CHANNEL, root.ts)
    assert session is not None and session.statuses == ["processing", "active"]


def test_a_session_left_processing_drops_to_active(slack: WebClient, standin: SlackStandin) -> None:
    standin.configure(processing_lifetime_seconds=0.2)
    root = standin.say(CHANNEL, "hello")
    slack.agents_sessions_setStatus(channel_id=CHANNEL, thread_ts=root.ts, status="processing")

    def dropped() -> bool:
        session = standin.agent_session(CHANNEL, root.ts)
        return session is not None and session.status == "active"

    standin.wait_for(dropped, timeout=30)
    session = standin.agent_session(CHANNEL, root.ts)
    assert session is not None and session.changes[-1].via == "slack"


def test_the_stop_button_stops_the_threads_streams_and_signs_the_event(
    slack: WebClient, standin: SlackStandin, receiver: Receiver
) -> None:
    root = standin.say(CHANNEL, "count to a million")
    slack.agents_sessions_setStatus(
        channel_id=CHANNEL, thread_ts=root.ts, status="processing", initiator_user_id="U0ALICE"
    )
    stream = slack.chat_startStream(
        channel=CHANNEL,
        thread_ts=root.ts,
        chunks=[
            {"type": "markdown_text", "text": "1, 2, 3"},
            {"type": "task_update", "id": "c1", "title": "count", "status": "in_progress"},
        ],
        recipient_user_id="U0ALICE",
        recipient_team_id="T0KOURIER",
    )
    receiver.clear()
    pressed = standin.press_stop(CHANNEL, root.ts, user="U0BOB")
    assert pressed.streaming_message_ts == [stream["ts"]]
    assert pressed.delivery.status == 200
    [request] = receiver.requests
    assert SignatureVerifier(SIGNING_SECRET).is_valid_request(request.body, request.headers)
    envelope = request.json()
    assert (envelope["type"], envelope["event_id"], envelope["team_id"]) == (
        "event_callback",
        pressed.event_id,
        "T0KOURIER",
    )
    event = envelope["event"]
    assert {key: event[key] for key in ("type", "channel", "user", "thread_ts")} == {
        "type": "agent_session_stopped",
        "channel": CHANNEL,
        "user": "U0BOB",
        "thread_ts": root.ts,
    }
    assert event["streaming_message_ts"] == [stream["ts"]] and event["event_ts"]
    # The stream is frozen as it stood; Slack leaves the status to the app.
    message = standin.thread(CHANNEL, root.ts)[-1]
    assert (message.stream, message.stopped_by) == ("stopped", "U0BOB")
    assert message.rendered == "1, 2, 3\n[!] count (Something went wrong)"
    for call in (
        lambda: slack.chat_appendStream(channel=CHANNEL, ts=stream["ts"], markdown_text="4"),
        lambda: slack.chat_stopStream(channel=CHANNEL, ts=stream["ts"]),
    ):
        assert slack_error(call) == "stopped_by_user"
    session = standin.agent_session(CHANNEL, root.ts)
    assert session is not None and session.status == "processing"
    # Pressed again with nothing streaming: the event says so; Slack sends it again as a retry.
    again = standin.press_stop(CHANNEL, root.ts)
    assert again.streaming_message_ts == [] and again.event_id != pressed.event_id
    retried = standin.resend(pressed.event_id)
    assert retried.retry_num == 1 and receiver.requests[-1].json()["event_id"] == pressed.event_id


def test_there_is_no_stop_button_unless_processing(slack: WebClient, standin: SlackStandin) -> None:
    root = standin.say(CHANNEL, "hello")
    with pytest.raises(StandinError, match="no agent session"):
        standin.press_stop(CHANNEL, root.ts)
    slack.agents_sessions_setStatus(channel_id=CHANNEL, thread_ts=root.ts, status="suspended")
    with pytest.raises(StandinError, match="it is suspended"):
        standin.press_stop(CHANNEL, root.ts)
    slack.agents_sessions_setStatus(channel_id=CHANNEL, thread_ts=root.ts, status="processing")
    with pytest.raises(StandinError, match="no person"):
        standin.press_stop(CHANNEL, root.ts, user="U0NOBODY")


def test_feedback_clicks_are_recorded_and_sent_as_block_actions(
    slack: WebClient, standin: SlackStandin, receiver: Receiver
) -> None:
    root = standin.say(CHANNEL, "hello")
    stream = slack.chat_startStream(
        channel=CHANNEL,
        thread_ts=root.ts,
        markdown_text="Here you are.",
        recipient_user_id="U0ALICE",
        recipient_team_id="T0KOURIER",
    )
    slack.chat_stopStream(channel=CHANNEL, ts=stream["ts"], blocks=[feedback_block()])
    message = standin.thread(CHANNEL, root.ts)[-1]
    assert message.rendered == "Here you are.\n[👍] [👎]"
    receiver.clear()
    standin.click(CHANNEL, stream["ts"], "answer_feedback", value="negative")
    standin.click(CHANNEL, stream["ts"], "answer_feedback", user="U0BOB", value="up:turn-1")
    standin.click(CHANNEL, stream["ts"], "answer_feedback", value="positive")
    clicks = standin.feedback()
    assert [(c.user, c.positive, c.value) for c in clicks] == [
        ("U0ALICE", False, "down:turn-1"),
        ("U0BOB", True, "up:turn-1"),
        ("U0ALICE", True, "up:turn-1"),
    ]
    assert {(c.channel, c.message_ts, c.thread_ts) for c in clicks} == {
        (CHANNEL, stream["ts"], root.ts)
    }
    payload = receiver.requests[0].payload()
    assert payload["type"] == "block_actions"
    [action] = payload["actions"]
    assert {key: action[key] for key in ("type", "action_id", "block_id", "value")} == {
        "type": "feedback_buttons",
        "action_id": "answer_feedback",
        "block_id": "fb-1",
        "value": "down:turn-1",
    }
    assert action["text"]["text"] == "👎"
    with pytest.raises(StandinError, match="positive or the negative"):
        standin.click(CHANNEL, stream["ts"], "answer_feedback", value="sideways")


@pytest.mark.parametrize(
    "elements",
    [
        [],
        [{"type": "button", "action_id": "b", "text": {"type": "plain_text", "text": "B"}}],
        [{"type": "feedback_buttons", "action_id": "f", "positive_button": {}}],
        [{"type": "icon_button", "icon": "trash", "action_id": "d"}] * 6,
    ],
)
def test_context_actions_hold_one_to_five_feedback_or_icon_buttons(
    slack: WebClient, standin: SlackStandin, elements: list[dict[str, Any]]
) -> None:
    root = standin.say(CHANNEL, "hello")
    block = {"type": "context_actions", "elements": elements}
    assert (
        slack_error(
            lambda: slack.chat_postMessage(
                channel=CHANNEL, thread_ts=root.ts, text="x", blocks=[block]
            )
        )
        == "invalid_blocks"
    )
