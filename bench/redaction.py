"""Benchmark: how long redaction takes, as its input grows, on ordinary and hostile text.

Usage (from the repository root)::

    .venv/bin/python -m bench.redaction [--sizes 100000,200000,400000,800000]

Redaction runs on every tool argument and result shown in a thread, every
approval, and every log line, and an agent chooses what it sends. For each
kind of text (a log with a few secrets, and inputs built to make a careless
pattern backtrack) it prints the seconds to redact each size and the seconds
per megabyte; a linear-time redaction keeps the last column flat as the size
doubles.
"""

from __future__ import annotations

import argparse
import time

from shared.core.redaction import redact_text

LOG_LINE = (
    "2026-12-01T10:00:00Z deploy api DB_PASSWORD=hunter2 --token tok123 "
    "GET https://x.example/v1?api_key=AKEY123&page=2 Bearer abcdefghijkl ok\n"
)
KINDS = {
    "log with secrets": LOG_LINE,
    "colons (key: key: ...)": "a: ",
    "token: token: ...": "token: ",
    "assignments (x=x=...)": "x=",
    "base64 run": "aB3/",
    "flags (--token --token ...)": "--token ",
    "angle brackets": "<",
    "url userinfo": "https://u:p",
    "mysql -p (mysql -p'x mysql -p...)": "mysql -p'x ",
    'quoted headers ("token: "token: ...)': '"token: ',
    "yaml secret data": "  key: dmFsdWU=\n",
}


def main() -> None:
    """Print the seconds per size for every kind of text."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100000,200000,400000,800000")
    sizes = [int(size) for size in parser.parse_args().sizes.split(",")]
    print(f"{'text':30} {'characters':>11} {'seconds':>8} {'s/MB':>6}")
    for kind, unit in KINDS.items():
        prefix = "kind: Secret\ndata:\n" if kind.startswith("yaml") else ""
        for size in sizes:
            text = prefix + unit * (size // len(unit))
            started = time.perf_counter()
            redact_text(text)
            seconds = time.perf_counter() - started
            print(f"{kind:30} {len(text):>11,} {seconds:>8.3f} {seconds / len(text) * 1e6:>6.2f}")


if __name__ == "__main__":
    main()
