"""Many turns at once: the local stack carries sixteen turns together, as Cloud Run would.

The replay agent holds every stream after its first words until the test
lets them go, so no turn can end before the others have started: the
stand-in sees as many answers streaming at once as the stack carries turns
at once. The official Pub/Sub emulator pushes two at a time; the stack's
push relay (local.push_relay) pushes as many as turn_send takes.
"""

from __future__ import annotations

import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from local.replay_agent import REPLAY_CHANNELS, Recording, ReplayAgent
from local.slack_standin.client import SlackStandin
from local.slack_standin.models import Delivery, Posted
from tests.replies.support import bot_replies, joined_answer

AT_ONCE = 16
FIRST_WORDS = "First words, "
REST = "and the rest of the answer."
WAIT = 300.0
"""Generous: sixteen turns start on a loaded two-core machine."""

pytestmark = pytest.mark.emulators


def short_answer() -> Recording:
    """A 1.0 stream: a task, its first words, the rest of them, completed."""
    ids = {"taskId": str(uuid.uuid4()), "contextId": str(uuid.uuid4())}
    artifact_id = str(uuid.uuid4())

    def result(kind: str, body: dict[str, Any]) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": "1", "result": {kind: body}}

    def text(words: str, append: bool) -> dict[str, Any]:
        artifact = {"artifactId": artifact_id, "parts": [{"text": words}]}
        return result("artifactUpdate", {**ids, "artifact": artifact, "append": append})

    def status(state: str) -> dict[str, Any]:
        return result("statusUpdate", {**ids, "status": {"state": state}})

    task = {"id": ids["taskId"], "contextId": ids["contextId"]}
    return Recording(
        "turns-at-once",
        "1.0",
        (
            result("task", {**task, "status": {"state": "TASK_STATE_SUBMITTED"}}),
            status("TASK_STATE_WORKING"),
            text(FIRST_WORDS, False),
            text(REST, True),
            status("TASK_STATE_COMPLETED"),
        ),
    )


def _answered_in_the_end(standin: SlackStandin, delivery: Delivery) -> None:
    """An event the app answered late (past Slack's 3 s, on a loaded machine) is sent again,
    as Slack retries it, up to Slack's three retries; the retry must add nothing."""
    for _ in range(3):
        if delivery.status == 200:
            return
        assert delivery.event_id is not None and delivery.status is None, delivery
        delivery = standin.resend(delivery.event_id)
    assert delivery.status == 200, delivery


def test_sixteen_turns_stream_at_once_and_each_ends_once(
    replay: ReplayAgent, stack_standin: SlackStandin
) -> None:
    channel = REPLAY_CHANNELS["1.0"]
    replay.play(short_answer())
    replay.hold(3)  # every stream waits after its first words
    try:
        with ThreadPoolExecutor(AT_ONCE) as pool:
            posted: list[Posted] = list(
                pool.map(
                    lambda n: stack_standin.say(channel, f"Question {n} of many"), range(AT_ONCE)
                )
            )
        for p in posted:
            for delivery in p.deliveries:
                _answered_in_the_end(stack_standin, delivery)

        def streaming() -> list[str]:
            return [
                p.ts
                for p in posted
                if any(
                    m.stream == "streaming" and m.text.startswith(FIRST_WORDS.strip())
                    for m in bot_replies(stack_standin, p.ts, channel)
                )
            ]

        stack_standin.wait_for(lambda: len(streaming()) == AT_ONCE, timeout=WAIT, interval=1.0)
        assert replay.peak_streams >= AT_ONCE
    finally:
        replay.release()

    def answered() -> bool:
        return all(
            [m.stream for m in bot_replies(stack_standin, p.ts, channel)] == ["stopped"]
            for p in posted
        )

    stack_standin.wait_for(answered, timeout=WAIT, interval=1.0)
    for p in posted:
        assert joined_answer(bot_replies(stack_standin, p.ts, channel)) == FIRST_WORDS + REST
    expected = {f"slack-{channel}-{p.ts}" for p in posted}
    sent = [
        r["params"]["message"]["messageId"]
        for r in replay.received
        if r["method"] == "SendStreamingMessage"
    ]
    assert sorted(i for i in sent if i in expected) == sorted(expected), "each turn sent once"
