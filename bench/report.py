"""One table of benchmark figures, each beside its target and its baseline from the same run.

Every benchmark that ``./kourier bench`` runs returns ``Figure`` rows; this
module prints them as one table and writes them as JSON, so the README's
table and the JSON say the same numbers.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path


@dataclass(frozen=True)
class Figure:
    """One measured number, what it should be, and what it is measured against."""

    benchmark: str
    name: str
    value: str
    target: str = ""
    baseline: str = ""
    met: bool | None = None
    """Whether the target is met (None: the figure has no target)."""


def percentile(samples: Sequence[float], share: float) -> float:
    """The nearest-rank percentile of ``samples`` (``share`` in 0..1)."""
    ordered = sorted(samples)
    return ordered[max(0, math.ceil(share * len(ordered)) - 1)]


def table(figures: Sequence[Figure]) -> str:
    """A Markdown table of the figures (it reads as plain text too)."""
    rows = [("benchmark", "figure", "measured", "target", "baseline, same run", "met")]
    for f in figures:
        met = "" if f.met is None else ("yes" if f.met else "NO")
        rows.append((f.benchmark, f.name, f.value, f.target, f.baseline, met))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["| " + " | ".join(c.ljust(w) for c, w in zip(row, widths)) + " |" for row in rows]
    lines.insert(1, "|" + "|".join("-" * (w + 2) for w in widths) + "|")
    return "\n".join(lines)


def write_json(figures: Sequence[Figure], path: Path, **about: object) -> None:
    """The figures as JSON, with what the run was (date, machine, load)."""
    path.write_text(json.dumps({**about, "figures": [asdict(f) for f in figures]}, indent=2) + "\n")
