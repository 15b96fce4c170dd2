"""What a notification does to its alert group's thread, and how many threads a trigger opens.

Theory of operation: one alert group (a trigger and the sender's group key)
has at most one open thread. Its record says whether the thread is being
opened (``opening``: one request claimed it and is posting the root
message), ``open`` (with the alerts it last showed firing) or ``closed``
(resolved, or never opened because of a flood).
Alertmanager and Grafana send the same group again every repeat interval,
retry a failed request, and, run in pairs, send it twice; so a notification
whose firing alerts are the ones the thread shows adds nothing, one whose
set changed adds a short note, and one with nothing firing resolves the
thread. A resolved group that fires again is a new incident and gets a new
thread. A claim whose opener died (no root after ``CLAIM_TIMEOUT``) is taken
over by the next notification; a changed or resolving notification that
finds the thread still being opened is answered "later" (the sender retries
a 5xx), so it is never lost.

Flood control counts the threads a trigger opened in the last hour. Past
its limit, a group gets no thread; it is listed in one summary message in
the channel (one per flood: a new one when the last began over an hour ago),
which the request that claims it posts and every later one edits, so nothing
is dropped without a word.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Literal

from shared.triggers.payloads import Alert, AlertGroup

CLAIM_TIMEOUT = timedelta(minutes=2)
"""How long a claim (to open a thread, or to post a summary) holds before another takes it."""
FLOOD_WINDOW = timedelta(hours=1)

ThreadState = Literal["opening", "open", "closed"]


@dataclass(frozen=True)
class AlertThread:
    """The thread of one alert group, as stored."""

    trigger: str
    group_key: str
    state: ThreadState
    claimed_at: datetime
    firing: tuple[str, ...] = ()
    """The identities of the alerts the thread shows firing."""
    channel: str = ""
    thread_ts: str = ""
    title: str = ""


@dataclass(frozen=True)
class Open:
    """Open a thread: post its root message and start a turn."""


@dataclass(frozen=True)
class Note:
    """The set of firing alerts changed: say so in the thread."""

    new: tuple[Alert, ...]
    """Alerts that fire and the thread did not show."""
    ended: int
    """How many alerts the thread showed firing are no longer firing."""
    firing: int


@dataclass(frozen=True)
class Resolve:
    """Nothing fires any more: post the resolution in the thread."""

    resolved: tuple[Alert, ...]


@dataclass(frozen=True)
class Nothing:
    """Nothing to do (a repeat, a retry, a resolution with no open thread)."""

    reason: str


@dataclass(frozen=True)
class Later:
    """Not now: the group's thread is being opened; the sender should retry."""

    reason: str


Decision = Open | Note | Resolve | Nothing | Later


def decide(thread: AlertThread | None, group: AlertGroup, at: datetime) -> Decision:
    """What ``group`` does to its ``thread`` (None: the group never had one)."""
    firing = {a.identity for a in group.firing}
    if thread is None or thread.state == "closed":
        return Open() if firing else Nothing("no open thread for this group")
    if thread.state == "opening":
        if at - thread.claimed_at >= CLAIM_TIMEOUT:
            return Open() if firing else Nothing("no open thread for this group")
        if firing and firing == set(thread.firing):
            return Nothing("the thread is being opened")
        return Later("the group's thread is being opened")
    if not firing:
        return Resolve(group.resolved)
    shown = set(thread.firing)
    if firing == shown:
        return Nothing("repeat")
    new = tuple(a for a in group.firing if a.identity not in shown)
    return Note(new=new, ended=len(shown - firing), firing=len(firing))


def claimed(group: AlertGroup, trigger: str, at: datetime) -> AlertThread:
    """The record of a thread that one request is opening."""
    return AlertThread(
        trigger=trigger,
        group_key=group.group_key,
        state="opening",
        claimed_at=at,
        firing=tuple(sorted(a.identity for a in group.firing)),
        title=group.title,
    )


def opened(thread: AlertThread, channel: str, thread_ts: str) -> AlertThread:
    """The record once the root message is posted."""
    return replace(thread, state="open", channel=channel, thread_ts=thread_ts)


def after(thread: AlertThread, group: AlertGroup, decision: Note | Resolve) -> AlertThread:
    """The record once the note or resolution is posted."""
    if isinstance(decision, Resolve):
        return replace(thread, state="closed", firing=())
    return replace(thread, firing=tuple(sorted(a.identity for a in group.firing)))


# Flood control --------------------------------------------------------------------


@dataclass(frozen=True)
class Skipped:
    """An alert group that got no thread."""

    group_key: str
    title: str
    severity: str
    at: datetime


@dataclass(frozen=True)
class FloodSummary:
    """The one message that lists the groups of a flood that got no thread."""

    started_at: datetime
    skipped: tuple[Skipped, ...]
    ts: str = ""
    """The Slack message, once posted."""
    posting_since: datetime | None = None
    """When a request claimed the posting (none: nobody is posting)."""


@dataclass(frozen=True)
class TriggerLedger:
    """A trigger's recent threads and its flood summary, as stored."""

    opened: tuple[datetime, ...] = ()
    """When it opened threads, the last hour's."""
    summary: FloodSummary | None = None


def admit(ledger: TriggerLedger, limit: int, at: datetime) -> TriggerLedger | None:
    """The ledger with one more thread opened at ``at``; None when the limit is reached."""
    recent = tuple(t for t in ledger.opened if at - t < FLOOD_WINDOW)
    if len(recent) >= limit:
        return None
    return replace(ledger, opened=(*recent, at))


def unadmit(ledger: TriggerLedger, at: datetime) -> TriggerLedger:
    """The ledger without the thread admitted at ``at`` (its root could not be posted)."""
    return replace(ledger, opened=tuple(t for t in ledger.opened if t != at))


@dataclass(frozen=True)
class SummaryWork:
    """What a request that skipped a group does about the summary message."""

    ledger: TriggerLedger
    post: bool = False
    """Post the summary: this request claimed it."""
    update: bool = False
    """Edit the posted summary to list what the ledger lists."""


def skip(ledger: TriggerLedger, group: AlertGroup, at: datetime) -> SummaryWork:
    """List ``group`` in the trigger's summary (once per flood), and say who shows it."""
    summary = ledger.summary
    if summary is None or at - summary.started_at >= FLOOD_WINDOW:
        summary = FloodSummary(started_at=at, skipped=())
    listed = any(s.group_key == group.group_key for s in summary.skipped)
    if not listed:
        entry = Skipped(group.group_key, group.title, group.severity, at)
        summary = replace(summary, skipped=(*summary.skipped, entry))
    if summary.ts:
        return SummaryWork(replace(ledger, summary=summary), update=not listed)
    claim_free = summary.posting_since is None or at - summary.posting_since >= CLAIM_TIMEOUT
    if claim_free:
        summary = replace(summary, posting_since=at)
    return SummaryWork(replace(ledger, summary=summary), post=claim_free)


def summary_posted(ledger: TriggerLedger, started_at: datetime, ts: str) -> TriggerLedger | None:
    """The ledger with its summary's ts; None if that flood's summary was replaced meanwhile."""
    summary = ledger.summary
    if summary is None or summary.started_at != started_at:
        return None
    return replace(ledger, summary=replace(summary, ts=ts, posting_since=None))
