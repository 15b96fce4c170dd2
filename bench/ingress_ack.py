"""Benchmark: how fast chat_ingress acknowledges a mention, beside the least durable work.

Usage (from the repository root)::

    .venv/bin/python -m bench.ingress_ack [--requests 200] [--in-flight 8] [--port-base 26500]

It starts the whole local stack, stops its push relay (so no turn runs and
the figure is the acknowledgement alone), and starts ``bench.min_durable``
beside chat_ingress: a bare functions-framework function that creates one
Firestore document and publishes one Pub/Sub message, on the same emulators
with the same threads. It then sends both signed ``app_mention`` callbacks
that start a new thread each, in alternating rounds so both see the same
load, ``--in-flight`` at a time and then one at a time, and prints the
answer times (p50, p99) of each and their ratio. Ports: ``--port-base`` +
0..4 for the functions, +5 for the baseline, +10 for the stand-in, +11 for
the demo agent, the emulators at 8380..8390 shifted to the same hundred.
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import json
import os
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from itertools import count
from pathlib import Path

import httpx
from google.cloud.pubsub_v1 import PublisherClient

from bench.report import Figure, percentile, table
from local.processes import Process
from local.stack import (
    DEFAULT_SIGNING_SECRET,
    DEMO_CHANNEL,
    REPO,
    VENV_BIN,
    StackPorts,
    running_stack,
)

BENCH_TOPIC = "bench-min-durable"
TARGET_P99_MS = 100.0
TARGET_RATIO = 1.3
_ts = count(int(time.time()) * 1_000_000)


def mention(ingress_events_url: str) -> Callable[[httpx.Client], None]:
    """One signed app_mention that starts a new thread, posted to ``ingress_events_url``."""

    def send(http: httpx.Client) -> None:
        micros = next(_ts)
        ts = f"{micros // 1_000_000}.{micros % 1_000_000:06d}"
        envelope = {
            "type": "event_callback",
            "event_id": f"EvBench{micros}",
            "team_id": "T0KOURIER",
            "event": {
                "type": "app_mention",
                "user": "U0ALICE",
                "channel": DEMO_CHANNEL,
                "ts": ts,
                "text": "<@U0KOURIER> how are the payment errors today?",
            },
        }
        body = json.dumps(envelope).encode()
        stamp = str(int(time.time()))
        base = f"v0:{stamp}:{body.decode()}".encode()
        digest = hmac.new(DEFAULT_SIGNING_SECRET.encode(), base, hashlib.sha256).hexdigest()
        headers = {
            "Content-Type": "application/json",
            "X-Slack-Request-Timestamp": stamp,
            "X-Slack-Signature": f"v0={digest}",
        }
        answer = http.post(ingress_events_url, content=body, headers=headers)
        if answer.status_code != 200:
            raise RuntimeError(f"chat_ingress answered {answer.status_code}: {answer.text}")

    return send


def timed(send: Callable[[httpx.Client], None], requests: int, in_flight: int) -> list[float]:
    """Milliseconds each of ``requests`` calls took, ``in_flight`` at a time."""
    with (
        httpx.Client(timeout=30, limits=httpx.Limits(max_connections=in_flight)) as http,
        ThreadPoolExecutor(in_flight) as pool,
    ):

        def one(_: int) -> float:
            started = time.perf_counter()
            send(http)
            return (time.perf_counter() - started) * 1000

        return list(pool.map(one, range(requests)))


def measure(
    subject: Callable[[httpx.Client], None],
    baseline: Callable[[httpx.Client], None],
    requests: int,
    in_flight: int,
    rounds: int = 5,
) -> tuple[list[float], list[float]]:
    """Both, in alternating rounds (after a warm-up), so both meet the same load."""
    timed(subject, in_flight * 2, in_flight)
    timed(baseline, in_flight * 2, in_flight)
    ours: list[float] = []
    theirs: list[float] = []
    for _ in range(rounds):
        theirs += timed(baseline, requests // rounds, in_flight)
        ours += timed(subject, requests // rounds, in_flight)
    return ours, theirs


def figures(requests: int, in_flight: int, port_base: int) -> list[Figure]:
    """Start the stack and the baseline, measure, stop everything; the figures."""
    ports = StackPorts.from_base(port_base, agent_offset=11)
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("KOURIER_", "SLACK_"))}
    with (
        tempfile.TemporaryDirectory() as state,
        running_stack(ports, Path(state), environ=environ, reconcile_every=3600) as stack,
    ):
        next(p for p in stack.processes if p.name == "push-relay").stop()
        env = {**stack.function_env, "BENCH_TOPIC": BENCH_TOPIC}
        os.environ["PUBSUB_EMULATOR_HOST"] = env["PUBSUB_EMULATOR_HOST"]
        publisher = PublisherClient()
        publisher.create_topic(name=publisher.topic_path(env["GOOGLE_CLOUD_PROJECT"], BENCH_TOPIC))
        baseline_port = port_base + 5
        baseline_process = Process(
            "min-durable",
            [
                str(VENV_BIN / "functions-framework"),
                "--source",
                str(REPO / "bench" / "min_durable.py"),
                "--target",
                "min_durable",
                "--host",
                "127.0.0.1",
                "--port",
                str(baseline_port),
            ],
            stack.log_dir / "min-durable.log",
            env=env,
        )
        baseline_url = f"http://127.0.0.1:{baseline_port}/"
        try:
            baseline_process.wait_http(baseline_url)
            subject = mention(f"{stack.ingress_url}slack/events")

            def baseline(http: httpx.Client) -> None:
                answer = http.post(baseline_url, content=b"{}")
                if answer.status_code != 200:
                    raise RuntimeError(f"the baseline answered {answer.status_code}")

            many = measure(subject, baseline, requests, in_flight)
            one = measure(subject, baseline, requests // 4, 1)
        finally:
            baseline_process.stop()
    return _figures(many, one, in_flight)


def _figures(
    many: tuple[list[float], list[float]], one: tuple[list[float], list[float]], in_flight: int
) -> list[Figure]:
    (ours, theirs), (ours_1, theirs_1) = many, one
    p99, base_p99 = percentile(ours, 0.99), percentile(theirs, 0.99)
    ratio = p99 / base_p99
    name = "ingress"
    return [
        Figure(
            name,
            f"ack p50 / p99, {in_flight} in flight (n={len(ours)})",
            f"{percentile(ours, 0.5):.0f} / {p99:.0f} ms",
            f"p99 <= {TARGET_P99_MS:.0f} ms",
            f"{percentile(theirs, 0.5):.0f} / {base_p99:.0f} ms (one create + one publish)",
            p99 <= TARGET_P99_MS,
        ),
        Figure(
            name,
            f"ack p99 / baseline p99, {in_flight} in flight",
            f"x{ratio:.2f}",
            f"<= x{TARGET_RATIO}",
            "",
            ratio <= TARGET_RATIO,
        ),
        Figure(
            name,
            f"ack p50 / p99, 1 in flight (n={len(ours_1)})",
            f"{percentile(ours_1, 0.5):.0f} / {percentile(ours_1, 0.99):.0f} ms",
            "",
            f"{percentile(theirs_1, 0.5):.0f} / {percentile(theirs_1, 0.99):.0f} ms",
        ),
    ]


def main() -> None:
    """Run the benchmark and print its figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--in-flight", type=int, default=8)
    parser.add_argument("--port-base", type=int, default=26500)
    options = parser.parse_args()
    print(table(figures(options.requests, options.in_flight, options.port_base)))


if __name__ == "__main__":
    main()
