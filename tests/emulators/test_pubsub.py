"""Pub/Sub locally: the push relay's delivery, retries and dead letters, and the CloudEvent
turn_send receives."""

from __future__ import annotations

import base64
import json
import os
import sys
import threading
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from google.cloud import pubsub_v1

from local.emulators import EmulatorEnv
from local.processes import running
from local.provision import (
    TURN_ACK_DEADLINE_SECONDS,
    TURN_DELIVERY_ATTEMPTS,
    TURN_RETRY,
    provision,
)
from local.push_relay import PushRelay
from shared.settings import Settings
from tests.emulators.http_recorder import Endpoint, HttpRecorder

FUNCTION_PORT = 20395
FUNCTION_SOURCE = Path(__file__).with_name("cloudevent_recorder.py")

Relay = Callable[[str, str, int], None]
"""Starts a push relay: subscription, endpoint, concurrency (stopped when the test ends)."""


@pytest.fixture
def publisher(emulators: EmulatorEnv) -> pubsub_v1.PublisherClient:
    return pubsub_v1.PublisherClient()


@pytest.fixture
def relay(emulators: EmulatorEnv) -> Iterator[Relay]:
    stops: list[tuple[threading.Event, threading.Thread]] = []

    def start(subscription: str, endpoint: str, concurrency: int) -> None:
        stop = threading.Event()
        thread = threading.Thread(
            target=PushRelay(subscription, endpoint, concurrency).run, args=(stop,), daemon=True
        )
        thread.start()
        stops.append((stop, thread))

    yield start
    for stop, thread in stops:
        stop.set()
        thread.join(60)


def turn_like_subscription(
    publisher: pubsub_v1.PublisherClient, emulators: EmulatorEnv
) -> tuple[str, str, str]:
    """A topic with a subscription set as provision sets the turns': its topic, subscription and
    dead-letter subscription."""
    name = uuid.uuid4().hex
    topic = publisher.create_topic(name=publisher.topic_path(emulators.project, f"t-{name}")).name
    dead = publisher.create_topic(name=publisher.topic_path(emulators.project, f"d-{name}")).name
    subscriber = pubsub_v1.SubscriberClient()
    dead_subscription = subscriber.create_subscription(
        name=subscriber.subscription_path(emulators.project, f"d-{name}"), topic=dead
    ).name
    subscription = subscriber.create_subscription(
        request={
            "name": subscriber.subscription_path(emulators.project, f"s-{name}"),
            "topic": topic,
            "ack_deadline_seconds": TURN_ACK_DEADLINE_SECONDS,
            "retry_policy": TURN_RETRY,
            "dead_letter_policy": {
                "dead_letter_topic": dead,
                "max_delivery_attempts": TURN_DELIVERY_ATTEMPTS,
            },
        }
    ).name
    return topic, subscription, dead_subscription


def test_failed_push_is_delivered_again_after_the_backoff(
    emulators: EmulatorEnv,
    publisher: pubsub_v1.PublisherClient,
    http_recorder: HttpRecorder,
    relay: Relay,
) -> None:
    endpoint = http_recorder.endpoint(statuses=[500])
    topic, subscription, _ = turn_like_subscription(publisher, emulators)
    relay(subscription, endpoint.url, 4)

    publisher.publish(topic, b'{"turn": 1}', thread="T1").result()

    first, second = endpoint.wait_for_requests(2)
    pushed = [json.loads(request.body) for request in (first, second)]
    assert pushed[1]["message"]["messageId"] == pushed[0]["message"]["messageId"]
    assert base64.b64decode(pushed[1]["message"]["data"]) == b'{"turn": 1}'
    assert pushed[1]["message"]["attributes"] == {"thread": "T1"}
    assert pushed[1]["subscription"] == subscription
    assert [p["deliveryAttempt"] for p in pushed] == [1, 2]
    assert (
        second.received_at - first.received_at >= TURN_RETRY.minimum_backoff.total_seconds() - 0.1
    )


def test_a_push_that_keeps_failing_goes_to_the_dead_letter_topic(
    emulators: EmulatorEnv,
    publisher: pubsub_v1.PublisherClient,
    http_recorder: HttpRecorder,
    relay: Relay,
) -> None:
    endpoint = http_recorder.endpoint(statuses=[503] * TURN_DELIVERY_ATTEMPTS)
    topic, subscription, dead_subscription = turn_like_subscription(publisher, emulators)
    relay(subscription, endpoint.url, 4)

    publisher.publish(topic, b'{"turn": 2}').result()

    pushed = [json.loads(r.body) for r in endpoint.wait_for_requests(TURN_DELIVERY_ATTEMPTS, 120)]
    assert [p["deliveryAttempt"] for p in pushed] == list(range(1, TURN_DELIVERY_ATTEMPTS + 1))
    dead = pubsub_v1.SubscriberClient().pull(
        subscription=dead_subscription, max_messages=5, timeout=60
    )
    assert [m.message.data for m in dead.received_messages] == [b'{"turn": 2}']


def test_the_relay_pushes_as_many_at_once_as_it_is_given(
    emulators: EmulatorEnv,
    publisher: pubsub_v1.PublisherClient,
    http_recorder: HttpRecorder,
    relay: Relay,
) -> None:
    """The emulator's own push carries two at a time; sixteen turns must be in flight together."""
    endpoint = http_recorder.endpoint(hold_until=16)
    topic, subscription, _ = turn_like_subscription(publisher, emulators)
    relay(subscription, endpoint.url, 16)

    for turn in range(16):
        publisher.publish(topic, json.dumps({"turn": turn}).encode())

    received = endpoint.wait_for_requests(16)
    assert endpoint.peak_in_flight == 16
    assert sorted(
        json.loads(base64.b64decode(json.loads(r.body)["message"]["data"]))["turn"]
        for r in received
    ) == list(range(16))


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
    emulators: EmulatorEnv,
    publisher: pubsub_v1.PublisherClient,
    turn_send_stand_in: Endpoint,
    relay: Relay,
) -> None:
    push = provision(emulators.variables, f"http://127.0.0.1:{FUNCTION_PORT}/")
    relay(push.subscription, push.endpoint, 4)
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
