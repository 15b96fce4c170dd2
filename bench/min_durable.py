"""The ingress benchmark's baseline: the least durable work an acknowledgement can do.

A bare functions-framework function (``--target min_durable``) that creates
one Firestore document and publishes one Pub/Sub message, then answers 200:
what any ingress must do before it may tell Slack it has the message. It
runs beside chat_ingress on the same emulators, with the same threads, so
``bench.ingress_ack`` compares the two in one run.
"""

from __future__ import annotations

import os
import uuid
from functools import cache

import functions_framework
from flask import Request, Response
from google.cloud import firestore
from google.cloud.pubsub_v1 import PublisherClient
from google.cloud.pubsub_v1.types import BatchSettings

COLLECTION = "bench_min_durable"


@cache
def _clients() -> tuple[firestore.Client, PublisherClient, str]:
    project = os.environ["GOOGLE_CLOUD_PROJECT"]
    publisher = PublisherClient(batch_settings=BatchSettings(max_messages=1))
    return (
        firestore.Client(project=project),
        publisher,
        publisher.topic_path(project, os.environ["BENCH_TOPIC"]),
    )


@functions_framework.http
def min_durable(request: Request) -> Response:
    """One create, one publish, 200."""
    db, publisher, topic = _clients()
    key = uuid.uuid4().hex
    db.collection(COLLECTION).document(key).create({"body": request.get_data()})
    publisher.publish(topic, key.encode()).result(timeout=30)
    return Response("ok", 200)
