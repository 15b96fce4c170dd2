"""Starting and stopping the local stack's processes.

Every process runs in its own process group, so stopping it also stops what
it started (firebase leaves java children behind otherwise). Readiness is an
HTTP answer, polled with a deadline.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

import httpx


class StartupError(RuntimeError):
    """A local process did not come up."""


class Process:
    """One child process with its log file."""

    def __init__(self, name: str, argv: Sequence[str], env: Mapping[str, str], log_dir: Path) -> None:
        self.name = name
        self.log_path = log_dir / f"{name}.log"
        log_dir.mkdir(parents=True, exist_ok=True)
        self._argv, self._env = list(argv), dict(env)
        self._log = self.log_path.open("ab")
        self._popen = self._spawn()

    def _spawn(self) -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            self._argv, env=self._env, stdout=self._log, stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL, start_new_session=True,
        )

    def wait_http(self, url: str, timeout: float = 60.0) -> None:
        """Wait until ``url`` answers any HTTP status below 500."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._popen.poll() is not None:
                raise StartupError(f"{self.name} exited with {self._popen.returncode}; see {self.log_path}")
            try:
                if httpx.get(url, timeout=2).status_code < 500:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        raise StartupError(f"{self.name} did not answer at {url} within {timeout:.0f}s; see {self.log_path}")

    def kill(self) -> None:
        """Kill the process and everything it started at once (SIGKILL), as a crash would."""
        try:
            os.killpg(self._popen.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self._popen.wait()

    def start_again(self) -> None:
        """Start the same command again, with the same environment and log file, once it has exited."""
        if self._popen.poll() is None:
            raise RuntimeError(f"{self.name} is still running")
        self._popen = self._spawn()

    def stop(self) -> None:
        """Stop the process and everything it started."""
        if self._popen.poll() is None:
            for sig, grace in ((signal.SIGTERM, 10.0), (signal.SIGKILL, 5.0)):
                try:
                    os.killpg(self._popen.pid, sig)
                except ProcessLookupError:
                    break
                try:
                    self._popen.wait(grace)
                    break
                except subprocess.TimeoutExpired:
                    continue
        self._log.close()
