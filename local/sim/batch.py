"""Many histories at once: seeds spread over worker processes, within a time budget.

Theory of operation. CI gives the simulator a budget of wall time, not a
count of seeds: each of ``workers`` processes (started fresh, so no state of
the caller's leaks in) runs every ``workers``-th seed from ``first`` and
starts no new one once the budget is spent, after at least its share of
``at_least`` seeds. Every history is still one seed, replayed alone by
``./kourier sim --seed S --seeds 1``; only how many run depends on the
machine, and the batch says how many did. Workers report each history as a
``Summary`` (plain data, cheap to send back).
"""

from __future__ import annotations

import multiprocessing
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Summary:
    """One history, as a batch reports it."""

    seed: int
    turns: int
    broken: tuple[tuple[str, str], ...]
    """Each broken rule: its code and what broke it."""


@dataclass
class Batch:
    """What a batch ran and found."""

    histories: list[Summary] = field(default_factory=list)
    cpu_seconds: float = 0.0
    """CPU time of the workers' histories (not of starting them)."""
    wall_seconds: float = 0.0
    workers: int = 1

    @property
    def turns(self) -> int:
        """Turns over all histories."""
        return sum(summary.turns for summary in self.histories)


def run_batch(
    first: int, seconds: float, workers: int, at_least: int, at_most: int | None = None
) -> Batch:
    """Run seeds from ``first`` in ``workers`` processes for about ``seconds`` of wall time.

    Args:
        first: The first seed.
        seconds: No worker starts a history after this many seconds.
        workers: How many processes.
        at_least: Seeds run whatever the time (spread over the workers).
        at_most: No seed past ``first + at_most - 1`` runs, however fast the
            machine: a gate that must not flake runs only seeds known to pass.
    """
    last = None if at_most is None else first + at_most - 1
    started = time.monotonic()
    share = -(-at_least // workers)
    context = multiprocessing.get_context("spawn")
    batch = Batch(workers=workers)
    with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
        futures = [
            pool.submit(_worker, first + index, workers, seconds, share, started, last)
            for index in range(workers)
        ]
        for future in futures:
            histories, cpu = future.result()
            batch.histories += histories
            batch.cpu_seconds += cpu
    batch.histories.sort(key=lambda summary: summary.seed)
    batch.wall_seconds = time.monotonic() - started
    return batch


def _worker(
    first: int, step: int, seconds: float, share: int, started: float, last: int | None
) -> tuple[list[Summary], float]:
    from local.sim.cli import between_histories, collect_less, quiet_logging
    from local.sim.run import run_seed

    quiet_logging()
    collect_less()
    histories: list[Summary] = []
    cpu_started = time.process_time()
    seed = first
    # time.monotonic is one clock for every process of the machine (CLOCK_MONOTONIC).
    while len(histories) < share or time.monotonic() - started < seconds:
        if last is not None and seed > last:
            break
        result = run_seed(seed)
        between_histories()
        broken = tuple((violation.code, violation.detail) for violation in result.violations)
        histories.append(Summary(seed, result.turns, broken))
        seed += step
    return histories, time.process_time() - cpu_started
