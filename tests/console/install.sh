#!/usr/bin/env bash
# Installs the browsers the console's tests drive: Debian's chromium package
# (/usr/bin/chromium), which Playwright for Python (pinned in
# requirements-dev.txt) launches by path, and Debian's firefox-esr package
# (/usr/bin/firefox-esr), driven over WebDriver BiDi (tests/console/firefox.py).
# Playwright's own browser download is not used: it cannot reach its servers
# from these machines.
#
# Usage: tests/console/install.sh    (idempotent; needs root, or sudo, the first time)
set -euo pipefail
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
source "$repo_root/local/progress.sh"
chromium="${KOURIER_CHROMIUM:-/usr/bin/chromium}"
firefox="${KOURIER_FIREFOX:-/usr/bin/firefox-esr}"

missing=()
check() { # check <binary> <its default> <variable naming it> <Debian package>
  if [ -x "$1" ]; then
    return
  fi
  if [ "$1" != "$2" ]; then
    echo "tests/console/install.sh: $3=$1 is not an executable" >&2
    exit 1
  fi
  missing+=("$4")
}
check "$chromium" /usr/bin/chromium KOURIER_CHROMIUM chromium
check "$firefox" /usr/bin/firefox-esr KOURIER_FIREFOX firefox-esr
if [ "${#missing[@]}" = 0 ]; then
  exit 0
fi

sudo=""
if [ "$(id -u)" != 0 ]; then
  if ! command -v sudo >/dev/null; then
    echo "tests/console/install.sh: missing ${missing[*]}; install Debian's package as root" \
      "(apt-get install ${missing[*]}), or set KOURIER_CHROMIUM / KOURIER_FIREFOX to the browser" >&2
    exit 1
  fi
  sudo="sudo"
fi
install_browsers() {
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
}
with_progress "installing ${missing[*]} (Debian's packages) for the console's tests" \
  "a minute or two" install_browsers
