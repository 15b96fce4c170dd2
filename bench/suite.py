"""``./kourier bench``: every benchmark on the local stack, one table, the same numbers as JSON.

Each benchmark starts and stops its own stack (on ports of its own), so a
failure in one leaves nothing running for the next; each returns ``Figure``
rows with their targets and their same-run baselines. The table goes to
stdout, the JSON to ``--json`` (default ``bench/latest.json``), with the date,
the machine and its load average before and after.
"""

from __future__ import annotations

import argparse
import os
import platform
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from bench import cost_per_turn, ingress_ack, slack_replies, tier_burst, trigger_ack, turns_burst
from bench.report import Figure, table, write_json

BENCHMARKS: dict[str, Callable[[], list[Figure]]] = {
    "ingress": lambda: ingress_ack.figures(requests=400, in_flight=8, port_base=26500),
    "slack_replies": lambda: slack_replies.figures(turns=5, port_base=26200, say=lambda _: None),
    "turns_burst": lambda: turns_burst.figures(turns=200, agent_seconds=1.2, port_base=26700),
    "tiers": lambda: tier_burst.figures([50, 90], agent_seconds=1.2, port_base=26900),
    "cost": lambda: cost_per_turn.figures(port_base=24600),
    "triggers": lambda: trigger_ack.figures(port_base=24500, say=lambda _: None),
}


def main(argv: list[str] | None = None) -> int:
    """Run the benchmarks named (default: all), print the table, write the JSON."""
    parser = argparse.ArgumentParser(prog="kourier bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", metavar="NAME", help=", ".join(BENCHMARKS))
    parser.add_argument("--json", type=Path, default=Path(__file__).parent / "latest.json")
    options = parser.parse_args(argv)
    unknown = sorted(set(options.names) - set(BENCHMARKS))
    if unknown:
        parser.error(f"no benchmark {', '.join(unknown)}: pick from {', '.join(BENCHMARKS)}")
    load_before = os.getloadavg()
    figures: list[Figure] = []
    for name in options.names or list(BENCHMARKS):
        print(f"kourier bench: {name}…", flush=True)
        figures += BENCHMARKS[name]()
    load_after = os.getloadavg()
    print(table(figures))
    write_json(
        figures,
        options.json,
        date=datetime.now(UTC).isoformat(timespec="seconds"),
        machine=f"{platform.machine()}, {os.cpu_count()} cores, {platform.python_version()}",
        load_average_before=[round(x, 2) for x in load_before],
        load_average_after=[round(x, 2) for x in load_after],
    )
    print(f"kourier bench: the same figures as JSON in {options.json}")
    missed = [f for f in figures if f.met is False]
    return 1 if missed else 0
