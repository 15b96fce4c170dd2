"""The real pauses of google-adk and kagent-adk 0.10, recorded in tests/data/a2a_streams/.

Neither speaks kagent's human-in-the-loop extension: each pauses with an
``adk_request_confirmation`` tool call part, which Agent Kourier does not
read ("Agent Kourier reads no framework's own approval format"), so on both
dialects the pause is unusable and the task is cancelled.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from shared.a2a.wire import event_from_json, loads
from shared.core.model import DataPart, StatusUpdate, Task, TaskState
from shared.core.pauses import Unusable, read_pause

STREAMS = Path(__file__).parents[1] / "data" / "a2a_streams"
PAUSING_STREAMS = [
    "adk-confirm-1.0-send.jsonl",
    "adk-confirm-0.3-send.jsonl",
    "kagent-confirm-0.3-send.jsonl",
]


def last_pause(name: str) -> StatusUpdate | Task:
    """The stream's last event in input-required."""
    events = [
        event_from_json(loads(line)["result"])
        for line in (STREAMS / name).read_text().splitlines()
        if line
    ]
    pauses = [
        event
        for event in events
        if isinstance(event, StatusUpdate | Task) and event.status.state is TaskState.INPUT_REQUIRED
    ]
    return pauses[-1]


@pytest.mark.parametrize("name", PAUSING_STREAMS)
def test_the_recorded_pause_asks_for_a_confirmation_in_the_frameworks_own_format(name: str) -> None:
    message = last_pause(name).status.message
    assert message is not None and message.extensions == ()
    [part] = message.parts
    assert isinstance(part, DataPart) and part.data["name"] == "adk_request_confirmation"


@pytest.mark.parametrize("dialect", ["a2a", "kagent-v1"])
@pytest.mark.parametrize("name", PAUSING_STREAMS)
def test_a_pause_without_the_extension_is_unusable(name: str, dialect: str) -> None:
    event = last_pause(name)
    task_id = event.id if isinstance(event, Task) else event.task_id
    assert task_id
    assert isinstance(
        read_pause(dialect, task_id, event.context_id, event.status, session="s"), Unusable
    )  # type: ignore[arg-type]
