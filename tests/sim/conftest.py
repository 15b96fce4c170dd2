"""The simulator tier: histories run in-process, on the shell's ports, with logs dropped."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True, scope="session")
def _quiet_logs() -> None:
    from local.sim.cli import quiet_logging

    quiet_logging()
