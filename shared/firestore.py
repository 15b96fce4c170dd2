"""Firestore as the ``Documents`` port: one client call per method, errors translated.

Transient failures (the commit aborted under contention, the service
unavailable or out of quota, a deadline, the client's own retries spent)
become ``StoreUnavailable``, a ``RetryableError``: the function fails and
the platform delivers its event again. The document outcomes the shell
decides on become ``DocumentExists`` and ``PreconditionFailed``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Any, cast

from google.api_core import exceptions as google
from google.cloud import firestore

from shared.errors import DocumentExists, PreconditionFailed, StoreUnavailable
from shared.ports import Create, Put, QueryOp, Snapshot, Write

TRANSIENT = (
    google.Aborted,
    google.ServiceUnavailable,
    google.DeadlineExceeded,
    google.InternalServerError,
    google.ResourceExhausted,
    google.RetryError,
)
"""What Firestore raises for a failure that a later attempt may not meet."""


class FirestoreDocuments:
    """The ``Documents`` port on a Firestore client."""

    def __init__(self, client: firestore.Client) -> None:
        self._db = client

    def get(self, collection: str, key: str) -> Snapshot | None:
        """The document, or None."""
        with _translated():
            snapshot = self._db.collection(collection).document(key).get()
        if not snapshot.exists:
            return None
        return Snapshot(data=snapshot.to_dict() or {}, update_time=snapshot.update_time)

    def create(self, collection: str, key: str, data: Mapping[str, Any]) -> None:
        """Write a new document; DocumentExists if there is one."""
        with _translated():
            try:
                self._db.collection(collection).document(key).create(dict(data))
            except google.AlreadyExists:
                raise DocumentExists(f"{collection}/{key}") from None

    def set(self, collection: str, key: str, data: Mapping[str, Any]) -> None:
        """Write the whole document."""
        with _translated():
            self._db.collection(collection).document(key).set(dict(data))

    def update(
        self,
        collection: str,
        key: str,
        data: Mapping[str, Any],
        *,
        if_updated_at: datetime | None = None,
    ) -> datetime:
        """Replace top-level fields; PreconditionFailed if missing or changed. Its update time."""
        option = (
            self._db.write_option(last_update_time=if_updated_at)
            if if_updated_at is not None
            else None
        )
        with _translated():
            try:
                written = (
                    self._db.collection(collection).document(key).update(dict(data), option=option)
                )
            except (google.FailedPrecondition, google.NotFound):
                raise PreconditionFailed(f"{collection}/{key}") from None
        # proto-plus gives the Timestamp field as a DatetimeWithNanoseconds, as a snapshot's.
        return cast(datetime, written.update_time)

    def commit(self, writes: Sequence[Write]) -> list[datetime]:
        """One batch: every write or none; each one's update time."""
        batch = self._db.batch()
        for write in writes:
            ref = self._db.collection(write.collection).document(write.key)
            if isinstance(write, Create):
                batch.create(ref, dict(write.data))
            elif isinstance(write, Put):
                batch.set(ref, dict(write.data))
            else:
                option = (
                    self._db.write_option(last_update_time=write.if_updated_at)
                    if write.if_updated_at is not None
                    else None
                )
                batch.update(ref, dict(write.data), option=option)
        with _translated():
            try:
                results = batch.commit()
            except google.AlreadyExists:
                raise DocumentExists(", ".join(w.key for w in writes)) from None
            except (google.FailedPrecondition, google.NotFound):
                raise PreconditionFailed(", ".join(w.key for w in writes)) from None
        return [cast(datetime, result.update_time) for result in results]

    def query(
        self, collection: str, field: str, op: QueryOp, value: Any, *, limit: int | None = None
    ) -> list[dict[str, Any]]:
        """The matching documents' data."""
        query = self._db.collection(collection).where(
            filter=firestore.FieldFilter(field, op, value)
        )
        if limit is not None:
            query = query.limit(limit)
        with _translated():
            return [snapshot.to_dict() or {} for snapshot in query.stream()]


@contextmanager
def _translated() -> Iterator[None]:
    try:
        yield
    except TRANSIENT as error:
        raise StoreUnavailable(f"Firestore: {type(error).__name__}: {error}") from error
