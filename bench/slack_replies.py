"""Benchmark: what a long streamed answer costs in Slack calls, and how late its text shows.

Usage (from the repository root)::

    .venv/bin/python -m bench.slack_replies [--turns 3] [--chunks 600] [--chunk-chars 60]
        [--interval 0.02] [--tools 3] [--port-base 26200]

It starts the whole local stack (emulators, the five functions, the Slack
stand-in) with a replay agent that streams a synthetic answer the way ADK's
newer converter and a2a-sdk agents do: one artifact appended chunk by chunk,
``--interval`` seconds apart, with tool calls and results among the chunks.
For each turn a person mentions Kourier; once the turn is done it prints
the Slack calls the turn made, by method, and the delay between the agent
sending each text chunk (the replay agent's clock) and Slack holding that
text (the stand-in's call log; both processes read the same clock). Ports:
``--port-base`` + 0..4 for the functions, +10 for the stand-in, +20 for the
agent, and the emulators at 8380..8390 shifted to the same hundred.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from google.cloud import firestore

from bench.report import Figure, percentile, table
from local.emulators import EmulatorEnv, exported
from local.replay_agent import REPLAY_CHANNELS, Recording, ReplayAgent, running_replay_stack
from local.slack_standin.client import SlackStandin
from local.slack_standin.models import ApiCall
from local.stack import StackPorts
from shared.store import TURNS

WORDS = [
    "the",
    "agent",
    "streams",
    "its",
    "answer",
    "a",
    "few",
    "words",
    "at",
    "a",
    "time",
    "while",
    "Slack",
    "shows",
    "it",
    "live",
]
STREAM_METHODS = ("chat.startStream", "chat.appendStream", "chat.stopStream")


def long_answer(chunks: int, chunk_chars: int, tools: int) -> Recording:
    """A 1.0 stream: one artifact appended ``chunks`` times, with ``tools`` tool calls spread among them."""
    task_id, context_id, artifact_id = (str(uuid.uuid4()) for _ in range(3))
    ids = {"taskId": task_id, "contextId": context_id}

    def chunk(parts: list[dict[str, Any]], append: bool) -> dict[str, Any]:
        update = {**ids, "artifact": {"artifactId": artifact_id, "parts": parts}, "append": append}
        return {"jsonrpc": "2.0", "id": "1", "result": {"artifactUpdate": update}}

    def status(state: str) -> dict[str, Any]:
        return {
            "jsonrpc": "2.0",
            "id": "1",
            "result": {"statusUpdate": {**ids, "status": {"state": state}}},
        }

    task = {"id": task_id, "contextId": context_id, "status": {"state": "TASK_STATE_SUBMITTED"}}
    frames = [{"jsonrpc": "2.0", "id": "1", "result": {"task": task}}, status("TASK_STATE_WORKING")]
    tool_at = {chunks * (n + 1) // (tools + 1): n for n in range(tools)}
    for index in range(chunks):
        if index in tool_at:
            call = {"id": f"call-{index}", "name": "lookup", "args": {"n": tool_at[index]}}
            result = {"id": f"call-{index}", "name": "lookup", "response": {"found": index}}
            frames.append(chunk([{"data": call, "metadata": {"adk_type": "function_call"}}], True))
            frames.append(
                chunk([{"data": result, "metadata": {"adk_type": "function_response"}}], True)
            )
        words = " ".join(WORDS[(index + n) % len(WORDS)] for n in range(chunk_chars // 5))
        text = (words + (".\n\n" if index % 8 == 7 else " "))[:chunk_chars]
        frames.append(chunk([{"text": text}], index > 0))
    frames.append(status("TASK_STATE_COMPLETED"))
    return Recording("bench-long-answer", "1.0", tuple(frames))


def shown_at(calls: list[ApiCall], reply_ts: set[str], thread_ts: str) -> list[tuple[float, int]]:
    """(time, characters of text Slack holds by then) after each accepted streaming call of the reply."""
    held, timeline = 0, []
    for call in calls:
        if call.method not in STREAM_METHODS or not call.ok:
            continue
        if call.params.get("ts") not in reply_ts and call.params.get("thread_ts") != thread_ts:
            continue
        held += sum(
            len(c["text"]) for c in call.params.get("chunks") or [] if c["type"] == "markdown_text"
        )
        timeline.append((call.at, held))
    return timeline


def delays(agent: ReplayAgent, timeline: list[tuple[float, int]]) -> list[float]:
    """For each text chunk the agent sent, seconds until Slack held all the text up to its end."""
    found, sent_chars = [], 0
    for sent in agent.sent:
        update = sent.frame["result"].get("artifactUpdate")
        if update is None:
            continue
        sent_chars += sum(len(part.get("text", "")) for part in update["artifact"]["parts"])
        if not any("text" in part for part in update["artifact"]["parts"]):
            continue
        shown = next((at for at, held in timeline if held >= sent_chars), None)
        if shown is not None:
            found.append(shown - sent.at)
    return found


def run_turn(
    agent: ReplayAgent,
    standin: SlackStandin,
    turns: firestore.CollectionReference,
    recording: Recording,
) -> tuple[Counter[str], list[float]]:
    """One turn: the Slack calls it made by method, and its chunk delays."""
    agent.play(recording)
    channel = REPLAY_CHANNELS["1.0"]
    first_call = len(standin.calls())
    posted = standin.say(channel, f"Tell me a long story ({uuid.uuid4().hex[:6]})")

    def done() -> bool:
        query = turns.where(filter=firestore.FieldFilter("ts", "==", posted.ts)).get()
        return bool(query) and (query[0].to_dict() or {}).get("status") == "done"

    standin.wait_for(done, timeout=600, interval=0.5)
    replies = {message.ts for message in standin.thread(channel, posted.ts) if message.is_bot}
    calls = [
        call
        for call in standin.calls()[first_call:]
        if call.params.get("ts") in replies or call.params.get("thread_ts") == posted.ts
    ]
    return Counter(call.method for call in calls), delays(
        agent, shown_at(calls, replies, posted.ts)
    )


def figures(
    turns: int = 3,
    chunks: int = 600,
    chunk_chars: int = 60,
    interval: float = 0.02,
    tools: int = 3,
    port_base: int = 26200,
    say: Callable[[str], None] = print,
) -> list[Figure]:
    """Start the stack, run the turns one after another, stop everything; the figures."""
    base = port_base
    ports = StackPorts.from_base(base)
    recording = long_answer(chunks, chunk_chars, tools)
    answer_chars = sum(len(part.get("text", "")) for part in _text_parts(recording))
    all_delays: list[float] = []
    first_delays: list[float] = []
    calls_per_turn: list[int] = []
    with tempfile.TemporaryDirectory() as state_dir:
        say(f"starting the local stack on ports {base}..{base + 90} (logs in {state_dir}/logs)")
        with running_replay_stack(ports, Path(state_dir), interval) as (_, agent):
            with exported(EmulatorEnv(ports.emulators)):
                turn_docs = firestore.Client(
                    project=EmulatorEnv(ports.emulators).project
                ).collection(TURNS)
            with SlackStandin(f"http://127.0.0.1:{ports.slack}") as standin:
                say(
                    f"each turn: {chunks} chunks, {answer_chars} characters, {tools} tool calls, "
                    f"one chunk every {interval * 1000:.0f} ms"
                )
                for turn in range(1, turns + 1):
                    started = time.monotonic()
                    calls, turn_delays = run_turn(agent, standin, turn_docs, recording)
                    all_delays += turn_delays
                    first_delays += turn_delays[:1]
                    calls_per_turn.append(sum(calls.values()))
                    by_method = ", ".join(
                        f"{method} {count}" for method, count in sorted(calls.items())
                    )
                    say(
                        f"turn {turn}: {sum(calls.values())} Slack calls ({by_method}) in "
                        f"{time.monotonic() - started:.1f} s; {_spread(turn_delays)}"
                    )
    say(f"all turns, delay from chunk to Slack: {_spread(all_delays)}")
    name = "slack replies"
    first_p50, first_p99 = percentile(first_delays, 0.5), percentile(first_delays, 0.99)
    return [
        Figure(
            name,
            f"agent's first text -> held by Slack, p50 / p99 (n={len(first_delays)})",
            f"{first_p50 * 1000:.0f} / {first_p99 * 1000:.0f} ms",
            "<= 150 / 400 ms",
            "0 ms: the agent's own stream",
            first_p50 <= 0.150 and first_p99 <= 0.400,
        ),
        Figure(
            name,
            f"every chunk -> held by Slack, p50 / p95 (n={len(all_delays)})",
            f"{percentile(all_delays, 0.5) * 1000:.0f} / {percentile(all_delays, 0.95) * 1000:.0f} ms",
            "",
            f"one chunk every {interval * 1000:.0f} ms from the agent",
        ),
        Figure(
            name,
            f"Slack calls per turn ({answer_chars} characters, {tools} tool calls)",
            f"{statistics.mean(calls_per_turn):.0f}",
            "",
            f"{chunks + 2 * tools} chunks from the agent",
        ),
    ]


def main() -> None:
    """Parse the options, run the turns, print the numbers."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=3)
    parser.add_argument("--chunks", type=int, default=600)
    parser.add_argument("--chunk-chars", type=int, default=60)
    parser.add_argument(
        "--interval", type=float, default=0.02, help="seconds between the agent's chunks"
    )
    parser.add_argument("--tools", type=int, default=3)
    parser.add_argument("--port-base", type=int, default=26200)
    options = parser.parse_args()
    found = figures(
        options.turns,
        options.chunks,
        options.chunk_chars,
        options.interval,
        options.tools,
        options.port_base,
    )
    print(table(found))


def _text_parts(recording: Recording) -> list[dict[str, Any]]:
    return [
        part
        for kind, event in recording.events()
        if kind == "artifact-update"
        for part in event["artifact"]["parts"]
        if "text" in part
    ]


def _spread(values: list[float]) -> str:
    if not values:
        return "no delays measured"
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return (
        f"delay min {ordered[0] * 1000:.0f} ms, median {statistics.median(ordered) * 1000:.0f} ms, "
        f"p95 {p95 * 1000:.0f} ms, max {ordered[-1] * 1000:.0f} ms ({len(ordered)} chunks)"
    )


if __name__ == "__main__":
    main()
