"""Every sentence Agent Kourier shows in a chat thread, in one place.

The agent contract quotes several of these word for word; tests compare the
thread against these constants, so change a sentence here and nowhere else.
No notice ever includes an agent's own error message.
"""

from __future__ import annotations

from enum import StrEnum

KOURIER_MARK = "Agent Kourier"
"""What a notice of Kourier's own is marked with, apart from any agent's text."""

# Quoted by the agent contract.
NO_OUTPUT = "The agent finished without any output."
TASK_FAILED = "The agent's task failed."
CONTEXT_CHANGED = "The agent no longer has this conversation"
NO_JSONRPC_INTERFACE = "agent card lists no JSON-RPC interface"
UNSUPPORTED_EXTENSION = "agent requires an unsupported extension"
UNREACHABLE = "the agent could not be reached"
NEEDS_APPROVAL = "The agent needs your approval"
NEEDS_INPUT = "The agent needs your input"
DENIED_BY_APPROVER = "denied by an approver in chat"
DENIED_TIMEOUT = "denied by agent-kourier: no one decided in time"
DENIED_NOT_ALLOWED = "denied by agent-kourier: this Binding does not allow tool approvals"

# Chosen by us where the contract only says "the thread is told".
TURN_FAILED = "Agent Kourier could not carry this message: {reason}."
REQUEST_FAILED = "The request to the agent failed."
TASK_REJECTED = "The agent rejected this request."
TASK_CANCELED = "The agent's task was canceled."
NO_STREAMING = "agent card does not offer streaming"
CREDENTIALS_REJECTED = "the agent rejected Agent Kourier's credentials"
IDENTITY_REFUSED = "the agent refused this identity for the conversation"
UNUSABLE_PAUSE = (
    "The agent paused in a way Agent Kourier cannot show here, so its task was cancelled."
)
SESSION_GONE = "The agent lost this conversation. Your next message starts a new one."
AGENT_BUSY = "The agent is busy. Your message will be sent as soon as it is free."
CONTEXT_CHANGED_NOTICE = CONTEXT_CHANGED + "; this thread now continues in a new one."
NO_SIGN_OF_LIFE = "The agent's task showed no sign of life for an hour, so it was cancelled."
ANSWER_REJECTED = "The agent did not take the answer, so its task was cancelled."
QUESTIONS_NOT_ALLOWED = "The agent asked a question, but this Binding does not allow questions, so its task was cancelled."

# Prompts for questions and tool approvals: labels, outcomes, refusals.
APPROVE = "Approve"
REJECT = "Reject"
APPROVE_ALL = "Approve all"
REJECT_ALL = "Reject all"
SUBMIT = "Submit"
WRITE_ANSWER = "Answer"
ANSWER_FORM_TITLE = "Answer the agent"
ANSWER_FORM_SEND = "Send"
ANSWER_FORM_CANCEL = "Cancel"
ANSWER_FORM_LABEL = "Your answer"
PICK_PLACEHOLDER = "Pick one or more"
ASKED_BY_SUBAGENT = "Asked by the sub-agent {name}"
REPLY_ALSO_ANSWERS = (
    "You can also reply in this thread: a reply answers the first question still waiting for text."
)
REPLY_TO_ANSWER = "Reply in this thread to answer."
APPROVED_BY = "Approved by {who}"
REJECTED_BY = "Rejected by {who}"
ANSWERED_BY = "Answered by {who}"
SHOWN_DENIED_TIMEOUT = "Denied: no one decided in time"
SHOWN_DENIED_NOT_ALLOWED = "Denied: this Binding does not allow tool approvals"
QUESTION_TIMED_OUT = "No one answered in time, so the agent's task was cancelled."
SHOWN_QUESTION_TIMED_OUT = "No one answered in time"
NOT_AN_APPROVER = "Only this Binding's approvers can approve or reject these tool calls."
QUESTION_CLOSED = "This question is closed."
PICK_A_CHOICE = "Pick at least one choice, then submit."
ANSWER_BLANK = "Write an answer before you send it."


class FailureCategory(StrEnum):
    """Why a task failed, when the agent says so in a way we recognise."""

    CONTEXT_LIMIT = "context limit"
    RATE_LIMIT = "rate limit"
    AUTHENTICATION = "authentication"
    TIMEOUT = "timeout"
    PERMISSION = "permission"


def task_failed(category: FailureCategory | None) -> str:
    """The notice for a failed task, with its category when known."""
    if category is None:
        return TASK_FAILED
    return f"{TASK_FAILED} ({category.value})"


def turn_failed(reason: str) -> str:
    """The notice for a turn Agent Kourier could not carry."""
    return TURN_FAILED.format(reason=reason)
