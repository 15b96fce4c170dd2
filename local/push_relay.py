"""Pub/Sub push, locally, at the concurrency Cloud Run gives.

Theory of operation: the official Pub/Sub emulator pushes at most two
messages of a subscription at a time (40 pushes to an endpoint that takes
2 s took 40 s), where Pub/Sub pushes as many as the endpoint's instances
take. So locally the turns subscription is a pull subscription, and this
relay does what the push would: it streams the subscription's messages,
POSTs each to the endpoint as Pub/Sub's push envelope, at most
``concurrency`` at once (the rest wait their turn, their leases kept, as
requests wait for a free instance), and acknowledges a message when the
endpoint answers 102, 200, 201, 202 or 204, Pub/Sub's success codes. Any
other answer, or none within the ack deadline, is a failed delivery: the
message's ack deadline is set to the subscription's backoff (its retry
policy's minimum, doubled per attempt up to its maximum) and the message
comes back then, one attempt more. The emulator counts the attempts and
moves a message to the dead-letter topic after the subscription's
``max_delivery_attempts``, as Pub/Sub does. Only the local stack runs this;
in the cloud the subscription pushes (infra/pubsub.tf).
"""

from __future__ import annotations

import argparse
import base64
import logging
import signal
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime

import httpx
from google.cloud import pubsub_v1
from google.cloud.pubsub_v1.subscriber.message import Message
from google.cloud.pubsub_v1.subscriber.scheduler import ThreadScheduler
from google.cloud.pubsub_v1.types import FlowControl
from google.pubsub_v1 import RetryPolicy

log = logging.getLogger("push_relay")

SUCCESS_CODES = frozenset({102, 200, 201, 202, 204})
"""The HTTP answers that acknowledge a push (Pub/Sub's push subscription documentation)."""


@dataclass(frozen=True)
class Backoff:
    """How long a message waits after a failed delivery: Pub/Sub's exponential retry policy."""

    minimum: float
    maximum: float

    @classmethod
    def of(cls, policy: RetryPolicy) -> Backoff:
        """The backoff of a subscription's retry policy (Pub/Sub's defaults where unset)."""
        raw = RetryPolicy.pb(policy)
        return cls(
            raw.minimum_backoff.ToTimedelta().total_seconds()
            if raw.HasField("minimum_backoff")
            else 10.0,
            raw.maximum_backoff.ToTimedelta().total_seconds()
            if raw.HasField("maximum_backoff")
            else 600.0,
        )

    def after(self, attempt: int) -> int:
        """Whole seconds to wait after the ``attempt``-th delivery failed (1 for the first)."""
        return max(1, int(min(self.maximum, self.minimum * 2.0 ** max(0, attempt - 1))))


def push_envelope(subscription: str, message: Message) -> dict[str, object]:
    """The JSON body Pub/Sub pushes for ``message``, with ``deliveryAttempt`` as a push
    subscription with a dead-letter policy sends it."""
    published = message.publish_time.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    body: dict[str, object] = {
        "data": base64.b64encode(message.data).decode(),
        "attributes": dict(message.attributes),
        "messageId": message.message_id,
        "message_id": message.message_id,
        "publishTime": published,
        "publish_time": published,
    }
    if message.ordering_key:
        body["orderingKey"] = message.ordering_key
    envelope: dict[str, object] = {"message": body, "subscription": subscription}
    if message.delivery_attempt is not None:
        envelope["deliveryAttempt"] = message.delivery_attempt
    return envelope


class PushRelay:
    """Pushes one pull subscription's messages to one endpoint, ``concurrency`` at a time."""

    def __init__(self, subscription: str, endpoint: str, concurrency: int) -> None:
        self._subscription = subscription
        self._endpoint = endpoint
        self._concurrency = concurrency
        self._subscriber = pubsub_v1.SubscriberClient()
        settings = self._subscriber.get_subscription(subscription=subscription)
        self._backoff = Backoff.of(settings.retry_policy)
        self._deadline = settings.ack_deadline_seconds or 10
        self._http = httpx.Client(
            timeout=self._deadline, limits=httpx.Limits(max_connections=concurrency)
        )

    def run(self, stop: threading.Event) -> None:
        """Push until ``stop`` is set."""
        future = self._subscriber.subscribe(
            self._subscription,
            self._deliver,
            flow_control=FlowControl(
                max_messages=self._concurrency, max_lease_duration=self._deadline
            ),
            scheduler=ThreadScheduler(
                ThreadPoolExecutor(self._concurrency, thread_name_prefix="push")
            ),
        )
        log.info(
            "pushing %s to %s, %d at a time", self._subscription, self._endpoint, self._concurrency
        )
        stop.wait()
        future.cancel()
        future.result(timeout=30)
        self._http.close()

    def _deliver(self, message: Message) -> None:
        attempt = message.delivery_attempt or 1
        started = datetime.now(UTC)
        try:
            status: int | str = self._http.post(
                self._endpoint, json=push_envelope(self._subscription, message)
            ).status_code
        except httpx.HTTPError as error:
            status = type(error).__name__
        took = (datetime.now(UTC) - started).total_seconds()
        if status in SUCCESS_CODES:
            message.ack()
            log.info(
                "pushed %s (attempt %d): %s in %.3f s", message.message_id, attempt, status, took
            )
            return
        wait = self._backoff.after(attempt)
        message.modify_ack_deadline(wait)
        message.drop()
        log.warning(
            "push of %s failed (attempt %d): %s after %.3f s; again in %d s",
            message.message_id,
            attempt,
            status,
            took,
            wait,
        )


def main() -> None:
    """``python -m local.push_relay --subscription S --endpoint URL --concurrency N``;
    runs until SIGTERM or SIGINT."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--subscription", required=True, help="projects/P/subscriptions/S")
    parser.add_argument("--endpoint", required=True, help="the push endpoint's URL")
    parser.add_argument("--concurrency", type=int, required=True)
    options = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    PushRelay(options.subscription, options.endpoint, options.concurrency).run(stop)


if __name__ == "__main__":
    main()
