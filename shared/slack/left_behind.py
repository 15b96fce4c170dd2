"""What the function before left of a turn's reply beyond its last checkpoint.

Theory of operation. A function that carries a turn on continues its reply
from the last checkpoint (``ThreadReply.restore``). The function before may
have shown more than that checkpoint holds, depending on how it let the turn
go (``Predecessor``): one that handed over saved after its last post; one
that died, or that a person's stop took the turn from, may have streamed,
posted and shown steps since. What the turn records of that, it records
before each Slack call: the steps its reply shows, where and as which update
(``Turn.shown_steps``), that the reply posted (``Turn.posting``; its
messages carry the reply's mark, ``reply_course.reply_mark``, of the
question the checkpoint answers), and the streams it started
(``Turn.started_streams``). ``LeftBehind`` is all of that as the taker
knows it, built once (``read_left_behind``): the record of shown steps
parsed, and the thread read back only when the turn posted and the function
before may have posted after the checkpoint. The reply takes it whole.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from shared.core.reply_course import reply_mark
from shared.core.step_cards import Shown, read_shown
from shared.ports import Chat
from shared.slack.thread_read_back import read_back_if_posted
from shared.store import Turn


class Predecessor(Enum):
    """How the function that wrote a checkpoint let the turn go."""

    HANDED_OVER = "handed_over"
    """It handed over, slept until a timer, or paused: it saved after its last post."""
    DIED = "died"
    """It died (or stalled): its messages may show more than the checkpoint holds."""
    STOPPED = "stopped"
    """A person's stop took the turn from it, between any two of its calls."""

    @property
    def may_have_posted_after_checkpoint(self) -> bool:
        """Whether messages of the reply may show that the checkpoint does not name."""
        return self is not Predecessor.HANDED_OVER


@dataclass(frozen=True)
class LeftBehind:
    """What the function before may have shown of the reply after its last checkpoint.

    The defaults: a function that handed over and showed nothing since.
    """

    died: bool = False
    """It died after its checkpoint: its messages may show text the checkpoint
    does not hold, streamed again, and each message is written whole (a
    stream's once it stops), so that it shows each part once."""
    shown: Mapping[str, Shown] = field(default_factory=dict)
    """The steps its reply showed, by call ID (``Turn.shown_steps``, read:
    ``ReplyState.resume``, ``ReplyState.adopt``)."""
    thread: Sequence[Mapping[str, Any]] | None = None
    """The thread's messages, read back because the turn records that the
    reply posted: those marked ``mark`` that the checkpoint does not name
    were posted after it, and are adopted. None: not read."""
    streams: Sequence[str] = ()
    """The streams the turn records the reply started: those the checkpoint
    does not name were started after it (or before the first checkpoint), and
    are adopted too, each stopped if Slack may still stream it."""
    mark: dict[str, Any] | None = None
    """The reply's mark (``reply_course.reply_mark``, of the question the
    checkpoint answers), which its messages carry, and those posted from now
    will; None: the one the reply was built with."""


def read_left_behind(
    chat: Chat, turn: Turn, answering: str | None, predecessor: Predecessor
) -> LeftBehind:
    """What ``turn`` records its reply left beyond the checkpoint, which answers ``answering``.

    ``predecessor``: how the function before let the turn go; only one that
    may have posted after the checkpoint leaves messages and streams to
    adopt, so only then is the thread read back (``read_back_if_posted``).
    """
    may_have_posted = predecessor.may_have_posted_after_checkpoint
    return LeftBehind(
        died=predecessor is Predecessor.DIED,
        shown=read_shown(turn.shown_steps),
        thread=read_back_if_posted(chat, turn) if may_have_posted else None,
        streams=tuple(turn.started_streams) if may_have_posted else (),
        mark=reply_mark(turn.id, answering),
    )
