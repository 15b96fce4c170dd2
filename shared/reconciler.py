"""reconcile: the periodic sweep that resumes what a dead function left.

A function that dies while carrying a turn stops renewing its session's
lease; a turn whose trigger was lost stays waiting. The sweep re-triggers
both through the turns topic, and ``turn_send``'s claim decides again, so a
sweep that runs twice, or beside a live function, changes nothing.

The health check answers chat_ingress's public ``/healthz``: anyone may call
it, as often as they like, so what it found is kept for a while
(``HEALTH_KEPT_SECONDS``, a failure only ``HEALTH_FAILURE_KEPT_SECONDS``)
with the process's ``Deps``, and Firestore is read at most that often per
instance.
"""

from __future__ import annotations

import threading
import weakref
from typing import Any

import httpx
import structlog

from shared.bootstrap import Deps

log = structlog.get_logger()

HEALTH_KEPT_SECONDS = 30.0
HEALTH_FAILURE_KEPT_SECONDS = 1.0
_checked: weakref.WeakKeyDictionary[Deps, tuple[float, dict[str, Any]]] = (
    weakref.WeakKeyDictionary()
)
"""The last health report of each process (its ``Deps``), and when it was made."""
_checked_lock = threading.Lock()


def sweep(deps: Deps) -> int:
    """Re-trigger stale and waiting sessions; returns how many were triggered."""
    store = deps.store
    triggered = 0
    for session in store.stale_sessions(store.now()):
        assert session.active_turn is not None
        deps.turns.publish_turn(session.id, session.active_turn)
        triggered += 1
    for session_id in store.sessions_with_waiting_turns():
        waiting = store.waiting_turns(session_id)
        if waiting:
            deps.turns.publish_turn(session_id, waiting[0].id)
            triggered += 1
    if triggered:
        log.info("reconcile_triggered", sessions=triggered)
    return triggered


def health(deps: Deps) -> dict[str, Any]:
    """Whether this function can reach what it needs (used by /healthz), checked now and then."""
    with _checked_lock:
        last = _checked.get(deps)
        if last is not None:
            checked_at, report = last
            kept = HEALTH_KEPT_SECONDS if report["ok"] else HEALTH_FAILURE_KEPT_SECONDS
            if deps.clock.monotonic() - checked_at < kept:
                return report
        report = _check(deps)
        _checked[deps] = (deps.clock.monotonic(), report)
        return report


def _check(deps: Deps) -> dict[str, Any]:
    checks: dict[str, str] = {}
    try:
        deps.store.event_seen("healthz")
        checks["firestore"] = "ok"
    except Exception as error:  # noqa: BLE001 - report, never raise, from a health check
        checks["firestore"] = type(error).__name__
    for url in filter(None, deps.settings.health_urls.split(",")):
        try:
            answer = deps.http.get(url, timeout=5)
            checks[url] = "ok" if answer.status_code < 500 else f"HTTP {answer.status_code}"
        except httpx.HTTPError as error:
            checks[url] = type(error).__name__
    return {"ok": all(v == "ok" for v in checks.values()), "checks": checks}
