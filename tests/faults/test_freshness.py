"""Freshness: a checkpoint says when the persisted task was last read, not when it was written.

Streaming principles, "Checkpoints and client state": ``observed_at`` is the
time of the last successful read of the persisted task (GetTask, or the
snapshot a SubscribeToTask starts with), ``caught_up`` is true only after
such a read with nothing live shown since, and the checkpoint records the
cadence at which a healthy stream is reconciled (every hand-over).
"""

from __future__ import annotations

import json
from typing import Any

from tests.faults.agent import Piece, Script, Text, ToolCall

from .conftest import FOLLOW_BUDGET, TURN_WAIT, Faults, expected_reply, read_reply


def test_a_checkpoints_freshness_is_the_last_read_of_the_persisted_task(faults: Faults) -> None:
    pieces: list[Piece] = [Text(f"Part {n}. ") for n in range(1, 7)]
    pieces.insert(2, ToolCall("call-slow", "slow_tool", seconds=FOLLOW_BUDGET + 1))
    faults.agent.use(Script(pieces=pieces, gap=1.0))  # outlives a function's budget
    posted = faults.say("a task followed across a hand-over")
    seen: list[tuple[Any, ...]] = []

    def record() -> bool:
        turn = faults.turn(posted.ts)
        if turn is not None and turn.checkpoint:
            checkpoint = json.loads(turn.checkpoint)
            state = (
                checkpoint["observed_at"],
                checkpoint["caught_up"],
                checkpoint["reconcile_every"],
            )
            if not seen or seen[-1] != state:
                seen.append(state)
        return turn is not None and turn.status == "done"

    faults.standin.wait_for(record, timeout=TURN_WAIT, interval=0.1)

    assert read_reply(faults.wait_until_answered(posted.ts)) == expected_reply(pieces)
    assert seen[0] == (None, False, FOLLOW_BUDGET), "the live stream is not a persisted read"
    reads = [c.at for c in faults.agent.calls("GetTask") + faults.agent.calls("SubscribeToTask")]
    observed = {state[0] for state in seen if state[0] is not None}
    assert observed, "the hand-over reconciled the stream with a read"
    for at in observed:
        assert any(0 <= at - read < 30 for read in reads), "observed_at is the time of a read"
    assert all(state[2] == FOLLOW_BUDGET for state in seen)
