"""Creates in the emulators what the functions need, idempotently.

- Pub/Sub topic ``kourier-turns`` (settings.turns_topic) with the subscription
  ``kourier-turns-turn-send``. In the cloud it pushes to turn_send; locally it
  is a pull subscription that ``local.push_relay`` pushes from, because the
  emulator's own push carries at most two messages at a time. The relay posts
  the standard push envelope to ``TurnPush.endpoint``, which functions-framework
  (``--signature-type cloudevent``) turns into the
  ``google.cloud.pubsub.topic.v1.messagePublished`` CloudEvent, as the push
  subscription in infra/ does in the cloud; the URL ends with the topic's
  path, from which functions-framework takes the event's source
  (``//pubsub.googleapis.com/projects/P/topics/T``). Failed pushes are retried
  with the subscription's backoff; after TURN_DELIVERY_ATTEMPTS they go to
  the topic ``kourier-turns-dead-letter``, kept by a pull subscription of the
  same name.
- Cloud Tasks queues kourier-follow and kourier-timers
  (settings.*_queue) in settings.location, with QUEUE_RETRY.

Names come from shared.settings as a process with ``env`` would read them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta

import grpc
from google.api_core.exceptions import AlreadyExists
from google.cloud import tasks_v2
from google.protobuf import duration_pb2
from google.pubsub_v1 import PublisherClient, RetryPolicy, SubscriberClient
from google.pubsub_v1.services.publisher.transports import PublisherGrpcTransport
from google.pubsub_v1.services.subscriber.transports import SubscriberGrpcTransport

from shared.handoff import make_tasks_client
from shared.settings import Settings

# Local choices, shorter than the cloud's (10 s to 600 s) so that a demo recovers quickly.
TURN_RETRY = RetryPolicy(
    minimum_backoff=duration_pb2.Duration(seconds=1),
    maximum_backoff=duration_pb2.Duration(seconds=60),
)
TURN_DELIVERY_ATTEMPTS = 5  # the least Pub/Sub allows
TURN_ACK_DEADLINE_SECONDS = 600  # how long turn_send may take to answer a push, as in the cloud
QUEUE_RETRY = tasks_v2.RetryConfig(
    max_attempts=20,
    min_backoff=timedelta(seconds=1),
    max_backoff=timedelta(seconds=60),
    max_doublings=5,
)


@dataclass(frozen=True)
class TurnPush:
    """What ``local.push_relay`` pushes: the turns subscription, to turn_send's push endpoint."""

    subscription: str
    endpoint: str
    """turn_send's URL with the topic's path, from which functions-framework takes the source."""


def provision(env: Mapping[str, str], turn_send_url: str) -> TurnPush:
    """Creates the turns topic, its subscription for the push relay, and the task queues.

    Args:
        env: The emulator variables (``EmulatorEnv.variables``): PUBSUB_EMULATOR_HOST,
            CLOUD_TASKS_EMULATOR_HOST and GOOGLE_CLOUD_PROJECT.
        turn_send_url: Where the relay pushes turns (the turn_send function).

    Returns:
        The subscription and the endpoint to give the push relay.
    """
    settings = Settings.model_validate(dict(env))
    subscription = _provision_turns(env["PUBSUB_EMULATOR_HOST"], settings)
    _provision_queues(settings)
    topic = f"projects/{settings.project}/topics/{settings.turns_topic}"
    return TurnPush(subscription, f"{turn_send_url.rstrip('/')}/{topic}")


def _provision_turns(pubsub_host: str, settings: Settings) -> str:
    publisher = PublisherClient(
        transport=PublisherGrpcTransport(channel=grpc.insecure_channel(pubsub_host))
    )
    subscriber = SubscriberClient(
        transport=SubscriberGrpcTransport(channel=grpc.insecure_channel(pubsub_host))
    )
    topic = publisher.topic_path(settings.project, settings.turns_topic)
    dead_letter_topic = publisher.topic_path(
        settings.project, f"{settings.turns_topic}-dead-letter"
    )
    for name in (topic, dead_letter_topic):
        try:
            publisher.create_topic(name=name)
        except AlreadyExists:
            pass
    try:
        subscriber.create_subscription(
            name=subscriber.subscription_path(
                settings.project, f"{settings.turns_topic}-dead-letter"
            ),
            topic=dead_letter_topic,
        )
    except AlreadyExists:
        pass
    subscription = subscriber.subscription_path(
        settings.project, f"{settings.turns_topic}-turn-send"
    )
    try:
        subscriber.create_subscription(
            request={
                "name": subscription,
                "topic": topic,
                "ack_deadline_seconds": TURN_ACK_DEADLINE_SECONDS,
                "retry_policy": TURN_RETRY,
                "dead_letter_policy": {
                    "dead_letter_topic": dead_letter_topic,
                    "max_delivery_attempts": TURN_DELIVERY_ATTEMPTS,
                },
            }
        )
    except AlreadyExists:
        pass
    return subscription


def _provision_queues(settings: Settings) -> None:
    tasks = make_tasks_client(settings)
    location = tasks.common_location_path(settings.project, settings.location)
    for queue in (settings.follow_queue, settings.timers_queue):
        try:
            tasks.create_queue(
                parent=location,
                queue=tasks_v2.Queue(
                    name=tasks.queue_path(settings.project, settings.location, queue),
                    retry_config=QUEUE_RETRY,
                ),
            )
        except AlreadyExists:
            pass
