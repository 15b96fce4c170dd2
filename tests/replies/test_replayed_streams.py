"""Streams recorded from real servers, replayed through the whole local stack into the stand-in.

The agent of the stack is a replay of tests/data/a2a_streams (a2a-sdk's demo
agent, google-adk with and without its A2A extension header, kagent-adk):
a person mentions Kourier in a thread, and the ingress, Pub/Sub, turn_send
(with its GetTask after the stream), Firestore and the Slack reply all run
as deployed. Each recorded tool call must show as one step, finished, and
the recorded answer exactly once.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from google.cloud import firestore

from local.replay_agent import REPLAY_CHANNELS, Recording, ReplayAgent
from local.slack_standin.client import SlackStandin
from shared.slack.markdown import to_slack_markdown
from tests.replies.support import bot_replies, cards, joined_answer

STREAMS = Path(__file__).resolve().parents[1] / "data" / "a2a_streams"
# The turns that end in a pause (the -confirm recordings) belong to the questions and approvals work.
RECORDED_TURNS = sorted(
    path for path in STREAMS.glob("*-send.jsonl") if "-confirm-" not in path.name
)
TURN_WAIT = 90.0

pytestmark = pytest.mark.emulators


def finished_turn(turns: firestore.CollectionReference, ts: str) -> dict[str, Any]:
    """The turn of the message ``ts`` once it is done."""
    query = turns.where(filter=firestore.FieldFilter("ts", "==", ts))
    found = [snapshot.to_dict() for snapshot in query.get()]
    return found[0] if found and found[0].get("status") == "done" else {}


def test_every_kind_of_peer_is_recorded() -> None:
    peers = {path.name.split("-")[0] for path in RECORDED_TURNS}
    assert peers == {"adk", "demo", "kagent"}
    assert any("-adkv2-" in path.name for path in RECORDED_TURNS)
    assert {Recording.load(path).version for path in RECORDED_TURNS} == {"1.0", "0.3"}


@pytest.mark.parametrize("path", RECORDED_TURNS, ids=lambda path: path.stem)
def test_a_replayed_stream_shows_each_step_once_and_the_answer_once(
    path: Path,
    replay: ReplayAgent,
    stack_standin: SlackStandin,
    turns: firestore.CollectionReference,
) -> None:
    recording = replay.play(Recording.load(path))
    channel = REPLAY_CHANNELS[recording.version]

    posted = stack_standin.say(channel, "How many words are in this sentence?")
    assert posted.statuses == [200]
    turn = stack_standin.wait_for(lambda: finished_turn(turns, posted.ts), timeout=TURN_WAIT)

    assert turn["outcome"] == "completed"
    messages = bot_replies(stack_standin, posted.ts, channel)
    assert len(messages) == 1, "one reply and no notice"
    [reply] = messages
    assert reply.stream == "stopped" and not reply.edited
    assert joined_answer(messages) == to_slack_markdown(recording.answer())
    assert cards(messages) == [
        (call_id, name, "complete") for call_id, name in recording.tool_calls()
    ]
    methods = [call.method for call in stack_standin.calls() if posted.ts in call.params.values()]
    assert methods[0] == "agents.sessions.setStatus", "the session was processing before the answer"
    assert [request["method"] for request in replay.received[-2:]] == [
        "SendStreamingMessage" if recording.version == "1.0" else "message/stream",
        "GetTask" if recording.version == "1.0" else "tasks/get",
    ], "the canonical task was read after the stream, and changed nothing shown"
