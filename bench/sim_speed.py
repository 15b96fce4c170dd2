"""Benchmark: how many simulated turns the simulator runs per CPU-second, and whose CPU it is.

Usage (from the repository root)::

    .venv/bin/python -m bench.sim_speed [--seeds 40] [--first 1] [--profile]

It runs the fixed reference workload (seeds ``--first`` .. ``--first + --seeds - 1``
of ``local.sim``, the same worlds ``./kourier sim`` runs) once to warm up
imports, then again, and prints histories, turns, CPU-seconds and turns per
CPU-second. With ``--profile`` it runs them a third time under a sampling
profiler (``SIGPROF`` on process time, so greenlet switches do not matter)
and charges each sample to its owner: the innermost frame on the stack that
is Kourier's own code (``shared/``, ``functions/``) or the simulator's
(``local/sim/``), libraries included (JSON the simulated Firestore encodes is
the simulator's; JSON the A2A client decodes is the product's). It prints
each owner's milliseconds per turn, and the turns per CPU-second there would
be if only that owner cost anything: the product's is the ceiling no faster
simulator can raise.
"""

from __future__ import annotations

import argparse
import signal
import time
from collections import Counter
from collections.abc import Iterable
from types import FrameType

from local.sim.cli import between_histories, collect_less, quiet_logging


def owner_of(frame: FrameType | None) -> str:
    """Whose CPU a sample is: the innermost frame of the product's or the simulator's code."""
    while frame is not None:
        filename = frame.f_code.co_filename
        if "/local/sim/" in filename:
            return "simulator"
        if "/shared/" in filename or "/functions/" in filename:
            return "product"
        frame = frame.f_back
    return "the rest"


def run(seeds: Iterable[int]) -> tuple[int, float]:
    """Run ``seeds`` one after another; the turns they ran and the CPU-seconds it took."""
    from local.sim.run import run_seed

    started = time.process_time()
    turns = 0
    for seed in seeds:
        turns += run_seed(seed).turns
        between_histories()
    return turns, time.process_time() - started


def profile(seeds: Iterable[int]) -> None:
    """Run ``seeds`` again, sampled each millisecond of CPU; print each owner's share."""
    samples: Counter[str] = Counter()

    def sample(_signal: int, frame: FrameType | None) -> None:
        samples[owner_of(frame)] += 1

    signal.signal(signal.SIGPROF, sample)
    signal.setitimer(signal.ITIMER_PROF, 0.001, 0.001)
    try:
        turns, cpu = run(seeds)
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0, 0)
    total = sum(samples.values())
    for owner, count in samples.most_common():
        share = count / total
        print(
            f"  {owner:10} {100 * share:5.1f}%  {1000 * cpu * share / turns:.2f} ms per turn"
            f"  (alone: {turns / (cpu * share):,.0f} turns per CPU-second)"
        )


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
    turns, cpu = run(seeds)
    print(
        f"{args.seeds} histories, {turns} turns, {cpu:.2f} CPU-s: "
        f"{turns / cpu:.0f} turns per CPU-second, {1000 * cpu / turns:.2f} ms per turn"
    )
    if args.profile:
        profile(seeds)


if __name__ == "__main__":
    main()
