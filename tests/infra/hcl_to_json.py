"""Print every Terraform file under a directory, parsed, as one JSON object.

Runs inside .venvs/checkov, whose python-hcl2 (the fork checkov parses with)
the project venv does not have. Usage: ``hcl_to_json.py DIR``. Output maps
each file's path relative to DIR to ``{"parsed": ...}``, or to
``{"error": "..."}`` when the file does not parse.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import hcl2
from lark.exceptions import LarkError


def parse_all(root: Path) -> dict[str, dict[str, Any]]:
    """Each ``*.tf`` file under ``root`` (outside .terraform/), parsed or with its error."""
    results: dict[str, dict[str, Any]] = {}
    for path in sorted(root.rglob("*.tf")):
        if ".terraform" in path.parts:
            continue
        try:
            with path.open(encoding="utf-8") as handle:
                results[str(path.relative_to(root))] = {"parsed": hcl2.load(handle)}
        except (LarkError, ValueError) as error:
            results[str(path.relative_to(root))] = {"error": f"{type(error).__name__}: {error}"}
    return results


if __name__ == "__main__":
    json.dump(parse_all(Path(sys.argv[1])), sys.stdout, default=str)
