#!/usr/bin/env bash
# Creates .venvs/checkov: checkov 3.3.30 (and the python-hcl2 fork it ships,
# which the infra tests parse Terraform with). checkov's pins conflict with
# the project venv's, hence a venv of its own.
#
# Usage: tests/infra/install.sh           install from checkov.lock (idempotent)
#        tests/infra/install.sh --relock  resolve checkov_requirement again and
#                                         rewrite tests/infra/checkov.lock
#
# A venv whose stamp matches the lock file is left as it is; any other is made
# anew. PYTHON selects the interpreter (default python3.11).
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
lock="$repo_root/tests/infra/checkov.lock"
venv="$repo_root/.venvs/checkov"
python="${PYTHON:-python3.11}"
checkov_requirement="checkov==3.3.30"

fresh_venv() {
  rm -rf "$venv"
  mkdir -p "$(dirname "$venv")"
  "$python" -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --upgrade "pip==26.3"
}

if [[ "${1:-}" == "--relock" ]]; then
  fresh_venv
  "$venv/bin/python" -m pip install --quiet "$checkov_requirement"
  {
    echo "# Locked by tests/infra/install.sh --relock from: $checkov_requirement"
    "$venv/bin/python" -m pip freeze --exclude-editable
  } > "$lock"
  sha256sum "$lock" | cut -d' ' -f1 > "$venv/.lock-sha256"
  echo "checkov: relocked to $lock"
  exit 0
fi

wanted="$(sha256sum "$lock" | cut -d' ' -f1)"
if [[ -x "$venv/bin/checkov" && "$(cat "$venv/.lock-sha256" 2>/dev/null)" == "$wanted" ]]; then
  echo "checkov: up to date"
  exit 0
fi
started=$SECONDS
fresh_venv
"$venv/bin/python" -m pip install --quiet -r "$lock"
echo "$wanted" > "$venv/.lock-sha256"
echo "checkov: installed in $((SECONDS - started)) s"
