"""The thread's agent session in Slack (agents.sessions.*), or the older status line.

Theory of operation: ``ThreadStatus.show`` gives the thread's agent session
the status ``shared.core.agent_session`` decided, with the initiator and
title Slack keeps when the call creates the session. A workspace or app that
does not allow agent sessions answers with an error (``UNAVAILABLE``): the
thread then falls back to the older line, assistant.threads.setStatus "is
working…", which ``ThreadReply`` sets while its reply has no message (Slack
clears it when the app posts, so every other status needs no call), and the
fallback is logged once per process (``AgentSessions``). Each function tries
agent sessions anew, so a workspace that allows them later gets them at once.

A status is best effort: any other Slack error is logged and the turn goes
on, as the thread's messages say what happened anyway.
"""

from __future__ import annotations

import structlog
from slack_sdk.errors import SlackApiError

from shared.core.agent_session import LEGACY_WORKING, SessionStatus, StatusUpdate
from shared.ports import Chat
from shared.slack.workspace_budget import WorkspaceBudget

log = structlog.get_logger()

UNAVAILABLE = frozenset(
    {"feature_disabled", "unknown_method", "missing_scope", "not_allowed_token_type"}
)
"""Slack's answers that mean agent sessions are not allowed here (the app is no agent, the
workspace turned them off, the token lacks the scope)."""


class AgentSessions:
    """What this process learnt about agent sessions: it says once that they were refused."""

    def __init__(self) -> None:
        self._refusal_logged = False

    def refused(self, code: str) -> None:
        """Slack refused an agent session call with ``code`` (one of ``UNAVAILABLE``)."""
        if not self._refusal_logged:
            self._refusal_logged = True
            log.warning("agent_sessions_unavailable", error=code, fallback="assistant.threads")


class ThreadStatus:
    """One thread's status in Slack, for the turn it carries."""

    def __init__(
        self,
        chat: Chat,
        channel: str,
        thread_ts: str,
        sessions: AgentSessions,
        *,
        budget: WorkspaceBudget | None = None,
        team: str | None = None,
    ) -> None:
        """The status of one thread of workspace ``team``, within its Slack ``budget`` if any."""
        self._budget = budget
        self._team = team
        self._chat = chat
        self._channel = channel
        self._thread_ts = thread_ts
        self._sessions = sessions
        self._legacy: bool | None = None
        """Whether Slack refused agent sessions to this thread (None: not asked yet)."""

    def show(self, update: StatusUpdate) -> None:
        """Give the thread's agent session this status (nothing where sessions are refused)."""
        if self._legacy or not self._within_budget(update):
            return
        try:
            self._chat.agents_sessions_setStatus(
                channel_id=self._channel,
                thread_ts=self._thread_ts,
                status=update.status.value,
                title=update.title,
                initiator_user_id=update.initiator,
            )
        except SlackApiError as error:
            code = str(error.response.get("error"))
            if code in UNAVAILABLE:
                self._legacy = True
                self._sessions.refused(code)
            else:
                log.info("slack_session_status_not_shown", status=update.status, error=code)
            return
        self._legacy = False

    def _within_budget(self, update: StatusUpdate) -> bool:
        """Whether the workspace's budget lets the status go: the turn's last waits for a slot."""
        if self._budget is None:
            return True
        last = update.status in (SessionStatus.ACTIVE, SessionStatus.CLOSED)
        while True:
            admission = self._budget.status(self._team, f"{self._channel}-{self._thread_ts}", last)
            if admission.retry_at is None:
                return True
            if not last:
                log.info("slack_session_status_skipped", status=update.status, budget="spent")
                return False
            self._budget.wait_until(admission.retry_at)

    def rename(self, title: str) -> None:
        """Give the thread's agent session a new title (nothing where sessions are refused)."""
        if self._legacy:
            return
        try:
            self._chat.agents_sessions_rename(
                channel_id=self._channel, thread_ts=self._thread_ts, title=title
            )
        except SlackApiError as error:
            log.info("slack_session_not_renamed", error=error.response.get("error"))

    def working_line(self) -> bool:
        """Show the older "is working…" line where agent sessions are refused.

        Returns:
            Whether the line shows (it is then set again before Slack clears
            it). Where agent sessions are allowed the session is processing
            instead, and no line is needed.
        """
        if self._legacy is None:
            self.show(StatusUpdate(SessionStatus.PROCESSING))
        if not self._legacy:
            return False
        try:
            self._chat.assistant_threads_setStatus(
                channel_id=self._channel, thread_ts=self._thread_ts, status=LEGACY_WORKING
            )
        except SlackApiError as error:
            log.info("slack_status_not_shown", error=error.response.get("error"))
        return True
