"""Benchmark: many new threads at once, beside what the agent itself needs for them.

Usage (from the repository root)::

    .venv/bin/python -m bench.turns_burst [--turns 200] [--agent-seconds 1.2] [--port-base 26700]

It starts the whole local stack with the replay agent, whose every answer
streams for about ``--agent-seconds`` (a task, two pieces of text, done),
and posts ``--turns`` mentions, each starting its own thread, all at once
through the Slack stand-in. It prints how long until every thread shows its
whole answer, the most answers the agent streamed at once, and whether each
turn was sent to the agent exactly once. The baseline is the agent's own
time at 16 turns at once (the target's concurrency; the stack carries 32):
turns / 16, rounded up, x the time one answer streams. Ports: ``--port-base`` + 0..4 for the functions, +10 for the
stand-in, +20 for the agent, the emulators at 8380..8390 shifted to the same
hundred.
"""

from __future__ import annotations

import argparse
import math
import tempfile
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from bench.report import Figure, table
from local.replay_agent import REPLAY_CHANNELS, Recording, running_replay_stack
from local.slack_standin.client import SlackStandin
from local.slack_standin.models import Message
from local.stack import StackPorts

FRAMES = 5
"""The replay's frames: a task, working, two pieces of text, completed."""
TARGET_FACTOR = 3.0
AT_ONCE = 16
"""The concurrency the target asks of the local stack (it carries LOCAL_CONCURRENCY, 32)."""
WAIT = 1800.0
FIRST, REST = "First words, ", "and the rest of the answer."


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
        "turns-burst",
        "1.0",
        (
            result("task", {**task, "status": {"state": "TASK_STATE_SUBMITTED"}}),
            status("TASK_STATE_WORKING"),
            text(FIRST, False),
            text(REST, True),
            status("TASK_STATE_COMPLETED"),
        ),
    )


def shown(message: Message) -> str:
    """The text a person reads in a message: streamed text, or its markdown blocks."""
    if message.stream is None and message.blocks:
        return "".join(block["text"] for block in message.blocks if block["type"] == "markdown")
    return message.text


def figures(turns: int, agent_seconds: float, port_base: int) -> list[Figure]:
    """Start the stack, post the burst, wait for every answer, stop everything; the figures."""
    ports = StackPorts.from_base(port_base)
    channel = REPLAY_CHANNELS["1.0"]
    with (
        tempfile.TemporaryDirectory() as state,
        running_replay_stack(ports, Path(state), agent_seconds / FRAMES) as (_, agent),
        SlackStandin(f"http://127.0.0.1:{ports.slack}") as standin,
    ):
        agent.play(short_answer())
        started = time.monotonic()
        with ThreadPoolExecutor(32) as pool:
            posted = list(pool.map(lambda n: standin.say(channel, f"Question {n}"), range(turns)))
        acked = time.monotonic() - started
        pending = {p.ts for p in posted}

        def all_answered() -> bool:
            for ts in list(pending):
                replies = [m for m in standin.thread(channel, ts) if m.is_bot]
                # Streamed, or posted whole when the workspace's budget had no stream start
                # free (Slack's 20 a minute): either way the whole answer in one message.
                if [m.stream for m in replies] in (["stopped"], [None]) and shown(
                    replies[0]
                ) == FIRST + REST:
                    pending.discard(ts)
            return not pending

        standin.wait_for(all_answered, timeout=WAIT, interval=1.0)
        took = time.monotonic() - started
        expected = {f"slack-{channel}-{p.ts}" for p in posted}
        sent = [
            r["params"]["message"]["messageId"]
            for r in agent.received
            if r["method"] == "SendStreamingMessage"
        ]
        once = sorted(i for i in sent if i in expected) == sorted(expected)
        peak = agent.peak_streams
    own = math.ceil(turns / AT_ONCE) * agent_seconds
    name = "turns at once"
    return [
        Figure(
            name,
            f"{turns} new threads posted at once: all answered",
            f"{took:.1f} s ({turns / took:.1f} turns/s; all acked in {acked:.1f} s)",
            f"<= {TARGET_FACTOR:.0f} x the agent's own time",
            f"{own:.1f} s (the agent's own: {turns} / {AT_ONCE} at once x {agent_seconds} s)",
            took <= TARGET_FACTOR * own,
        ),
        Figure(name, "answers streaming at once (peak)", str(peak), ">= 16", "", peak >= 16),
        Figure(
            name,
            "each turn sent to the agent exactly once",
            "yes" if once else "NO",
            "yes",
            "",
            once,
        ),
    ]


def main() -> None:
    """Run the benchmark and print its figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--agent-seconds", type=float, default=1.2)
    parser.add_argument("--port-base", type=int, default=26700)
    options = parser.parse_args()
    print(table(figures(options.turns, options.agent_seconds, options.port_base)))


if __name__ == "__main__":
    main()
