"""Command line: ``python -m local.tasks_emulator --port PORT`` (in .venvs/tasks-emulator)."""

from __future__ import annotations

import argparse
import logging
import socket

from local.tasks_emulator.compat import serve

# Cloud Tasks cuts an HTTP target's request after its dispatch deadline (10 minutes by
# default) and retries it; upstream posts with urllib and no timeout, so the socket default
# stands in for the deadline.
HTTP_DISPATCH_DEADLINE_SECONDS = 600.0


def main() -> None:
    """Parses the port and serves until interrupted."""
    parser = argparse.ArgumentParser(description="Cloud Tasks emulator for Agent Kourier")
    parser.add_argument("--port", type=int, required=True, help="port on 127.0.0.1")
    arguments = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    socket.setdefaulttimeout(HTTP_DISPATCH_DEADLINE_SECONDS)
    try:
        serve(arguments.port)
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
