#!/usr/bin/env bash
# Creates the venvs of the SDK peers that tests run: .venvs/adk (google-adk
# 2.13.0) and .venvs/kagent (kagent-adk 0.10.4). Their pins conflict with the
# project venv's and with each other, hence one venv each.
#
# Usage: tests/peers/install.sh           install from the lock files (idempotent)
#        tests/peers/install.sh --relock  resolve the top-level pins again and
#                                         rewrite tests/peers/<venv>.lock
#
# A venv whose stamp matches its lock file is left as it is; any other is made
# anew. PYTHON selects the interpreter (default python3.11).
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
peers_dir="$repo_root/tests/peers"
venvs_dir="$repo_root/.venvs"
python="${PYTHON:-python3.11}"

# Top-level pins; everything else is pinned in the lock files.
adk_requirements=("google-adk[a2a]==2.13.0" "uvicorn==0.54.0")
# kagent-adk 0.10.4 resolves to a2a-sdk 1.x and otel instrumentation that
# does not match its opentelemetry-api<1.39 pin: hold them at what it works with.
kagent_requirements=(
  "kagent-adk==0.10.4"
  "a2a-sdk[http-server]==0.3.26"
  "opentelemetry-instrumentation==0.59b0"
  "opentelemetry-instrumentation-asgi==0.59b0"
  "opentelemetry-instrumentation-fastapi==0.59b0"
  "opentelemetry-instrumentation-httpx==0.59b0"
  "opentelemetry-semantic-conventions==0.59b0"
  "opentelemetry-util-http==0.59b0"
  "uvicorn==0.54.0"
)

fresh_venv() {
  local venv="$1"
  rm -rf "$venv"
  "$python" -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --upgrade "pip==26.3"
}

install_locked() {
  local name="$1" venv="$venvs_dir/$1" lock="$peers_dir/$1.lock"
  local wanted
  wanted="$(sha256sum "$lock" | cut -d' ' -f1)"
  if [[ -x "$venv/bin/python" && "$(cat "$venv/.lock-sha256" 2>/dev/null)" == "$wanted" ]]; then
    echo "$name: up to date"
    return
  fi
  local started=$SECONDS
  fresh_venv "$venv"
  "$venv/bin/python" -m pip install --quiet -r "$lock"
  echo "$wanted" > "$venv/.lock-sha256"
  echo "$name: installed in $((SECONDS - started)) s"
}

relock() {
  local name="$1" venv="$venvs_dir/$1" lock="$peers_dir/$1.lock"
  shift
  fresh_venv "$venv"
  "$venv/bin/python" -m pip install --quiet "$@"
  {
    echo "# Locked by tests/peers/install.sh --relock from: $*"
    "$venv/bin/python" -m pip freeze --exclude-editable
  } > "$lock"
  sha256sum "$lock" | cut -d' ' -f1 > "$venv/.lock-sha256"
  echo "$name: relocked to $lock"
}

mkdir -p "$venvs_dir"
if [[ "${1:-}" == "--relock" ]]; then
  relock adk "${adk_requirements[@]}"
  relock kagent "${kagent_requirements[@]}"
else
  install_locked adk
  install_locked kagent
fi
