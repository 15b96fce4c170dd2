"""``POST /triggers/<name>`` on chat_ingress: an alert notification, acknowledged at once.

Theory of operation: the request is authenticated before its body is read
(401 and nothing stored otherwise), read into an ``AlertGroup`` (400 naming
the field when it cannot be), and filtered by the trigger's matchers. Then
``threads.decide`` says what it does to the group's thread, under a
precondition on the thread's record. To open a thread, this request claims
the record, counts the thread against the trigger's hourly limit, posts the
root message, and records the thread and its first turn in one transaction;
the turn is then handed to ``turn_send`` as a Slack message's turn is, so it
queues, recovers and streams like any other. A turn a trigger starts has no
person: no actor, no prefix, and the alert's fields in an untrusted-data
block. When Slack fails, the claim and the count are given back and the
sender gets 503, which Alertmanager retries; a notification that finds the
thread being opened by another request is answered 503 for the same reason
when it would change the thread, and 200 when it repeats the claim.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

import structlog
from slack_sdk.errors import SlackApiError

from shared.bootstrap import Deps
from shared.config import Trigger
from shared.core import notices
from shared.errors import ConfigError, PayloadRejected, TriggerRejected
from shared.ingress import Reply, hand_off
from shared.secrets import read_secret
from shared.slack.prompts import notice_message
from shared.store import Turn, session_key
from shared.triggers import messages
from shared.triggers.auth import verify_request
from shared.triggers.matchers import all_match
from shared.triggers.payloads import AlertGroup, read_payload
from shared.triggers.records import TriggerRecords
from shared.triggers.threads import (
    AlertThread,
    Decision,
    FloodSummary,
    Later,
    Note,
    Nothing,
    Open,
    Resolve,
    SummaryWork,
    TriggerLedger,
    admit,
    after,
    claimed,
    decide,
    opened,
    skip,
    summary_posted,
    unadmit,
)

log = structlog.get_logger()

TRIGGERS_PREFIX = "/triggers/"
MAX_BODY = 1024 * 1024
"""A notification larger than this is refused (Alertmanager's max_alerts keeps them small)."""


def handle_trigger(deps: Deps, name: str, body: bytes, headers: Mapping[str, str]) -> Reply:
    """A notification for the trigger called ``name``."""
    if len(body) > MAX_BODY:
        return Reply(413, "payload too large")
    trigger = deps.config.trigger(name)
    try:
        if trigger is None:
            raise TriggerRejected("no trigger of that name")
        secret = read_secret(trigger.auth.secret_ref.name)
        verify_request(trigger, secret, body, headers, deps.clock.time())
    except TriggerRejected as rejected:
        log.warning("trigger_rejected", trigger=name, reason=str(rejected))
        return Reply(401, "invalid request")
    except ConfigError as error:
        log.error("trigger_not_configured", trigger=name, error=str(error))
        return Reply(500, "trigger not configured")
    try:
        group = read_payload(trigger.source, body)
    except PayloadRejected as error:
        return Reply(400, f"invalid payload: {error}")
    matchers = trigger.label_matchers
    group = group.keeping(tuple(a for a in group.alerts if all_match(matchers, a.labels)))
    if not group.alerts:
        return _answer(trigger, group, Outcome(200, "ignored: no alert matches the trigger"))
    desk = AlertDesk(deps, trigger)
    return _answer(trigger, group, desk.take(group))


@dataclass(frozen=True)
class Outcome:
    """What a notification did, for the sender and the log."""

    status: int
    what: str
    thread: str = ""
    """The ts of the group's thread, when there is one."""


def _answer(trigger: Trigger, group: AlertGroup, outcome: Outcome) -> Reply:
    log.info(
        "trigger_notification",
        trigger=trigger.name,
        group=group.group_key,
        status=group.status,
        alerts=len(group.alerts),
        outcome=outcome.what,
    )
    body: dict[str, Any] = {"ok": outcome.status == 200, "outcome": outcome.what}
    if outcome.thread:
        body["thread"] = outcome.thread
    return Reply(outcome.status, body)


class AlertDesk:
    """One trigger's notifications, turned into threads, notes and turns."""

    def __init__(self, deps: Deps, trigger: Trigger) -> None:
        self.deps, self.trigger = deps, trigger
        self.store, self.slack = deps.store, deps.chat
        self.records = TriggerRecords(deps.store, deps.documents, deps.clock)
        self.binding = deps.config.trigger_binding(trigger)
        self.channel = deps.config.trigger_channel(trigger)

    def take(self, group: AlertGroup) -> Outcome:
        """Do what ``group`` does to its thread."""
        at = self.deps.clock.now()
        seen: list[tuple[Decision, AlertThread | None]] = []

        def claim(current: AlertThread | None) -> AlertThread | None:
            decision = decide(current, group, at)
            seen.append((decision, current))
            return claimed(group, self.trigger.name, at) if isinstance(decision, Open) else None

        claim_written = self.records.change_thread(self.trigger.name, group.group_key, claim)
        decision, thread = seen[-1]
        if isinstance(decision, Open):
            assert claim_written is not None
            return self._open(group, claim_written)
        if isinstance(decision, Note | Resolve):
            assert thread is not None
            return self._change(group, thread, decision)
        if isinstance(decision, Later):
            return Outcome(503, f"later: {decision.reason}")
        assert isinstance(decision, Nothing)
        shown = thread.thread_ts if thread is not None and thread.state == "open" else ""
        return Outcome(200, f"nothing: {decision.reason}", shown)

    # Opening a thread ----------------------------------------------------------

    def _open(self, group: AlertGroup, claim: AlertThread) -> Outcome:
        at = claim.claimed_at
        limit = self.trigger.limits.threads_per_hour
        if (
            self.records.change_ledger(self.trigger.name, lambda ledger: admit(ledger, limit, at))
            is None
        ):
            self._release(claim)
            return self._skip(group, at)
        text, blocks = messages.root_message(self.trigger.name, group)
        try:
            ts = self._post(text=text, blocks=blocks)
        except SlackApiError:
            log.warning("trigger_root_not_posted", trigger=self.trigger.name, exc_info=True)
            self.records.change_ledger(self.trigger.name, lambda ledger: unadmit(ledger, at))
            self._release(claim)
            return Outcome(503, "later: Slack did not take the message")
        turn = self._turn(
            ts, ts, messages.opening_turn(self.trigger.name, group), title=group.title
        )
        if not self.records.open_thread(claim, opened(claim, self.channel, ts), turn):
            return Outcome(200, "nothing: another request took the group over")
        hand_off(self.deps, turn)
        return Outcome(200, "opened a thread", ts)

    def _release(self, claim: AlertThread) -> None:
        self.records.change_thread(
            claim.trigger,
            claim.group_key,
            lambda current: replace(claim, state="closed") if current == claim else None,
        )

    # A thread that is open -----------------------------------------------------

    def _change(self, group: AlertGroup, thread: AlertThread, decision: Note | Resolve) -> Outcome:
        text = (
            messages.note_text(decision) if isinstance(decision, Note) else notices.ALERTS_RESOLVED
        )
        try:
            ts = self._post(
                thread_ts=thread.thread_ts, channel=thread.channel, **notice_message(text)
            )
        except SlackApiError:
            log.warning("trigger_note_not_posted", trigger=self.trigger.name, exc_info=True)
            return Outcome(503, "later: Slack did not take the message")
        self.records.change_thread(
            thread.trigger,
            thread.group_key,
            lambda current: after(thread, group, decision) if current == thread else None,
        )
        if isinstance(decision, Note):
            return Outcome(200, "noted the change in the thread", thread.thread_ts)
        if self.trigger.resolved_starts_turn:
            turn = self._turn(
                ts, thread.thread_ts, messages.resolution_turn(self.trigger.name, group), thread
            )
            if self.store.record_turn(turn).status == "received":
                hand_off(self.deps, turn)
        return Outcome(200, "resolved the thread", thread.thread_ts)

    def _turn(
        self,
        ts: str,
        thread_ts: str,
        text: str,
        thread: AlertThread | None = None,
        title: str | None = None,
    ) -> Turn:
        """A turn the alert starts (``title``: the thread's agent session is named after it)."""
        channel = thread.channel if thread else self.channel
        return Turn(
            id=f"{channel}-{ts}",
            session_id=session_key(self.binding.name, channel, thread_ts),
            binding=self.binding.name,
            team="",
            channel=channel,
            thread_ts=thread_ts,
            ts=ts,
            user="",
            text=text,
            trigger=self.trigger.name,
            title=title,
        )

    # A flood -------------------------------------------------------------------

    def _skip(self, group: AlertGroup, at: datetime) -> Outcome:
        work: list[SummaryWork] = []

        def listed(ledger: TriggerLedger) -> TriggerLedger:
            work.append(skip(ledger, group, at))
            return work[-1].ledger

        self.records.change_ledger(self.trigger.name, listed)
        done = work[-1]
        summary = done.ledger.summary
        assert summary is not None
        try:
            if done.post:
                ts = self._post(**notice_message(self._summary_text(summary)))
                self.records.change_ledger(
                    self.trigger.name, lambda ledger: summary_posted(ledger, summary.started_at, ts)
                )
                self._show_summary(replace(summary, ts=ts), posted=True)
            elif done.update:
                self._show_summary(summary, posted=False)
        except SlackApiError:
            log.warning("trigger_summary_not_posted", trigger=self.trigger.name, exc_info=True)
            return Outcome(503, "later: Slack did not take the flood summary")
        return Outcome(200, "skipped: the trigger opened its limit of threads this hour")

    def _show_summary(self, shown: FloodSummary, posted: bool) -> None:
        """Edit the summary until it lists what the ledger lists (others may add meanwhile)."""
        while True:
            if not posted:
                self.slack.chat_update(
                    channel=self.channel, ts=shown.ts, **notice_message(self._summary_text(shown))
                )
            posted = False
            current = self.records.ledger(self.trigger.name).summary
            if (
                current is None
                or current.started_at != shown.started_at
                or len(current.skipped) <= len(shown.skipped)
            ):
                return
            shown = replace(current, ts=shown.ts)

    def _summary_text(self, summary: FloodSummary) -> str:
        limit = self.trigger.limits.threads_per_hour
        return messages.summary_text(self.trigger.name, limit, summary)

    # Slack ---------------------------------------------------------------------

    def _post(
        self,
        text: str,
        blocks: list[dict[str, Any]],
        thread_ts: str | None = None,
        channel: str | None = None,
    ) -> str:
        """Post Kourier's own message; nothing in it links names or unfurls."""
        answer = self.slack.chat_postMessage(
            channel=channel or self.channel,
            text=text,
            blocks=blocks,
            thread_ts=thread_ts,
            parse="none",
            link_names=False,
            unfurl_links=False,
            unfurl_media=False,
        )
        return str(answer["ts"])
