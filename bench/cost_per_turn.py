"""Benchmark: what one turn costs (Firestore writes, Slack calls, CPU) as its answer and tool calls grow.

Usage (from the repository root)::

    .venv/bin/python -m bench.cost_per_turn [--chars 1000,8000,50000,200000]
        [--tools 0,3,10,50] [--port-base 24600]

It starts the whole local stack with the replay agent of ``bench.slack_replies``
and ``KOURIER_LOG_FIRESTORE_WRITES`` set, and runs one turn per row, one
after another: answers of ``--chars`` characters with 3 tool calls, then
answers of 8,000 characters (about 2,000 tokens) with ``--tools`` tool calls.
The agent streams each answer in 100-character chunks 10 ms apart. For each
turn, from the mention until its session is free again, it counts the
Firestore document writes the functions logged, the Slack Web API calls the
stand-in took about the thread, and the CPU seconds the five functions used
(from /proc; what they use idle is measured first and shown beside). The row of the
target (8,000 characters, 3 tool calls) is a figure with its target: at
most 12 writes and 10 Slack calls. Ports: ``--port-base`` + 0..4 for the
functions, +10 for the stand-in, +20 for the agent, the emulators at
8380..8390 shifted to the same hundred.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from google.cloud import firestore

from bench.report import Figure, table
from bench.slack_replies import long_answer
from bench.writes_per_turn import run_turn
from local.emulators import EmulatorEnv, exported
from local.processes import Process
from local.replay_agent import running_replay_stack
from local.slack_standin.client import SlackStandin
from local.stack import StackPorts
from shared.firestore import FirestoreDocuments
from shared.store import Store
from shared.system import SystemClock

FUNCTIONS = ("chat_ingress", "turn_send", "stream_follow", "reconcile", "timeout")
CHUNK_CHARS = 100
INTERVAL = 0.01
TARGET_CHARS, TARGET_TOOLS = 8_000, 3
"""The target's turn: a 2,000-token answer (about 4 characters a token) with 3 tool calls."""
MAX_WRITES, MAX_SLACK_CALLS = 12, 10
IDLE_SECONDS = 10.0


@dataclass(frozen=True)
class TurnCost:
    """What one turn cost."""

    chars: int
    tools: int
    seconds: float
    writes: Counter[str]
    """Document writes by collection."""
    slack_calls: Counter[str]
    cpu_seconds: float


def cpu(processes: Sequence[Process]) -> float:
    """CPU seconds the functions have used so far."""
    return sum(p.cpu_seconds() for p in processes if p.name in FUNCTIONS)


def measure(
    chars: int,
    tools: int,
    store: Store,
    standin: SlackStandin,
    log_dir: Path,
    processes: Sequence[Process],
    play: Callable[[int, int], None],
) -> TurnCost:
    """Run one turn of ``chars`` characters and ``tools`` tool calls; what it cost."""
    play(chars, tools)
    first_call = len(standin.calls())
    cpu_before = cpu(processes)
    turn_id, _, writes, took = run_turn(store, standin, log_dir)
    cpu_used = cpu(processes) - cpu_before
    thread_ts = turn_id.split("-", 1)[1]
    calls = Counter(
        c.method
        for c in standin.calls()[first_call:]
        if c.thread_ts == thread_ts or c.params.get("thread_ts") == thread_ts
    )
    by_collection = Counter(w.collection.removeprefix("kourier_") for w in writes)
    return TurnCost(chars, tools, took, by_collection, calls, cpu_used)


def rows(costs: Sequence[TurnCost]) -> str:
    """The costs as a Markdown table."""
    lines = [
        (
            "| answer chars | tool calls | seconds | Firestore writes | by collection | Slack calls"
            " | by method | CPU s |"
        ),
        "|---:|---:|---:|---:|---|---:|---|---:|",
    ]
    for c in costs:
        methods = ", ".join(
            f"{m.removeprefix('chat.')} {n}" for m, n in sorted(c.slack_calls.items())
        )
        places = ", ".join(f"{m} {n}" for m, n in sorted(c.writes.items()))
        lines.append(
            f"| {c.chars:,} | {c.tools} | {c.seconds:.1f} | {sum(c.writes.values())} | {places} | "
            f"{sum(c.slack_calls.values())} | {methods} | {c.cpu_seconds:.2f} |"
        )
    return "\n".join(lines)


def figures(
    chars: Sequence[int] = (1_000, 8_000, 50_000, 200_000),
    tools: Sequence[int] = (0, 3, 10, 50),
    port_base: int = 24600,
    say: Callable[[str], None] = print,
) -> list[Figure]:
    """Start the stack, run the turns, stop everything; print the table; the target's figures."""
    base = port_base
    ports = StackPorts.from_base(base)
    os.environ["KOURIER_LOG_FIRESTORE_WRITES"] = "1"
    plan = [(n, TARGET_TOOLS) for n in chars] + [(TARGET_CHARS, t) for t in tools]
    costs: list[TurnCost] = []
    with (
        tempfile.TemporaryDirectory() as state_dir,
        running_replay_stack(ports, Path(state_dir), INTERVAL) as (stack, agent),
    ):
        with exported(EmulatorEnv(ports.emulators)):
            client = firestore.Client(project=EmulatorEnv(ports.emulators).project)
            store = Store(FirestoreDocuments(client), SystemClock())
        idle_before = cpu(stack.processes)
        time.sleep(IDLE_SECONDS)
        idle_rate = (cpu(stack.processes) - idle_before) / IDLE_SECONDS

        def play(n_chars: int, n_tools: int) -> None:
            agent.play(long_answer(max(1, n_chars // CHUNK_CHARS), CHUNK_CHARS, n_tools))

        with SlackStandin(f"http://127.0.0.1:{ports.slack}") as standin:
            for n_chars, n_tools in plan:
                costs.append(
                    measure(
                        n_chars,
                        n_tools,
                        store,
                        standin,
                        stack.log_dir,
                        stack.processes,
                        play,
                    )
                )
                say(rows(costs[-1:]).splitlines()[-1])
    say(rows(costs))
    target = next(c for c in costs if (c.chars, c.tools) == (TARGET_CHARS, TARGET_TOOLS))
    name = "cost per turn"
    return [
        Figure(
            name,
            "Firestore writes, 2,000-token answer with 3 tool calls",
            str(sum(target.writes.values())),
            f"<= {MAX_WRITES}",
            ", ".join(f"{m} {n}" for m, n in sorted(target.writes.items())),
            sum(target.writes.values()) <= MAX_WRITES,
        ),
        Figure(
            name,
            "Slack calls, 2,000-token answer with 3 tool calls",
            str(sum(target.slack_calls.values())),
            f"<= {MAX_SLACK_CALLS}",
            ", ".join(f"{m} {n}" for m, n in sorted(target.slack_calls.items())),
            sum(target.slack_calls.values()) <= MAX_SLACK_CALLS,
        ),
        Figure(
            name,
            "CPU of the functions, 2,000-token answer with 3 tool calls",
            f"{target.cpu_seconds:.2f} s",
            "",
            f"turn took {target.seconds:.1f} s; idle, the functions use {idle_rate:.3f} CPU s/s",
        ),
    ]


def main() -> None:
    """Parse the options, run the turns, print the table and the target's figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chars", default="1000,8000,50000,200000")
    parser.add_argument("--tools", default="0,3,10,50")
    parser.add_argument("--port-base", type=int, default=24600)
    options = parser.parse_args()
    found = figures(
        [int(n) for n in options.chars.split(",")],
        [int(n) for n in options.tools.split(",")],
        options.port_base,
    )
    print(table(found))


if __name__ == "__main__":
    main()
