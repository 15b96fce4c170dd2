"""Fixtures for the offline checks of infra/: the checkov venv and the parsed Terraform."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.infra.layout import CHECKOV_VENV, HCL_TO_JSON, INFRA_DIR, INSTALL_SCRIPT


@pytest.fixture(scope="session")
def checkov_bin() -> Path:
    """The venv with checkov and python-hcl2, made or brought up to date by install.sh."""
    subprocess.run(["bash", str(INSTALL_SCRIPT)], check=True, timeout=900)
    return CHECKOV_VENV / "bin"


@pytest.fixture(scope="session")
def terraform_files(checkov_bin: Path) -> dict[str, dict[str, Any]]:
    """Every .tf file under infra/ (path relative to it) => {"parsed": ...} or {"error": ...}."""
    result = subprocess.run(
        [str(checkov_bin / "python"), str(HCL_TO_JSON), str(INFRA_DIR)],
        check=True,
        capture_output=True,
        text=True,
        timeout=300,
    )
    files: dict[str, dict[str, Any]] = json.loads(result.stdout)
    return files
