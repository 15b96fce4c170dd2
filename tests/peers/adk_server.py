"""A google-adk ``to_a2a`` server around the scripted agent (runs in .venvs/adk).

Usage: ``.venvs/adk/bin/python tests/peers/adk_server.py --port N [--confirm]``
"""

from __future__ import annotations

import argparse

import uvicorn
from google.adk.a2a.utils.agent_to_a2a import to_a2a
from scripted_agents import build_agent


def main() -> None:
    """Serves the scripted agent over A2A on 127.0.0.1."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument(
        "--confirm", action="store_true", help="the tool needs approval (input-required pause)"
    )
    args = parser.parse_args()
    app = to_a2a(build_agent(args.confirm), host="127.0.0.1", port=args.port)
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
