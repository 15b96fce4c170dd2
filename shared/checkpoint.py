"""A turn's checkpoint: typed, versioned, and stored in documents that always fit.

Theory of operation: the checkpoint is what a function taking a turn over
continues from (see ``shared.turn``): the machine's state, the assembler's,
the reply's, the last snapshot's fingerprint, the question being
answered, the agent a new session is being bound to, and its freshness (``observed_at``, ``caught_up``,
``reconcile_every``: see ``shared.turn``). It outlives deploys (a turn can
be followed for hours), so it carries a ``version``, and each release reads
the versions before it: version 0 is the untyped JSON of an earlier
release, whose ``observed_at`` and ``caught_up`` meant something else (the
time of the write), so they are not read; version 1 had no freshness.

A long answer is held several times over (the agent's text, the reply's
Slack Markdown, each message's text), and Firestore refuses a document over
1 MiB. So the checkpoint stays inline on the turn's document only while its
JSON is small (``INLINE_CHARS``); a larger one is compressed and written in
parts of at most ``PART_BYTES`` to ``kourier_checkpoints``, and the turn's
document points at them (``checkpoint_parts``). The parts of one write are
named by the turn, the writer's generation, a slot and their index; a
writer fills the slot its last pointer does not name, then moves the
pointer (with its fenced write of the turn), so a function that dies in
between leaves the last good checkpoint whole, and a stalled function of an
older generation writes only under names nobody reads. Parts expire with a
TTL on ``expire_at``.
"""

from __future__ import annotations

import hashlib
import json
import zlib
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import orjson

from shared.errors import StoreUnavailable
from shared.ports import Clock, Documents

CHECKPOINTS = "kourier_checkpoints"
VERSION = 2
INLINE_CHARS = 200_000
"""A checkpoint whose JSON is longer is stored in parts (Firestore's limit is 1 MiB a document)."""
PART_BYTES = 500_000
PARTS_KEPT = timedelta(days=30)


@dataclass(frozen=True)
class Checkpoint:
    """What a turn's carrier must not forget."""

    machine: dict[str, Any]
    """``TurnState.to_dict()``."""
    reply: dict[str, Any]
    """``ReplyAssembler.to_state()``: what the agent delivered."""
    slack: dict[str, Any]
    """``ThreadReply.to_state()``: what the thread shows."""
    snapshot: str | None = None
    """The fingerprint of the last full task read (for "sign of life")."""
    answering: str | None = None
    """The key of the question whose answer the turn is sending."""
    told: str | None = None
    """The outcome the turn ends with, once the thread is being told it: a function
    taking over then ends the turn, telling it only if the thread does not show it."""
    notice: str | None = None
    """The notice of that end (``{who}`` unfilled): posted by a taker that does not find it."""
    notice_who: str | None = None
    """The person that notice mentions (the stop's), if any."""
    observed_at: float | None = None
    """When the persisted task was last read (GetTask, a subscription's snapshot); None before."""
    caught_up: bool = False
    """Whether nothing live was shown since that read."""
    reconcile_every: float | None = None
    """The cadence, in seconds, at which a healthy stream is reconciled with GetTask."""
    binds_to: str | None = None
    """The agent incarnation the turn's session, which had no context, is bound to once the
    agent names one (``shared.core.incarnation``): a function taking over binds it too."""
    version: int = VERSION

    def to_json(self) -> str:
        """The checkpoint as compact JSON (its parts are JSON values already: no copy is made).

        orjson writes what ``json.dumps(separators=(",", ":"), ensure_ascii=False)`` would
        (the same bytes on every checkpoint of 30 simulated histories; floats in exponent
        form are spelled differently, and both read back the same) in a third of the time:
        a checkpoint is written every few seconds of every stream.
        """
        document = {
            "machine": self.machine,
            "reply": self.reply,
            "slack": self.slack,
            "snapshot": self.snapshot,
            "answering": self.answering,
            "told": self.told,
            "notice": self.notice,
            "notice_who": self.notice_who,
            "observed_at": self.observed_at,
            "caught_up": self.caught_up,
            "reconcile_every": self.reconcile_every,
            "binds_to": self.binds_to,
            "version": self.version,
        }
        return orjson.dumps(document).decode()

    @classmethod
    def from_json(cls, text: str) -> Checkpoint:
        """Read a checkpoint of this version or an earlier one."""
        data = json.loads(text)
        version = int(data.get("version", 0))
        if version > VERSION:
            raise ValueError(f"checkpoint version {version} is newer than this release's")
        fresh = version >= 2  # earlier versions kept no freshness this release can read
        return cls(
            machine=data["machine"],
            reply=data["reply"],
            slack=data["slack"],
            snapshot=data.get("snapshot"),
            answering=data.get("answering"),
            told=data.get("told"),
            notice=data.get("notice"),
            notice_who=data.get("notice_who"),
            observed_at=data.get("observed_at") if fresh else None,
            caught_up=bool(data.get("caught_up")) if fresh else False,
            reconcile_every=data.get("reconcile_every") if fresh else None,
            binds_to=data.get("binds_to"),
        )


@dataclass(frozen=True)
class Stored:
    """Where the turn's document says its checkpoint is: its fields, as ``write_turn`` takes them."""

    checkpoint: str | None
    """The JSON, inline; None when stored in parts (or when there is none)."""
    checkpoint_parts: dict[str, Any] | None
    """``generation``, ``slot``, ``count`` and ``digest`` of the parts."""

    def fields(self) -> dict[str, Any]:
        """The turn document's fields."""
        return {"checkpoint": self.checkpoint, "checkpoint_parts": self.checkpoint_parts}


NONE = Stored(checkpoint=None, checkpoint_parts=None)
"""A turn without a checkpoint (not begun, or done)."""


class CheckpointStore:
    """Reads and writes checkpoints on the ``Documents`` port."""

    def __init__(self, documents: Documents, clock: Clock) -> None:
        self._documents = documents
        self._clock = clock

    def save(
        self, turn_id: str, generation: int, checkpoint: Checkpoint, last: Stored | None
    ) -> Stored:
        """Write what must be written before the turn's document points at ``checkpoint``.

        Args:
            turn_id: The turn.
            generation: The writer's generation (its fencing token).
            checkpoint: What to keep.
            last: What this writer's last save returned (None for its first).

        Returns:
            The fields the turn's document must be written with.
        """
        text = checkpoint.to_json()
        if len(text) <= INLINE_CHARS:
            return Stored(checkpoint=text, checkpoint_parts=None)
        packed = zlib.compress(text.encode(), level=1)
        parts = [packed[i : i + PART_BYTES] for i in range(0, len(packed), PART_BYTES)]
        previous = last.checkpoint_parts if last is not None else None
        slot = 0
        if previous is not None and previous["generation"] == generation:
            slot = 1 - int(previous["slot"])
        expire_at = self._clock.now() + PARTS_KEPT
        for index, part in enumerate(parts):
            self._documents.set(
                CHECKPOINTS,
                _part_key(turn_id, generation, slot, index),
                {"data": part, "expire_at": expire_at},
            )
        reference = {
            "generation": generation,
            "slot": slot,
            "count": len(parts),
            "digest": hashlib.sha256(packed).hexdigest(),
        }
        return Stored(checkpoint=None, checkpoint_parts=reference)

    def load(self, turn_id: str, stored: Stored) -> Checkpoint | None:
        """The checkpoint the turn's document points at, if any.

        Raises:
            StoreUnavailable: A part is missing or does not match (read again later).
        """
        if stored.checkpoint:
            return Checkpoint.from_json(stored.checkpoint)
        reference = stored.checkpoint_parts
        if not reference:
            return None
        packed = b""
        for index in range(int(reference["count"])):
            key = _part_key(turn_id, int(reference["generation"]), int(reference["slot"]), index)
            snapshot = self._documents.get(CHECKPOINTS, key)
            if snapshot is None:
                raise StoreUnavailable(f"checkpoint part {key} is missing")
            packed += bytes(snapshot.data["data"])
        if hashlib.sha256(packed).hexdigest() != reference["digest"]:
            raise StoreUnavailable(f"the checkpoint parts of turn {turn_id} do not match")
        return Checkpoint.from_json(zlib.decompress(packed).decode())


def _part_key(turn_id: str, generation: int, slot: int, index: int) -> str:
    return f"{turn_id}-g{generation}-s{slot}-{index}"
