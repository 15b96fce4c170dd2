"""Start and stop the real A2A peers that tests talk to, each as its own process.

Theory of operation: every peer is a public SDK's own server, started as a
subprocess on 127.0.0.1 and a given port, and stopped (its whole process
group) when the ``running_peer`` block ends. The demo agent runs in the
project venv; the google-adk and kagent-adk peers run in their own venvs,
made by tests/peers/install.sh, with ``scripted_agents`` importable through
PYTHONPATH. kagent-adk loads an agent package and its agent-card.json from a
working directory, so one is written to a temporary directory with the card
naming the real port. A peer is ready when its agent card answers. Its
output goes to a log file whose tail is shown if it fails to start.

Run one by hand with ``python -m tests.peers.launch KIND --port N``.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Literal, get_args

import httpx

PeerKind = Literal["demo", "adk", "adk-confirm", "kagent", "kagent-confirm"]
PEER_KINDS: tuple[PeerKind, ...] = get_args(PeerKind)

REPO_ROOT = Path(__file__).resolve().parents[2]
PEERS_DIR = REPO_ROOT / "tests" / "peers"
VENVS_DIR = REPO_ROOT / ".venvs"
CARD_PATH = "/.well-known/agent-card.json"
KAGENT_AGENT_NAME = "scripted"
STARTUP_TIMEOUT_SECONDS = 120.0
STOP_TIMEOUT_SECONDS = 15.0


class PeerStartError(RuntimeError):
    """A peer exited, or its card did not answer, before it was ready."""


def _kagent_workdir(root: Path, port: int, confirm: bool) -> Path:
    """Writes the agent package and card that ``kagent-adk run`` loads.

    Args:
        root: An empty directory to write into.
        port: The port the card advertises.
        confirm: Whether the agent's tool needs approval.

    Returns:
        The working directory to pass to ``kagent-adk run``.
    """
    package = root / KAGENT_AGENT_NAME
    package.mkdir()
    (package / "__init__.py").write_text(
        f"from scripted_agents import build_agent\n\nroot_agent = build_agent(confirm={confirm})\n"
    )
    card = {
        "name": KAGENT_AGENT_NAME,
        "description": "Calls one tool with what you wrote, then tells you what it answered.",
        "url": f"http://127.0.0.1:{port}",
        "version": "0.10.4",
        "capabilities": {"streaming": True},
        "defaultInputModes": ["text"],
        "defaultOutputModes": ["text"],
        "skills": [],
    }
    (package / "agent-card.json").write_text(json.dumps(card, indent=2))
    return root


def _command(kind: PeerKind, port: int, workdir: Path) -> tuple[list[str], dict[str, str]]:
    """The command line and environment that start a peer of ``kind``."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "PYTHONWARNINGS": "ignore"}
    if kind == "demo":
        command = [sys.executable, "-m", "local.demo_agent", "--port", str(port)]
        return command, {**env, "PYTHONPATH": str(REPO_ROOT)}
    env["PYTHONPATH"] = str(PEERS_DIR)
    if kind in ("adk", "adk-confirm"):
        command = [str(VENVS_DIR / "adk" / "bin" / "python"), str(PEERS_DIR / "adk_server.py")]
        command += ["--port", str(port)] + (["--confirm"] if kind == "adk-confirm" else [])
        return command, env
    agents_dir = _kagent_workdir(workdir, port, confirm=kind == "kagent-confirm")
    command = [str(VENVS_DIR / "kagent" / "bin" / "kagent-adk"), "run", KAGENT_AGENT_NAME]
    command += ["--working-dir", str(agents_dir), "--local", "--host", "127.0.0.1"]
    command += ["--port", str(port)]
    kagent_env = {
        "KAGENT_URL": "http://127.0.0.1:1",
        "KAGENT_NAME": KAGENT_AGENT_NAME,
        "KAGENT_NAMESPACE": "default",
        "LOG_LEVEL": "warning",
    }
    return command, {**env, **kagent_env}


def _wait_until_ready(process: subprocess.Popen[bytes], base_url: str, log: Path) -> None:
    """Polls the agent card until it answers; raises if the peer dies or times out."""
    deadline = time.monotonic() + STARTUP_TIMEOUT_SECONDS
    with httpx.Client(timeout=5.0) as client:
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise PeerStartError(f"peer exited with {process.returncode}:\n{_tail(log)}")
            try:
                if client.get(base_url + CARD_PATH).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.1)
    raise PeerStartError(
        f"no agent card at {base_url} after {STARTUP_TIMEOUT_SECONDS} s:\n{_tail(log)}"
    )


def _tail(log: Path, lines: int = 40) -> str:
    """The last lines of a peer's log."""
    return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])


def _stop(process: subprocess.Popen[bytes]) -> None:
    """Ends the peer's process group: SIGTERM, then SIGKILL if it lingers."""
    if process.poll() is not None:
        return
    os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=STOP_TIMEOUT_SECONDS)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


@contextmanager
def running_peer(kind: PeerKind, port: int) -> Iterator[str]:
    """Runs a peer on 127.0.0.1:``port`` for the duration of the block.

    Args:
        kind: Which peer: the demo agent (a2a-sdk 1.3.0), google-adk's
            to_a2a server, or kagent-adk; "-confirm" variants pause for
            approval before running their tool.
        port: A free port to serve on.

    Yields:
        The peer's base URL (its JSON-RPC endpoint), without trailing slash.

    Raises:
        PeerStartError: The peer did not serve its card in time.
    """
    base_url = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryDirectory(prefix=f"peer-{kind}-") as scratch:
        workdir = Path(scratch) / "agents"
        workdir.mkdir()
        log = Path(scratch) / "peer.log"
        command, env = _command(kind, port, workdir)
        if not Path(command[0]).exists():
            raise PeerStartError(f"{command[0]} is missing: run tests/peers/install.sh")
        with log.open("wb") as log_file:
            process = subprocess.Popen(
                command,
                cwd=REPO_ROOT,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=log_file,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        try:
            _wait_until_ready(process, base_url, log)
            yield base_url
        finally:
            _stop(process)


def main() -> None:
    """Runs one peer in the foreground until interrupted."""
    parser = argparse.ArgumentParser(description="Run one A2A test peer.")
    parser.add_argument("kind", choices=PEER_KINDS)
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(0))
    started = time.monotonic()
    with running_peer(args.kind, args.port) as base_url:
        print(f"{args.kind} ready at {base_url} in {time.monotonic() - started:.1f} s", flush=True)
        try:
            signal.pause()
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()
