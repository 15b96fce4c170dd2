"""The functions' work as their triggers deliver it, without Flask or CloudEvents.

Theory of operation: each handler takes the process's ``Deps`` and what its
trigger carried, does the work, and says how the trigger must be answered.
``"ack"``: the work is done, or it failed in a way that a new delivery would
meet again (poison: logged as ``event_failed``, which a log-based metric
counts, and never delivered again). ``"retry"``: it failed for now
(``errors.is_transient``: Firestore, Pub/Sub or Cloud Tasks unavailable,
Slack's 5xx and 429 after slack_sdk's own retries, no answer at all), so
Pub/Sub or Cloud Tasks deliver it again. A function that fails while it
carries a turn lets go of it first (``engine``), so the redelivery or the
next sweep takes it over at once instead of when its lease runs out; and a
turn taken over too often ends with a notice, so no failure loops for ever,
silent or not.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Literal

import structlog

from shared import engine, reconciler
from shared.bootstrap import Deps
from shared.errors import is_transient
from shared.handoff import read_timer

log = structlog.get_logger()

Outcome = Literal["ack", "retry"]


def turn_send(deps: Deps, message: Mapping[str, Any]) -> Outcome:
    """A turn published on the turns topic: carry the session's next turn."""
    return guarded(
        lambda: engine.on_turn_published(deps, message["session_id"], message["turn_id"])
    )


def stream_follow(deps: Deps, body: Mapping[str, Any]) -> Outcome:
    """Resume a turn handed over near a deadline, send the answer to its question, or stop it."""
    if body.get("stop"):
        return guarded(lambda: engine.on_stop(deps, body["session_id"], body["turn_id"]))
    return guarded(
        lambda: engine.on_resume(
            deps,
            body["session_id"],
            body["turn_id"],
            body["generation"],
            answer=body.get("answer"),
        )
    )


def timeout(deps: Deps, body: Mapping[str, Any]) -> Outcome:
    """A turn's timer fired (a backoff or a poll ended, a question waited too long)."""
    return guarded(
        lambda: engine.on_resume(
            deps,
            body["session_id"],
            body["turn_id"],
            body["generation"],
            timer=read_timer(body["timer"]),
        )
    )


def reconcile(deps: Deps) -> Outcome:
    """The periodic sweep."""
    return guarded(lambda: reconciler.sweep(deps))


def guarded(work: Callable[[], object]) -> Outcome:
    """Run ``work`` and map what it raised to the trigger's answer."""
    try:
        work()
    except Exception as error:  # every failure is mapped to an answer, none escapes
        if is_transient(error):
            log.warning("retrying_later", error=type(error).__name__)
            return "retry"
        log.exception("event_failed")
    return "ack"
