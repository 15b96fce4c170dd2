"""The thread's agent session in Slack: its status and title, and who may stop a turn.

Theory of operation: Slack shows a thread an agent app answers in as an
*agent session* with a lifecycle status: ``processing`` (the agent works:
Slack shows "Working…" and, to everyone in the thread, a stop button),
``suspended`` (it cannot go on until a person acts), ``active`` (idle, ready
for the next message) and ``closed`` (it will not answer there again). The
status follows the turn the thread carries, and these functions say which:

- processing while a turn is sent or streams, for the person who wrote it
  (``working``), whether it starts, is taken over or resumed, or an answer
  to its question is sent;
- suspended while the task waits in input-required on a question or an
  approval (``waiting``);
- active when the turn ends and the thread can take the next message, and
  closed when it cannot (``ended``): the Binding it began under is gone.

The title names the thread in Slack's list of sessions: the first turn's
text on one line, without mentions or secrets (``title_for``). Slack applies
a title only when a call creates the session; an alert's thread is renamed
to the alert instead.

A person who clicks the stop button stops the turn the thread is carrying,
if they may (``may_stop``): the person who wrote it and the Binding's
approvers; a turn no person wrote (an alert's) anyone in the thread.

A stop is for the turn that was running when the button was pressed, not one
that began after it (``stop_target``). The click can come as one turn ends
and the thread's next begins (the button shows until the ended turn's status
reaches Slack), and the time of the press is Slack's clock while a turn's
start is its function's, which may be off by a fraction of a second. So the
streams come first, as they are one fact on both sides: Slack names the
app's streams the click stopped, and each turn records the streams it
started. A press that stopped a stream of the carried turn is for it, and
the thread's first turn has no turn before it for a press to be meant for.
Otherwise the clocks tell, but only past the skew allowed between them
(``CLOCK_SKEW``): a press that far after the turn began is for it, one that
far before is for the turn before. Closer than that, a press that stopped a
stream an earlier turn started was made while that turn still streamed, so
it is for that one (ended now); one that stopped none cannot be told apart,
and stops nothing (a stop taken wrongly ends a turn nobody stopped): the
person is told, and may press again.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum

from shared.core.redaction import redact_text


class SessionStatus(StrEnum):
    """An agent session's lifecycle status, as Slack names it."""

    PROCESSING = "processing"
    ACTIVE = "active"
    SUSPENDED = "suspended"
    CLOSED = "closed"


MAX_TITLE_CHARS = 200
"""Slack's limit for a session's title."""

LEGACY_WORKING = "is working…"
"""The status line that stands for ``processing`` where agent sessions are refused
(assistant.threads.setStatus); every other status clears it."""

CLOSING_OUTCOMES = frozenset({"binding_gone"})
"""Turn outcomes after which the thread takes no more messages: its session closes."""


@dataclass(frozen=True)
class StatusUpdate:
    """A status to give the thread's session (``initiator`` and ``title`` count at its creation)."""

    status: SessionStatus
    initiator: str | None = None
    title: str | None = None

    @property
    def legacy_line(self) -> str:
        """The assistant.threads.setStatus line that stands for it ("" clears the line)."""
        return LEGACY_WORKING if self.status is SessionStatus.PROCESSING else ""


def working(author: str | None, text: str) -> StatusUpdate:
    """A turn is sent or streams (``author`` None: no person wrote it)."""
    return StatusUpdate(SessionStatus.PROCESSING, initiator=author or None, title=title_for(text))


def alert_title(trigger: str | None, title: str | None) -> str | None:
    """The title of a thread an alert began (``trigger``), if its ``title`` leaves one.

    A thread a person began keeps the title its first status gave it.
    """
    return title_for(title) if trigger and title else None


def waiting() -> StatusUpdate:
    """The task waits in input-required on a question or an approval."""
    return StatusUpdate(SessionStatus.SUSPENDED)


def ended(outcome: str) -> StatusUpdate:
    """The turn ended with ``outcome``: the thread is idle, or finished."""
    closed = outcome in CLOSING_OUTCOMES
    return StatusUpdate(SessionStatus.CLOSED if closed else SessionStatus.ACTIVE)


_LABELLED = re.compile(r"<([^<>|]*)\|([^<>]*)>")
_COMMAND = re.compile(r"<[@!#][^<>]*>")
_LINK = re.compile(r"<([a-z][a-z0-9+.-]*:[^<>\s]*)>", re.IGNORECASE)


def title_for(text: str) -> str | None:
    """A session title from a message: one line, no mentions, no secrets, at most 200 characters.

    A labelled link keeps its label, a bare link its address; mentions of
    people, groups and channels are left out. None when nothing is left.
    """
    plain = _COMMAND.sub(" ", _LABELLED.sub(_label, text))
    plain = _LINK.sub(r"\1", plain)
    words = " ".join(redact_text(plain).split())
    if len(words) <= MAX_TITLE_CHARS:
        return words or None
    cut = words[: MAX_TITLE_CHARS - 1]
    space = cut.rfind(" ")
    return (cut[:space] if space > MAX_TITLE_CHARS // 2 else cut).rstrip() + "…"


def _label(found: re.Match[str]) -> str:
    target, label = found.group(1), found.group(2)
    if target.startswith(("@", "!")):
        return " "
    return f"#{label}" if target.startswith("#") else label


def may_stop(person: str, author: str | None, approvers: Collection[str]) -> bool:
    """Whether ``person`` may stop a turn ``author`` wrote (None: no person wrote it)."""
    return not author or person == author or person in approvers


CLOCK_SKEW = timedelta(seconds=0.5)
"""How far a function's clock may be off Slack's, as far as a stop button's press goes."""


class StopFor(StrEnum):
    """Which turn a press of the stop button is for, as far as the evidence tells."""

    THIS_TURN = "this_turn"
    """The turn the thread carries now: the stop is taken."""
    AN_EARLIER_TURN = "an_earlier_turn"
    """A turn before it, ended now: nothing to stop."""
    CANNOT_TELL = "cannot_tell"
    """Pressed as the turn began, too close to tell: nothing is stopped, and the person is told."""


@dataclass(frozen=True)
class CarriedTurn:
    """A turn of the thread: when a function first carried it (on that function's clock; None:
    not yet) and the streams its reply started."""

    started_at: datetime | None
    streams: Collection[str]


def stop_target(
    pressed_at: datetime,
    stopped_streams: Collection[str],
    turn: CarriedTurn,
    earlier: Collection[CarriedTurn],
) -> StopFor:
    """Which turn a press at ``pressed_at`` (Slack's clock) that stopped ``stopped_streams``
    is for: ``turn``, the one the thread carries now, or one of the ``earlier`` turns carried
    before it in the thread."""
    if any(ts in turn.streams for ts in stopped_streams) or not earlier:
        return StopFor.THIS_TURN
    if turn.started_at is None:
        return StopFor.AN_EARLIER_TURN
    if pressed_at >= turn.started_at + CLOCK_SKEW:
        return StopFor.THIS_TURN
    stopped_an_earlier_stream = any(
        ts in before.streams for before in earlier for ts in stopped_streams
    )
    if stopped_an_earlier_stream or pressed_at <= turn.started_at - CLOCK_SKEW:
        return StopFor.AN_EARLIER_TURN
    return StopFor.CANNOT_TELL
