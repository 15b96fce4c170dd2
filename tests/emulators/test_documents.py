"""The Documents port on the Firestore emulator: the semantics every fake of it must keep."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest
from google.cloud import firestore

from local.emulators import EmulatorEnv
from shared.errors import DocumentExists, PreconditionFailed
from shared.firestore import FirestoreDocuments

COLLECTION = "documents-port-tests"


@pytest.fixture
def documents(emulators: EmulatorEnv) -> FirestoreDocuments:
    return FirestoreDocuments(firestore.Client(project=emulators.project))


def test_a_document_is_created_once(documents: FirestoreDocuments) -> None:
    key = uuid.uuid4().hex
    documents.create(COLLECTION, key, {"owner": "first"})

    with pytest.raises(DocumentExists):
        documents.create(COLLECTION, key, {"owner": "second"})

    snapshot = documents.get(COLLECTION, key)
    assert snapshot is not None and snapshot.data == {"owner": "first"}


def test_a_missing_document_reads_as_none_and_cannot_be_updated(
    documents: FirestoreDocuments,
) -> None:
    key = uuid.uuid4().hex

    assert documents.get(COLLECTION, key) is None
    with pytest.raises(PreconditionFailed):
        documents.update(COLLECTION, key, {"owner": "nobody"})


def test_an_update_under_a_stale_update_time_fails_and_changes_nothing(
    documents: FirestoreDocuments,
) -> None:
    key = uuid.uuid4().hex
    documents.set(COLLECTION, key, {"owner": "first", "generation": 1})
    read = documents.get(COLLECTION, key)
    assert read is not None
    documents.update(COLLECTION, key, {"generation": 2}, if_updated_at=read.update_time)

    with pytest.raises(PreconditionFailed):
        documents.update(COLLECTION, key, {"owner": "late"}, if_updated_at=read.update_time)

    snapshot = documents.get(COLLECTION, key)
    assert snapshot is not None
    assert snapshot.data == {"owner": "first", "generation": 2}
    assert snapshot.update_time > read.update_time


def test_an_update_returns_the_update_time_a_later_precondition_names(
    documents: FirestoreDocuments,
) -> None:
    key = uuid.uuid4().hex
    documents.set(COLLECTION, key, {"owner": "first", "generation": 1})
    read = documents.get(COLLECTION, key)
    assert read is not None
    written = documents.update(COLLECTION, key, {"generation": 2}, if_updated_at=read.update_time)

    documents.update(COLLECTION, key, {"generation": 3}, if_updated_at=written)
    with pytest.raises(PreconditionFailed):
        documents.update(COLLECTION, key, {"owner": "late"}, if_updated_at=written)

    snapshot = documents.get(COLLECTION, key)
    assert snapshot is not None
    assert snapshot.data == {"owner": "first", "generation": 3}
    assert read.update_time < written < snapshot.update_time


def test_queries_match_equality_ranges_and_lists(documents: FirestoreDocuments) -> None:
    tag = uuid.uuid4().hex
    at = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
    rows = {
        "a": {"tag": tag, "status": "waiting", "lease_until": at - timedelta(seconds=1)},
        "b": {"tag": tag, "status": "done", "lease_until": at + timedelta(seconds=1)},
        "c": {"tag": tag, "status": "received", "lease_until": None},
    }
    for name, row in rows.items():
        documents.set(COLLECTION, f"{tag}-{name}", row)

    def owners(field: str, op: str, value: object) -> list[str]:
        found = documents.query(COLLECTION, field, op, value)  # type: ignore[arg-type]
        return sorted(row["status"] for row in found if row["tag"] == tag)

    assert owners("tag", "==", tag) == ["done", "received", "waiting"]
    assert owners("lease_until", "<=", at) == ["waiting"]  # a range never matches None
    assert owners("status", "in", ["waiting", "received"]) == ["received", "waiting"]
