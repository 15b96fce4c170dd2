"""Benchmark: many short answers at once in one workspace, with Slack's rate tiers enforced.

Usage (from the repository root)::

    .venv/bin/python -m bench.tier_burst [--turns 50,90] [--agent-seconds 1.2] [--port-base 26900]

It starts the whole local stack with the replay agent of ``bench.turns_burst``
(a short answer streamed over about ``--agent-seconds``), sets the Slack
stand-in to enforce Slack's published per-method limits for one workspace
(``shared.slack.tiers.TIERS``; chat.postMessage at 60 a minute, Slack's
"about one a second per channel, bursts allowed", as every thread is in one
channel), posts that many mentions at once, each starting its own thread,
and waits until every thread shows its whole answer and no stream is open.
It prints how long that took, the Slack calls by method, and the calls
Slack refused with HTTP 429 (slack_sdk waits Retry-After and calls again;
none must reach a person). The baseline is the tightest tier's floor: with
every answer streamed, one chat.startStream each at 20 a minute. Ports:
``--port-base`` + 0..4 for the functions, +10 for the stand-in, +20 for the
agent, the emulators at 8380..8390 shifted to the same hundred.
"""

from __future__ import annotations

import argparse
import math
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from bench.report import Figure, table
from bench.turns_burst import FIRST, FRAMES, REST, short_answer, shown
from local.replay_agent import REPLAY_CHANNELS, running_replay_stack
from local.slack_standin.client import SlackStandin
from local.stack import StackPorts
from shared.slack.tiers import TIERS, WINDOW_SECONDS

ENFORCED = {**TIERS, "chat.postMessage": 60}
"""Calls a minute the stand-in takes of each method (the rest get HTTP 429)."""
WAIT = 1800.0


def burst(standin: SlackStandin, channel: str, turns: int) -> tuple[float, int]:
    """Post ``turns`` mentions at once; seconds until all are answered, and how many are wrong."""
    started = time.monotonic()
    with ThreadPoolExecutor(32) as pool:
        posted = list(pool.map(lambda n: standin.say(channel, f"Question {n}"), range(turns)))
    pending = {p.ts for p in posted}

    def all_answered() -> bool:
        for ts in list(pending):
            replies = [m for m in standin.thread(channel, ts) if m.is_bot]
            done = replies and all(m.stream != "streaming" for m in replies)
            if done and "".join(shown(m) for m in replies).strip() == (FIRST + REST).strip():
                pending.discard(ts)
        return not pending

    standin.wait_for(all_answered, timeout=WAIT, interval=1.0)
    took = time.monotonic() - started
    wrong = sum(
        1
        for p in posted
        if "".join(shown(m) for m in standin.thread(channel, p.ts) if m.is_bot).strip()
        != (FIRST + REST).strip()
    )
    return took, wrong


def figures(turn_counts: list[int], agent_seconds: float, port_base: int) -> list[Figure]:
    """Start the stack, run each burst after the last, stop everything; the figures."""
    ports = StackPorts.from_base(port_base)
    channel = REPLAY_CHANNELS["1.0"]
    found: list[Figure] = []
    name = "tiers enforced"
    with (
        tempfile.TemporaryDirectory() as state,
        running_replay_stack(ports, Path(state), agent_seconds / FRAMES) as (_, agent),
        SlackStandin(f"http://127.0.0.1:{ports.slack}") as standin,
    ):
        agent.play(short_answer())
        for index, turns in enumerate(turn_counts):
            if index:
                time.sleep(WINDOW_SECONDS + 5)  # the last burst's calls leave every window
            first_call = len(standin.calls())
            for method, limit in ENFORCED.items():
                standin.set_rate_limit(method, limit, WINDOW_SECONDS)
            took, wrong = burst(standin, channel, turns)
            for method in ENFORCED:
                standin.clear_rate_limit(method)
            calls = standin.calls()[first_call:]
            made = Counter(c.method for c in calls if c.status_code != 429)
            refused = Counter(c.method for c in calls if c.status_code == 429)
            floor = math.ceil(turns / TIERS["chat.startStream"] - 1) * WINDOW_SECONDS
            found += [
                Figure(
                    name,
                    f"{turns} short answers at once in one workspace: all shown",
                    f"{took:.1f} s, {wrong} wrong or missing",
                    "0 wrong or missing",
                    f"{floor:.0f} s: one chat.startStream each at 20 a minute",
                    wrong == 0,
                ),
                Figure(
                    name,
                    f"{turns} at once: Slack calls by method",
                    ", ".join(f"{m} {n}" for m, n in sorted(made.items())),
                ),
                Figure(
                    name,
                    f"{turns} at once: calls refused with 429 (retried after Retry-After)",
                    ", ".join(f"{m} {n}" for m, n in sorted(refused.items())) or "none",
                    "none",
                    "",
                    not refused,
                ),
            ]
            print(table(found[-3:]), flush=True)
    return found


def main() -> None:
    """Run the bursts and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", default="50,90", help="burst sizes, one after another")
    parser.add_argument("--agent-seconds", type=float, default=1.2)
    parser.add_argument("--port-base", type=int, default=26900)
    options = parser.parse_args()
    counts = [int(n) for n in options.turns.split(",")]
    print(table(figures(counts, options.agent_seconds, options.port_base)))


if __name__ == "__main__":
    main()
