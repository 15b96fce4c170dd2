# Sourced by ./kourier and the install scripts: show a long step while it runs.
#
#   with_progress "installing firebase-tools with npm ci" "under a minute" npm ci ...
#
# prints the step and how long it may take when it starts, how long it has
# been running every KOURIER_PROGRESS_SECONDS (default 10; three times that
# after the first half minute) while it runs, and how long it took, on
# stderr; the command's own output passes through. Returns its status.

with_progress() {
  local step="$1" expect="$2"
  shift 2
  local every="${KOURIER_PROGRESS_SECONDS:-10}" started=$SECONDS status=0
  echo "kourier: $step (first run only; $expect)…" >&2
  "$@" &
  local pid=$! next=$((SECONDS + every))
  while kill -0 "$pid" 2>/dev/null; do
    sleep 1
    if ((SECONDS >= next)); then
      echo "kourier:   still $step ($((SECONDS - started)) s)" >&2
      if ((SECONDS - started >= 30)); then
        next=$((SECONDS + 3 * every))
      else
        next=$((SECONDS + every))
      fi
    fi
  done
  wait "$pid" || status=$?
  if ((status == 0)); then
    echo "kourier: done $step in $((SECONDS - started)) s" >&2
  fi
  return "$status"
}
