"""local.provision: what the functions need exists, and running it again is harmless."""

from __future__ import annotations

from google.cloud import pubsub_v1

from local.emulators import EmulatorEnv
from local.provision import QUEUE_RETRY, TURN_ACK_DEADLINE_SECONDS, provision
from shared.handoff import make_tasks_client
from shared.settings import Settings


def test_provision_twice_creates_queues_and_the_turn_subscription_for_the_relay(
    emulators: EmulatorEnv,
) -> None:
    settings = Settings()

    provision(emulators.variables, "http://127.0.0.1:20397/first")
    push = provision(emulators.variables, "http://127.0.0.1:20397/second/")

    tasks = make_tasks_client(settings)
    for queue in (settings.follow_queue, settings.timers_queue):
        created = tasks.get_queue(name=tasks.queue_path(settings.project, settings.location, queue))
        assert created.retry_config.max_attempts == QUEUE_RETRY.max_attempts
    subscriber = pubsub_v1.SubscriberClient()
    subscription = subscriber.get_subscription(subscription=push.subscription)
    assert subscription.topic.endswith(f"/topics/{settings.turns_topic}")
    assert not subscription.push_config.push_endpoint  # local.push_relay pushes
    assert subscription.ack_deadline_seconds == TURN_ACK_DEADLINE_SECONDS
    assert subscription.dead_letter_policy.dead_letter_topic.endswith(
        f"/topics/{settings.turns_topic}-dead-letter"
    )
    assert push.endpoint == f"http://127.0.0.1:20397/second/{subscription.topic}"
