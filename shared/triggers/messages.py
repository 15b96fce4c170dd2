"""What an alert shows in Slack, and what the agent receives.

Everything here is Kourier's own message built from a sender's text, so every
piece of that text is made inert before it is shown. In the root message's
``mrkdwn``, Slack's control characters are sent as entities (``escape_mrkdwn``),
so ``<!channel>`` or a forged ``<https://…|link>`` reads as text, and every
``mrkdwn`` object is ``verbatim``, so Slack does not turn ``@channel`` or a
channel name into a mention; control characters are dropped and long values
cut. Links are the sender's URLs only when they are plain http(s) URLs, each
shown whole after a title Kourier chooses (never as a label that hides the
address). The notes in a thread and the flood summary are
Kourier's notices (``notice_message``: marked, and plain text, which Slack
never reads for mentions). The agent gets the alert's fields as JSON inside
the untrusted-data block, after a line of Kourier's own that says what
happened.
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from typing import Any

from shared.core import notices
from shared.core.untrusted import untrusted_block
from shared.slack.markdown import escape_mrkdwn
from shared.triggers.payloads import Alert, AlertGroup, Link
from shared.triggers.threads import FloodSummary, Note

MAX_LABELS = 10
MAX_LISTED = 15
"""Alerts named in a note, groups named in a flood summary (a notice holds 3,000 characters)."""
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029]")
_PLAIN_URL = re.compile(r"^https?://[^\s<>|\"`]+$")
_HIDDEN_LABELS = ("alertname", "severity")

Block = dict[str, Any]


def _plain_line(text: str, limit: int = 300) -> str:
    """``text`` on one line, without control characters, cut to ``limit``."""
    text = " ".join(_CONTROL.sub("", text).split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _line(text: str, limit: int = 300) -> str:
    """``text`` on one line of ``mrkdwn`` that mentions no one and links nowhere."""
    return escape_mrkdwn(_plain_line(text, limit))


def _mrkdwn(text: str) -> dict[str, Any]:
    return {"type": "mrkdwn", "text": text, "verbatim": True}


def _link(link: Link) -> str | None:
    url = link.url.strip()
    if not _PLAIN_URL.match(url) or len(url) > 2000:
        return None
    return f"{link.title}: <{url.replace('&', '&amp;')}>"


# The root message ------------------------------------------------------------------


def root_message(trigger: str, group: AlertGroup) -> tuple[str, list[Block]]:
    """The thread's first message: title, severity, what it says, the labels that matter, links."""
    severity = f" · {_line(group.severity, 40)}" if group.severity else ""
    heading = f"🚨 *{_line(group.title, 150)}*{severity} · firing"
    summary = f"\n{_line(group.summary)}" if group.summary else ""
    blocks: list[Block] = [{"type": "section", "text": _mrkdwn(heading + summary)}]
    labels = [
        f"{_line(name, 60)}: {_line(value, 100)}"
        for name, value in group.labels.items()
        if name not in _HIDDEN_LABELS and not name.startswith("__")
    ][:MAX_LABELS]
    if labels:
        blocks.append({"type": "context", "elements": [_mrkdwn("  ·  ".join(labels))]})
    facts = [notices.alerts_firing(len(group.firing), group.truncated)]
    facts += [shown for shown in (_link(link) for link in group.links) if shown]
    blocks.append({"type": "context", "elements": [_mrkdwn("  ·  ".join(facts))]})
    opened = notices.ALERT_THREAD_OPENED.format(trigger=_plain_line(trigger, 60))
    blocks.append(
        {
            "type": "context",
            "elements": [
                _mrkdwn(f"*{notices.KOURIER_MARK}*"),
                {"type": "plain_text", "text": opened, "emoji": False},
            ],
        }
    )
    fallback = f"{_line(group.title, 150)}{severity} · firing"
    return fallback, blocks


# In the thread ---------------------------------------------------------------------


def note_text(note: Note) -> str:
    """The short note when the set of firing alerts changed (plain text, for a notice)."""
    lines = [notices.alerts_changed(len(note.new), note.ended, note.firing)]
    lines += [f"• {_describe(alert)}" for alert in note.new[:MAX_LISTED]]
    if len(note.new) > MAX_LISTED:
        lines.append(notices.AND_MORE.format(count=len(note.new) - MAX_LISTED))
    return "\n".join(lines)


def _describe(alert: Alert) -> str:
    if alert.summary:
        return _plain_line(alert.summary, 200)
    shown = ", ".join(f"{k}={v}" for k, v in alert.labels.items() if k not in _HIDDEN_LABELS)
    return _plain_line(shown or alert.fingerprint, 200)


# A flood ---------------------------------------------------------------------------


def summary_text(trigger: str, limit: int, summary: FloodSummary) -> str:
    """The one message of a flood, listing the groups that got no thread (plain text)."""
    lines = [notices.FLOOD_SUMMARY.format(trigger=_plain_line(trigger, 60), limit=limit)]
    for skipped in summary.skipped[:MAX_LISTED]:
        severity = f" ({_plain_line(skipped.severity, 40)})" if skipped.severity else ""
        lines.append(f"• {_plain_line(skipped.title, 100)}{severity} at {_clock(skipped.at)}")
    if len(summary.skipped) > MAX_LISTED:
        lines.append(notices.AND_MORE.format(count=len(summary.skipped) - MAX_LISTED))
    return "\n".join(lines)


def _clock(at: datetime) -> str:
    return at.strftime("%H:%M UTC")


# What the agent receives -----------------------------------------------------------


def opening_turn(trigger: str, group: AlertGroup) -> str:
    """The text of the turn an alert starts: Kourier's line, then the fields as untrusted data."""
    return notices.ALERT_TURN.format(trigger=trigger) + "\n" + _fields(trigger, group)


def resolution_turn(trigger: str, group: AlertGroup) -> str:
    """The text of the turn a resolution starts, when the trigger asks for one."""
    return notices.RESOLVED_TURN + "\n" + _fields(trigger, group)


def _fields(trigger: str, group: AlertGroup) -> str:
    data = json.dumps(group.as_data(), ensure_ascii=False, indent=2)
    # JSON leaves these line separators raw; written as escapes, each line of the
    # JSON is one line of the block, as the reader splits them.
    for separator in ("\x85", "\u2028", "\u2029"):
        data = data.replace(separator, f"\\u{ord(separator):04x}")
    return untrusted_block(f"{group.source} alert from trigger {trigger}", data)
