"""The answer text, assembled from a task's artifacts.

Theory of operation. Each artifact's text is its text parts joined. A chunk
with ``append: true`` adds to the artifact's text; any other chunk replaces
it (``lastChunk`` is not read). A chunk with no text part leaves the text as
it was, so an empty text part is how text is taken back. An append to an
artifact whose beginning was never seen is withheld: its text stays unknown
until a task snapshot brings the canonical text, which holds that append
too. Live chunks are provisional and a snapshot is canonical, except that a
snapshot whose text for an artifact is a prefix of the text already received
is older, and skipped; a take-back missed while the stream was down is
therefore not applied. The snapshot's artifact order is the answer's order,
and artifacts it does not hold follow in the order they appeared. When a
reply answers a paused task, the text that task showed before is not shown
again: an artifact's text that still starts with it shows only what follows.
The answer joins the artifacts' non-empty texts with a blank line.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from shared.core.digest import digest
from shared.core.model import Artifact, ArtifactUpdate, Task, TextPart

ARTIFACT_SEPARATOR = "\n\n"


class ArtifactText:
    """The text of one task's artifacts, as received so far."""

    def __init__(self) -> None:
        self._texts: dict[str, str] = {}
        """Artifact ID to text, for each artifact whose beginning is known, in answer order."""
        self._shown_before: dict[str, tuple[int, str]] = {}
        """Artifact ID to the length and digest of its text shown before this reply."""

    @property
    def text(self) -> str:
        """The answer: the artifacts' non-empty texts, in order."""
        shown = (self._shown(artifact_id, text) for artifact_id, text in self._texts.items())
        return ARTIFACT_SEPARATOR.join(text for text in shown if text)

    def apply_chunk(self, update: ArtifactUpdate) -> None:
        """Apply an artifact chunk from the stream."""
        artifact_id = update.artifact.artifact_id
        chunk_text = _text_of(update.artifact)
        if update.append:
            if chunk_text is not None and artifact_id in self._texts:
                self._texts[artifact_id] += chunk_text
        elif chunk_text is not None:
            self._texts[artifact_id] = chunk_text
        else:
            self._texts.setdefault(artifact_id, "")

    def apply_snapshot(self, task: Task) -> None:
        """Apply a task snapshot: GetTask, SubscribeToTask or a replayed send."""
        snapshot: dict[str, str] = {}
        for artifact in task.artifacts:
            snapshot_text = _text_of(artifact) or ""
            received = self._texts.get(artifact.artifact_id)
            if received is not None and received.startswith(snapshot_text):
                snapshot[artifact.artifact_id] = received  # an older snapshot: skipped
            else:
                snapshot[artifact.artifact_id] = snapshot_text
        self._texts = snapshot | {
            key: text for key, text in self._texts.items() if key not in snapshot
        }

    def take_as_shown(self, task: Task) -> None:
        """Take ``task``'s artifacts as the text shown before this reply (a paused task)."""
        self.apply_snapshot(task)
        for artifact in task.artifacts:
            text = self._texts[artifact.artifact_id]
            self._shown_before[artifact.artifact_id] = (len(text), digest(text))

    def _shown(self, artifact_id: str, text: str) -> str:
        before = self._shown_before.get(artifact_id)
        if before is not None and digest(text[: before[0]]) == before[1]:
            return text[before[0] :]
        return text

    def to_state(self) -> dict[str, Any]:
        """A JSON-able form, read back by ``from_state``."""
        return {
            "texts": [[artifact_id, text] for artifact_id, text in self._texts.items()],
            "shown_before": [
                [key, length, hashed] for key, (length, hashed) in self._shown_before.items()
            ],
        }

    @classmethod
    def from_state(cls, state: Mapping[str, Any]) -> ArtifactText:
        """The text ``to_state`` wrote."""
        assembled = cls()
        assembled._texts = {artifact_id: text for artifact_id, text in state["texts"]}
        assembled._shown_before = {
            key: (length, hashed) for key, length, hashed in state["shown_before"]
        }
        return assembled


def _text_of(artifact: Artifact) -> str | None:
    """The artifact's text parts joined, or None when it has none."""
    texts = [part.text for part in artifact.parts if isinstance(part, TextPart)]
    return "".join(texts) if texts else None
