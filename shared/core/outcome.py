"""Picking a category for a failed task, from what the agent said.

Only the failed status message's text (at most 32 parts and 4096
characters) and its metadata keys ``code``, ``error_code`` and
``kagent_error_code`` are read, and only to choose a category: the agent's
words are never shown.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from shared.core import notices
from shared.core.model import TaskState, TaskStatus, TextPart
from shared.core.notices import FailureCategory

_MAX_PARTS = 32
_MAX_CHARS = 4096
_CODE_KEYS = ("code", "error_code", "kagent_error_code")

_PATTERNS: tuple[tuple[FailureCategory, re.Pattern[str]], ...] = (
    (
        FailureCategory.CONTEXT_LIMIT,
        re.compile(
            r"context[ _-]?(length|window|limit)|too many tokens|maximum context|token limit",
            re.IGNORECASE,
        ),
    ),
    (
        FailureCategory.RATE_LIMIT,
        re.compile(
            r"rate[ _-]?limit|too many requests|resource[ _-]?exhausted|quota|\b429\b",
            re.IGNORECASE,
        ),
    ),
    (
        FailureCategory.AUTHENTICATION,
        re.compile(
            r"unauthori[sz]ed|authenticat|invalid[ _-]?(api[ _-]?)?key|credential|\b401\b",
            re.IGNORECASE,
        ),
    ),
    (
        FailureCategory.TIMEOUT,
        re.compile(r"time[ _-]?d?[ _-]?out|deadline[ _-]?exceeded|\b504\b", re.IGNORECASE),
    ),
    (
        FailureCategory.PERMISSION,
        re.compile(r"permission|forbidden|access[ _-]?denied|not allowed|\b403\b", re.IGNORECASE),
    ),
)


def failure_category(status: TaskStatus | None) -> FailureCategory | None:
    """The recognised category of a failed task's status, if any."""
    if status is None or status.message is None:
        return None
    message = status.message
    codes = " ".join(str(message.metadata.get(key, "")) for key in _CODE_KEYS)
    text = "".join(p.text for p in message.parts[:_MAX_PARTS] if isinstance(p, TextPart))
    said = f"{codes} {text[:_MAX_CHARS]}"
    return next((category for category, pattern in _PATTERNS if pattern.search(said)), None)


def final_notice(outcome: str, has_answer_text: bool, status: TaskStatus | None) -> str | None:
    """The notice a settled turn ends with, if any (contract, Task states)."""
    if outcome == TaskState.COMPLETED.value:
        return None if has_answer_text else notices.NO_OUTPUT
    if outcome == TaskState.REJECTED.value:
        return notices.TASK_REJECTED
    if outcome == TaskState.CANCELED.value:
        return notices.TASK_CANCELED
    if outcome in (TaskState.FAILED.value, TaskState.UNKNOWN.value):
        return notices.task_failed(failure_category(status))
    return None


PAUSED = "input_required"
"""The outcome the machine finishes with when the task asks a person (the turn goes on)."""


@dataclass(frozen=True)
class Paused:
    """The task asks a person (``input-required``): the reply waits for the question."""


@dataclass(frozen=True)
class Told:
    """The turn ends with ``notice`` (told at most once: ``shared.core.telling``)."""

    notice: str


@dataclass(frozen=True)
class Answered:
    """The task completed with an answer: the reply ends with the feedback buttons."""


@dataclass(frozen=True)
class Quiet:
    """The turn ends without a notice or feedback (its end was told when it was decided)."""


Ending = Paused | Told | Answered | Quiet


def ending(outcome: str, has_answer_text: bool, status: TaskStatus | None) -> Ending:
    """How the reply of a turn the machine finished with ``outcome`` ends."""
    if outcome == PAUSED:
        return Paused()
    notice = final_notice(outcome, has_answer_text, status)
    if notice:
        return Told(notice)
    if outcome == TaskState.COMPLETED.value and has_answer_text:
        return Answered()
    return Quiet()
