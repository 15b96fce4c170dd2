"""Command line: serve the stand-in, or talk to a running one as a person.

(``python -m local.slack_standin`` runs ``main``.)

python -m local.slack_standin --port 8310 --events-url http://127.0.0.1:8301/
python -m local.slack_standin say --channel C0123456789 "what is up?"
python -m local.slack_standin say --channel C0123456789 --thread TS "and now?"
python -m local.slack_standin show --channel C0123456789 --thread TS
python -m local.slack_standin click --channel C0123456789 --ts TS approve
"""

from __future__ import annotations

import argparse
import sys
from datetime import datetime
from textwrap import indent

from local.slack_standin.app import serve
from local.slack_standin.client import SlackStandin, StandinError
from local.slack_standin.models import Message
from local.slack_standin.settings import StandinSettings


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m local.slack_standin",
        description="A local stand-in for Slack. Without a command, serves it.",
    )
    for name, field in StandinSettings.model_fields.items():
        parser.add_argument(
            f"--{name.replace('_', '-')}",
            dest=name,
            help=f"(env SLACK_STANDIN_{name.upper()}, default {field.default})",
        )
    commands = parser.add_subparsers(dest="command")
    say = commands.add_parser("say", help="write as a person, then show the bot's reply")
    say.add_argument("text")
    say.add_argument("--channel", required=True)
    say.add_argument("--thread", help="reply in this thread (its ts)")
    say.add_argument("--user", default="U0ALICE")
    say.add_argument("--no-mention", action="store_true", help="do not mention the bot")
    say.add_argument("--wait", type=float, default=120.0, help="seconds to wait for the reply")
    show = commands.add_parser("show", help="print a channel, or one thread of it")
    show.add_argument("--channel", required=True)
    show.add_argument("--thread")
    click = commands.add_parser("click", help="click a button of a message")
    click.add_argument("action_id")
    click.add_argument("--channel", required=True)
    click.add_argument("--ts", required=True, help="the ts of the message with the button")
    click.add_argument("--value", help="the option to pick in a menu")
    click.add_argument("--user", default="U0ALICE")
    for command in (say, show, click):
        command.add_argument("--url", help="the stand-in (default http://127.0.0.1:<port>)")
    return parser


def _print(messages: list[Message]) -> None:
    for message in messages:
        stamp = datetime.fromtimestamp(float(message.ts)).strftime("%H:%M:%S")
        author = "Agent Kourier" if message.is_bot else message.user
        print(f"[{stamp}] {author}  (ts {message.ts})")
        print(indent(message.rendered or "(empty)", "    "))
        if message.action_ids():
            print(f"    actions: {', '.join(message.action_ids())}")


def _reply_finished(client: SlackStandin, channel: str, thread_ts: str, after: str) -> bool:
    replies = [
        message
        for message in client.thread(channel, thread_ts)
        if message.is_bot and float(message.ts) > float(after)
    ]
    return bool(replies) and all(reply.stream != "streaming" for reply in replies)


def _talk(args: argparse.Namespace, client: SlackStandin) -> None:
    if args.command == "say":
        posted = client.say(
            args.channel,
            args.text,
            user=args.user,
            thread_ts=args.thread,
            as_mention=not args.no_mention,
        )
        for delivery in posted.deliveries:
            print(f"{delivery.kind} {delivery.event_id}: {delivery.status or delivery.error}")
        thread_ts = args.thread or posted.ts
        try:
            client.wait_for(
                lambda: _reply_finished(client, args.channel, thread_ts, posted.ts),
                timeout=args.wait,
                interval=0.5,
            )
        except TimeoutError:
            print("(no finished reply yet)")
        _print(client.thread(args.channel, thread_ts))
        print(f"thread: --channel {args.channel} --thread {thread_ts}")
    elif args.command == "show":
        if args.thread:
            _print(client.thread(args.channel, args.thread))
        else:
            _print(client.history(args.channel))
    else:
        interaction = client.click(
            args.channel, args.ts, args.action_id, user=args.user, value=args.value
        )
        print(f"block_actions: {interaction.delivery.status or interaction.delivery.error}")


def main(argv: list[str] | None = None) -> int:
    """Runs the command line; returns the exit status."""
    args = _parser().parse_args(argv)
    overrides = {
        name: getattr(args, name)
        for name in StandinSettings.model_fields
        if getattr(args, name) is not None
    }
    settings = StandinSettings(**overrides)
    if args.command is None:
        serve(settings)
        return 0
    with SlackStandin(args.url or f"http://127.0.0.1:{settings.port}") as client:
        try:
            _talk(args, client)
        except StandinError as error:
            print(error, file=sys.stderr)
            return 1
    return 0
