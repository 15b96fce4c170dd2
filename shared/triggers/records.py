"""Firestore: alert threads (one per trigger and alert group) and each trigger's ledger.

Every change is ``Store.change_document``'s read-decide-write under a
precondition, so two requests about one group (Alertmanager's HA pair, a
retry racing the original) decide one after the other. A thread's record
expires (Firestore TTL on ``expire_at``) a month after its last change; the
turns and sessions of its thread are kept as any other.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import asdict
from datetime import timedelta
from typing import Any

from shared.errors import PreconditionFailed
from shared.ports import Clock, Create, Documents, Update
from shared.store import TURNS, Store, Turn
from shared.triggers.threads import AlertThread, FloodSummary, Skipped, TriggerLedger

ALERT_THREADS = "kourier_alert_threads"
TRIGGERS = "kourier_triggers"
KEEP = timedelta(days=30)


def thread_key(trigger: str, group_key: str) -> str:
    """The document ID of a group's thread (the group key can be long and hold any character)."""
    return hashlib.sha256(f"{trigger}\0{group_key}".encode()).hexdigest()[:40]


class TriggerRecords:
    """The Firestore adapter of triggers."""

    def __init__(self, store: Store, documents: Documents, clock: Clock) -> None:
        self._store = store
        self._documents = documents
        self._clock = clock

    def change_thread(
        self,
        trigger: str,
        group_key: str,
        decide: Callable[[AlertThread | None], AlertThread | None],
    ) -> AlertThread | None:
        """Apply ``decide`` to the group's thread record under a precondition."""

        def change(current: dict[str, Any] | None) -> dict[str, Any] | None:
            wanted = decide(_thread(current) if current is not None else None)
            return None if wanted is None else self._thread_fields(wanted)

        written = self._store.change_document(ALERT_THREADS, thread_key(trigger, group_key), change)
        return None if written is None else _thread(written)

    def open_thread(self, claim: AlertThread, opened: AlertThread, turn: Turn) -> bool:
        """Record the opened thread and its first turn together, if the claim is still ``claim``.

        One commit under a precondition on the claim as read: a thread is
        never open without its turn, and a turn is never recorded for a claim
        another request took over.
        """
        key = thread_key(claim.trigger, claim.group_key)
        snapshot = self._documents.get(ALERT_THREADS, key)
        if snapshot is None or _thread(snapshot.data) != claim:
            return False
        turn.created_at = self._clock.now()
        try:
            self._documents.commit(
                [
                    Create(TURNS, turn.id, asdict(turn)),
                    Update(
                        ALERT_THREADS,
                        key,
                        self._thread_fields(opened),
                        if_updated_at=snapshot.update_time,
                    ),
                ]
            )
        except PreconditionFailed:
            return False
        return True

    def change_ledger(
        self, trigger: str, decide: Callable[[TriggerLedger], TriggerLedger | None]
    ) -> TriggerLedger | None:
        """Apply ``decide`` to the trigger's ledger under a precondition."""

        def change(current: dict[str, Any] | None) -> dict[str, Any] | None:
            wanted = decide(_ledger(current) if current is not None else TriggerLedger())
            return None if wanted is None else _ledger_fields(wanted)

        written = self._store.change_document(TRIGGERS, trigger, change)
        return None if written is None else _ledger(written)

    def ledger(self, trigger: str) -> TriggerLedger:
        """The trigger's ledger as stored."""
        snapshot = self._documents.get(TRIGGERS, trigger)
        return _ledger(snapshot.data) if snapshot is not None else TriggerLedger()

    def _thread_fields(self, thread: AlertThread) -> dict[str, Any]:
        expire_at = self._clock.now() + KEEP
        return {**asdict(thread), "firing": list(thread.firing), "expire_at": expire_at}


def _thread(data: dict[str, Any] | None) -> AlertThread:
    assert data is not None
    return AlertThread(
        trigger=data["trigger"],
        group_key=data["group_key"],
        state=data["state"],
        claimed_at=data["claimed_at"],
        firing=tuple(data.get("firing") or ()),
        channel=data.get("channel", ""),
        thread_ts=data.get("thread_ts", ""),
        title=data.get("title", ""),
    )


def _ledger_fields(ledger: TriggerLedger) -> dict[str, Any]:
    summary = ledger.summary
    return {
        "opened": list(ledger.opened),
        "summary": None
        if summary is None
        else {
            "started_at": summary.started_at,
            "ts": summary.ts,
            "posting_since": summary.posting_since,
            "skipped": [asdict(s) for s in summary.skipped],
        },
    }


def _ledger(data: dict[str, Any] | None) -> TriggerLedger:
    assert data is not None
    summary = data.get("summary")
    return TriggerLedger(
        opened=tuple(data.get("opened") or ()),
        summary=None
        if not summary
        else FloodSummary(
            started_at=summary["started_at"],
            ts=summary.get("ts", ""),
            posting_since=summary.get("posting_since"),
            skipped=tuple(Skipped(**s) for s in summary.get("skipped") or ()),
        ),
    )
