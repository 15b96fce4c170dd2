"""``kourier say``: talk to the local stack as a Slack user, and answer its prompts.

Theory of operation: everything goes through the Slack stand-in's control
API, as a person in Slack would act. A text is posted as a message that
mentions the bot (in a new thread, or in ``--thread``). ``--click``,
``--choose`` and ``--text`` answer the thread's prompt by the labels a
reader sees: ``--click`` presses the first button with that label in the
newest message that has one (so repeated ``--click Approve`` decides one
tool after another); ``--choose`` presses a choice's button, or ticks
checkbox options and presses the question's ``Submit``; ``--text`` writes
in the form the prompt's ``Answer`` button opens, one text per question,
and with no such button replies in the thread without a mention, which is
how a plain-text question is answered. Without ``--thread`` an answer goes
to the channel's newest thread. Then the command waits until what it did
has settled in Slack: a reply came that is more than the busy notice, or a
prompt changed and what the agent resumed with came, or a message only this
user sees arrived; and the thread stayed still a moment with nothing
streaming. It prints the thread, with the command that answers each open
prompt, and the line that continues the thread.
"""

from __future__ import annotations

import shlex
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from textwrap import indent
from typing import Any

from local.slack_standin.client import SlackStandin, StandinError
from local.slack_standin.models import Ephemeral, Message, interactive_elements
from shared.core import notices

QUIET_SECONDS = 1.5
"""A thread that stays unchanged this long, with nothing streaming, has settled."""
POLL_SECONDS = 0.3
APPROVAL_LABELS = (notices.APPROVE, notices.REJECT, notices.APPROVE_ALL, notices.REJECT_ALL)


class SayError(RuntimeError):
    """What the person asked for cannot be done (no such thread, button or choice)."""


@dataclass(frozen=True)
class Say:
    """What the person does, as the command line says it."""

    channel: str
    user: str
    text: str | None = None
    thread: str | None = None
    click: str | None = None
    choose: Sequence[str] = ()
    texts: Sequence[str] = ()
    wait: float = 180.0

    @property
    def answers(self) -> bool:
        """Whether this answers a prompt rather than posting a message."""
        return bool(self.click or self.choose or self.texts)


@dataclass
class _Seen:
    """What the thread looked like, to tell when it settles."""

    shape: list[tuple[Any, ...]] = field(default_factory=list)
    since: float = field(default_factory=time.monotonic)


def run(say: Say, client: SlackStandin, out: Callable[[str], None] = print) -> str:
    """Does what ``say`` asks, waits for it to settle, prints the thread; returns its ts.

    Raises:
        SayError: The thread, button, choice or form is not there.
        StandinError: The stand-in refused a request.
    """
    if say.answers:
        if say.text:
            raise SayError("give either a message to post or an answer (--click, --choose, --text)")
        thread = say.thread or _newest_thread(client, say.channel)
        before = client.thread(say.channel, thread)
        ephemerals = len(client.ephemerals(channel=say.channel, user=say.user))
        prompt = _answer(say, client, thread, before)
        settled = _wait(
            client,
            say,
            thread,
            lambda messages: _answer_settled(client, say, prompt, messages, ephemerals),
        )
        shown_ephemerals = client.ephemerals(channel=say.channel, user=say.user)[ephemerals:]
    elif say.text:
        posted = client.say(say.channel, say.text, user=say.user, thread_ts=say.thread)
        for delivery in posted.deliveries:
            if delivery.status != 200:
                out(f"(Kourier's events URL answered {delivery.status or delivery.error})")
        thread = say.thread or posted.ts
        settled = _wait(client, say, thread, lambda messages: _reply_settled(messages, posted.ts))
        shown_ephemerals = []
    else:
        if not say.thread:
            raise SayError("give a message to post, an answer, or --thread to show a thread")
        thread = say.thread
        settled = _wait(client, say, thread, lambda messages: True)
        shown_ephemerals = []
    _print_thread(client.thread(say.channel, thread), shown_ephemerals, thread, out)
    if not settled:
        out(f"(still going after {say.wait:.0f} s; to see more: ./kourier say --thread {thread})")
    out(f'continue: ./kourier say --thread {thread} "your reply"')
    return thread


# --- answering ------------------------------------------------------------------------


def _answer(say: Say, client: SlackStandin, thread: str, messages: list[Message]) -> Message:
    """Acts on the thread's prompt; returns the message acted on."""
    bot = [m for m in messages if m.is_bot]
    if say.click:
        prompt, element = _find_button(bot, say.click)
        _press(client, say, prompt, element)
        return prompt
    if say.choose:
        prompt = _choose(client, say, bot)
        return prompt
    form = next((m for m in reversed(bot) if _button_in(m, notices.WRITE_ANSWER)), None)
    if form is not None:
        _write_in_form(client, say, form)
        return form
    question = next((m for m in reversed(bot) if notices.REPLY_TO_ANSWER in m.rendered), None)
    if question is None:
        raise SayError("nothing in the thread asks for text")
    if len(say.texts) != 1:
        raise SayError("a reply in the thread answers one question: give one --text")
    client.say(say.channel, say.texts[0], user=say.user, thread_ts=thread, as_mention=False)
    return question


def _find_button(messages: list[Message], label: str) -> tuple[Message, dict[str, Any]]:
    """The first button labelled ``label`` in the newest message that has one."""
    for message in reversed(messages):
        element = _button_in(message, label)
        if element is not None:
            return message, element
    shown = sorted({_label(e) for m in messages for e in _elements(m) if e["type"] == "button"})
    raise SayError(
        f"no button {label!r} in the thread"
        + (f" (there are: {', '.join(shown)})" if shown else " (nothing to click)")
    )


def _choose(client: SlackStandin, say: Say, messages: list[Message]) -> Message:
    """Presses each choice's button, or ticks the options of a question and submits it."""
    prompt = next((m for m in reversed(messages) if _has_choice(m, say.choose[0])), None)
    if prompt is None:
        raise SayError(f"no choice {say.choose[0]!r} in the thread{_choices_shown(messages)}")
    ticked: dict[str, list[str]] = {}
    for label in say.choose:
        button = _button_in(prompt, label)
        if button is not None:
            _press(client, say, prompt, button)
            continue
        picker, value = _option_in(prompt, label)
        if picker is None:
            raise SayError(f"no choice {label!r} in the prompt{_choices_shown([prompt])}")
        ticked.setdefault(picker["action_id"], []).append(value)
    for action_id, values in ticked.items():
        client.click(say.channel, prompt.ts, action_id, user=say.user, values=values)
        submit = _submit_after(prompt, action_id)
        if submit is not None:
            _press(client, say, prompt, submit)
    return prompt


def _write_in_form(client: SlackStandin, say: Say, prompt: Message) -> None:
    """Opens the prompt's form, writes one text per input, and sends it."""
    opened = {view.id for view in client.views()}
    button = _button_in(prompt, notices.WRITE_ANSWER)
    assert button is not None
    _press(client, say, prompt, button)
    try:
        view = client.wait_for(
            lambda: next(
                (v for v in client.views() if v.id not in opened and v.user == say.user), None
            ),
            timeout=30.0,
        )
    except TimeoutError:
        raise SayError("the form did not open") from None
    assert view is not None
    inputs = [
        block["element"]["action_id"]
        for block in view.view.get("blocks", [])
        if block.get("type") == "input"
    ]
    if len(inputs) != len(say.texts):
        raise SayError(f"the form asks {len(inputs)} questions: give one --text for each")
    submission = client.submit(view.id, dict(zip(inputs, say.texts)))
    if submission.view_open:
        problems = "; ".join(submission.errors.values()) or "it stayed open"
        raise SayError(f"the form was not sent: {problems}")


def _press(client: SlackStandin, say: Say, message: Message, element: dict[str, Any]) -> None:
    interaction = client.click(say.channel, message.ts, element["action_id"], user=say.user)
    if interaction.delivery.status != 200:
        raise SayError(
            f"Kourier's interactivity URL answered {interaction.delivery.status or 'nothing'}"
        )


def _elements(message: Message) -> list[dict[str, Any]]:
    return [element for _, element in interactive_elements(message.blocks)]


def _label(element: dict[str, Any]) -> str:
    text = element.get("text")
    return str(text.get("text", "")) if isinstance(text, dict) else ""


def _button_in(message: Message, label: str) -> dict[str, Any] | None:
    return next(
        (
            e
            for e in _elements(message)
            if e.get("type") == "button" and _label(e).casefold() == label.casefold()
        ),
        None,
    )


def _option_in(message: Message, label: str) -> tuple[dict[str, Any] | None, str]:
    for element in _elements(message):
        for option in element.get("options", []):
            if _label(option).casefold() == label.casefold():
                return element, str(option["value"])
    return None, ""


def _has_choice(message: Message, label: str) -> bool:
    button = _button_in(message, label)
    return (button is not None and _label(button) not in APPROVAL_LABELS) or (
        _option_in(message, label)[0] is not None
    )


def _choices_shown(messages: list[Message]) -> str:
    choices = [
        _label(option)
        for message in messages[-1:]
        for element in _elements(message)
        for option in [element, *element.get("options", [])]
        if _label(option) and _label(option) not in (*APPROVAL_LABELS, notices.SUBMIT)
    ]
    return f" (there are: {', '.join(choices)})" if choices else ""


def _submit_after(message: Message, picker_id: str) -> dict[str, Any] | None:
    """The first Submit button after the element ``picker_id``."""
    elements = _elements(message)
    start = next(i for i, e in enumerate(elements) if e["action_id"] == picker_id)
    return next(
        (e for e in elements[start:] if e.get("type") == "button" and _label(e) == notices.SUBMIT),
        None,
    )


def _newest_thread(client: SlackStandin, channel: str) -> str:
    top = client.history(channel)
    if not top:
        raise SayError(f"no thread in {channel} yet: post a message first")
    return top[-1].ts


# --- waiting --------------------------------------------------------------------------


def _wait(
    client: SlackStandin, say: Say, thread: str, done: Callable[[list[Message]], bool]
) -> bool:
    """Waits until ``done`` holds and the thread is quiet; False if ``say.wait`` ran out."""
    seen = _Seen()
    deadline = time.monotonic() + say.wait
    while time.monotonic() < deadline:
        messages = client.thread(say.channel, thread)
        shape = [(m.ts, m.rendered, m.stream, m.edited) for m in messages]
        if shape != seen.shape:
            seen = _Seen(shape)
        quiet = time.monotonic() - seen.since >= QUIET_SECONDS
        if quiet and all(m.stream != "streaming" for m in messages) and done(messages):
            return True
        time.sleep(POLL_SECONDS)
    return False


def _reply_settled(messages: list[Message], after: str) -> bool:
    """Whether the bot replied after ``after`` with more than a promise to send later."""
    return any(
        m.is_bot and float(m.ts) > float(after) and m.text != notices.AGENT_BUSY for m in messages
    )


def _answer_settled(
    client: SlackStandin, say: Say, prompt: Message, messages: list[Message], ephemerals: int
) -> bool:
    if len(client.ephemerals(channel=say.channel, user=say.user)) > ephemerals:
        return True
    now = next((m for m in messages if m.ts == prompt.ts), None)
    if now is None or now.rendered == prompt.rendered:
        return False
    return bool(now.action_ids()) or _reply_settled(messages, prompt.ts)


# --- printing -------------------------------------------------------------------------


def _print_thread(
    messages: list[Message], ephemerals: list[Ephemeral], thread: str, out: Callable[[str], None]
) -> None:
    for message in messages:
        stamp = datetime.fromtimestamp(float(message.ts)).strftime("%H:%M:%S")
        author = "Agent Kourier" if message.is_bot else message.user
        out(f"[{stamp}] {author}  (ts {message.ts})")
        out(indent(message.rendered or "(empty)", "    "))
        hint = _answer_hint(message, thread)
        if hint:
            out(f"    → {hint}")
    for ephemeral in ephemerals:
        out(f"(only {ephemeral.user} sees) {ephemeral.text}")


def _answer_hint(message: Message, thread: str) -> str:
    """The command that answers a prompt, if ``message`` is one still open."""
    command = f"./kourier say --thread {thread}"
    labels = [_label(e) for e in _elements(message) if e.get("type") == "button"]
    options = [_label(o) for e in _elements(message) for o in e.get("options", [])]
    if notices.APPROVE in labels:
        others = [notices.REJECT, notices.APPROVE_ALL, notices.REJECT_ALL]
        shown = ", ".join(shlex.quote(label) for label in others if label in labels)
        return f"{command} --click {notices.APPROVE}  (or --click {shown})"
    if notices.WRITE_ANSWER in labels:
        return f'{command} --text "your answer"'
    if options:
        picks = " ".join(f"--choose {shlex.quote(o)}" for o in options[:2])
        return f"{command} {picks}  (tick any of: {', '.join(options)})"
    choices = [label for label in labels if label != notices.SUBMIT]
    if choices:
        return f"{command} --choose {shlex.quote(choices[0])}  (one of: {', '.join(choices)})"
    if message.is_bot and message.stream is None and notices.REPLY_TO_ANSWER in message.rendered:
        return f'{command} --text "your answer"'
    return ""


def main(say: Say, url: str) -> int:
    """Runs ``say`` against the stand-in at ``url``; returns the exit status."""
    with SlackStandin(url) as client:
        if not client.is_up():
            print(
                f"kourier say: nothing answers at {url}. Start the local stack first, "
                "in another terminal: ./kourier up",
                file=sys.stderr,
            )
            return 1
        try:
            run(say, client)
        except (SayError, StandinError) as error:
            print(f"kourier say: {error}", file=sys.stderr)
            return 1
    return 0
