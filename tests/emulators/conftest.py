"""Fixtures for tests against the real emulator processes.

``emulators`` (session) starts Firestore, Pub/Sub and Cloud Tasks on ports 20380-20390
and exports their variables into os.environ, where Google's clients read them.
``http_recorder`` (session) is a real HTTP server on 127.0.0.1:20396 that records what
the emulators deliver; each test takes its own path on it with ``endpoint()``.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from local.emulators import EmulatorEnv, EmulatorPorts, exported, running_emulators
from tests.emulators.http_recorder import HttpRecorder

# emulator.json's ports (8380-8390) moved into this suite's range (20380-20390).
TEST_PORTS = EmulatorPorts().shifted(12000)
HTTP_RECORDER_PORT = 20396


@pytest.fixture(scope="session")
def emulators(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmulatorEnv]:
    """The three emulators, running, with their variables in os.environ."""
    with (
        running_emulators(TEST_PORTS, tmp_path_factory.mktemp("emulator-logs")) as env,
        exported(env),
    ):
        yield env


@pytest.fixture(scope="session")
def http_recorder() -> Iterator[HttpRecorder]:
    """The recording HTTP server on 127.0.0.1:20396."""
    with HttpRecorder(HTTP_RECORDER_PORT) as recorder:
        yield recorder
