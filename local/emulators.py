"""Starts and stops the local emulators: Firestore, Pub/Sub and Cloud Tasks.

Theory of operation: firebase-tools (``node_modules/.bin/firebase emulators:start``)
runs Google's official Firestore and Pub/Sub emulators, found through
``FIRESTORE_EMULATOR_BINARY_PATH`` / ``PUBSUB_EMULATOR_BINARY_PATH`` so that it
downloads nothing, on a Temurin JDK 21+ put first on PATH. The Cloud Tasks
emulator is ``local.tasks_emulator`` in its own venv. Both run as
``local.processes`` children (stopped with everything they started, also on
SIGTERM, and by the kernel should this process die); firebase-tools starts its
java emulators detached, so stopping it asks firebase to shut down and then
kills whatever is left of its process tree. Readiness is the emulator ports
accepting connections. Everything listens on 127.0.0.1 only.

``local/install_emulators.sh`` prepares every file used here.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path

from local.processes import running, sigterm_interrupts

logger = logging.getLogger(__name__)

REPO_ROOT = Path(__file__).resolve().parent.parent
FIREBASE_CONFIG = REPO_ROOT / "emulator.json"
FIREBASE = REPO_ROOT / "node_modules" / ".bin" / "firebase"
EMULATOR_CACHE = REPO_ROOT / ".cache" / "emulators"
FIRESTORE_LAUNCHER_JAR = EMULATOR_CACHE / "firestore-launcher.jar"
JAVA_HOME_RECORD = EMULATOR_CACHE / "java_home"
PUBSUB_EMULATOR = Path(
    "/usr/lib/google-cloud-sdk/platform/pubsub-emulator/bin/cloud-pubsub-emulator"
)
TASKS_EMULATOR_PYTHON = REPO_ROOT / ".venvs" / "tasks-emulator" / "bin" / "python"

PROJECT_ID = "demo-kourier"
HOST = "127.0.0.1"
STARTUP_TIMEOUT_SECONDS = 120.0


class EmulatorError(RuntimeError):
    """The emulators are not installed, or a process could not start."""


def _configured_ports() -> dict[str, int]:
    emulators = json.loads(FIREBASE_CONFIG.read_text())["emulators"]
    return {
        "firestore": emulators["firestore"]["port"],
        "firestore_websocket": emulators["firestore"]["websocketPort"],
        "hub": emulators["hub"]["port"],
        "logging": emulators["logging"]["port"],
        "pubsub": emulators["pubsub"]["port"],
    }


_DEFAULT_PORTS = _configured_ports()


@dataclass(frozen=True)
class EmulatorPorts:
    """Every port the emulators listen on; defaults are emulator.json's and 8390 for Cloud Tasks."""

    firestore: int = _DEFAULT_PORTS["firestore"]
    firestore_websocket: int = _DEFAULT_PORTS["firestore_websocket"]
    hub: int = _DEFAULT_PORTS["hub"]
    logging: int = _DEFAULT_PORTS["logging"]
    pubsub: int = _DEFAULT_PORTS["pubsub"]
    cloud_tasks: int = 8390

    def shifted(self, offset: int) -> EmulatorPorts:
        """The same ports moved by ``offset``, for a second set of emulators (tests)."""
        return EmulatorPorts(**{name: port + offset for name, port in asdict(self).items()})


@dataclass(frozen=True)
class EmulatorEnv:
    """Where running emulators answer."""

    ports: EmulatorPorts
    project: str = PROJECT_ID

    @property
    def variables(self) -> dict[str, str]:
        """The environment variables that point a process (and Google's clients) at the emulators."""
        return {
            "FIRESTORE_EMULATOR_HOST": f"{HOST}:{self.ports.firestore}",
            "PUBSUB_EMULATOR_HOST": f"{HOST}:{self.ports.pubsub}",
            "CLOUD_TASKS_EMULATOR_HOST": f"{HOST}:{self.ports.cloud_tasks}",
            "GOOGLE_CLOUD_PROJECT": self.project,
        }


@contextmanager
def running_emulators(ports: EmulatorPorts, log_dir: Path) -> Iterator[EmulatorEnv]:
    """Runs the three emulators until the block ends, however it ends.

    Args:
        ports: Where they listen (all on 127.0.0.1); every one must be free.
        log_dir: Receives firebase.log, cloud-tasks.log and the emulators' own debug logs.

    Yields:
        Where the emulators answer, once all of them accept connections.

    Raises:
        EmulatorError: Something is not installed, a port is taken, or an emulator
            did not start (the message quotes the end of its log).
    """
    java_home = _installed_java_home()
    _check_ports_free(ports)
    log_dir.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    with sigterm_interrupts(), ExitStack() as stack:
        firebase = stack.enter_context(
            running(
                "firebase",
                [
                    str(FIREBASE),
                    "emulators:start",
                    "--config",
                    str(_firebase_config(ports, log_dir)),
                    "--project",
                    PROJECT_ID,
                ],
                log_dir / "firebase.log",
                cwd=log_dir,  # firebase writes its *-debug.log files to its working directory
                env={**os.environ, **_firebase_env(java_home)},
                dies_with_parent=True,
            )
        )
        tasks = stack.enter_context(
            running(
                "cloud-tasks",
                [
                    str(TASKS_EMULATOR_PYTHON),
                    "-m",
                    "local.tasks_emulator",
                    "--port",
                    str(ports.cloud_tasks),
                ],
                log_dir / "cloud-tasks.log",
                cwd=REPO_ROOT,
                env={**os.environ, "PYTHONWARNINGS": "ignore::FutureWarning"},
                dies_with_parent=True,
            )
        )
        firebase.wait_listening([ports.firestore, ports.pubsub], STARTUP_TIMEOUT_SECONDS)
        tasks.wait_listening([ports.cloud_tasks], STARTUP_TIMEOUT_SECONDS)
        logger.info("emulators ready in %.1f s (logs in %s)", time.monotonic() - started, log_dir)
        yield EmulatorEnv(ports)


@contextmanager
def exported(env: EmulatorEnv) -> Iterator[None]:
    """Sets the emulator variables in os.environ for the block, where Google's clients and
    shared.settings read them, and restores the previous values afterwards."""
    previous = {name: os.environ.get(name) for name in env.variables}
    os.environ.update(env.variables)
    try:
        yield
    finally:
        for name, value in previous.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _installed_java_home() -> Path:
    required = [
        FIREBASE,
        FIRESTORE_LAUNCHER_JAR,
        JAVA_HOME_RECORD,
        PUBSUB_EMULATOR,
        TASKS_EMULATOR_PYTHON,
    ]
    missing = [str(path) for path in required if not path.exists()]
    if missing:
        raise EmulatorError(f"not installed: {', '.join(missing)}; run local/install_emulators.sh")
    java_home = Path(JAVA_HOME_RECORD.read_text().strip())
    if not (java_home / "bin" / "java").exists():
        raise EmulatorError(f"{java_home} has no bin/java; run local/install_emulators.sh")
    return java_home


def _check_ports_free(ports: EmulatorPorts) -> None:
    taken = []
    for name, port in asdict(ports).items():
        with socket.socket() as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind((HOST, port))
            except OSError:
                taken.append(f"{name} {port}")
    if taken:
        raise EmulatorError(f"ports already in use on {HOST}: {', '.join(taken)}")


def _firebase_config(ports: EmulatorPorts, log_dir: Path) -> Path:
    """emulator.json itself, or a copy in log_dir with the ports changed."""
    firebase_ports = {name: port for name, port in asdict(ports).items() if name != "cloud_tasks"}
    if firebase_ports == _DEFAULT_PORTS:
        return FIREBASE_CONFIG
    config = json.loads(FIREBASE_CONFIG.read_text())
    emulators = config["emulators"]
    emulators["firestore"]["port"] = ports.firestore
    emulators["firestore"]["websocketPort"] = ports.firestore_websocket
    emulators["hub"]["port"] = ports.hub
    emulators["logging"]["port"] = ports.logging
    emulators["pubsub"]["port"] = ports.pubsub
    path = log_dir / "emulator.json"
    path.write_text(json.dumps(config, indent=2))
    return path


def _firebase_env(java_home: Path) -> dict[str, str]:
    return {
        "JAVA_HOME": str(java_home),
        "PATH": f"{java_home / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}",
        "FIRESTORE_EMULATOR_BINARY_PATH": str(FIRESTORE_LAUNCHER_JAR),
        "PUBSUB_EMULATOR_BINARY_PATH": str(PUBSUB_EMULATOR),
        # No update check and no message-of-the-day fetch: nothing leaves 127.0.0.1.
        "NO_UPDATE_NOTIFIER": "1",
        "CI": "1",
    }
