"""The papercuts of a first hour with the local stack: each as a new user meets it."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from unittest import mock

import pytest
from google.cloud import firestore

from local.cli import banner, main
from local.demo_agent.behaviours import BEHAVIOURS
from local.stack import REPO
from shared.firestore import FirestoreDocuments
from shared.slack.people import actor_for
from shared.slack.web import web_client
from shared.store import Store
from shared.system import SystemClock
from tests.demo.conftest import Kourier

GHOST = "U0GHOST"
"""A user Slack does not know (users.info answers user_not_found)."""


def test_agent_check_reads_the_config_up_wrote_or_says_where_it_looked(
    kourier: Kourier, tmp_path: Path
) -> None:
    state_dir = kourier.stack.log_dir.parent
    assert (state_dir / "kourier.yaml").is_file()

    checked = kourier.run("agent", "check", "demo", env={"KOURIER_STATE_DIR": str(state_dir)})
    nowhere = kourier.run("agent", "check", "demo", env={"KOURIER_STATE_DIR": str(tmp_path)})

    assert checked.status == 0, checked.stderr
    assert checked.stdout.endswith("No contract problem found.\n")
    assert nowhere.status == 2
    assert str(tmp_path / "kourier.yaml") in nowhere.stderr
    assert "KOURIER_CONFIG" in nowhere.stderr and "./kourier up" in nowhere.stderr


def test_the_banner_shows_how_to_continue_a_thread_only_where_it_is_true(
    kourier: Kourier,
) -> None:
    shown = banner(kourier.stack)

    assert "printed above" not in shown
    assert './kourier say "hello, what can you do?"' in shown
    assert "./kourier say --thread" in shown
    said = kourier.say("hello")
    assert f'continue: ./kourier say --thread {said.thread} "your reply"' in said.stdout


def test_help_says_what_each_command_needs_running(kourier: Kourier) -> None:
    helped = kourier.run("--help")

    assert helped.status == 0
    needs = helped.stdout.split("commands, and what each needs running:", 1)[1]
    assert "say                   ./kourier up, running in another terminal" in needs
    assert "agent check BACKEND   the agent, running; and a config" in needs
    assert "up                    nothing" in needs and "test                  nothing" in needs


@pytest.mark.parametrize(("command", "option"), [("sim", "--seeds"), ("bench", "--json")])
def test_help_of_a_command_with_options_of_its_own_shows_them(
    command: str, option: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main([command, "--help"])

    shown = capsys.readouterr().out
    assert exited.value.code == 0
    assert f"usage: kourier {command}" in shown and option in shown


def test_say_without_a_running_stack_says_to_start_one(kourier: Kourier) -> None:
    said = kourier.run("say", "hello", env={"KOURIER_PORT_SLACK": "29399"})

    assert said.status == 1
    assert "Start the local stack first, in another terminal: ./kourier up" in said.stderr


def test_a_user_slack_does_not_know_is_looked_up_once(kourier: Kourier) -> None:
    env = kourier.stack.function_env
    project = env["GOOGLE_CLOUD_PROJECT"]
    with mock.patch.dict(os.environ, {"FIRESTORE_EMULATOR_HOST": env["FIRESTORE_EMULATOR_HOST"]}):
        store = Store(FirestoreDocuments(firestore.Client(project=project)), SystemClock())
    chat = web_client(env["SLACK_API_URL"], env["SLACK_BOT_TOKEN"])
    first, second = actor_for(store, chat, GHOST), actor_for(store, chat, GHOST)

    assert first.id == second.id == GHOST and first.name is None and second.email is None
    lookups = [c for c in kourier.standin.calls("users.info") if c.params.get("user") == GHOST]
    assert [c.error for c in lookups] == ["user_not_found"]


def test_a_long_install_step_shows_itself_and_its_progress(tmp_path: Path) -> None:
    released = tmp_path / "released"
    script = (
        'source local/progress.sh; with_progress "installing things" "a while" '
        f'bash -c "until [ -e {released} ]; do sleep 0.1; done"'
    )
    step = subprocess.Popen(
        ["bash", "-c", script],
        cwd=REPO,
        env={**os.environ, "KOURIER_PROGRESS_SECONDS": "1"},
        stderr=subprocess.PIPE,
        text=True,
    )
    assert step.stderr is not None
    before = [step.stderr.readline(), step.stderr.readline()]
    released.touch()
    after = step.communicate(timeout=60)[1].splitlines(keepends=True)
    shown = before + after

    assert shown[0] == "kourier: installing things (first run only; a while)…\n"
    assert shown[1].startswith("kourier:   still installing things (")
    assert shown[-1].startswith("kourier: done installing things in ")
    assert step.wait() == 0


def test_the_readme_shows_every_keyword_of_the_demo_agent() -> None:
    readme = (REPO / "README.md").read_text()
    table = readme.split("## The demo agent", 1)[1].split("\n\n## ", 1)[0]

    for behaviour in BEHAVIOURS:
        assert f"| `{behaviour.example}`" in table, behaviour.keywords
