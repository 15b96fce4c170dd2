"""Benchmark: how fast a trigger acknowledges an alert notification, and what each kind costs.

Usage (from the repository root)::

    .venv/bin/python -m bench.trigger_ack [--groups 12] [--repeats 3] [--limit 10]
        [--port-base 24500]

It starts the whole local stack (emulators, the five functions, the Slack
stand-in, the demo agent) with one Alertmanager trigger allowed ``--limit``
threads an hour, and ``KOURIER_LOG_FIRESTORE_WRITES`` set. It then posts, one
after another as Alertmanager's groups would arrive: ``--groups`` new alert
groups (the first ``--limit`` open threads, the rest are skipped into the
flood summary), ``--repeats`` repeats of every opened group, a changed alert
set for each, and its resolution. For each kind it prints how many
notifications, the time from the request to chat_ingress's answer (p50, p95,
max), and the Slack calls and Firestore writes per notification. The agent's
turns run meanwhile, as they would. Ports: ``--port-base`` + 0..4 for the
functions, +10 for the stand-in, +11 for the demo agent, and the emulators at
8380..8390 shifted to the same hundred.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import statistics
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from bench.report import Figure, table
from local.slack_standin.client import SlackStandin
from local.stack import DEMO_ALERT_TOKEN, DEMO_TRIGGER, StackPorts, running_stack
from shared.core import notices
from tests.triggers.payloads import alertmanager, all_resolved, with_group, with_new_alert


def firestore_writes(log_dir: Path) -> int:
    """How many document writes chat_ingress has logged so far."""
    log = log_dir / "chat_ingress.log"
    return sum('"firestore_write"' in line for line in log.read_text(errors="replace").splitlines())


def figures(
    groups: int = 12,
    repeats: int = 3,
    limit: int = 10,
    port_base: int = 24500,
    say: Callable[[str], None] = print,
) -> list[Figure]:
    """Start the stack, post the notifications, stop everything; one figure per kind."""
    base = port_base
    ports = StackPorts.from_base(base, agent_offset=11)
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("KOURIER_", "SLACK_"))}
    extra = {"KOURIER_LOG_FIRESTORE_WRITES": "true"}
    with (
        tempfile.TemporaryDirectory() as state,
        running_stack(ports, Path(state), environ=environ, extra_env=extra) as stack,
        SlackStandin(f"http://127.0.0.1:{ports.slack}") as standin,
    ):
        config = Path(stack.config_path)
        config.write_text(
            config.read_text().replace(
                "source: alertmanager",
                f"source: alertmanager\n    limits: {{threadsPerHour: {limit}}}",
            )
        )
        stack.restart("chat_ingress")  # it read the config when it started
        url = f"{stack.ingress_url}triggers/{DEMO_TRIGGER}"
        timings = _run(url, standin, stack.log_dir, groups, repeats, limit)
    say(f"trigger notifications, {groups} groups, limit {limit} an hour:")
    found = []
    for kind, samples in timings.items():
        millis = sorted(s["seconds"] * 1000 for s in samples)
        p95 = millis[max(0, round(0.95 * len(millis)) - 1)]
        slack = statistics.mean(s["slack"] for s in samples)
        writes = statistics.mean(s["writes"] for s in samples)
        say(
            f"  {kind:<8} n={len(samples):<3} answer p50 {statistics.median(millis):6.1f} ms"
            f"  p95 {p95:6.1f} ms  max {millis[-1]:6.1f} ms"
            f"  Slack calls {slack:4.1f}  Firestore writes {writes:4.1f}"
        )
        found.append(
            Figure(
                "trigger ack",
                f"{kind}: answer p50 / p95 (n={len(samples)})",
                f"{statistics.median(millis):.0f} / {p95:.0f} ms",
                "",
                f"Slack calls {slack:.1f}, Firestore writes {writes:.1f} each",
            )
        )
    return found


def main() -> None:
    """Run the benchmark and print one line per kind of notification."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--groups", type=int, default=12)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--limit", type=int, default=10, help="the trigger's threadsPerHour")
    parser.add_argument("--port-base", type=int, default=24500)
    options = parser.parse_args()
    print(table(figures(options.groups, options.repeats, options.limit, options.port_base)))


def _run(
    url: str, standin: SlackStandin, log_dir: Path, groups: int, repeats: int, limit: int
) -> dict[str, list[dict[str, float]]]:
    timings: dict[str, list[dict[str, float]]] = defaultdict(list)

    def post(kind: str, payload: dict[str, Any]) -> str:
        calls, writes = len(standin.calls()), firestore_writes(log_dir)
        started = time.perf_counter()
        answer = httpx.post(
            url,
            content=json.dumps(payload).encode(),
            headers={"Authorization": f"Bearer {DEMO_ALERT_TOKEN}"},
            timeout=60,
        )
        seconds = time.perf_counter() - started
        outcome = str(answer.json()["outcome"])
        time.sleep(0.5)  # the log lines of this request are written
        own_calls = [  # Kourier's own messages are marked; the agent's answers are not
            c
            for c in standin.calls()[calls:]
            if c.method in ("chat.postMessage", "chat.update")
            and notices.KOURIER_MARK in json.dumps(c.params.get("blocks"), ensure_ascii=False)
        ]
        timings[kind].append(
            {
                "seconds": seconds,
                "slack": len(own_calls),
                "writes": firestore_writes(log_dir) - writes,
            }
        )
        return outcome

    opened = []
    for index in range(groups):
        payload = with_group(alertmanager(), f"BenchGroup{index}")
        outcome = post("open" if index < limit else "skip", payload)
        if outcome == "opened a thread":
            opened.append(payload)
    time.sleep(5)  # let the agent's first turns start, as they would
    for _ in range(repeats):
        for payload in opened:
            post("repeat", payload)
    for index, payload in enumerate(opened):
        post("note", with_new_alert(payload, "ap-south-1", f"{index:016x}"))
    for payload in opened:
        post("resolve", all_resolved(copy.deepcopy(payload)))
    return timings


if __name__ == "__main__":
    main()
