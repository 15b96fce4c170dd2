#!/usr/bin/env bash
# Installs the browser the console's tests drive: Debian's chromium package
# (/usr/bin/chromium), which Playwright for Python (pinned in
# requirements-dev.txt) launches by path. Playwright's own browser download
# is not used: it cannot reach its servers from these machines.
#
# Usage: tests/console/install.sh    (idempotent; needs root, or sudo, the first time)
set -euo pipefail
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
source "$repo_root/local/progress.sh"
chromium="${KOURIER_CHROMIUM:-/usr/bin/chromium}"

if [ -x "$chromium" ]; then
  exit 0
fi
if [ "$chromium" != /usr/bin/chromium ]; then
  echo "tests/console/install.sh: KOURIER_CHROMIUM=$chromium is not an executable" >&2
  exit 1
fi
sudo=""
if [ "$(id -u)" != 0 ]; then
  if ! command -v sudo >/dev/null; then
    echo "tests/console/install.sh: Chromium is missing; install Debian's chromium package as root" \
      "(apt-get install chromium), or set KOURIER_CHROMIUM to a Chromium binary" >&2
    exit 1
  fi
  sudo="sudo"
fi
install_chromium() {
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends chromium
}
with_progress "installing Chromium (Debian's chromium package) for the console's tests" \
  "a minute or two" install_chromium
