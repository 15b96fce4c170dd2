"""A reference assembler for a reply's text, written from the agent contract alone.

It imports nothing from ``shared``: it is the oracle's second opinion on
what a person must read, from the contract's "Replies" section.

- "An artifact update with append: true adds to that artifact's text; any
  other replaces it." An append to an artifact whose beginning was never
  seen cannot be placed, so its text waits for a snapshot.
- "An update with no text part leaves the artifact's text as it was, so to
  take text back, replace it with an empty text part."
- "An artifact whose text is empty is left out of the message."
- "A task snapshot ... whose text for an artifact is a prefix of the text
  already received is taken as older and skipped."
- The snapshot gives the order of the artifacts it holds; the others follow
  in the order they appeared. Texts are joined by a blank line.
- "A reply to a new turn that is one Message from the agent (role agent)
  with no taskId is the whole turn: its text parts, joined, are the answer."
  Any other Message is ignored: one that names a task, one from the user,
  one after the agent has named a task, and any reply to an answer.

Events are in the simulator's internal form (``local.sim.agent``).
"""

from __future__ import annotations

from typing import Any


def _text(parts: list[dict[str, Any]]) -> str | None:
    texts = [part["text"] for part in parts if "text" in part]
    return "".join(texts) if texts else None


class ReferenceReply:
    """The text a person must read, from the events one reply was given."""

    def __init__(self, answers_pause: bool = False) -> None:
        self.texts: dict[str, str] = {}
        self.message_reply: str | None = None
        self.task_named = False
        self.answers_pause = answers_pause

    def feed(self, event: dict[str, Any]) -> None:
        """Take one delivered event (a stream event or a snapshot)."""
        kind = event["kind"]
        if kind == "message":
            message = event["message"]
            if (
                message.get("role") == "agent"
                and not message.get("taskId")
                and not self.task_named
                and not self.answers_pause
                and self.message_reply is None
            ):
                self.message_reply = _text(message.get("parts", [])) or ""
            return
        self.task_named = True
        if kind == "task":
            self._snapshot(event)
        elif kind == "artifact":
            self._chunk(event["artifact_id"], event["parts"], event["append"])

    def _chunk(self, artifact_id: str, parts: list[dict[str, Any]], append: bool) -> None:
        text = _text(parts)
        if append:
            if text is not None and artifact_id in self.texts:
                self.texts[artifact_id] += text
        elif text is not None:
            self.texts[artifact_id] = text
        else:
            self.texts.setdefault(artifact_id, "")

    def _snapshot(self, task: dict[str, Any]) -> None:
        ordered: dict[str, str] = {}
        for artifact in task.get("artifacts", []):
            key = artifact["artifactId"]
            text = _text(artifact["parts"]) or ""
            received = self.texts.get(key)
            ordered[key] = received if received is not None and received.startswith(text) else text
        for key, text in self.texts.items():
            ordered.setdefault(key, text)
        self.texts = ordered

    @property
    def answer(self) -> str:
        """The whole answer as it stands."""
        if self.message_reply is not None:
            return self.message_reply
        return "\n\n".join(text for text in self.texts.values() if text)
