"""The whole local stack: emulators, five functions, Slack stand-in, demo agent.

Used by ``kourier up`` (in the foreground, until Ctrl-C) and by the
end-to-end tests (on their own ports), so the tests run exactly what a user
runs. Each function is its own functions-framework process on its own port,
as deployed, serving ``LOCAL_CONCURRENCY`` requests at once; turns reach
turn_send through ``local.push_relay``, which pushes as many at once (the
emulator's own push carries two). When ``SLACK_API_URL`` or ``KOURIER_CONFIG`` is already set, the
stack uses it instead of starting its own Slack stand-in or writing the demo
config, so it can be driven from outside. With the demo agent, two waits are
shorter (``DEMO_TIMINGS``), so a hand-over and a busy agent show quickly.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from local.emulators import EmulatorPorts, running_emulators
from local.processes import Process
from local.provision import provision

REPO = Path(__file__).resolve().parent.parent
VENV_BIN = Path(sys.executable).parent

FUNCTIONS = ("chat_ingress", "turn_send", "stream_follow", "reconcile", "timeout")
DEMO_CHANNEL = "C0123456789"
DEMO_APPROVER = "U0ALICE"
"""The stand-in's default user, an approver of the demo binding (its other user, U0BOB, is not)."""
DEMO_TIMINGS = {
    "KOURIER_FOLLOW_BUDGET_SECONDS": "60",
    "KOURIER_BUSY_NOTICE_SECONDS": "20",
}
"""With the demo agent, a stream is handed over after a minute and a busy agent reported after
20 s (in the cloud: 8 and 2 minutes), so the demo shows both quickly; the environment wins."""
LOCAL_CONCURRENCY = 32
"""Requests each local function serves at once (functions-framework's THREADS), and turns the
push relay carries at once: one local process stands for all of a function's cloud instances
(turn_send: 50 x 8). ``KOURIER_LOCAL_CONCURRENCY`` in the environment wins."""
DEFAULT_SIGNING_SECRET = "local-signing-secret"
DEFAULT_BOT_TOKEN = "xoxb-local-kourier"
DEMO_TRIGGER = "demo-alerts"
"""The demo config's Alertmanager trigger (``kourier alert`` posts to it)."""
DEMO_ALERT_TOKEN = "local-alert-token"
"""Its bearer token, unless ``KOURIER_SECRET_DEMO_ALERTS_TOKEN`` says otherwise."""


def _env_port(name: str, default: int) -> int:
    return int(os.environ.get(f"KOURIER_PORT_{name.upper()}", default))


@dataclass(frozen=True)
class StackPorts:
    """Where each process listens; every port is a setting (KOURIER_PORT_<NAME>)."""

    chat_ingress: int = 8300
    turn_send: int = 8301
    stream_follow: int = 8302
    reconcile: int = 8303
    timeout: int = 8304
    slack: int = 8310
    agent: int = 9101
    emulators: EmulatorPorts = field(default_factory=EmulatorPorts)

    @classmethod
    def from_env(cls) -> StackPorts:
        """Defaults, overridden by KOURIER_PORT_<NAME> variables."""
        defaults = cls()
        return cls(
            chat_ingress=_env_port("chat_ingress", defaults.chat_ingress),
            turn_send=_env_port("turn_send", defaults.turn_send),
            stream_follow=_env_port("stream_follow", defaults.stream_follow),
            reconcile=_env_port("reconcile", defaults.reconcile),
            timeout=_env_port("timeout", defaults.timeout),
            slack=_env_port("slack", defaults.slack),
            agent=_env_port("agent", defaults.agent),
        )

    @classmethod
    def from_base(cls, base: int, agent_offset: int = 20) -> StackPorts:
        """A whole stack within one hundred ports from ``base``: the functions at
        +0..4, the Slack stand-in at +10, the agent at ``agent_offset``, the
        emulators from +80."""
        emulators = EmulatorPorts()
        return cls(
            chat_ingress=base,
            turn_send=base + 1,
            stream_follow=base + 2,
            reconcile=base + 3,
            timeout=base + 4,
            slack=base + 10,
            agent=base + agent_offset,
            emulators=emulators.shifted(base + 80 - emulators.firestore),
        )

    def function_url(self, name: str) -> str:
        """The local URL of a function."""
        return f"http://127.0.0.1:{getattr(self, name)}/"


@dataclass
class Stack:
    """A running local stack."""

    ports: StackPorts
    ingress_url: str
    slack_api_url: str
    console_url: str | None
    """The console page, when the stack runs its own Slack stand-in."""
    config_path: str
    function_env: dict[str, str]
    agent_url: str | None
    log_dir: Path
    processes: list[Process]

    def restart(self, name: str) -> None:
        """Kill one function's process at once, as a crash would, and start it again on its port.

        Returns when the new process answers HTTP. What the killed one was
        doing is lost: recovery is the product's (redelivery, the sweep).
        """
        process = next(p for p in self.processes if p.name == name)
        process.kill()
        process.start_again()
        process.wait_http(self.ports.function_url(name))


def demo_config(agent_url: str) -> str:
    """The config of the local run: one binding, one channel, the demo agent, an alert trigger."""
    return f"""\
# Written by `kourier up`: the demo agent, bound to one Slack channel.
agentBackends:
  - name: demo
    url: {agent_url}
    dialect: a2a
bindings:
  - name: demo
    platform: slack
    channels: [{DEMO_CHANNEL}]
    agentBackend: demo
    identity: {{userId: kourier}}
    interactions:
      questions: {{timeout: 15m}}
      toolApprovals: {{approvers: [{DEMO_APPROVER}], timeout: 15m}}
triggers:
  - name: {DEMO_TRIGGER}
    source: alertmanager
    binding: demo
    auth: {{type: bearer, secretRef: {{name: demo-alerts-token}}}}
"""


@contextmanager
def running_stack(
    ports: StackPorts,
    state_dir: Path,
    environ: Mapping[str, str] | None = None,
    extra_env: Mapping[str, str] | None = None,
    reconcile_every: float = 60.0,
    progress: Callable[[str], None] = lambda step: None,
) -> Iterator[Stack]:
    """Start everything, yield when all of it answers, stop all of it on exit.

    ``progress`` is told each part as it comes up.
    """
    environ = dict(os.environ if environ is None else environ)
    log_dir = state_dir / "logs"
    processes: list[Process] = []
    with ExitStack() as stack:
        emulator_env = stack.enter_context(running_emulators(ports.emulators, log_dir)).variables
        progress("the Firestore, Pub/Sub and Cloud Tasks emulators answer")

        def start(name: str, argv: list[str], env: Mapping[str, str]) -> Process:
            process = Process(name, argv, log_dir / f"{name}.log", env=env)
            processes.append(process)
            stack.callback(process.stop)
            return process

        base_env = {**environ, **emulator_env, "PYTHONPATH": str(REPO), "PYTHONUNBUFFERED": "1"}
        ingress_url = ports.function_url("chat_ingress")

        slack_api_url = environ.get("SLACK_API_URL", "")
        signing_secret = environ.get("SLACK_SIGNING_SECRET", DEFAULT_SIGNING_SECRET)
        bot_token = environ.get("SLACK_BOT_TOKEN", DEFAULT_BOT_TOKEN)
        config_path = environ.get("KOURIER_CONFIG", "")
        agent_url = None if config_path else f"http://127.0.0.1:{ports.agent}/"
        config_file = Path(config_path) if config_path else state_dir / "kourier.yaml"
        console_url: str | None = None
        if not slack_api_url:
            slack_api_url = f"http://127.0.0.1:{ports.slack}/api/"
            slack = start(
                "slack-standin",
                [
                    str(VENV_BIN / "python"),
                    "-m",
                    "local.slack_standin",
                    "--port",
                    str(ports.slack),
                    "--signing-secret",
                    signing_secret,
                    "--bot-token",
                    bot_token,
                    "--events-url",
                    ingress_url + "slack/events",
                    "--interactivity-url",
                    ingress_url + "slack/interactivity",
                    "--kourier-config",
                    str(config_file),
                    *(["--agent-url", agent_url] if agent_url else []),
                ],
                base_env,
            )
            slack.wait_http(f"http://127.0.0.1:{ports.slack}/_standin/health")
            console_url = f"http://127.0.0.1:{ports.slack}/"
            progress("the Slack stand-in answers")

        if agent_url is not None:
            agent = start(
                "demo-agent",
                [
                    str(VENV_BIN / "python"),
                    "-m",
                    "local.demo_agent",
                    "--port",
                    str(ports.agent),
                ],
                base_env,
            )
            agent.wait_http(agent_url + ".well-known/agent-card.json")
            progress("the demo agent answers")
            config_file.write_text(demo_config(agent_url))
            config_path = str(config_file)
            base_env.setdefault("KOURIER_SECRET_DEMO_ALERTS_TOKEN", DEMO_ALERT_TOKEN)

        function_env = {
            **({} if agent_url is None else DEMO_TIMINGS),  # base_env (the environment) wins
            **base_env,
            **(extra_env or {}),
            "SLACK_API_URL": slack_api_url,
            "SLACK_SIGNING_SECRET": signing_secret,
            "SLACK_BOT_TOKEN": bot_token,
            "KOURIER_CONFIG": config_path,
            "KOURIER_STREAM_FOLLOW_URL": ports.function_url("stream_follow"),
            "KOURIER_TIMEOUT_URL": ports.function_url("timeout"),
            "KOURIER_HEALTH_URLS": ",".join(ports.function_url(f) for f in FUNCTIONS[1:]),
        }
        concurrency = int(environ.get("KOURIER_LOCAL_CONCURRENCY", LOCAL_CONCURRENCY))
        function_env["THREADS"] = str(concurrency)
        turn_push = provision(emulator_env, ports.function_url("turn_send"))
        progress("the topic, subscription and queues are made; starting the five functions")
        started = []
        for name in FUNCTIONS:
            signature = "cloudevent" if name == "turn_send" else "http"
            started.append(
                start(
                    name,
                    [
                        str(VENV_BIN / "functions-framework"),
                        "--source",
                        str(REPO / "functions" / "main.py"),
                        "--target",
                        name,
                        "--host",
                        "127.0.0.1",
                        "--port",
                        str(getattr(ports, name)),
                        "--signature-type",
                        signature,
                    ],
                    function_env,
                )
            )
        for process, name in zip(started, FUNCTIONS):
            process.wait_http(ports.function_url(name))
        start(
            "push-relay",
            [
                str(VENV_BIN / "python"),
                "-m",
                "local.push_relay",
                "--subscription",
                turn_push.subscription,
                "--endpoint",
                turn_push.endpoint,
                "--concurrency",
                str(concurrency),
            ],
            base_env,
        )
        _wait_healthy(ingress_url + "healthz")

        stop_timer = threading.Event()
        stack.callback(stop_timer.set)
        threading.Thread(
            target=_reconcile_timer,
            args=(ports.function_url("reconcile"), reconcile_every, stop_timer),
            daemon=True,
        ).start()
        yield Stack(
            ports=ports,
            ingress_url=ingress_url,
            slack_api_url=slack_api_url,
            console_url=console_url,
            config_path=config_path,
            function_env=function_env,
            agent_url=agent_url,
            log_dir=log_dir,
            processes=processes,
        )


def _wait_healthy(url: str, timeout: float = 60.0) -> None:
    import time

    deadline = time.monotonic() + timeout
    last = ""
    while time.monotonic() < deadline:
        try:
            answer = httpx.get(url, timeout=10)
            if answer.status_code == 200:
                return
            last = answer.text
        except httpx.HTTPError as error:
            last = repr(error)
        time.sleep(0.5)
    raise RuntimeError(f"the ingress health check did not pass: {last}")


def _reconcile_timer(url: str, every: float, stop: threading.Event) -> None:
    """Locally, the periodic reconcile sweep that Cloud Scheduler runs in the cloud."""
    while not stop.wait(every):
        try:
            httpx.post(url, json={"sweep": True}, timeout=30)
        except httpx.HTTPError:
            pass
