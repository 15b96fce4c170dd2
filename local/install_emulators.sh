#!/usr/bin/env bash
# Installs what the local emulators need, idempotently; fast when already done.
#
#   - checks Google's Firestore and Pub/Sub emulators (Debian packages of the
#     image, not installable from the registries we reach) and a Temurin JDK 21+;
#   - npm ci: firebase-tools, pinned in package.json / package-lock.json, without
#     its optional dependencies: re2 (a native module that compiles for minutes;
#     firebase's hosting emulator falls back to JavaScript regexps without it)
#     and the build tools it needs, none of which the Firestore and Pub/Sub
#     emulators use;
#   - .cache/emulators/firestore-launcher.jar: a manifest-only jar that lets
#     firebase-tools run the official Firestore emulator with `java -jar`;
#   - .cache/emulators/java_home: the Temurin JDK the emulators run on;
#   - .venvs/tasks-emulator: gcloud-tasks-emulator and its pinned dependencies
#     (local/tasks_emulator/requirements.lock), apart from the product's venv
#     because it needs protobuf<5, installed with the uv of .venv (./kourier
#     installs that first).
# Every step is skipped when its inputs have not changed since it last ran.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$repo_root/local/progress.sh"
platform=/usr/lib/google-cloud-sdk/platform
firestore_jar="$platform/cloud-firestore-emulator/cloud-firestore-emulator.jar"
pubsub_binary="$platform/pubsub-emulator/bin/cloud-pubsub-emulator"
cache_dir="$repo_root/.cache/emulators"
tasks_venv="$repo_root/.venvs/tasks-emulator"
tasks_lock="$repo_root/local/tasks_emulator/requirements.lock"
uv="$repo_root/.venv/bin/uv"

fail() {
  echo "install_emulators: $*" >&2
  exit 1
}

# The sha256 of the given files, to tell whether a step's inputs changed.
fingerprint() {
  cat "$@" | sha256sum | cut -d' ' -f1
}

check_official_emulators() {
  local missing=()
  [[ -f "$firestore_jar" ]] || missing+=("$firestore_jar (Debian package google-cloud-cli-firestore-emulator)")
  [[ -x "$pubsub_binary" ]] || missing+=("$pubsub_binary (Debian package google-cloud-cli-pubsub-emulator)")
  if ((${#missing[@]})); then
    printf 'install_emulators: missing official emulator: %s\n' "${missing[@]}" >&2
    fail "install the Google Cloud CLI emulator packages (they come with the machine image; the registries we reach do not carry them)"
  fi
}

# Prints the home of the newest Temurin JDK whose major version is 21 or more.
find_temurin() {
  local best="" best_major=0 home major
  for home in /usr/lib/jvm/temurin-*-jdk*; do
    [[ -x "$home/bin/java" && -x "$home/bin/jar" ]] || continue
    major="$(basename "$home" | sed -E 's/^temurin-([0-9]+).*/\1/')"
    [[ "$major" =~ ^[0-9]+$ ]] || continue
    if ((major >= 21 && major > best_major)); then
      best="$home"
      best_major="$major"
    fi
  done
  [[ -n "$best" ]] || fail "no Temurin JDK 21 or newer under /usr/lib/jvm (firebase-tools 15 refuses older Java; expected e.g. /usr/lib/jvm/temurin-25-jdk-amd64)"
  echo "$best"
}

install_firebase_tools() {
  command -v npm >/dev/null || fail "npm not found: install Node.js 20 or newer"
  local stamp="$repo_root/node_modules/.kourier-lock-sha256"
  local wanted
  wanted="$(fingerprint "$repo_root/package-lock.json")"
  if [[ -x "$repo_root/node_modules/.bin/firebase" && -f "$stamp" && "$(cat "$stamp")" == "$wanted" ]]; then
    return
  fi
  (cd "$repo_root" && with_progress "installing firebase-tools with npm ci" "under a minute" \
    npm ci --omit=optional --no-audit --no-fund --prefer-offline --loglevel=error) \
    || fail "npm ci failed (see above)"
  echo "$wanted" >"$stamp"
}

build_firestore_launcher() {
  local java_home="$1"
  local manifest="$cache_dir/firestore-launcher.manifest"
  local jar="$cache_dir/firestore-launcher.jar"
  local wanted_manifest
  wanted_manifest="$(printf 'Main-Class: com.google.cloud.datastore.emulator.firestore.CloudFirestore\nClass-Path: %s\n' "$firestore_jar")"
  if [[ -f "$jar" && -f "$manifest" && "$(cat "$manifest")" == "$wanted_manifest" ]]; then
    return
  fi
  echo "install_emulators: building $jar"
  printf '%s\n' "$wanted_manifest" >"$manifest"
  "$java_home/bin/jar" cfm "$jar.tmp" "$manifest" || fail "jar could not build the Firestore launcher"
  mv "$jar.tmp" "$jar"
}

install_tasks_emulator() {
  local stamp="$tasks_venv/.kourier-lock-sha256"
  local wanted
  wanted="$(fingerprint "$tasks_lock")"
  if [[ -x "$tasks_venv/bin/python" && -f "$stamp" && "$(cat "$stamp")" == "$wanted" ]]; then
    return
  fi
  command -v python3 >/dev/null || fail "python3 not found"
  [[ -x "$uv" ]] || fail "$uv not found: run ./kourier, which installs it"
  rm -rf "$tasks_venv"
  "$uv" venv --quiet --python "$(command -v python3)" "$tasks_venv" || fail "uv venv failed"
  with_progress "installing the Cloud Tasks emulator into $tasks_venv" "a few seconds" \
    "$uv" pip install --quiet --python "$tasks_venv/bin/python" --no-deps -r "$tasks_lock" \
    || fail "uv could not install $tasks_lock"
  echo "$wanted" >"$stamp"
}

main() {
  check_official_emulators
  local java_home
  java_home="$(find_temurin)"
  mkdir -p "$cache_dir"
  echo "$java_home" >"$cache_dir/java_home"
  install_firebase_tools
  build_firestore_launcher "$java_home"
  install_tasks_emulator
  echo "install_emulators: ready (Java: $java_home)"
}

main "$@"
