"""Seeds that broke a rule on the turn logic of 2026-12-01 (with the ports), kept as regression tests.

A seed reproduces a history for the code it was found on: once the code
changes, the same seed may take another path. Each test therefore names the
rule and the turn, and passes when that turn keeps the rule. They are
expected failures until their fault is fixed (non-strict: a changed path that
no longer reaches the fault passes too, and says so as XPASS).
"""

from __future__ import annotations

import pytest

from local.sim.run import broken_rules, run_seed

FINDINGS = [
    pytest.param(
        30,
        "S0 crash",
        "C0SIM3-1700000472.472200",
        id="F1-message-reply-takeover-asserts",
        marks=pytest.mark.xfail(
            reason="a takeover of a one-Message reply asserts in TurnRun._task_id on every "
            "attempt, until the turn is given up (F1)"
        ),
    ),
    pytest.param(
        22,
        "S6 notice twice",
        "C0SIM3-1700000937.706902",
        id="F5-final-notice-twice-after-a-kill",
        marks=pytest.mark.xfail(
            reason="the final notice is posted, the carrier dies before the turn is done, "
            "the taker posts it again (F5)"
        ),
    ),
    pytest.param(
        12,
        "S3 step once",
        "C0SIM2-1700000378.473677",
        id="F3-step-twice-after-a-takeover",
        marks=pytest.mark.xfail(
            reason="a step appended after the last checkpoint shows again in the taker's "
            "message (F3)"
        ),
    ),
]


@pytest.mark.parametrize(("seed", "rule", "turn"), FINDINGS)
def test_the_turn_keeps_the_rule(seed: int, rule: str, turn: str) -> None:
    assert (rule, turn) not in broken_rules(run_seed(seed))
