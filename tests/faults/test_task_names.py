"""Cloud Tasks names: a name a stale task holds is an error, and the turn still goes on."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from google.cloud import tasks_v2
from google.protobuf import timestamp_pb2

from tests.faults.agent import Piece, Script, Text

from .conftest import CHANNEL, Faults, expected_reply, read_reply
from .test_leases import logged


def test_a_hand_over_whose_name_a_stale_task_holds_is_logged_and_the_turn_goes_on(
    faults: Faults,
) -> None:
    # A session document deleted and made anew (an operator unsticking a
    # thread) restarts its generations, so a stale task can hold the name of
    # the next hand-over. Cloud Tasks refuses the name; that must be an
    # error, never a hand-over silently skipped.
    pieces: list[Piece] = [Text(f"Part {n} of the answer. ") for n in range(1, 9)]
    faults.agent.use(Script(pieces=pieces, gap=1.0))  # about two follow budgets long
    posted = faults.say("a task a stale hand-over is in the way of")
    turn_id = f"{CHANNEL}-{posted.ts}"
    name = f"{turn_id.replace('.', '_')}-follow-2"  # the claim is generation 1, its hand-over 2
    stale = f"{faults.queue_path(faults.settings.follow_queue)}/tasks/{name}"
    due = timestamp_pb2.Timestamp()
    due.FromDatetime(datetime.now(UTC) + timedelta(hours=1))
    request = tasks_v2.HttpRequest(
        url=faults.stack.ports.function_url("stream_follow"),
        body=json.dumps({"session_id": "stale", "turn_id": turn_id, "generation": 0}).encode(),
    )
    faults.tasks.create_task(
        parent=faults.queue_path(faults.settings.follow_queue),
        task=tasks_v2.Task(name=stale, http_request=request, schedule_time=due),
    )
    try:
        replies = faults.wait_until_answered(posted.ts)
    finally:
        faults.tasks.delete_task(name=stale)

    assert read_reply(replies) == expected_reply(pieces)
    assert len(faults.agent.sends()) == 1
    refused = [r["name"] for r in logged(faults, "turn_send", "task_name_refused")]
    assert name in refused
