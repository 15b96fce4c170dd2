"""Where the infra checks find things in the repository."""

from __future__ import annotations

from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
INFRA_DIR = REPO_ROOT / "infra"
CHECKOV_VENV = REPO_ROOT / ".venvs" / "checkov"
INSTALL_SCRIPT = REPO_ROOT / "tests" / "infra" / "install.sh"
HCL_TO_JSON = REPO_ROOT / "tests" / "infra" / "hcl_to_json.py"
TERRAFORM_FMT = REPO_ROOT / "tests" / "infra" / "terraform_fmt.py"
TERRAFORM_EVAL = REPO_ROOT / "tests" / "infra" / "terraform_eval.py"
