"""chat_ingress: Slack's Events API and Interactivity, acknowledged at once.

Nothing here talks to an agent. A callback is verified before it is parsed
(a rejected one changes nothing), and a person's message becomes a turn with
the least work that keeps the promise: one Firestore commit that stores the
turn and marks the event handled together, then the publish that hands it
to ``turn_send``, both done before Slack gets its 200 (no Slack call, and
no read for a message that starts a thread). The ``message`` twin of an
``app_mention`` finds the turn stored and adds nothing. If the hand-off
fails, Slack retries the event, and the retry finds its turn still
``received`` and hands it off again. An event that changes nothing is not
remembered: its retry changes nothing either.

Interactivity (a click on a prompt, a modal submitted) goes to
``shared.questions``, which answers at once; a reply in a thread whose
agent waits on a question answers it there, and becomes a turn only when
the question takes no reply. A click on the stop button of the thread's
agent session goes to ``shared.stops``, one on an answer's feedback buttons
to ``shared.feedback``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs

import structlog
from slack_sdk.errors import SlackApiError

from shared import feedback, questions, stops
from shared.bootstrap import Deps
from shared.core import admission
from shared.errors import SlackRequestRejected
from shared.slack.events import ChatMessage, read_message, read_stop
from shared.slack.prompts import notice_message
from shared.slack.verify import verify_slack_request
from shared.store import Store, Turn, session_key

log = structlog.get_logger()


@dataclass(frozen=True)
class Reply:
    """An HTTP answer to Slack."""

    status: int
    body: dict[str, Any] | str = ""


def session_id_for(binding: str, message: ChatMessage) -> str:
    """A session is one Slack thread under one binding."""
    return session_key(binding, message.channel, message.thread_ts)


def handle_event(deps: Deps, body: bytes, headers: Mapping[str, str]) -> Reply:
    """An Events API callback."""
    try:
        verify_slack_request(
            deps.settings.slack_signing_secret.get_secret_value(), body, headers, deps.clock
        )
        envelope = json.loads(body)
    except (SlackRequestRejected, ValueError):
        return Reply(401, "invalid request")
    if not isinstance(envelope, dict):
        return Reply(400, "invalid payload")
    if envelope.get("type") == "url_verification":
        return Reply(200, {"challenge": envelope.get("challenge", "")})
    event_id = envelope.get("event_id")
    if envelope.get("type") != "event_callback" or not isinstance(event_id, str):
        return Reply(200)
    press = read_stop(envelope)
    if press is not None and not deps.store.event_seen(event_id):
        stops.take_stop(deps, press)
        deps.store.remember_event(event_id)
    message = read_message(envelope, deps.bot_user_id)
    if message is not None:
        _take_message(deps, event_id, message)
    return Reply(200)


def _take_message(deps: Deps, event_id: str, message: ChatMessage) -> None:
    """What a person's message does. The common case, a turn, is one commit and one publish."""
    store = deps.store
    binding = deps.config.binding_for_channel(message.channel)
    if binding is None:
        return
    session_id = session_id_for(binding.name, message)
    starts_thread = message.thread_ts == message.ts
    session = None if starts_thread else store.session(session_id)
    if not message.mentions_bot and session is None and not _joined(store, session_id, message):
        return  # a thread Kourier is not part of
    limits = _limits(deps)
    refusal = admission.too_long(message.text, limits)
    if refusal is not None:
        _refuse(deps, _turn_of(message, session_id, binding.name), refusal)
        return
    if session is not None and session.open_question:
        # The next reply in the thread answers the question the agent waits on.
        if store.event_seen(event_id):
            return
        answered = questions.answer_by_reply(
            deps,
            session.open_question,
            message.text,
            message.user,
            message.message_key,
        )
        if answered:
            store.remember_event(event_id)
            return
    if session is not None:
        # Only a thread that has a session can make a turn wait. The message's
        # twin, or Slack's retry, may count the message itself: it is then
        # refused, finds the message stored and changes nothing (a turn that
        # the first delivery stored but did not hand off, the sweep hands off).
        refusal = admission.queue_full(*store.waiting_counts(session_id, message.user), limits)
        if refusal is not None:
            _refuse(deps, _turn_of(message, session_id, binding.name), refusal)
            return
    turn = _turn_of(message, session_id, binding.name)
    if store.record_event_turn(event_id, turn):
        hand_off(deps, turn)


def hand_off(deps: Deps, turn: Turn) -> None:
    """Hand a stored turn to ``turn_send`` (the reconcile sweep hands off one this misses)."""
    deps.turns.publish_turn(turn.session_id, turn.id)


def _turn_of(message: ChatMessage, session_id: str, binding: str) -> Turn:
    return Turn(
        id=message.message_key,
        session_id=session_id,
        binding=binding,
        team=message.team,
        channel=message.channel,
        thread_ts=message.thread_ts,
        ts=message.ts,
        user=message.user,
        text=message.text,
        mentioned=message.mentions_bot,
    )


def _limits(deps: Deps) -> admission.Limits:
    return admission.Limits(
        message_chars=deps.settings.max_message_chars,
        per_thread=deps.settings.max_queued_turns_per_thread,
        per_user=deps.settings.max_queued_turns_per_user,
    )


def _refuse(deps: Deps, turn: Turn, refusal: admission.Refusal) -> None:
    """Keep a refused message as a finished turn, and tell the person once (best effort)."""
    if not deps.store.refuse_turn(turn, refusal.outcome):
        return  # a Slack retry, or the message's twin: told already
    log.info("message_refused", turn=turn.id, outcome=refusal.outcome)
    fields = notice_message(refusal.notice)
    try:
        if refusal.public:
            deps.chat.chat_postMessage(channel=turn.channel, thread_ts=turn.thread_ts, **fields)
        else:
            deps.chat.chat_postEphemeral(
                channel=turn.channel, thread_ts=turn.thread_ts, user=turn.user, **fields
            )
    except SlackApiError as error:
        log.warning("notice_not_shown", channel=turn.channel, error=error.response.get("error"))


def _joined(store: Store, session_id: str, message: ChatMessage) -> bool:
    """Whether a mention began Kourier's part in the thread before turn_send made its session.

    The session is created when turn_send claims the first turn, seconds or
    minutes after the mention was stored; the stored mention already makes
    the thread Kourier's, so a reply written meanwhile is a turn too.
    """
    return message.thread_ts != message.ts and store.has_turns(session_id)


def handle_interaction(deps: Deps, body: bytes, headers: Mapping[str, str]) -> Reply:
    """An Interactivity callback (buttons, modals)."""
    try:
        verify_slack_request(
            deps.settings.slack_signing_secret.get_secret_value(), body, headers, deps.clock
        )
        payload = json.loads(parse_qs(body.decode())["payload"][0])
    except (SlackRequestRejected, ValueError, KeyError, UnicodeDecodeError):
        return Reply(401, "invalid request")
    if not isinstance(payload, dict):
        return Reply(400, "invalid payload")
    if feedback.take_click(deps, payload):
        return Reply(200)
    answer = questions.handle_interaction(deps, payload)
    return Reply(200, answer.body if answer.body is not None else "")
