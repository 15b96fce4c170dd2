"""Fixtures for the peer tests: free ports in this suite's range, running peers."""

from __future__ import annotations

import socket
from collections.abc import Callable, Iterator
from contextlib import ExitStack

import pytest

from tests.peers.launch import PeerKind, running_peer

PORT_RANGE = range(22100, 23000)


def free_port() -> int:
    """A port in this suite's range that nothing listens on now."""
    for port in PORT_RANGE:
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError(f"no free port in {PORT_RANGE}")


@pytest.fixture(scope="module")
def peer_url() -> Iterator[Callable[[PeerKind], str]]:
    """Starts peers on first use, one of each kind per module; gives their base URLs."""
    urls: dict[PeerKind, str] = {}
    with ExitStack() as stack:

        def url_of(kind: PeerKind) -> str:
            if kind not in urls:
                urls[kind] = stack.enter_context(running_peer(kind, free_port()))
            return urls[kind]

        yield url_of
