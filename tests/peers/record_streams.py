"""Re-records the raw SSE captures of every peer under tests/data/a2a_streams/.

Usage: ``python -m tests.peers.record_streams [--port 22900]`` (after
tests/peers/install.sh). Each scenario of tests/peers/scenarios.py is run
against a freshly started peer, and each of its streams is written as
``<peer>-<version>[-adkv2]-<stream>.jsonl``: one decoded ``data:`` payload
(a JSON-RPC response) per line, in the order received. IDs and timestamps
differ on every recording.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from tests.peers.launch import REPO_ROOT, running_peer
from tests.peers.scenarios import SCENARIOS, converse

CAPTURES_DIR = REPO_ROOT / "tests" / "data" / "a2a_streams"


def record(port: int, captures_dir: Path = CAPTURES_DIR) -> None:
    """Runs every scenario on ``port`` in turn and writes its streams."""
    captures_dir.mkdir(parents=True, exist_ok=True)
    for scenario in SCENARIOS:
        started = time.monotonic()
        with running_peer(scenario.peer, port) as base_url:
            ready = time.monotonic() - started
            streams = converse(base_url, scenario)
        for stream_name, frames in streams.items():
            path = captures_dir / f"{scenario.name}-{stream_name}.jsonl"
            path.write_text("".join(json.dumps(frame) + "\n" for frame in frames))
            print(
                f"{path.relative_to(REPO_ROOT)}: {len(frames)} frames (peer ready in {ready:.1f} s)"
            )


def main() -> None:
    """Parses the port and records."""
    parser = argparse.ArgumentParser(description="Re-record the A2A stream captures.")
    parser.add_argument("--port", type=int, default=22900)
    record(parser.parse_args().port)


if __name__ == "__main__":
    main()
