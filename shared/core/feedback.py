"""Feedback on answers: what a click on 👍 or 👎 records, and the tally an agent's author reads.

Theory of operation: every finished answer carries two feedback buttons
whose values say the rating, the turn and the agent backend that answered
(``button_value``). Slack sends a click with no state: a click on the
button already selected sends the same payload again, and nothing says a
button was unselected. So one person's feedback on one answer is one record,
keyed by the turn and the person (``record_key``), and the latest click
wins; "latest" is Slack's ``action_ts``, so two clicks handled out of order
still keep the later one (``replaces``). Nothing is sent to the agent: the
contract has no message for it. ``tally`` counts a backend's records and
lists the answers people disliked, newest first.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from enum import StrEnum
from typing import Any

ACTION_ID = "kourier_feedback"
"""The action_id of the feedback buttons (both share it; the value tells them apart)."""


class Rating(StrEnum):
    """What a person thought of an answer."""

    UP = "up"
    DOWN = "down"


@dataclass(frozen=True)
class Rated:
    """What one feedback button says: this rating, for this turn's answer, by this backend."""

    rating: Rating
    turn_id: str
    backend: str


def button_value(rated: Rated) -> str:
    """The value of a feedback button (Slack allows 2,000 characters)."""
    return json.dumps(
        {"rating": rated.rating.value, "turn": rated.turn_id, "backend": rated.backend},
        separators=(",", ":"),
    )


def read_value(value: object) -> Rated | None:
    """What a clicked button's value says; None when it is not one of ours."""
    try:
        fields = json.loads(value) if isinstance(value, str) else {}
        return Rated(Rating(fields["rating"]), str(fields["turn"]), str(fields["backend"]))
    except (ValueError, TypeError, KeyError):
        return None


@dataclass(frozen=True)
class FeedbackRecord:
    """One person's feedback on one answer, as their latest click left it."""

    turn_id: str
    backend: str
    user: str
    rating: Rating
    clicked_at: float
    """Slack's ``action_ts`` of the click (epoch seconds)."""
    channel: str
    message_ts: str

    def to_dict(self) -> dict[str, Any]:
        """The record as a document."""
        return {**asdict(self), "rating": self.rating.value}

    @classmethod
    def from_dict(cls, stored: Mapping[str, Any]) -> FeedbackRecord:
        """A record read back from its document."""
        fields = {name: stored[name] for name in cls.__dataclass_fields__}
        return cls(**{**fields, "rating": Rating(stored["rating"])})


def record_key(turn_id: str, user: str) -> str:
    """The one record of a person's feedback on a turn's answer."""
    return hashlib.sha256(f"{turn_id}\n{user}".encode()).hexdigest()[:32]


def replaces(new: FeedbackRecord, stored: FeedbackRecord | None) -> bool:
    """Whether a click's record replaces the stored one: it is the later click (or the first)."""
    return stored is None or new.clicked_at >= stored.clicked_at


@dataclass(frozen=True)
class Tally:
    """A backend's feedback: how many liked and disliked its answers, and which were disliked."""

    backend: str
    up: int
    down: int
    disliked: tuple[FeedbackRecord, ...]
    """Newest first."""


def tally(backend: str, records: Iterable[FeedbackRecord]) -> Tally:
    """Count ``backend``'s records (others are left out)."""
    mine = [record for record in records if record.backend == backend]
    disliked = sorted(
        (record for record in mine if record.rating is Rating.DOWN),
        key=lambda record: record.clicked_at,
        reverse=True,
    )
    up = sum(record.rating is Rating.UP for record in mine)
    return Tally(backend, up=up, down=len(disliked), disliked=tuple(disliked))
