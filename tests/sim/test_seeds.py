"""The simulator over a CI budget of histories: the same seed replays byte for byte, and
every rule a history breaks is one of the known, reported faults of today's code."""

from __future__ import annotations

import os
import time
from collections import Counter

import pytest

from local.sim.run import run_seed

BUDGET = int(os.environ.get("KOURIER_SIM_SEEDS", "100"))

KNOWN = {
    "S0 crash": "a takeover of a one-Message reply asserts in TurnRun._task_id (F1, reported)",
    "S3 step once": "a step appended after the last checkpoint shows again after a takeover "
    "(F3, reported)",
    "S3 step running": "same as F3, with the step still running in the old message",
    "S3 first result": "same as F3",
    "S6 notice twice": "a final notice posted, then the carrier dies before the turn is done "
    "(F5, reported)",
    "S1 lost": "seed 77 on the ports branch: both events of a mention in a thread were "
    "remembered and nothing was stored (not yet explained; reported)",
    "S3 text": "seed 74 on the ports branch: a completed turn whose thread shows no text "
    "(not yet explained; reported)",
}
"""Rules today's code is known to break, and why; a rule not listed here fails the tier."""


def test_the_same_seed_gives_the_same_trace() -> None:
    for seed in (3, 11):
        first, second = run_seed(seed), run_seed(seed)
        assert first.digest == second.digest
        assert first.turns > 0


def test_a_budget_of_histories_breaks_only_known_rules(capsys: pytest.CaptureFixture[str]) -> None:
    started = time.process_time()
    turns = 0
    broken: Counter[str] = Counter()
    unknown: list[str] = []
    for seed in range(1, BUDGET + 1):
        result = run_seed(seed)
        turns += result.turns
        for violation in result.violations:
            broken[violation.code] += 1
            if violation.code not in KNOWN:
                unknown.append(f"seed {seed}: {violation}")
    cpu = time.process_time() - started
    with capsys.disabled():
        print(
            f"\nkourier sim: {BUDGET} histories, {turns} turns, {cpu:.1f} CPU-s "
            f"({turns / cpu:.0f} turns per CPU-second); rules broken: {dict(broken)}"
        )
    assert not unknown, "\n".join(unknown[:20])
