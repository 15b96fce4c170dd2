"""Seeds that broke a rule on the turn logic of 2026-12-01 (with the ports), kept as regression tests.

A seed reproduces a history for the code it was found on: once the code
changes, the same seed may take another path. Each test therefore names the
rule and the turn, and passes when that turn keeps the rule. The turn-layer
seeds (F1, F5, F3, S1 and the two questions left open) failed on main at
e977107, before shell2's fixes, and pass since; an expected failure left
here is non-strict (a change elsewhere that reroutes the history must not
turn the build red; an XPASS says the seed is stale).
"""

from __future__ import annotations

import pytest

from local.sim.run import broken_rules, run_seed

FINDINGS = [
    pytest.param(
        21,
        "S0 crash",
        "C0SIM2-1700000533.013968",
        id="F1-message-reply-takeover-asserts",
    ),
    pytest.param(
        41,
        "S6 notice twice",
        "C0SIM3-1700000170.985264",
        id="F5-final-notice-twice-after-a-kill",
    ),
    pytest.param(
        5,
        "S3 step once",
        "C0SIM2-1700000186.028714",
        id="F3-step-twice-after-a-takeover",
    ),
    pytest.param(
        165,
        "S1 lost",
        "C0SIM2-1700000238.712994",
        id="S1-answer-never-sent-after-its-sender-died",
    ),
    pytest.param(
        60,
        "L hygiene",
        "C0SIM1-1700000495.684698",
        id="question-left-answering-after-its-turn-ended",
    ),
    pytest.param(
        153,
        "L hygiene",
        "C0SIM2-1700000336.732756",
        id="question-left-open-after-its-turn-ended",
    ),
    pytest.param(
        29,
        "S3 text",
        "C0SIM2-1700000232.886681",
        id="text-shown-that-the-agent-took-back",
        marks=pytest.mark.xfail(
            reason="fallback layout (chat.startStream refused): text posted, then taken back "
            "by the agent with an empty part (contract: an artifact whose text is empty is left "
            "out), stays in the posted message, followed by the 'no output' notice "
            "(ThreadReply; reported to shell2)",
        ),
    ),
]
"""Seeds as found on main at d9a4a5d with the simulator's per-seed settings, Slack's
re-sends during a running delivery and the agent's 401 and -32001 faults (each change to the
simulator reroutes histories, so seeds are re-found with it)."""


@pytest.mark.parametrize(("seed", "rule", "turn"), FINDINGS)
def test_the_turn_keeps_the_rule(seed: int, rule: str, turn: str) -> None:
    assert (rule, turn) not in broken_rules(run_seed(seed))
