"""Reading a reply back from the Slack stand-in as a person sees it.

Ports of this suite: 26000-26999 (the thread-reply stand-in on 26010, the
whole stack and its replay agents from 26100, the emulators shifted to 263xx).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable

from local.emulators import EmulatorPorts
from local.slack_standin.client import SlackStandin
from local.slack_standin.models import Message
from local.stack import StackPorts

CHANNEL = "C0123456789"
BOT_TOKEN = "xoxb-replies-token"
STANDIN_PORT = 26010
STACK_PORTS = StackPorts(
    chat_ingress=26100,
    turn_send=26101,
    stream_follow=26102,
    reconcile=26103,
    timeout=26104,
    slack=26110,
    agent=26120,
    emulators=EmulatorPorts().shifted(18000),
)

_REOPENED_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})[^\n]*\n")


def bot_replies(standin: SlackStandin, thread_ts: str, channel: str = CHANNEL) -> list[Message]:
    """The bot's messages in a thread, oldest first."""
    return [message for message in standin.thread(channel, thread_ts) if message.is_bot]


def shown_text(message: Message) -> str:
    """The text a person reads in a message: streamed text, or its markdown blocks."""
    if message.stream is None and message.blocks:
        return "".join(block["text"] for block in message.blocks if block["type"] == "markdown")
    return message.text


def joined_answer(messages: Iterable[Message]) -> str:
    """The answer read across messages, without the fences that close and re-open a code block at a seam.

    A message that ends with a closing fence while the next starts by
    opening one again is one code block cut in two. The tests' lines are
    shorter than half a message, so every cut falls at the end of a line and
    the closing fence is the only thing added there.
    """
    texts = [shown_text(message) for message in messages]
    for index in range(len(texts) - 1):
        reopened = _REOPENED_FENCE.match(texts[index + 1])
        if reopened and texts[index].endswith("\n" + reopened.group(1)):
            texts[index] = texts[index][: -len(reopened.group(1))]
            texts[index + 1] = texts[index + 1][reopened.end() :]
    return "".join(texts)


def seams_in_code(messages: Iterable[Message]) -> int:
    """How many times a code block was closed at the end of a message and re-opened in the next."""
    texts = [shown_text(message) for message in messages]
    return sum(
        1
        for before, after in itertools.pairwise(texts)
        if (match := _REOPENED_FENCE.match(after)) and before.endswith("\n" + match.group(1))
    )


def cards(messages: Iterable[Message]) -> list[tuple[str, str, str]]:
    """Every step card a person sees, in order: (id, title, status).

    Streamed steps are ``task_update`` cards (a step left pending when its
    stream stopped reads "unfinished"); posted ones are ``task_card`` blocks.
    """
    found = []
    for message in messages:
        for card in message.tasks:
            found.append(
                (card.id, card.title, "unfinished" if card.left_unfinished else card.status)
            )
        for block in message.blocks:
            if block["type"] == "task_card":
                found.append((block["task_id"], block["title"], block["status"]))
    return found


def final_cards(messages: Iterable[Message]) -> dict[str, str]:
    """Each step's status in the last card that shows it."""
    return {card_id: status for card_id, _, status in cards(messages)}
