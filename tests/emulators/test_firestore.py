"""Firestore emulator: the guarantees the design builds its state on."""

from __future__ import annotations

import threading
import uuid

import pytest
from google.api_core.exceptions import AlreadyExists
from google.cloud import firestore

from local.emulators import EmulatorEnv

CONCURRENT_WRITERS = 8
WRITER_TIMEOUT_SECONDS = 300.0


@pytest.fixture
def db(emulators: EmulatorEnv) -> firestore.Client:
    return firestore.Client(project=emulators.project)


def test_concurrent_transactions_never_lose_an_update(db: firestore.Client) -> None:
    counter = db.collection("emulator-tests").document(uuid.uuid4().hex)
    counter.set({"count": 0})
    start_together = threading.Barrier(CONCURRENT_WRITERS)
    committed: list[int] = []
    failures: list[Exception] = []

    @firestore.transactional
    def increment(transaction: firestore.Transaction) -> None:
        snapshot = counter.get(transaction=transaction)
        transaction.update(counter, {"count": snapshot.get("count") + 1})

    def writer() -> None:
        start_together.wait()
        try:
            increment(db.transaction())
        except Exception as failure:  # noqa: BLE001 -- every way a transaction can fail must be counted
            failures.append(failure)
        else:
            committed.append(1)

    writers = [threading.Thread(target=writer, daemon=True) for _ in range(CONCURRENT_WRITERS)]
    for thread in writers:
        thread.start()
    for thread in writers:
        thread.join(WRITER_TIMEOUT_SECONDS)

    assert not any(thread.is_alive() for thread in writers), "a transaction never finished"
    assert len(committed) + len(failures) == CONCURRENT_WRITERS
    assert committed, f"no transaction committed: {failures}"
    assert counter.get().get("count") == len(committed)


def test_create_fails_when_the_document_exists(db: firestore.Client) -> None:
    document = db.collection("emulator-tests").document(uuid.uuid4().hex)
    document.create({"owner": "first"})

    with pytest.raises(AlreadyExists):
        document.create({"owner": "second"})

    assert document.get().to_dict() == {"owner": "first"}
