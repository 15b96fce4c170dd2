"""The console's feed on the stand-in: snapshots per person, pushed on every change."""

from __future__ import annotations

import json
import threading
from typing import Any

import httpx
import pytest
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from local.slack_standin import TEAM_ID, SlackStandin
from tests.slack_standin.support import CHANNEL


def _state(standin: SlackStandin, user: str, thread: str) -> dict[str, Any]:
    query = {"user": user, "channel": CHANNEL, "thread": thread}
    answer = httpx.get(f"{standin.base_url}/_console/state", params=query, timeout=10)
    assert answer.status_code == 200
    snapshot: dict[str, Any] = answer.json()
    return snapshot


def test_a_person_sees_only_their_own_ephemerals_and_the_thread_its_calls(
    slack: WebClient, standin: SlackStandin
) -> None:
    root = standin.say(CHANNEL, "hello").ts
    slack.chat_postEphemeral(channel=CHANNEL, user="U0BOB", thread_ts=root, text="only Bob")
    standin.fail("chat.postMessage", "ratelimited", status=429)
    with pytest.raises(SlackApiError):
        slack.chat_postMessage(channel=CHANNEL, thread_ts=root, text="answer")
    slack.chat_postMessage(channel=CHANNEL, thread_ts=root, text="answer")

    bob, alice = _state(standin, "U0BOB", root), _state(standin, "U0ALICE", root)

    assert [e["text"] for e in bob["ephemerals"]] == ["only Bob"]
    assert alice["ephemerals"] == []
    thread = alice["thread"]
    assert [m["text"] for m in thread["messages"]] == ["<@U0KOURIER> hello", "answer"]
    assert [(c["method"], c["status_code"], c["error"]) for c in thread["calls"]] == [
        ("chat.postEphemeral", 200, None),
        ("chat.postMessage", 429, "ratelimited"),
        ("chat.postMessage", 200, None),
    ]
    assert thread["store"]["watching"] is False, "no Firestore emulator here"


def test_the_event_stream_sends_a_snapshot_at_once_and_another_on_each_change(
    standin: SlackStandin,
) -> None:
    snapshots: list[dict[str, Any]] = []
    changed = threading.Event()

    def messages(snapshot: dict[str, Any]) -> list[str]:
        return [m["text"] for m in snapshot["channels"][0]["messages"]]

    def listen() -> None:
        query = {"user": "U0ALICE", "channel": CHANNEL}
        url = f"{standin.base_url}/_console/events"
        with httpx.stream("GET", url, params=query, timeout=30) as events:
            for line in events.iter_lines():
                if line.startswith("data: "):
                    snapshots.append(json.loads(line.removeprefix("data: ")))
                    if messages(snapshots[-1]):
                        changed.set()
                        return

    listener = threading.Thread(target=listen, daemon=True)
    listener.start()
    standin.wait_for(lambda: snapshots, timeout=30)
    standin.say(CHANNEL, "a change")
    # The first snapshot comes at once, before the change; the change is pushed in a
    # later one (a busy machine may push an unchanged snapshot in between).
    assert changed.wait(30)
    assert messages(snapshots[0]) == []
    assert messages(snapshots[-1]) == ["<@U0KOURIER> a change"]


def test_a_thread_shows_its_agent_session_and_each_person_their_own_feedback(
    slack: WebClient, standin: SlackStandin
) -> None:
    root = standin.say(CHANNEL, "look into checkout", user="U0BOB").ts
    slack.chat_startStream(
        channel=CHANNEL,
        thread_ts=root,
        recipient_user_id="U0BOB",
        recipient_team_id=TEAM_ID,
        markdown_text="Reading",
    )
    session = _state(standin, "U0ALICE", root)["thread"]["session"]
    assert (session["status"], session["stop_button"]) == ("processing", True)
    assert session["initiator_user_id"] == "U0BOB"

    feedback = {
        "type": "context_actions",
        "elements": [
            {
                "type": "feedback_buttons",
                "action_id": "feedback",
                "positive_button": {"text": {"type": "plain_text", "text": "👍"}, "value": "up"},
                "negative_button": {"text": {"type": "plain_text", "text": "👎"}, "value": "down"},
            }
        ],
    }
    rated = slack.chat_postMessage(
        channel=CHANNEL, thread_ts=root, text="found it", blocks=[feedback]
    )["ts"]
    standin.click(CHANNEL, rated, "feedback", user="U0BOB", value="down")
    standin.click(CHANNEL, rated, "feedback", user="U0BOB", value="up")

    assert _state(standin, "U0BOB", root)["feedback"] == {rated: "positive"}
    assert _state(standin, "U0ALICE", root)["feedback"] == {}
