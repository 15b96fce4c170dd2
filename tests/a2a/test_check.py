"""``kourier agent check``: a good agent passes, and each broken rule is reported in plain words."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from shared.a2a.check import CheckReport, check_agent
from shared.core import notices
from tests.a2a.agents import Exchange, ScriptedAgent, error, result, status_update, task
from tests.a2a.conftest import backend_for, binding_for

REPO = Path(__file__).resolve().parents[2]


def _good(exchange: Exchange, changes: dict[str, Callable[[Exchange], None]] | None = None) -> None:
    """A contract-keeping agent, except for the methods in ``changes``."""
    method = exchange.rpc_method or ""
    if changes and method in changes:
        changes[method](exchange)
    elif method == "SendStreamingMessage":
        sent = exchange.params["message"]
        exchange.sse(
            [
                result({"task": task("t1", "c1", history=[sent])}),
                result(
                    {
                        "artifactUpdate": {
                            "taskId": "t1",
                            "contextId": "c1",
                            "artifact": {"artifactId": "a", "parts": [{"text": "Hi."}]},
                        }
                    }
                ),
                result(status_update("TASK_STATE_COMPLETED")),
            ]
        )
    elif method == "GetTask" and exchange.params["id"] == "t1":
        exchange.json(result(task("t1", "c1", state="TASK_STATE_COMPLETED")))
    elif method == "ListTasks":
        sent = [
            r.body["params"]["message"]
            for r in exchange.agent.posts()
            if r.body["method"] == "SendStreamingMessage"
        ]
        listed = [task("t1", "c1", state="TASK_STATE_COMPLETED", history=sent)] if sent else []
        exchange.json(result({"tasks": listed, "nextPageToken": ""}))
    else:
        exchange.json(error(-32001, "Task not found"))


def _check(agent: ScriptedAgent, probe: bool = True, header_timeout: float = 5.0) -> CheckReport:
    return check_agent(
        backend_for(agent.url),
        binding_for(),
        probe,
        header_timeout=header_timeout,
        idle_timeout=5.0,
    )


def _failures(report: CheckReport) -> list[str]:
    return [f.text for f in report.findings if not f.ok]


def test_a_good_agent_passes(agent: ScriptedAgent) -> None:
    agent.script = _good

    report = _check(agent)

    assert _failures(report) == []
    assert report.ok
    rendered = report.render()
    assert "FAIL" not in rendered and rendered.endswith("No contract problem found.")
    for line in (
        "GetTask is implemented",
        "SubscribeToTask is implemented",
        "CancelTask is implemented",
        "ListTasks answers a list of tasks",
        "The probe's answer is in artifact text.",
        "ListTasks shows the probe's messageId in its task's history.",
    ):
        assert line in rendered


def test_the_demo_agent_passes_with_a_probe_turn(demo_agent: str) -> None:
    report = check_agent(backend_for(demo_agent), binding_for(), probe=True)

    assert _failures(report) == []


def test_no_streaming(agent: ScriptedAgent) -> None:
    agent.script = _good
    agent.card["capabilities"] = {"streaming": False}

    [card_problem, not_probed] = _failures(_check(agent))

    assert "does not set capabilities.streaming: true" in card_problem
    assert notices.NO_STREAMING in card_problem
    assert "probe turn was not sent" in not_probed


def test_no_jsonrpc_interface(agent: ScriptedAgent) -> None:
    agent.script = _good
    agent.card["supportedInterfaces"] = [
        {"url": agent.url, "protocolBinding": "GRPC", "protocolVersion": "1.0"}
    ]

    [problem] = _failures(_check(agent))

    assert "no JSON-RPC interface" in problem and "GRPC 1.0" in problem
    assert agent.posts() == []


def test_an_unsupported_required_extension(agent: ScriptedAgent) -> None:
    agent.script = _good
    agent.card["capabilities"]["extensions"] = [
        {"uri": "https://example.com/ext/v9", "required": True}
    ]

    [problem, _] = _failures(_check(agent))

    assert "https://example.com/ext/v9" in problem and notices.UNSUPPORTED_EXTENSION in problem


def test_a_card_that_redirects(agent: ScriptedAgent) -> None:
    agent.card_script = lambda exchange: exchange.status(
        308, {"Location": "https://elsewhere.example/card"}
    )

    [problem] = _failures(_check(agent))

    assert "could not be read" in problem
    assert "redirect (HTTP 308 to https://elsewhere.example/card)" in problem


def test_an_endpoint_that_redirects(agent: ScriptedAgent) -> None:
    agent.script = lambda exchange: exchange.status(307, {"Location": agent.url + "rpc"})

    failures = _failures(_check(agent, probe=False))

    assert len(failures) == 4  # GetTask, SubscribeToTask, CancelTask, ListTasks
    assert all("redirect (HTTP 307" in f and "follows no redirect" in f for f in failures)


def test_slow_headers(agent: ScriptedAgent) -> None:
    def slow(exchange: Exchange) -> None:
        exchange.wait(10)
        _good(exchange)

    agent.script = slow

    failures = _failures(_check(agent, probe=False, header_timeout=0.5))

    assert failures and all("no response headers within 0.5 s" in f for f in failures)


@pytest.mark.parametrize(
    ("method", "consequence"),
    [
        ("ListTasks", "the turn fails after 15 minutes"),
        ("SubscribeToTask", "live text stops"),
        ("GetTask", "cannot finish"),
        ("CancelTask", "keeps running on the agent"),
    ],
)
def test_a_missing_method(agent: ScriptedAgent, method: str, consequence: str) -> None:
    agent.script = lambda exchange: _good(
        exchange, {method: lambda e: e.json(error(-32601, "Method not found"))}
    )

    [problem] = _failures(_check(agent, probe=False))

    assert problem.startswith(f"{method} is not implemented (-32601, method not found)")
    assert consequence in problem


def test_a_method_that_answers_busy_for_an_unknown_task(agent: ScriptedAgent) -> None:
    agent.script = lambda exchange: _good(
        exchange, {"GetTask": lambda e: e.json(error(-32004, "busy"))}
    )

    [problem] = _failures(_check(agent, probe=False))

    assert "GetTask failed (GetTask: JSON-RPC error -32004: busy); expected -32001" in problem


def test_a_probe_stream_that_names_no_task(agent: ScriptedAgent) -> None:
    no_task = {
        "SendStreamingMessage": lambda e: e.sse(
            [result({"statusUpdate": {"status": {"state": "TASK_STATE_COMPLETED"}}})]
        )
    }
    agent.script = lambda exchange: _good(exchange, no_task)

    [problem] = _failures(_check(agent))

    assert "named no task" in problem and notices.UNREACHABLE in problem


def test_a_probe_answered_outside_artifacts(agent: ScriptedAgent) -> None:
    def status_text_only(exchange: Exchange) -> None:
        done = status_update(
            "TASK_STATE_COMPLETED", message={"role": "ROLE_AGENT", "parts": [{"text": "Hi."}]}
        )
        exchange.sse(
            [result({"task": task("t1", "c1", history=[exchange.params["message"]])}), result(done)]
        )

    agent.script = lambda exchange: _good(exchange, {"SendStreamingMessage": status_text_only})

    [problem] = _failures(_check(agent))

    assert "no artifact text" in problem and notices.NO_OUTPUT in problem


def test_a_list_without_history(agent: ScriptedAgent) -> None:
    bare = {
        "ListTasks": lambda e: e.json(
            result({"tasks": [task("t1", "c1", state="TASK_STATE_COMPLETED")]})
        )
    }
    agent.script = lambda exchange: _good(exchange, bare)

    [problem] = _failures(_check(agent))

    assert "does not show the probe's messageId" in problem and "may run, again" in problem


def test_a_probe_stream_that_ends_unsettled(agent: ScriptedAgent) -> None:
    def stops_working(exchange: Exchange) -> None:
        exchange.sse(
            [
                result(
                    {
                        "task": task(
                            "t1",
                            "c1",
                            state="TASK_STATE_WORKING",
                            history=[exchange.params["message"]],
                        )
                    }
                )
            ]
        )

    def still_working(exchange: Exchange) -> None:
        if exchange.params["id"] == "t1":
            exchange.json(result(task("t1", "c1", state="TASK_STATE_WORKING")))
        else:
            exchange.json(error(-32001, "Task not found"))

    def cancels(exchange: Exchange) -> None:
        exchange.json(result(task("t1", "c1", state="TASK_STATE_CANCELED")))

    changes = {
        "SendStreamingMessage": stops_working,
        "GetTask": still_working,
        "CancelTask": cancels,
    }
    agent.script = lambda exchange: _good(exchange, changes)

    failures = _failures(_check(agent))

    assert any("ended without a full Task" in f for f in failures)
    assert any("still working after its stream ended; the check cancels it" in f for f in failures)
    assert [r.body["params"]["id"] for r in agent.posts() if r.body["method"] == "CancelTask"][
        -1
    ] == "t1"


def _run_check(config: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "KOURIER_CONFIG": str(config), "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [sys.executable, "-m", "shared.a2a.check", *args],
        check=False,
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def _config(tmp_path: Path, url: str) -> Path:
    path = tmp_path / "kourier.yaml"
    path.write_text(
        f"""
agentBackends:
  - name: demo
    url: {url}
bindings:
  - name: demo-channel
    channels: [C1]
    agentBackend: demo
    identity:
      userId: kourier-check
"""
    )
    return path


def test_the_command_exits_0_for_a_good_agent(demo_agent: str, tmp_path: Path) -> None:
    run = _run_check(_config(tmp_path, demo_agent), "demo", "--probe")

    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.startswith(f"Agent backend demo at {demo_agent}\n")
    assert run.stdout.rstrip().endswith("No contract problem found.")


def test_the_command_exits_1_for_a_broken_agent(agent: ScriptedAgent, tmp_path: Path) -> None:
    agent.script = _good
    agent.card["capabilities"] = {"streaming": False}

    run = _run_check(_config(tmp_path, agent.url), "demo")

    assert run.returncode == 1
    assert "FAIL  The card does not set capabilities.streaming: true." in run.stdout
    assert run.stdout.rstrip().endswith("1 contract problem(s) found.")


def test_the_command_names_an_unknown_backend(tmp_path: Path) -> None:
    run = _run_check(_config(tmp_path, "http://127.0.0.1:1/"), "dmeo")

    assert run.returncode == 2
    assert "no agentBackend named 'dmeo' (have demo)" in run.stderr
