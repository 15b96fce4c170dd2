"""``./kourier sim``: run seeds, print what broke, how to replay it, and the speed."""

from __future__ import annotations

import argparse
import gc
import json
import sys
import time
from collections.abc import Mapping, MutableMapping
from pathlib import Path
from typing import Any

import structlog

from local.sim.world import ACTIVE


def quiet_logging() -> None:
    """Logs are dropped in the simulator (no wall clock, no output, little CPU).

    An ``event_failed`` line, the shell acknowledging an error it did not
    expect, is reported to the running world first: the oracle counts it.
    """

    def drop(logger: Any, method: str, event: MutableMapping[str, Any]) -> Mapping[str, Any]:
        if event.get("event") == "event_failed" and ACTIVE:
            world = ACTIVE[-1]
            error = sys.exc_info()[1]
            if error is not None and world.current is not None:
                world.on_failure(world.current.name, error)
        raise structlog.DropEvent

    structlog.configure(processors=[drop], cache_logger_on_first_use=True)


def collect_less() -> None:
    """Garbage collection tuned for histories run one after another (call after the imports).

    The modules loaded so far are frozen out of every collection, and the youngest
    generation is collected only after 200,000 allocations: a history allocates
    millions of short-lived objects, almost all freed by their reference counts,
    and collecting them in steps traversed each about once (a seventh of a history's
    CPU at 700, a sixteenth at 20,000). A loop of histories calls
    ``between_histories`` after each, so a history is not collected while it runs
    (same traces: collection order is not part of them).
    """
    gc.collect()
    gc.freeze()
    gc.set_threshold(200_000, 20, 1_000)


def between_histories() -> None:
    """Collect what the last history left (its cycles), and freeze what survives it."""
    gc.collect()
    gc.freeze()


def main(argv: list[str] | None = None) -> int:
    """Run ``--seeds`` histories from ``--seed``; 1 if any broke a rule."""
    parser = argparse.ArgumentParser(prog="kourier sim", description="the deterministic simulator")
    parser.add_argument("--seeds", type=int, default=100, help="how many histories to run")
    parser.add_argument("--seed", type=int, default=1, help="the first seed")
    parser.add_argument(
        "--trace", type=Path, help="write the trace of each failing seed here (JSON lines)"
    )
    parser.add_argument("--no-shrink", action="store_true", help="do not shrink a failing seed")
    args = parser.parse_args(argv)
    try:
        import shared.bootstrap  # noqa: F401
    except ImportError:
        print("kourier sim: the shell's ports (shared/bootstrap.py) are not on this branch yet")
        return 2
    from local.sim.run import run_seed, shrink

    quiet_logging()
    collect_less()
    cpu = 0.0
    turns = failed = 0
    for seed in range(args.seed, args.seed + args.seeds):
        started = time.process_time()
        result = run_seed(seed)
        between_histories()
        cpu += time.process_time() - started
        turns += result.turns
        if not result.violations:
            continue
        failed += 1
        print(f"seed {seed}: {len(result.violations)} broken rule(s)")
        for violation in result.violations[:10]:
            print(f"  {violation}")
        print(f"  replay: ./kourier sim --seed {seed} --seeds 1")
        shrunk = result if args.no_shrink else shrink(seed, result)
        print(
            f"  faults: {len(result.fired)} fired, {len(shrunk.fired)} needed: {shrunk.fired[:12]}"
        )
        if args.trace is not None:
            from local.sim.run import trace_of

            path = args.trace.with_name(f"{args.trace.stem}-{seed}{args.trace.suffix or '.jsonl'}")
            path.write_text(
                "\n".join(json.dumps(line, default=str) for line in trace_of(seed, shrunk))
            )
            print(f"  trace: {path}")
    print(
        f"kourier sim: {args.seeds} histories, {turns} turns, {failed} failed; "
        f"{cpu:.1f} CPU-s, {turns / max(cpu, 1e-9):.0f} turns per CPU-second"
    )
    return 1 if failed else 0
