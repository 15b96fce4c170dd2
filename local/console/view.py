"""The snapshot the console sends: what one person sees of the workspace, and what lies beneath a thread.

A snapshot is plain JSON built from the stand-in's own records (its
``Message``, ``Ephemeral``, ``View``, ``ThreadStatus``, ``AgentSession``,
``FeedbackClick`` and ``ApiCall`` models as they serialise), so whatever
the stand-in learns to keep shows up in the page with no change here
beyond passing it along. Only the person it is built for sees their
ephemeral messages, modals, ticks and feedback.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from local.slack_standin.core import Standin
from local.slack_standin.models import ApiCall, Message
from shared.config import parse_config
from shared.errors import ConfigError

MAX_CALLS = 200
"""The newest Web API calls of a thread that the panel lists."""
MAX_REQUESTS = 100
"""The newest agent requests of a thread that the panel lists."""
HIDDEN_HEADERS = frozenset({"authorization", "cookie", "x-api-key"})
"""Request headers whose values the panel does not show."""
MAX_SHOWN_CHARS = 4000
"""A string in a call or request longer than this is cut (the rest is counted)."""


@dataclass(frozen=True)
class Focus:
    """Whom the page acts as, and which channel and thread it shows."""

    viewer: str
    channel: str | None = None
    thread_ts: str | None = None


class Approvers:
    """Who may approve tool calls, by binding, read from Kourier's config when it changes."""

    def __init__(self, config_path: str | None) -> None:
        self._path = Path(config_path) if config_path else None
        self._read_at: float | None = None
        self._by_user: dict[str, list[str]] = {}

    def bindings_of(self, user: str) -> list[str]:
        """The bindings whose tool calls ``user`` may approve."""
        self._refresh()
        return self._by_user.get(user, [])

    def _refresh(self) -> None:
        if self._path is None or not self._path.is_file():
            return
        modified = self._path.stat().st_mtime
        if modified == self._read_at:
            return
        self._read_at = modified
        self._by_user = {}
        try:
            config = parse_config(self._path.read_text(), source=str(self._path))
        except (OSError, ConfigError):
            return
        for binding in config.bindings:
            approvals = binding.interactions.tool_approvals
            for user in [] if approvals is None else approvals.approvers:
                self._by_user.setdefault(user, []).append(binding.name)


def _cut(value: Any) -> Any:
    """``value`` with every long string cut to what the panel shows."""
    if isinstance(value, str) and len(value) > MAX_SHOWN_CHARS:
        return value[:MAX_SHOWN_CHARS] + f"… ({len(value) - MAX_SHOWN_CHARS} more characters)"
    if isinstance(value, dict):
        return {key: _cut(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_cut(item) for item in value]
    return value


def _call(call: ApiCall) -> dict[str, Any]:
    shown: dict[str, Any] = _cut(call.model_dump(mode="json"))
    return shown


def _reply_counts(messages: list[Message]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for message in messages:
        if message.thread_ts and message.thread_ts != message.ts:
            counts[message.thread_ts] = counts.get(message.thread_ts, 0) + 1
    return counts


def snapshot(
    standin: Standin,
    focus: Focus,
    approvers: Approvers,
    store: Any,
    agent_requests: list[dict[str, Any]],
) -> dict[str, Any]:
    """What ``focus.viewer`` sees, with the focused thread's calls, turns and agent requests.

    ``store`` is a ``StoreMirror`` (its ``watching`` and ``of_thread``).
    """
    workspace = standin.workspace
    viewer = focus.viewer
    users = [
        {**user.model_dump(mode="json"), "approver_of": approvers.bindings_of(user.id)}
        for user in workspace.users.values()
    ]
    channels = []
    for channel_id, messages in workspace.channels.items():
        counts = _reply_counts(messages)
        channels.append(
            {
                "id": channel_id,
                "messages": [
                    {**m.model_dump(mode="json"), "reply_count": counts.get(m.ts, 0)}
                    for m in workspace.history(channel_id)
                ]
                if channel_id == focus.channel
                else [],
            }
        )
    ephemerals = [
        e.model_dump(mode="json")
        for e in workspace.ephemerals
        if e.user == viewer and e.channel == focus.channel
    ]
    feedback = {
        click.message_ts: "positive" if click.positive else "negative"
        for click in workspace.feedback
        if click.user == viewer and click.channel == focus.channel
    }
    selections = {
        f"{channel}/{ts}/{action_id}": values
        for (channel, ts, action_id, user), values in workspace.selections.items()
        if user == viewer
    }
    return {
        "version": standin.changes.count,
        "viewer": viewer,
        "users": users,
        "channels": channels,
        "ephemerals": ephemerals,
        "selections": selections,
        "feedback": feedback,
        "views": [
            view.model_dump(mode="json")
            for view in workspace.views.values()
            if view.open and view.user == viewer
        ],
        "thread": _thread(standin, focus, store, agent_requests),
    }


def _thread(
    standin: Standin, focus: Focus, store: Any, agent_requests: list[dict[str, Any]]
) -> dict[str, Any] | None:
    channel, thread_ts = focus.channel, focus.thread_ts
    if channel is None or thread_ts is None:
        return None
    workspace = standin.workspace
    messages = workspace.thread(channel, thread_ts)
    if not messages:
        return None
    status = workspace.status(channel, thread_ts)
    calls = [c for c in standin.calls if c.channel == channel and c.thread_ts == thread_ts]
    turns, sessions = store.of_thread(channel, thread_ts)
    session = workspace.agent_session(channel, thread_ts)
    return {
        "channel": channel,
        "ts": thread_ts,
        "messages": [m.model_dump(mode="json") for m in messages],
        "status": None if status is None else status.model_dump(mode="json"),
        "session": None if session is None else session.model_dump(mode="json"),
        "calls": [_call(call) for call in calls[-MAX_CALLS:]],
        "calls_total": len(calls),
        "store": {"watching": store.watching, "turns": turns, "sessions": sessions},
        "agent": _agent_requests(channel, messages, turns, sessions, agent_requests),
    }


def _agent_requests(
    channel: str,
    messages: list[Message],
    turns: list[dict[str, Any]],
    sessions: list[dict[str, Any]],
    received: list[dict[str, Any]],
) -> list[dict[str, Any]]:
    """The agent's requests that name this thread: a message of it, its task or its context."""
    names = {f'"slack-{channel}-{m.ts}"' for m in messages}
    names |= {str(t["task_id"]) for t in turns if t.get("task_id")}
    names |= {str(s["context_id"]) for s in sessions if s.get("context_id")}
    mine = [r for r in received if any(name in json.dumps(r.get("params")) for name in names)]
    return [_cut(_without_credentials(request)) for request in mine[-MAX_REQUESTS:]]


def _without_credentials(request: dict[str, Any]) -> dict[str, Any]:
    headers = {
        name: "(hidden)" if name in HIDDEN_HEADERS else value
        for name, value in dict(request.get("headers") or {}).items()
    }
    return {**request, "headers": headers}
