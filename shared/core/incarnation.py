"""Which agent a session's conversation belongs to, and whether a send may go on in it.

Theory of operation (streaming principles, "Session identity across agent
recreation"). A thread's conversation lives in one agent: the one that made
its contextId. Before a session's first send it is bound to the backend's
*incarnation*: the Binding, the backend's dialect and endpoint, and the
agent's own identity as its card states it (``AgentCard.identity``). Every
send (a new turn, an answer, an approval) checks the binding first:

- ``SAME``: bound to this incarnation; the send goes on.
- ``NEW``: a session with no context (yet, or any more): a turn binds it,
  as there is no conversation to lose; the binding is written with the
  context the agent names (one write; the turn's checkpoint keeps it until
  then, for a function taking over).
- ``CHANGED``: bound to another incarnation (another endpoint, dialect or
  Binding, or a card that names another agent); the old context is not the
  new agent's to continue.
- ``LEGACY``: a session written before sessions were bound, with a context
  whose agent cannot be told.

On ``CHANGED`` and ``LEGACY`` nothing happens silently: the thread is told
and the turn starts a new context in the current incarnation. An answer or
approval goes only to the incarnation that asked (``SAME``); otherwise the
question closes as no longer answerable and the thread is told.
"""

from __future__ import annotations

import hashlib
import json
from enum import StrEnum


class Bound(StrEnum):
    """How a session stands to the backend's current incarnation."""

    SAME = "same"
    NEW = "new"
    CHANGED = "changed"
    LEGACY = "legacy"


def incarnation(binding: str, dialect: str, endpoint: str, agent_identity: str) -> str:
    """The incarnation a session is bound to (a short fingerprint)."""
    named = json.dumps([binding, dialect, endpoint, agent_identity])
    return hashlib.sha256(named.encode()).hexdigest()[:16]


def check(bound_to: str | None, has_context: bool, current: str) -> Bound:
    """How a session bound to ``bound_to`` (None: never bound) stands to ``current``."""
    if bound_to == current:
        return Bound.SAME
    if not has_context:
        return Bound.NEW
    return Bound.LEGACY if bound_to is None else Bound.CHANGED
