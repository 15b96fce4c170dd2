"""The demo A2A agent: the default agent of the local stack and a peer for tests.

It shows every feature of Agent Kourier on request: a keyword in the
message picks a behaviour (``behaviours.BEHAVIOURS``; "hello" lists them),
from tool approvals and questions in kagent's human-in-the-loop extension,
spoken as kagent 1.0 speaks it (``hitl``), to a long tool run, a failed
task, a take-back, a busy agent and an answer too long for one message.
Any other message is quoted, its words counted with a tool, and its turn
within the conversation named, so a follow-up is visibly a continuation.
``server`` is the a2a-sdk application; ``turn`` the means a behaviour has
to answer one send. Run it with ``python -m local.demo_agent --port 9101``.
"""

from local.demo_agent.server import build_app, main, strip_actor_prefix

__all__ = ["build_app", "main", "strip_actor_prefix"]
