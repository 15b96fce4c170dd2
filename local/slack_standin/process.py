"""Runs the stand-in as its own process, for tests and the local stack."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from types import TracebackType
from typing import IO, Any

from local.slack_standin.client import SlackStandin
from local.slack_standin.settings import StandinSettings

REPO_ROOT = Path(__file__).resolve().parents[2]


class StandinProcess:
    """``python -m local.slack_standin`` with the given settings.

    Use as a context manager: entering starts the process and waits until it
    answers, leaving stops it. ``settings`` are ``StandinSettings`` fields,
    passed as command-line flags.
    """

    def __init__(self, *, port: int, log_path: Path | None = None, **settings: Any) -> None:
        unknown = set(settings) - set(StandinSettings.model_fields)
        if unknown:
            raise ValueError(f"unknown stand-in settings: {sorted(unknown)}")
        self.port = port
        self.url = f"http://127.0.0.1:{port}"
        self._log_path = log_path
        self._log: IO[bytes] | None = None
        self._flags = [f"--port={port}"] + [
            f"--{name.replace('_', '-')}={value}"
            for name, value in settings.items()
            if value is not None
        ]
        self._process: subprocess.Popen[bytes] | None = None
        self._client: SlackStandin | None = None

    def start(self, timeout: float = 30.0) -> SlackStandin:
        """Starts the process and returns a client once it answers.

        Raises:
            RuntimeError: It exited or did not answer within ``timeout`` seconds.
        """
        self._log = open(self._log_path, "ab") if self._log_path else None  # noqa: SIM115
        self._process = subprocess.Popen(
            [sys.executable, "-m", "local.slack_standin", *self._flags],
            cwd=REPO_ROOT,
            stdout=self._log or subprocess.DEVNULL,
            stderr=subprocess.STDOUT,
        )
        self._client = SlackStandin(self.url)
        deadline = time.monotonic() + timeout
        while not self._client.is_up():
            if self._process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"the Slack stand-in did not start (log: {self._log_path})")
            time.sleep(0.1)
        return self._client

    def stop(self) -> None:
        """Stops the process (politely, then not)."""
        if self._client is not None:
            self._client.close()
            self._client = None
        if self._process is not None and self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
        if self._log is not None:
            self._log.close()
            self._log = None

    def __enter__(self) -> SlackStandin:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()
