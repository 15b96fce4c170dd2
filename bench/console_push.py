"""Benchmark: how soon the console's event stream shows a change, and what a snapshot costs.

Usage (from the repository root)::

    .venv/bin/python -m bench.console_push [--appends 200] [--chars 200] [--port 28400]

It starts a Slack stand-in, opens the console's event stream for one thread
(as the page does), and streams an answer into that thread with
``chat.appendStream``, ``--appends`` times ``--chars`` characters, each
call after the last one showed. For each append it measures the time from
the call returning to the stream delivering a snapshot that holds the new
text (both sides on this machine's clock), and it prints the median and
95th percentile of that delay, the size of the last snapshot, and the time
the stand-in took to build it (``/_console/state``).
"""

from __future__ import annotations

import argparse
import json
import queue
import statistics
import threading
import time
from typing import Any

import httpx
from slack_sdk import WebClient

from local.slack_standin import TEAM_ID, StandinProcess

CHANNEL = "C0123456789"
BOT_TOKEN = "xoxb-bench"


def _listen(url: str, query: dict[str, str], arrived: queue.Queue[tuple[float, Any]]) -> None:
    try:
        with httpx.stream("GET", url, params=query, timeout=None) as events:
            for line in events.iter_lines():
                if line.startswith("data: "):
                    arrived.put((time.perf_counter(), json.loads(line.removeprefix("data: "))))
    except httpx.HTTPError:
        return  # the stand-in stopped at the end of the run


def _shown_length(snapshot: dict[str, Any], ts: str) -> int:
    thread = snapshot.get("thread") or {}
    return next((len(m["text"]) for m in thread.get("messages", []) if m["ts"] == ts), 0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--appends", type=int, default=200)
    parser.add_argument("--chars", type=int, default=200)
    parser.add_argument("--port", type=int, default=28400)
    args = parser.parse_args()
    with StandinProcess(port=args.port, bot_token=BOT_TOKEN, stream_max_chars=10**9) as standin:
        slack = WebClient(base_url=standin.api_url, token=BOT_TOKEN)
        root = standin.say(CHANNEL, "stream to me", as_mention=False).ts
        stream = slack.chat_startStream(
            channel=CHANNEL,
            thread_ts=root,
            recipient_user_id="U0ALICE",
            recipient_team_id=TEAM_ID,
            markdown_text="x",
        )["ts"]
        query = {"user": "U0ALICE", "channel": CHANNEL, "thread": root}
        arrived: queue.Queue[tuple[float, Any]] = queue.Queue()
        url = f"{standin.base_url}/_console/events"
        threading.Thread(target=_listen, args=(url, query, arrived), daemon=True).start()
        arrived.get(timeout=30)
        delays, length = [], 1
        for _ in range(args.appends):
            slack.chat_appendStream(channel=CHANNEL, ts=stream, markdown_text="y" * args.chars)
            sent = time.perf_counter()
            length += args.chars
            while True:
                at, snapshot = arrived.get(timeout=30)
                if _shown_length(snapshot, stream) >= length:
                    delays.append(at - sent)
                    break
        started = time.perf_counter()
        state = httpx.get(f"{standin.base_url}/_console/state", params=query, timeout=30)
        built = time.perf_counter() - started
    delays_ms = sorted(1000 * delay for delay in delays)
    p95 = delays_ms[int(0.95 * (len(delays_ms) - 1))]
    print(f"appends: {args.appends} x {args.chars} characters")
    print(f"change to snapshot: median {statistics.median(delays_ms):.0f} ms, p95 {p95:.0f} ms")
    print(
        f"last snapshot: {len(state.content) / 1000:.0f} kB, built and sent in {built * 1000:.0f} ms"
    )


if __name__ == "__main__":
    main()
