"""``kourier feedback BACKEND``: what people thought of an agent backend's answers.

It reads the feedback records (``shared.feedback``) from Firestore: the
project in ``GOOGLE_CLOUD_PROJECT`` (with Application Default Credentials),
or, when that is not set, the emulator of the local stack ``./kourier up``
runs. It prints the number of 👍 and 👎 (each person's latest click on each
answer), then the answers people disliked, newest first, with where to find
them in Slack.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from unittest import mock

from google.cloud import firestore

from local.emulators import HOST, PROJECT_ID
from local.stack import StackPorts
from shared.core.feedback import Tally
from shared.feedback import tally_of
from shared.firestore import FirestoreDocuments


def main(backend: str, limit: int) -> int:
    """Print ``backend``'s tally and up to ``limit`` disliked answers."""
    environ = dict(os.environ)
    if "GOOGLE_CLOUD_PROJECT" not in environ:
        firestore_port = StackPorts.from_env().emulators.firestore
        environ |= {
            "FIRESTORE_EMULATOR_HOST": f"{HOST}:{firestore_port}",
            "GOOGLE_CLOUD_PROJECT": PROJECT_ID,
        }
    with mock.patch.dict(os.environ, environ):  # Google's client reads them when built
        client = firestore.Client(project=environ["GOOGLE_CLOUD_PROJECT"])
    print(report(tally_of(FirestoreDocuments(client), backend), limit))
    return 0


def report(tally: Tally, limit: int) -> str:
    """The tally as an agent's author reads it."""
    lines = [f"Feedback on {tally.backend}'s answers: {tally.up} 👍, {tally.down} 👎"]
    if tally.disliked:
        lines.append("Answers people disliked, newest first:")
    for record in tally.disliked[:limit]:
        at = datetime.fromtimestamp(record.clicked_at, UTC).strftime("%Y-%m-%d %H:%M UTC")
        lines.append(
            f"  {at}  by {record.user}  in {record.channel} message {record.message_ts}"
            f"  (turn {record.turn_id})"
        )
    if len(tally.disliked) > limit:
        lines.append(f"  … and {len(tally.disliked) - limit} more (--limit)")
    return "\n".join(lines)
