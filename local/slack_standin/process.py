"""Runs the stand-in as its own process, for tests and the local stack."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from types import TracebackType
from typing import Any

from local.processes import Process, StartupError
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
        self._log_path = log_path or Path(tempfile.mkdtemp(prefix="standin-")) / "slack-standin.log"
        self._flags = [f"--port={port}"] + [
            f"--{name.replace('_', '-')}={value}"
            for name, value in settings.items()
            if value is not None
        ]
        self._process: Process | None = None
        self._client: SlackStandin | None = None

    def start(self, timeout: float = 30.0) -> SlackStandin:
        """Starts the process and returns a client once it answers.

        Raises:
            StartupError: It exited or did not answer within ``timeout`` seconds.
        """
        self._process = Process(
            "slack-standin",
            [sys.executable, "-m", "local.slack_standin", *self._flags],
            self._log_path,
            cwd=REPO_ROOT,
        )
        try:
            self._process.wait_http(self.url + "/_standin/health", timeout)
        except StartupError:
            self.stop()
            raise
        self._client = SlackStandin(self.url)
        return self._client

    def stop(self) -> None:
        """Stops the process (politely, then not)."""
        if self._client is not None:
            self._client.close()
            self._client = None
        if self._process is not None:
            self._process.stop()
            self._process = None

    def __enter__(self) -> SlackStandin:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()
