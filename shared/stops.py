"""The stop button: a person stops the turn their thread is carrying.

Theory of operation: while the thread's agent session is processing, Slack
shows everyone in the thread a stop button. A click stops the app's streams
in the thread at once and sends ``agent_session_stopped`` (``take_stop``
reads it in chat_ingress). The stop is for the turn the thread was carrying
when the button was pressed (a turn begun after it is the next one: which
one, the streams the click stopped tell first, the clocks only past their
skew, ``agent_session.stop_target``; a press too close to the turn's start
to tell stops nothing, and the person who pressed is told so), and is taken
only from the person who wrote that turn or one of the Binding's approvers
(anyone, for a turn an alert began): anyone else is told so in a message
only they see, and the turn goes on.

A stop taken is recorded on the turn (the first one counts; a finished turn
takes none), so a duplicate event, or a second click, changes nothing. A
task to stream_follow then carries it out (``engine.on_stop``): it takes the
turn from whichever function carries it, cancels the agent's task, ends the
reply and any open prompt, tells the thread once, and the thread's next turn
goes on. If that task is lost, the function that next carries the turn (a
takeover by the reconcile sweep) finds the stop recorded and carries it out
instead.
"""

from __future__ import annotations

import hashlib

import structlog
from slack_sdk.errors import SlackApiError

from shared.bootstrap import Deps
from shared.core import agent_session, notices
from shared.core.agent_session import CarriedTurn, StopFor
from shared.slack.events import StopPress
from shared.store import Turn, session_key

log = structlog.get_logger()


def take_stop(deps: Deps, press: StopPress) -> None:
    """A person pressed the stop button in a thread: stop its turn, or tell them they may not."""
    binding = deps.config.binding_for_channel(press.channel)
    if binding is None:
        return
    session = deps.store.session(session_key(binding.name, press.channel, press.thread_ts))
    turn = deps.store.turn(session.active_turn) if session and session.active_turn else None
    if session is None or turn is None or turn.status == "done":
        log.info("stop_reached_no_turn", channel=press.channel, thread_ts=press.thread_ts)
        return
    earlier = [
        _carried(other)
        for other in deps.store.session_turns(session.id)
        if other.id != turn.id and other.started_at is not None
    ]
    target = agent_session.stop_target(press.pressed_at, press.streams, _carried(turn), earlier)
    if target is not StopFor.THIS_TURN:
        log.info("stop_not_for_this_turn", turn=turn.id, target=target, streams=press.streams)
        if target is StopFor.CANNOT_TELL:
            _tell_only(deps, press, notices.STOP_AS_TURN_BEGAN)
        return
    approvals = binding.interactions.tool_approvals
    approvers = approvals.approvers if approvals else []
    if not agent_session.may_stop(press.user, turn.user or None, approvers):
        log.info("stop_refused", turn=turn.id, user=press.user)
        _tell_only(deps, press, notices.NOT_ALLOWED_TO_STOP)
        return
    if deps.store.request_stop(turn.id, press.user, press.streams):
        body = {"session_id": session.id, "turn_id": turn.id, "stop": True}
        deps.tasks.schedule("stream_follow", body, name=stop_task_name(turn.id))
        log.info("stop_requested", turn=turn.id, user=press.user, streams=press.streams)


def stop_task_name(turn_id: str) -> str:
    """The one stream_follow task that carries out a turn's stop (a second click adds none)."""
    return "stop-" + hashlib.sha256(turn_id.encode()).hexdigest()[:40]


def _carried(turn: Turn) -> CarriedTurn:
    """What of a turn tells which turn a press was for."""
    return CarriedTurn(turn.started_at, turn.started_streams)


def _tell_only(deps: Deps, press: StopPress, text: str) -> None:
    """A message in the thread that only the person who pressed the button sees."""
    try:
        deps.chat.chat_postEphemeral(
            channel=press.channel, thread_ts=press.thread_ts, user=press.user, text=text
        )
    except SlackApiError as error:
        log.warning("ephemeral_failed", channel=press.channel, error=error.response.get("error"))
