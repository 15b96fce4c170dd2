"""Tripwires: a history whose code reaches the wall clock, a real sleep or a thread breaks a rule."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from local.sim.run import run_seed
from local.sim.tripwires import Tripped, tripwires


def test_a_wired_call_is_recorded_raises_and_is_restored_after() -> None:
    tripped: list[str] = []
    with tripwires(tripped.append):
        with pytest.raises(Tripped):
            time.sleep(0)
        with pytest.raises(Tripped):
            threading.Thread(target=lambda: None).start()
    assert [what.split(" ")[0] for what in tripped] == ["time.sleep", "Thread.start"]
    time.sleep(0)  # restored


def test_another_thread_of_the_process_is_not_the_simulated_path() -> None:
    # A local stack's reconcile timer, left running by an earlier test, keeps its sockets
    # and clock while a history runs; it used to die of Tripped, and the stack with it.
    tripped: list[str] = []
    slept, woken, done = threading.Event(), threading.Event(), threading.Event()

    def timer() -> None:
        woken.wait(10)
        time.sleep(0)
        slept.set()
        done.wait(10)  # alive until the history ends, as a stack's timer is

    other = threading.Thread(target=timer)
    other.start()
    with tripwires(tripped.append):
        woken.set()
        assert slept.wait(10), "the other thread's sleep was refused"
    done.set()
    other.join(10)
    assert tripped == []


def test_a_shell_that_reads_the_wall_clock_breaks_the_tripwire_rule(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from shared import engine

    def deadline_on_the_wall_clock(deps: Any) -> float:
        return time.monotonic() + deps.settings.follow_budget_seconds

    assert not [v for v in run_seed(3).violations if v.code == "S0 tripwire"]
    monkeypatch.setattr(engine, "function_deadline", deadline_on_the_wall_clock)
    tripped = [v for v in run_seed(3).violations if v.code == "S0 tripwire"]
    assert tripped
    assert "time.monotonic" in tripped[0].detail
