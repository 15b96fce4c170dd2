"""Benchmark: Firestore writes per turn, as a streamed answer grows.

Usage (from the repository root)::

    .venv/bin/python -m bench.writes_per_turn [--chunks 100,400,1600] [--interval 0.02]
        [--checkpoint-seconds 5] [--port-base 24400]

It starts the whole local stack with the replay agent of ``bench.slack_replies``
and ``KOURIER_LOG_FIRESTORE_WRITES`` set, so that every document write the
functions make is a ``firestore_write`` line in their logs. For each answer
length it runs one turn (a person mentions Kourier; the agent streams that
many chunks, ``--interval`` seconds apart, with three tool calls) and counts
the writes made from the mention until the session is free again: on the
turn's document, on the session's, and elsewhere (the Slack event record,
the people cache), with the most writes any one document took in one second
(Firestore sustains about one). Checkpoints are coalesced in time, plus one
for each Slack message the reply posts (one per 11,000 characters or four
minutes), so the writes grow with how long the answer streams and, slowly,
with its length, never with how many chunks it has. Ports: ``--port-base`` + 0..4 for the functions, +10 for the stand-in,
+20 for the agent, and the emulators at 8380..8390 shifted to the same
hundred.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
import uuid
from collections import Counter
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from google.cloud import firestore

from bench.slack_replies import long_answer
from local.emulators import EmulatorEnv, exported
from local.replay_agent import REPLAY_CHANNELS, running_replay_stack
from local.slack_standin.client import SlackStandin
from local.stack import StackPorts
from shared.firestore import FirestoreDocuments
from shared.store import SESSIONS, TURNS, Store
from shared.system import SystemClock


@dataclass(frozen=True)
class Write:
    """One document write, from a function's log."""

    at: float
    collection: str
    document: str


def writes_in(log_dir: Path, start: float, end: float) -> list[Write]:
    """The document writes the functions logged between ``start`` and ``end`` (epoch seconds)."""
    found = []
    for path in log_dir.glob("*.log"):
        for line in path.read_text(errors="replace").splitlines():
            if '"firestore_write"' not in line:
                continue
            entry = json.loads(line)
            at = datetime.fromisoformat(entry["time"]).timestamp()
            if start <= at <= end:
                found.append(Write(at, entry["collection"], entry["document"]))
    return sorted(found, key=lambda write: write.at)


def busiest_second(writes: list[Write]) -> int:
    """The most writes one document took within any one second."""
    most = 0
    for index, write in enumerate(writes):
        same = [w for w in writes[index:] if w.document == write.document and w.at - write.at < 1.0]
        most = max(most, len(same))
    return most


def run_turn(
    store: Store, standin: SlackStandin, log_dir: Path
) -> tuple[str, str, list[Write], float]:
    """One turn, until its session is free: its turn and session IDs, the writes made, and how long it took."""
    channel = REPLAY_CHANNELS["1.0"]
    start = time.time()
    posted = standin.say(channel, f"Tell me a long story ({uuid.uuid4().hex[:6]})")
    turn_id, session_id = f"{channel}-{posted.ts}", f"replay-1-0-{channel}-{posted.ts}"

    def session_free() -> bool:
        turn, session = store.turn(turn_id), store.session(session_id)
        return bool(turn and turn.status == "done" and session and not session.active_turn)

    standin.wait_for(session_free, timeout=900, interval=0.5)
    end = time.time()
    time.sleep(1.0)  # the last log lines reach their files
    return turn_id, session_id, writes_in(log_dir, start, end + 0.5), end - start


def main() -> None:
    """Parse the options, run one turn per answer length, print the writes."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chunks", default="100,400,1600", help="answer lengths, in chunks")
    parser.add_argument("--chunk-chars", type=int, default=60)
    parser.add_argument(
        "--interval", type=float, default=0.02, help="seconds between the agent's chunks"
    )
    parser.add_argument("--checkpoint-seconds", type=float, default=5.0)
    parser.add_argument("--port-base", type=int, default=24400)
    options = parser.parse_args()
    base = options.port_base
    ports = StackPorts.from_base(base)
    os.environ["KOURIER_LOG_FIRESTORE_WRITES"] = "1"
    os.environ["KOURIER_CHECKPOINT_SECONDS"] = str(options.checkpoint_seconds)
    with tempfile.TemporaryDirectory() as state_dir:
        print(f"starting the local stack on ports {base}..{base + 90} (logs in {state_dir}/logs)")
        with running_replay_stack(ports, Path(state_dir), options.interval) as (stack, agent):
            with exported(EmulatorEnv(ports.emulators)):
                client = firestore.Client(project=EmulatorEnv(ports.emulators).project)
                store = Store(FirestoreDocuments(client), SystemClock())
            with SlackStandin(f"http://127.0.0.1:{ports.slack}") as standin:
                print(
                    f"checkpoints at most every {options.checkpoint_seconds:g} s; one chunk every "
                    f"{options.interval * 1000:.0f} ms, {options.chunk_chars} characters each, 3 tool calls"
                )
                for chunks in (int(n) for n in options.chunks.split(",")):
                    agent.play(long_answer(chunks, options.chunk_chars, tools=3))
                    turn_id, session_id, writes, took = run_turn(store, standin, stack.log_dir)
                    names = {(TURNS, turn_id): "turn", (SESSIONS, session_id): "session"}
                    by_place = Counter(
                        names.get((w.collection, w.document), w.collection) for w in writes
                    )
                    others = ", ".join(
                        f"{place} {count}"
                        for place, count in sorted(by_place.items())
                        if place not in ("turn", "session")
                    )
                    print(
                        f"{chunks:5d} chunks ({chunks * options.chunk_chars} characters) in {took:5.1f} s: "
                        f"{len(writes):3d} writes (turn {by_place['turn']}, session {by_place['session']}, "
                        f"{others or 'nothing else'}); at most {busiest_second(writes)} per document per second"
                    )


if __name__ == "__main__":
    main()
