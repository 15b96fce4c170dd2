"""Pub/Sub emulator: push delivery, its retries, and the CloudEvent turn_send receives."""

from __future__ import annotations

import base64
import json
import os
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from google.cloud import pubsub_v1

from local.emulators import EmulatorEnv
from local.processes import running
from local.provision import TURN_RETRY, provision
from shared.settings import Settings
from tests.emulators.http_recorder import Endpoint, HttpRecorder

FUNCTION_PORT = 20395
FUNCTION_SOURCE = Path(__file__).with_name("cloudevent_recorder.py")


@pytest.fixture
def publisher(emulators: EmulatorEnv) -> pubsub_v1.PublisherClient:
    return pubsub_v1.PublisherClient()


def test_failed_push_is_delivered_again(
    emulators: EmulatorEnv, publisher: pubsub_v1.PublisherClient, http_recorder: HttpRecorder
) -> None:
    endpoint = http_recorder.endpoint(statuses=[500])
    topic = publisher.create_topic(
        name=publisher.topic_path(emulators.project, f"t-{uuid.uuid4().hex}")
    ).name
    subscriber = pubsub_v1.SubscriberClient()
    subscriber.create_subscription(
        request={
            "name": subscriber.subscription_path(emulators.project, f"s-{uuid.uuid4().hex}"),
            "topic": topic,
            "push_config": {"push_endpoint": endpoint.url},
            "retry_policy": TURN_RETRY,
        }
    )

    publisher.publish(topic, b'{"turn": 1}', thread="T1").result()

    first, second = (json.loads(request.body) for request in endpoint.wait_for_requests(2))
    assert second["message"]["messageId"] == first["message"]["messageId"]
    assert base64.b64decode(second["message"]["data"]) == b'{"turn": 1}'
    assert second["message"]["attributes"] == {"thread": "T1"}


@pytest.fixture
def turn_send_stand_in(
    emulators: EmulatorEnv, http_recorder: HttpRecorder, tmp_path: Path
) -> Iterator[Endpoint]:
    """A functions-framework process (cloudevent signature) that forwards what it gets to an endpoint."""
    forwarded = http_recorder.endpoint()
    log_path = tmp_path / "functions-framework.log"
    command = [
        str(Path(sys.executable).with_name("functions-framework")),
        "--source",
        str(FUNCTION_SOURCE),
        "--target",
        "forward_event",
        "--signature-type",
        "cloudevent",
        "--host",
        "127.0.0.1",
        "--port",
        str(FUNCTION_PORT),
    ]
    env = {**os.environ, "FORWARD_URL": forwarded.url}
    with running("functions-framework", command, log_path, cwd=tmp_path, env=env) as function:
        function.wait_listening([FUNCTION_PORT])
        yield forwarded


def test_published_turn_reaches_the_function_as_a_message_published_cloudevent(
    emulators: EmulatorEnv, publisher: pubsub_v1.PublisherClient, turn_send_stand_in: Endpoint
) -> None:
    provision(emulators.variables, f"http://127.0.0.1:{FUNCTION_PORT}/")
    topic = publisher.topic_path(emulators.project, Settings().turns_topic)
    turn = json.dumps({"thread": "C1/1700000000.000100", "text": "héllo ✓"}).encode()

    message_id = publisher.publish(topic, turn, kind="turn").result()

    [request] = turn_send_stand_in.wait_for_requests(1)
    event = json.loads(request.body)
    assert event["attributes"]["type"] == "google.cloud.pubsub.topic.v1.messagePublished"
    assert event["attributes"]["source"] == f"//pubsub.googleapis.com/{topic}"
    message = event["data"]["message"]
    assert message["messageId"] == message_id
    assert base64.b64decode(message["data"]) == turn
    assert message["attributes"] == {"kind": "turn"}
