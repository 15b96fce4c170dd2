"""Steps: a tool result whose call never came is shown when the send ends or fails.

Contract, Tool calls and results: "When the call is nowhere, the result
waits for it, and is delivered when the send ends, or when it fails."
"""

from __future__ import annotations

from tests.faults.agent import Script, Text, ToolCall, ToolResult

from .conftest import TURN_WAIT, Faults, expected_reply, read_reply


def test_a_result_waiting_for_its_call_is_shown_when_the_send_fails(either_version: Faults) -> None:
    faults = either_version
    pieces = [
        Text("Looking it up. "),
        ToolResult("call-orphan", "lookup"),
        ToolCall("call-long", "long_tool", seconds=15.0),
        Text("Done."),
    ]
    # Events: the task, working, the text, the orphan result; then the send drops.
    faults.agent.use(Script(pieces=pieces, drop_send_after=4))
    posted = faults.say("a result before its call")

    def shown_while_running() -> bool:
        steps = read_reply(faults.bot_messages(posted.ts)).steps
        return ("lookup", "complete") in steps

    faults.standin.wait_for(shown_while_running, timeout=TURN_WAIT)
    turn = faults.turn(posted.ts)
    assert turn is not None and turn.status == "running", (
        "shown when the send failed, not at the end"
    )

    seen = read_reply(faults.wait_until_answered(posted.ts))
    assert seen == expected_reply(pieces)
