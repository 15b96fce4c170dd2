"""Seeds that broke a rule on the turn logic of 2026-12-01, kept as regression tests.

A seed reproduces a history for the code it was found on: once the code
changes, the same seed may take another path. Each test therefore names the
rule and the turn, and passes when that turn keeps the rule. They are
expected failures until their fault is fixed (non-strict: a changed path that
no longer reaches the fault passes too, and says so as XPASS).
"""

from __future__ import annotations

import pytest

pytest.importorskip("shared.bootstrap", reason="the shell's ports are not on main yet")

from local.sim.run import broken_rules, run_seed

FINDINGS = [
    pytest.param(
        46,
        "S0 crash",
        "C0SIM1-1700001258.041005",
        id="F1-message-reply-takeover-asserts",
        marks=pytest.mark.xfail(
            reason="a takeover of a one-Message reply asserts in TurnRun._task_id on every "
            "attempt; the thread stays blocked (F1)"
        ),
    ),
    pytest.param(
        11,
        "S6 notice twice",
        "C0SIM3-1700000378.799281",
        id="F5-final-notice-twice-after-a-kill",
        marks=pytest.mark.xfail(
            reason="the final notice is posted, the carrier dies before the turn is done, "
            "the taker posts it again (F5)"
        ),
    ),
    pytest.param(
        28,
        "S3 step once",
        "C0SIM3-1700000319.629432",
        id="F3-step-twice-after-a-takeover",
        marks=pytest.mark.xfail(
            reason="a step appended after the last checkpoint shows again in the taker's "
            "message (F3)"
        ),
    ),
    pytest.param(
        30,
        "S1 one outcome",
        "C0SIM3-1700000181.984501",
        id="F7-ingress-regresses-a-finished-turn",
        marks=pytest.mark.xfail(reason="issue 15 item 9: set_turn(waiting) lands after done"),
    ),
    pytest.param(
        11,
        "L liveness",
        "C0SIM3-1700000102.267710",
        id="issue15-1-paused-turn-never-times-out",
        marks=pytest.mark.xfail(
            reason="issue 15 item 1: the sweep takes a paused turn over before its question "
            "times out, which voids the timer, for ever"
        ),
    ),
]


@pytest.mark.parametrize(("seed", "rule", "turn"), FINDINGS)
def test_the_turn_keeps_the_rule(seed: int, rule: str, turn: str) -> None:
    assert (rule, turn) not in broken_rules(run_seed(seed))
