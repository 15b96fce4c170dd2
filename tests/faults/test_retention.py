"""Retention: a settled question is cleared, so its name can be used again (contract, Task states)."""

from __future__ import annotations

from datetime import timedelta

from shared.core import questions as lifecycle
from shared.core.answers import progress_for
from shared.core.questions import OpenQuestion
from shared.firestore import FirestoreDocuments
from shared.questions import QUESTIONS, QUESTIONS_KEPT, QuestionStore
from shared.system import SystemClock
from tests.hitl.builders import read_text

from .conftest import Faults


def _question(key: str) -> OpenQuestion:
    return OpenQuestion(
        key=key,
        session_id="retention",
        turn_id="retention-turn",
        binding="faults",
        channel="C0RETENTION",
        thread_ts="1.000001",
        fingerprint="f",
        progress=progress_for(read_text("Which region?")).to_dict(),
        generation=0,
    )


def test_a_settled_question_is_cleared_once_its_retention_has_run_out(faults: Faults) -> None:
    questions = QuestionStore(FirestoreDocuments(faults.db), SystemClock())
    key = f"retention-{SystemClock().now().timestamp()}"
    stored = faults.db.collection(QUESTIONS).document(key)
    try:
        FirestoreDocuments(faults.db).commit([questions.write(_question(key))])
        before = SystemClock().now()
        questions.change(key, lifecycle.close)
        expire_at = stored.get().to_dict()["expire_at"]
        assert before + QUESTIONS_KEPT <= expire_at <= SystemClock().now() + QUESTIONS_KEPT
        assert questions.get(key) is not None, "kept while its retention runs"

        # Once the retention has run out the question reads as cleared, as
        # Firestore's TTL will delete it: its name is free for a new question.
        stored.update({"expire_at": SystemClock().now() - timedelta(seconds=1)})
        assert questions.get(key) is None
    finally:
        stored.delete()
