"""Feedback buttons on answers: the blocks, a click recorded, and a backend's tally.

Theory of operation: a finished answer ends with a ``context_actions`` block
holding Slack's ``feedback_buttons`` (👍 and 👎), whose values name the
rating, the turn and the backend (``shared.core.feedback``). A click comes to
chat_ingress as block_actions (``take_click``): it is stored as the person's
one record on that answer, replaced by a later click (Slack's ``action_ts``
decides which is later). A click that changes the person's rating is
logged as ``feedback_recorded`` with the backend and the rating, which a
log-based metric counts (a click on the button already selected is not). Nothing is sent to
the agent. ``tally_of`` reads a backend's records for ``kourier feedback``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import structlog

from shared.bootstrap import Deps
from shared.core.feedback import (
    ACTION_ID,
    FeedbackRecord,
    Rated,
    Rating,
    Tally,
    button_value,
    read_value,
    record_key,
    replaces,
    tally,
)
from shared.ports import Documents

log = structlog.get_logger()

FEEDBACK = "feedback"
"""The collection of feedback records: one per person and answer."""


def feedback_blocks(turn_id: str, backend: str) -> list[dict[str, Any]]:
    """The block an answer ends with: 👍 and 👎 for ``backend``'s answer to the turn."""

    def button(rating: Rating, emoji: str, label: str) -> dict[str, Any]:
        return {
            "text": {"type": "plain_text", "text": emoji},
            "value": button_value(Rated(rating, turn_id, backend)),
            "accessibility_label": label,
        }

    return [
        {
            "type": "context_actions",
            "elements": [
                {
                    "type": "feedback_buttons",
                    "action_id": ACTION_ID,
                    "positive_button": button(Rating.UP, "👍", "Good answer"),
                    "negative_button": button(Rating.DOWN, "👎", "Bad answer"),
                }
            ],
        }
    ]


def take_click(deps: Deps, payload: Mapping[str, Any]) -> bool:
    """Record a click on an answer's feedback buttons; False when the payload is no such click."""
    click = _read_click(payload)
    if click is None:
        return False

    changed: list[bool] = []

    def decide(current: dict[str, Any] | None) -> dict[str, Any] | None:
        stored = FeedbackRecord.from_dict(current) if current else None
        changed[:] = [stored is None or stored.rating is not click.rating]
        return click.to_dict() if replaces(click, stored) else None

    written = deps.store.change_document(FEEDBACK, record_key(click.turn_id, click.user), decide)
    if written and changed[0]:  # the metric counts ratings given, not repeated clicks
        log.info(
            "feedback_recorded",
            backend=click.backend,
            rating=click.rating.value,
            turn=click.turn_id,
        )
    return True


def tally_of(documents: Documents, backend: str) -> Tally:
    """A backend's feedback, as the records stand."""
    found = documents.query(FEEDBACK, "backend", "==", backend)
    return tally(backend, (FeedbackRecord.from_dict(record) for record in found))


def _read_click(payload: Mapping[str, Any]) -> FeedbackRecord | None:
    """The record a block_actions payload makes, when it is a click on our feedback buttons."""
    actions = payload.get("actions")
    user = payload.get("user")
    container = payload.get("container")
    if (
        payload.get("type") != "block_actions"
        or not isinstance(actions, list)
        or not actions
        or not isinstance(actions[0], Mapping)
        or actions[0].get("action_id") != ACTION_ID
        or not isinstance(user, Mapping)
        or not isinstance(container, Mapping)
    ):
        return None
    action = actions[0]
    rated = read_value(action.get("value"))
    try:
        clicked_at = float(action.get("action_ts") or "")
    except ValueError:
        return None
    if rated is None or not isinstance(user.get("id"), str):
        return None
    return FeedbackRecord(
        turn_id=rated.turn_id,
        backend=rated.backend,
        user=user["id"],
        rating=rated.rating,
        clicked_at=clicked_at,
        channel=str(container.get("channel_id") or ""),
        message_ts=str(container.get("message_ts") or ""),
    )
