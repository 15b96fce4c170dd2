"""Tripwires: while a history runs, nothing may reach the real world.

Theory of operation. The simulated path owns time, randomness and every
outside service through the ports; a call that goes around them (the wall
clock, a real sleep, a socket, a thread, module-level randomness, OS
entropy) would make a seed replay differently, or block the one thread all
invocations share. While a history runs, those functions are replaced by
ones that record the call, with where it came from, and raise (a few
library callers whose reads cannot change a history are let through, and so
are other threads of the process, such as a local stack's reconcile timer
left by an earlier test: the history cannot start a thread of its own). The record
matters more than the error: the shell may swallow an ``Exception``, the
oracle still sees the trip (rule ``S0 tripwire``). ``datetime.now`` cannot be
replaced (a C type); the ports give the shell no reason to call it, and the
clock port's tests cover its users.
"""

from __future__ import annotations

import os
import random
import socket
import sys
import threading
import time
import traceback
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

WIRED: tuple[tuple[Any, str], ...] = (
    (time, "time"),
    (time, "time_ns"),
    (time, "monotonic"),
    (time, "monotonic_ns"),
    (time, "sleep"),
    (socket.socket, "connect"),
    (socket, "create_connection"),
    (threading.Thread, "start"),
    (uuid, "uuid4"),
    (os, "urandom"),
    (random, "random"),
    (random, "randint"),
    (random, "uniform"),
    (random, "choice"),
)
"""Each (owner, name) replaced while a history runs."""

HARMLESS = ("http/cookiejar.py",)
"""Callers let through: their reads cannot change a history (httpx hands every response
to http.cookiejar, which reads the wall clock to expire cookies no agent here sets)."""


class Tripped(RuntimeError):
    """The simulated path called something that reaches the real world."""


@contextmanager
def tripwires(on_trip: Callable[[str], None]) -> Iterator[None]:
    """Replace the wired functions until the block ends; ``on_trip(what and where)`` per call."""
    saved = [(owner, name, getattr(owner, name)) for owner, name in WIRED]

    def wire(owner: Any, name: str, original: Callable[..., Any]) -> Callable[..., Any]:
        what = f"{getattr(owner, '__name__', owner)}.{name}"

        def tripped(*args: Any, **kwargs: Any) -> Any:
            caller = sys._getframe(1).f_code.co_filename
            if threading.get_ident() != history or caller.endswith(HARMLESS):
                return original(*args, **kwargs)
            frames = traceback.extract_stack()[-5:-1]
            where = " < ".join(f"{f.name}:{f.lineno}" for f in reversed(frames))
            on_trip(f"{what} (at {where})")
            raise Tripped(f"{what} on the simulated path")

        return tripped

    history = threading.get_ident()
    threads = threading.active_count()
    for owner, name, original in saved:
        setattr(owner, name, wire(owner, name, original))
    try:
        yield
    finally:
        for owner, name, original in saved:
            setattr(owner, name, original)
    if threading.active_count() != threads:
        on_trip(f"threads: {threads} before the history, {threading.active_count()} after")
