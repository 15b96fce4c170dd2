"""A Cloud Function for the tests: forwards each CloudEvent it receives, as JSON, to FORWARD_URL.

Run with ``functions-framework --source tests/emulators/cloudevent_recorder.py
--target forward_event --signature-type cloudevent``.
"""

from __future__ import annotations

import json
import os
import urllib.request

import functions_framework
from cloudevents.http import CloudEvent


@functions_framework.cloud_event
def forward_event(event: CloudEvent) -> None:
    """POSTs the event's attributes and data to FORWARD_URL (an error makes Pub/Sub push again)."""
    recorded = {"attributes": dict(event.get_attributes()), "data": event.get_data()}
    request = urllib.request.Request(
        os.environ["FORWARD_URL"],
        data=json.dumps(recorded).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=30):
        pass
