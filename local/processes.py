"""Starting and stopping the local stack's processes: the one way to run a child.

Theory of operation: every child runs in a session of its own, so a Ctrl-C at
the terminal reaches only this process, which then stops its children in
order; the emulators, started first, also get SIGTERM from the kernel should
this process die without stopping them (PR_SET_PDEATHSIG, set by util-linux's
``setpriv`` so that no Python code runs between fork and exec: gRPC's fork
handlers, loaded with Google's clients, abort a forked child whose epoll
descriptor ``close_fds`` has closed). Some children start detached grandchildren in
process groups of their own (firebase-tools starts its java emulators that
way), so stopping one means SIGTERM to its group, a grace period, then
SIGKILL to every process group seen in its process tree. A second Ctrl-C
while stopping is held until the stop is done. Readiness is an HTTP answer
or ports that accept connections, polled with a deadline.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

import httpx

HOST = "127.0.0.1"
SHUTDOWN_GRACE_SECONDS = 15.0


class StartupError(RuntimeError):
    """A local process did not come up (the message quotes the end of its log)."""


class Process:
    """One child process with its log file."""

    def __init__(
        self,
        name: str,
        argv: Sequence[str],
        log_path: Path,
        *,
        env: Mapping[str, str] | None = None,
        cwd: Path | None = None,
        dies_with_parent: bool = False,
    ) -> None:
        """Start ``argv``; its output goes to ``log_path``; ``env`` defaults to ours.

        ``dies_with_parent`` asks the kernel to stop the child should this
        process die first (``setpriv --pdeathsig``, where util-linux has it).
        """
        self.name = name
        self.log_path = log_path
        log_path.parent.mkdir(parents=True, exist_ok=True)
        self._argv = _with_parent_death_signal(argv) if dies_with_parent else list(argv)
        self._env, self._cwd = dict(env or os.environ), cwd
        self._popen = self._spawn()

    def _spawn(self) -> subprocess.Popen[bytes]:
        with self.log_path.open("ab") as log:
            return subprocess.Popen(
                self._argv,
                env=self._env,
                cwd=self._cwd,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    def wait_http(self, url: str, timeout: float = 60.0) -> None:
        """Wait until ``url`` answers any HTTP status below 500."""

        def answers() -> bool:
            try:
                return httpx.get(url, timeout=2).status_code < 500
            except httpx.HTTPError:
                return False

        self._wait(answers, f"no answer at {url}", timeout)

    def wait_listening(self, ports: Sequence[int], timeout: float = 120.0) -> None:
        """Wait until every port accepts connections on 127.0.0.1."""
        waiting = list(ports)

        def listening() -> bool:
            waiting[:] = [port for port in waiting if not _accepts_connections(port)]
            return not waiting

        self._wait(listening, f"ports {waiting} not listening", timeout)

    def _wait(self, ready: Callable[[], bool], what: str, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while not ready():
            if self._popen.poll() is not None:
                raise StartupError(
                    f"{self.name} exited with {self._popen.returncode}:\n{self.log_tail()}"
                )
            if time.monotonic() > deadline:
                raise StartupError(f"{self.name}: {what} after {timeout:.0f} s:\n{self.log_tail()}")
            time.sleep(0.1)

    def log_tail(self, lines: int = 30) -> str:
        """The end of the process's log."""
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])

    def cpu_seconds(self) -> float:
        """The CPU time the process and the processes it started use now, user and system (from /proc)."""
        stats = _stats()
        tree, grew = {self._popen.pid}, True
        while grew:
            children = {pid for pid, fields in stats.items() if int(fields[1]) in tree} - tree
            tree |= children
            grew = bool(children)
        ticks = sum(int(stats[pid][11]) + int(stats[pid][12]) for pid in tree if pid in stats)
        return ticks / os.sysconf("SC_CLK_TCK")

    def kill(self) -> None:
        """Kill the process and everything it started at once (SIGKILL), as a crash would."""
        for group in _process_groups_in_tree(self._popen.pid):
            try:
                os.killpg(group, signal.SIGKILL)
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
        with _interruptions_deferred():
            groups = _process_groups_in_tree(self._popen.pid)
            try:
                os.killpg(self._popen.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                self._popen.wait(SHUTDOWN_GRACE_SECONDS)
            except subprocess.TimeoutExpired:
                pass
            for group in groups:
                try:
                    os.killpg(group, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            self._popen.wait()


@contextmanager
def running(
    name: str,
    argv: Sequence[str],
    log_path: Path,
    *,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    dies_with_parent: bool = False,
) -> Iterator[Process]:
    """A process for the length of the block, stopped however the block ends."""
    process = Process(name, argv, log_path, env=env, cwd=cwd, dies_with_parent=dies_with_parent)
    try:
        yield process
    finally:
        process.stop()


@contextmanager
def sigterm_interrupts() -> Iterator[None]:
    """Turn SIGTERM into KeyboardInterrupt for the block, so a terminated run still stops its
    children. Left alone when not on the main thread or when SIGTERM is already handled."""
    if (
        threading.current_thread() is not threading.main_thread()
        or signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL
    ):
        yield
        return

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _with_parent_death_signal(argv: Sequence[str]) -> list[str]:
    """``argv`` run so that the kernel sends it SIGTERM if this process dies first.

    setpriv sets PR_SET_PDEATHSIG and execs ``argv``, which keeps it. Without
    setpriv the child runs as it is and is only stopped by ``stop()``.
    """
    setpriv = shutil.which("setpriv")
    return [setpriv, "--pdeathsig", "TERM", "--", *argv] if setpriv else list(argv)


@contextmanager
def _interruptions_deferred() -> Iterator[None]:
    """Holds Ctrl-C and SIGTERM until the block ends, then delivers them."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held: list[signal.Signals] = []
    deferred = (signal.SIGINT, signal.SIGTERM)
    previous = {
        signum: signal.signal(signum, lambda number, _: held.append(signal.Signals(number)))
        for signum in deferred
    }
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler if handler is not None else signal.SIG_DFL)
        for signum in dict.fromkeys(held):
            signal.raise_signal(signum)


def _process_groups_in_tree(root_pid: int) -> set[int]:
    """The process groups of ``root_pid`` and all its descendants, read from /proc."""
    parents = {pid: (int(fields[1]), int(fields[2])) for pid, fields in _stats().items()}
    tree = {root_pid}
    grew = True
    while grew:
        children = {pid for pid, (ppid, _) in parents.items() if ppid in tree} - tree
        tree |= children
        grew = bool(children)
    return {parents[pid][1] for pid in tree if pid in parents} | {root_pid}


def _stats() -> dict[int, list[str]]:
    """Each process's /proc stat fields after its parenthesised name: state, ppid, pgrp, ..."""
    stats = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        stats[int(entry.name)] = stat[stat.rfind(")") + 2 :].split()
    return stats


def _accepts_connections(port: int) -> bool:
    try:
        with socket.create_connection((HOST, port), timeout=1):
            return True
    except OSError:
        return False
