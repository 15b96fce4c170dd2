"""The ``kourier`` command (run through ./kourier, which installs first)."""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

from local.stack import DEMO_APPROVER, DEMO_CHANNEL, REPO, Stack, StackPorts, running_stack

COMMANDS = """\
commands, and what each needs running:
  up                    nothing: it starts the whole local stack (emulators, functions,
                        Slack stand-in, demo agent) and runs until Ctrl-C
  say                   ./kourier up, running in another terminal
  alert                 ./kourier up, running in another terminal
  agent check BACKEND   the agent, running; and a config: $KOURIER_CONFIG, or else the
                        one ./kourier up wrote ({config})
  test                  nothing: the tests start what they need on ports of their own
  feedback BACKEND      Firestore: ./kourier up running, or GOOGLE_CLOUD_PROJECT set
  lint                  nothing: ruff on every Python file, mypy --strict on pyproject.toml's files
  sim                   nothing: the simulator runs everything in one process
  bench [NAME...]       nothing: each benchmark starts and stops its own stack
"""


def main(argv: list[str] | None = None) -> int:
    """Dispatch a subcommand."""
    argv = sys.argv[1:] if argv is None else argv
    if argv[:2] == ["agent", "check"]:
        return _agent_check(argv[2:])  # the check's own options and --help
    if argv[:1] in (["test"], ["sim"], ["bench"]):
        return _passed_through(argv[0], argv[1:])  # their own options and --help
    parser = argparse.ArgumentParser(
        prog="kourier",
        description="Agent Kourier, on this machine.",
        epilog=COMMANDS.format(config=_state_dir() / "kourier.yaml"),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    commands.add_parser("up", help="run the whole local stack with the demo agent")
    commands.add_parser("test", help="run the test suite (other arguments go to pytest)")
    commands.add_parser("lint", help="ruff check, ruff format --check and mypy --strict")
    agent = commands.add_parser("agent", help="agent tools: check BACKEND [--probe]")
    agent_commands = agent.add_subparsers(dest="agent_command", required=True)
    agent_commands.add_parser("check", help="check an agent backend against the contract")
    commands.add_parser("sim", help="run the deterministic simulator (--seeds N, --seed S)")
    commands.add_parser(
        "bench", help="run the benchmarks on the local stack and print one table (names to pick)"
    )
    say = commands.add_parser(
        "say",
        help="talk to the local stack as a Slack user, or answer its prompt (needs ./kourier up)",
        description="Post a message as a Slack user and print the thread once the agent "
        "answered; or answer the thread's prompt by the labels it shows. Needs ./kourier up "
        "running in another terminal.",
    )
    say.add_argument("text", nargs="?", help="the message (mentions the bot)")
    say.add_argument("--channel", default=DEMO_CHANNEL)
    say.add_argument(
        "--thread", help="ts of the thread (say prints it); answers default to the newest"
    )
    say.add_argument(
        "--user", default=DEMO_APPROVER, help="who acts (default %(default)s, an approver)"
    )
    say.add_argument("--click", metavar="LABEL", help='press a button, e.g. "Approve"')
    say.add_argument(
        "--choose", action="append", default=[], metavar="CHOICE", help="pick a choice (repeat)"
    )
    say.add_argument(
        "--text",
        action="append",
        default=[],
        dest="texts",
        metavar="ANSWER",
        help="answer a question in words (one per question)",
    )
    say.add_argument(
        "--wait", type=float, default=180.0, help="seconds to wait for the thread to settle"
    )
    alert = commands.add_parser(
        "alert",
        help="send a sample Alertmanager notification to the demo trigger (needs ./kourier up)",
    )
    alert.add_argument("--resolved", action="store_true", help="send the alert group resolved")
    alert.add_argument("--file", default=None, help="send this notification (JSON) instead")
    feedback = commands.add_parser(
        "feedback",
        help="what people thought of an agent backend's answers (👍 and 👎)",
        description="Print how many answers of BACKEND people liked and disliked (each "
        "person's latest click), and the disliked answers, newest first. Reads the Firestore "
        "of GOOGLE_CLOUD_PROJECT, or else of ./kourier up.",
    )
    feedback.add_argument("backend", help="the agentBackends name")
    feedback.add_argument(
        "--limit", type=int, default=20, help="disliked answers to list (%(default)s)"
    )
    args = parser.parse_args(argv)

    if args.command == "up":
        return _up()
    if args.command == "lint":
        return _lint()
    if args.command == "say":
        from local import say as saying

        request = saying.Say(
            channel=args.channel,
            user=args.user,
            text=args.text,
            thread=args.thread,
            click=args.click,
            choose=args.choose,
            texts=args.texts,
            wait=args.wait,
        )
        return saying.main(request, f"http://127.0.0.1:{StackPorts.from_env().slack}")
    if args.command == "feedback":
        from local.feedback import main as feedback_main

        return feedback_main(args.backend, args.limit)
    if args.command == "alert":
        from local.alert import main as alert_main

        return alert_main(resolved=args.resolved, file=args.file)
    return 2


LINTED = ("shared", "functions", "local", "tests", "bench")
"""Every Python file of the repo (mypy's files are pyproject.toml's)."""


def _lint() -> int:
    """Run each check (all of them, even after a failure); 1 if any failed."""
    steps = (
        ("ruff", "check", *LINTED),
        ("ruff", "format", "--check", *LINTED),
        ("mypy",),  # strict, with the pydantic plugin, on pyproject.toml's files
    )
    failed = False
    for step in steps:
        print(f"kourier lint: {' '.join(step)}", flush=True)
        result = subprocess.run([sys.executable, "-m", *step], cwd=REPO, check=False)
        failed |= result.returncode != 0
    return 1 if failed else 0


def _state_dir() -> Path:
    """Where ``up`` keeps its config and logs."""
    return Path(os.environ.get("KOURIER_STATE_DIR", REPO / ".kourier"))


def _passed_through(command: str, argv: list[str]) -> int:
    """Run ``test``, ``sim`` or ``bench`` with ``argv``: pytest's, the simulator's or the benchmarks'."""
    if command == "test":
        import pytest

        return int(pytest.main(["-p", "no:cacheprovider", *argv]))
    if command == "sim":
        from local.sim.cli import main as sim_main

        return sim_main(argv)
    from bench.suite import main as bench_main

    return bench_main(argv)


def _agent_check(args: list[str]) -> int:
    """``agent check``: with $KOURIER_CONFIG, or else the config ``up`` wrote."""
    from shared.a2a.check import main as check_main

    if "KOURIER_CONFIG" not in os.environ and not {"-h", "--help"} & set(args):
        written = _state_dir() / "kourier.yaml"
        if not written.is_file():
            print(
                "kourier agent check: no config to read. KOURIER_CONFIG is not set, and "
                f"{written} (which ./kourier up writes) does not exist. Run ./kourier up, "
                "or point KOURIER_CONFIG at your kourier.yaml.",
                file=sys.stderr,
            )
            return 2
        os.environ["KOURIER_CONFIG"] = str(written)
    return check_main(args)


def banner(stack: Stack) -> str:
    """What ``up`` prints once everything answers."""
    console = (
        f"""
Open the console in a browser, to write to the demo agent and click as a Slack user would:
  {stack.console_url}
"""
        if stack.console_url
        else ""
    )
    return f"""
Agent Kourier is running.
  Console                {stack.console_url or "(none: SLACK_API_URL names another Slack)"}
  Slack Events URL       {stack.ingress_url}slack/events
  Slack Interactivity    {stack.ingress_url}slack/interactivity
  Health                 {stack.ingress_url}healthz
  Alert triggers         {stack.ingress_url}triggers/<name>
  Slack Web API          {stack.slack_api_url}
  Agent                  {stack.agent_url or "(from your KOURIER_CONFIG)"}
  Config                 {stack.config_path}
  Logs                   {stack.log_dir}

{console}
Or talk to the demo agent from another terminal:
  ./kourier say "hello, what can you do?"
  ./kourier alert            an alert opens a thread, and the agent looks into it
  ./kourier alert --resolved
Each answer ends with the line that continues its thread (./kourier say --thread ...).
Ctrl-C stops everything."""


def _step(step: str) -> None:
    print(f"kourier: {step}", flush=True)


def _up() -> int:
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    # Ctrl-C stops everything, even when a script started us in the background.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    state_dir = _state_dir()
    state_dir.mkdir(parents=True, exist_ok=True)
    print("kourier: starting emulators, functions, Slack stand-in and demo agent…", flush=True)
    try:
        with running_stack(StackPorts.from_env(), state_dir, progress=_step) as stack:
            print(banner(stack), flush=True)
            try:
                stop.wait()
            except KeyboardInterrupt:
                pass
    except KeyboardInterrupt:
        pass
    print("kourier: stopped.", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
