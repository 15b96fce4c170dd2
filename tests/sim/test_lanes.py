"""The agents' two lanes: answers decoded (most instances) or spelled as HTTP and SSE.

The decoded lane only skips the spelling; the shell's transport classifies
what it carries by the same rules. So a seed gives the same history, byte for
byte, whichever lane its instances take.
"""

from __future__ import annotations

from typing import Any

import pytest

from local.sim import run
from local.sim.agent import SimAgentTransport

SEEDS = (1, 2, 3, 5)
"""Histories with stream drops, idle cuts, hand-overs and agent errors among them."""


def _history(seed: int, wire_share: float, monkeypatch: pytest.MonkeyPatch) -> tuple[str, int]:
    """The seed's digest and how many requests went over HTTP, with ``wire_share`` of instances on it."""
    monkeypatch.setattr(run, "WIRE_SHARE", wire_share)
    spelled = 0
    handle = SimAgentTransport.handle_request

    def counted(self: SimAgentTransport, request: Any) -> Any:
        nonlocal spelled
        spelled += 1
        return handle(self, request)

    monkeypatch.setattr(SimAgentTransport, "handle_request", counted)
    return run.run_seed(seed).digest, spelled


@pytest.mark.parametrize("seed", SEEDS)
def test_a_seed_gives_the_same_history_on_either_lane(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    wire, over_http = _history(seed, 1.0, monkeypatch)
    decoded, none_over_http = _history(seed, 0.0, monkeypatch)
    assert over_http > 0
    assert none_over_http == 0
    assert decoded == wire
