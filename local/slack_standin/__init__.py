"""A local stand-in for Slack: the Web API the bot calls, and signed callbacks
(Events API, interactivity) sent as people act through a control API.

Run it with ``python -m local.slack_standin``; drive it with ``SlackStandin``;
start it from tests with ``StandinProcess``.
"""

from local.slack_standin.cli import main
from local.slack_standin.client import SlackStandin, StandinError
from local.slack_standin.models import (
    AgentSession,
    ApiCall,
    Delivery,
    Ephemeral,
    FeedbackClick,
    Interaction,
    Message,
    Posted,
    StatusChange,
    StopPressed,
    Submission,
    TaskCard,
    ThreadStatus,
    Tunables,
    UrlVerification,
    User,
    View,
)
from local.slack_standin.process import StandinProcess
from local.slack_standin.workspace import APP_ID, BOT_ID, BOT_USER, TEAM_ID

__all__ = [
    "APP_ID",
    "BOT_ID",
    "BOT_USER",
    "TEAM_ID",
    "AgentSession",
    "ApiCall",
    "Delivery",
    "Ephemeral",
    "FeedbackClick",
    "Interaction",
    "Message",
    "Posted",
    "SlackStandin",
    "StandinError",
    "StandinProcess",
    "StatusChange",
    "StopPressed",
    "Submission",
    "TaskCard",
    "ThreadStatus",
    "Tunables",
    "UrlVerification",
    "User",
    "View",
    "main",
]
