"""Benchmark: how many simulated turns the simulator runs per CPU-second, and where the CPU goes.

Usage (from the repository root)::

    .venv/bin/python -m bench.sim_speed [--seeds 40] [--first 1] [--profile]

It runs the fixed reference workload (seeds ``--first`` .. ``--first + --seeds - 1``
of ``local.sim``, the same worlds ``./kourier sim`` runs) once to warm up
imports, then again, and prints histories, turns, CPU-seconds and turns per
CPU-second. With ``--profile`` it also prints the CPU by part (the
simulator's fakes, the shell, httpx, JSON, the rest), from cProfile's own
time per function, which greenlet switches do not distort.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import time
from collections import Counter

from local.sim.cli import between_histories, collect_less, quiet_logging


def part_of(filename: str) -> str:
    """Which part of the system a source file belongs to."""
    for marker, part in (
        ("local/sim", "simulator"),
        ("/shared/", "shell and core"),
        ("httpx", "httpx"),
        ("httpcore", "httpx"),
        ("json", "json"),
        ("pydantic", "pydantic"),
        ("slack_sdk", "slack_sdk"),
        ("structlog", "structlog"),
    ):
        if marker in filename:
            return part
    return "builtins" if filename == "~" else "stdlib and the rest"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--seeds", type=int, default=40)
    parser.add_argument("--first", type=int, default=1)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    quiet_logging()
    from local.sim.run import run_seed

    seeds = range(args.first, args.first + args.seeds)
    run_seed(args.first)  # imports and first-use caches out of the measurement
    collect_less()
    started = time.process_time()
    turns = 0
    for seed in seeds:
        turns += run_seed(seed).turns
        between_histories()
    cpu = time.process_time() - started
    print(
        f"{args.seeds} histories, {turns} turns, {cpu:.2f} CPU-s: "
        f"{turns / cpu:.0f} turns per CPU-second, {1000 * cpu / turns:.2f} ms per turn"
    )
    if not args.profile:
        return
    profile = cProfile.Profile()
    profile.runcall(lambda: [run_seed(seed) for seed in seeds])
    stats = pstats.Stats(profile)
    by_part: Counter[str] = Counter()
    for (filename, _line, _name), row in stats.stats.items():  # type: ignore[attr-defined]
        by_part[part_of(filename)] += row[2]
    total = sum(by_part.values())
    for part, seconds in by_part.most_common():
        print(f"  {part:22} {100 * seconds / total:5.1f}% of own time")


if __name__ == "__main__":
    main()
