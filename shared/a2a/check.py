"""``kourier agent check <backend>``: an agent held against the agent contract.

Theory of operation: the check calls the agent exactly as Kourier would
(same endpoint, headers, timeouts and error classification) and turns each
outcome into a finding in plain words, one per contract rule, with what
Kourier does when the rule is broken. It reads the card (fetch, JSON-RPC
interface, streaming, required extensions), then probes each method Kourier
calls with a harmless request about a task that does not exist: an agent
that implements the method answers -32001 (task not found), one that does
not answers -32601. ListTasks is probed with a context that does not exist
and must answer a list. With ``--probe`` it also sends one turn and checks
the reply's shape: a task with an ID and a contextId, a stream that ends
settled, answer text in artifacts, and (1.0) the turn's messageId in the
history ListTasks returns. A probe task left running is cancelled.
"""

from __future__ import annotations

import argparse
import logging
import sys
import uuid
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field

import httpx
import structlog

from shared.a2a.client import AgentClient, request_headers
from shared.a2a.discovery import AgentCard, CardCache, card_url, fetch_card
from shared.a2a.errors import AgentError, CredentialsRejected, NotSent, SessionGone
from shared.a2a.transport import (
    HEADER_TIMEOUT_SECONDS,
    IDLE_TIMEOUT_SECONDS,
    CallKind,
    HttpLink,
    Transport,
)
from shared.a2a.wire import Method, ProtocolVersion
from shared.config import AgentBackend, Binding, load_config
from shared.core import notices
from shared.core.model import (
    ArtifactUpdate,
    Message,
    OutgoingMessage,
    Role,
    StatusUpdate,
    StreamEvent,
    Task,
    TaskState,
    TextPart,
)
from shared.errors import ConfigError
from shared.settings import Settings
from shared.system import SystemClock, SystemIds

PROBE_TEXT = (
    "This is a probe turn from `kourier agent check`, which tests this agent against "
    "Agent Kourier's agent contract. Please answer with one short sentence."
)
METHOD_NOT_FOUND = -32601
TASK_NOT_FOUND = -32001

_IF_MISSING = {
    Method.GET_TASK: "a turn whose stream does not end with a full task cannot finish",
    Method.SUBSCRIBE: (
        "after a dropped stream live text stops, and the task is read again with "
        "GetTask, with a backoff of up to a minute, until it ends"
    ),
    Method.CANCEL: (
        "cancels (a question that timed out, a rejected answer) are retried a few times "
        "and reported as failed, and the task keeps running on the agent"
    ),
    Method.LIST_TASKS: (
        "a turn whose outcome is unknown cannot be looked up, so the lookup is retried "
        "and the turn fails after 15 minutes"
    ),
}


@dataclass(frozen=True)
class Finding:
    """One rule checked: kept (ok) or broken, in plain words."""

    ok: bool
    text: str


@dataclass
class CheckReport:
    """Every finding about one agent backend."""

    backend: str
    endpoint: str
    findings: list[Finding] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Whether the agent breaks no rule that was checked."""
        return all(f.ok for f in self.findings)

    def good(self, text: str) -> None:
        """Record a rule kept."""
        self.findings.append(Finding(True, text))

    def bad(self, text: str) -> None:
        """Record a rule broken."""
        self.findings.append(Finding(False, text))

    def render(self) -> str:
        """The report as printed by ``kourier agent check``."""
        lines = [f"Agent backend {self.backend} at {self.endpoint}"]
        lines += [f"  {'ok  ' if f.ok else 'FAIL'}  {f.text}" for f in self.findings]
        broken = sum(not f.ok for f in self.findings)
        lines.append(
            "No contract problem found." if not broken else f"{broken} contract problem(s) found."
        )
        return "\n".join(lines)


def check_agent(
    backend: AgentBackend,
    binding: Binding,
    probe: bool,
    *,
    http: httpx.Client | None = None,
    header_timeout: float = HEADER_TIMEOUT_SECONDS,
    idle_timeout: float = IDLE_TIMEOUT_SECONDS,
) -> CheckReport:
    """Check an agent backend against the agent contract.

    Args:
        backend: The agent backend.
        binding: The binding whose identity calls it.
        probe: Whether to send one probe turn.
        http: The HTTP client; a new one when omitted.
        header_timeout: Seconds within which response headers must arrive.
        idle_timeout: Seconds a stream may go without an event.

    Returns:
        The findings.
    """
    report = CheckReport(backend.name, backend.endpoint)
    with nullcontext(http) if http is not None else httpx.Client() as client_http:
        settings = Settings()
        clock, ids = SystemClock(), SystemIds()
        link = HttpLink(client_http)
        transport = Transport(
            link,
            backend.name,
            clock=clock,
            ids=ids,
            header_timeout=header_timeout,
            idle_timeout=idle_timeout,
            max_response_bytes=settings.max_agent_response_bytes,
            call_seconds=settings.agent_call_seconds,
        )
        client = AgentClient(
            backend,
            binding,
            link=link,
            cards=CardCache(),
            clock=clock,
            ids=ids,
            max_response_bytes=settings.max_agent_response_bytes,
            call_seconds=settings.agent_call_seconds,
            header_timeout=header_timeout,
            idle_timeout=idle_timeout,
        )
        card = _check_card(report, transport, client)
        if card is None or card.protocol_version is None:
            return report
        headers = request_headers(client.base_headers(), card, ())
        _check_methods(report, transport, backend.endpoint, headers, card.protocol_version)
        if probe:
            if card.problems:
                report.bad(
                    "The probe turn was not sent: "
                    "Kourier refuses this agent until its card is fixed."
                )
            else:
                _probe_turn(report, client)
    return report


def _check_card(report: CheckReport, transport: Transport, client: AgentClient) -> AgentCard | None:
    url = card_url(client.endpoint)
    try:
        card = fetch_card(transport, client.endpoint, client.base_headers())
    except CredentialsRejected as error:
        report.bad(
            f"The agent card could not be read: {error}. The credentials are rejected, "
            "so every turn fails without a retry."
        )
        return None
    except AgentError as error:
        report.bad(
            f"The agent card could not be read: {error}. "
            "Every turn is retried, then fails after 15 minutes."
        )
        return None
    report.good(f"The agent card is served at {url}.")
    if card.protocol_version is None:
        report.bad(
            "The card lists no JSON-RPC interface for A2A 1.0 or 0.3"
            f'{_dropped(card)}; every turn fails with "{notices.NO_JSONRPC_INTERFACE}".'
        )
    else:
        other = (
            " (0.3 is used because the card offers no 1.0 interface)"
            if card.protocol_version == "0.3"
            else ""
        )
        version = card.protocol_version
        report.good(
            f"The card offers JSON-RPC; Kourier speaks A2A {version}{other}{_dropped(card)}."
        )
    if card.streaming:
        report.good("The card sets capabilities.streaming: true.")
    else:
        report.bad(
            "The card does not set capabilities.streaming: true. Kourier uses only the "
            f'streaming send, so it refuses the agent: "{notices.NO_STREAMING}".'
        )
    if card.unsupported_extensions:
        report.bad(
            "The card requires extensions Kourier does not speak "
            f"({', '.join(card.unsupported_extensions)}); "
            f'every connect fails with "{notices.UNSUPPORTED_EXTENSION}". Only '
            "https://kagent.dev/extensions/hitl/v1 may be required."
        )
    hitl = (
        "lists kagent's human-in-the-loop extension, so requests ask for it"
        if card.lists_hitl
        else "does not list kagent's human-in-the-loop extension, so requests do not ask "
        "for structured questions and approvals"
    )
    report.good(f"The card {hitl}.")
    return card


def _dropped(card: AgentCard) -> str:
    if not card.dropped_interfaces:
        return ""
    return f"; interfaces dropped: {', '.join(card.dropped_interfaces)}"


def _check_methods(
    report: CheckReport,
    transport: Transport,
    endpoint: str,
    headers: dict[str, str],
    version: ProtocolVersion,
) -> None:
    unknown_task = {"id": f"kourier-check-{uuid.uuid4().hex}"}

    def get() -> None:
        transport.call(
            endpoint, Method.GET_TASK.wire_name(version), unknown_task, headers, CallKind.FOLLOW
        )

    def subscribe() -> None:
        for _ in transport.stream(
            endpoint, Method.SUBSCRIBE.wire_name(version), unknown_task, headers, CallKind.FOLLOW
        ):
            pass

    def cancel() -> None:
        transport.call(
            endpoint, Method.CANCEL.wire_name(version), unknown_task, headers, CallKind.OTHER
        )

    for method, call in (
        (Method.GET_TASK, get),
        (Method.SUBSCRIBE, subscribe),
        (Method.CANCEL, cancel),
    ):
        _probe_unknown_task(report, method, version, call)
    if version == "0.3":
        report.good(
            "ListTasks is not asked of an A2A 0.3 agent: "
            "a turn whose outcome is unknown is always sent again."
        )
        return
    name = Method.LIST_TASKS.wire_name(version)
    try:
        result = transport.call(
            endpoint,
            name,
            {"contextId": f"kourier-check-{uuid.uuid4().hex}", "pageSize": 1},
            headers,
            CallKind.OTHER,
        )
    except AgentError as error:
        report.bad(_method_failure(Method.LIST_TASKS, name, error, "a list of tasks"))
        return
    if isinstance(result, dict) and isinstance(result.get("tasks"), list):
        report.good(f"{name} answers a list of tasks.")
    else:
        report.bad(
            f"{name} answered something that is not a list of tasks; "
            f"{_IF_MISSING[Method.LIST_TASKS]}."
        )


def _probe_unknown_task(
    report: CheckReport, method: Method, version: ProtocolVersion, call: Callable[[], None]
) -> None:
    name = method.wire_name(version)
    try:
        call()
    except AgentError as error:
        if isinstance(error, SessionGone) or error.rpc_code == TASK_NOT_FOUND:
            report.good(f"{name} is implemented (an unknown task gets -32001, task not found).")
        else:
            report.bad(_method_failure(method, name, error, "-32001 (task not found)"))
        return
    report.bad(
        f"{name} of a task that does not exist did not fail; expected -32001 (task not found)."
    )


def _method_failure(method: Method, name: str, error: AgentError, expected: str) -> str:
    if isinstance(error, NotSent) and error.rpc_code == METHOD_NOT_FOUND:
        return f"{name} is not implemented (-32601, method not found): {_IF_MISSING[method]}."
    return f"{name} failed ({error}); expected {expected}. If it is missing, {_IF_MISSING[method]}."


def _probe_turn(report: CheckReport, client: AgentClient) -> None:
    message = OutgoingMessage(message_id=f"kourier-check-{uuid.uuid4().hex}", text=PROBE_TEXT)
    reading = _TurnReading()
    try:
        for event in client.send(message):
            reading.feed(event)
    except AgentError as error:
        report.bad(f"The probe turn failed: {type(error).__name__}: {error}.")
        if not reading.task_id:
            return
    if reading.message_reply is not None:
        _judge_message_reply(report, reading.message_reply)
        return
    if not reading.task_id:
        report.bad(
            "The probe's stream named no task and was not a Message reply: the outcome is unknown, "
            f'so the turn is sent again until it fails with "{notices.UNREACHABLE}".'
        )
        return
    report.good(f"The probe's stream names its task ({reading.task_id}).")
    if reading.context_id:
        report.good("The probe's events name their contextId.")
    else:
        report.bad(
            "The probe's events name no contextId: the thread's next turn starts a new context."
        )
    task = _read_task(report, client, reading.task_id)
    if reading.settled:
        report.good(f"The probe's stream ends settled ({reading.state}).")
    else:
        report.bad(
            "The probe's stream ended without a full Task or a status update in a terminal, "
            "input-required or auth-required state: "
            "Kourier treats it as dropped and reads the task again."
        )
    state = task.status.state if task is not None else reading.state
    _judge_final_state(report, client, reading, state)
    if client.supports_list_tasks and reading.context_id:
        _check_lookup(report, client, reading.context_id, message.message_id)


def _read_task(report: CheckReport, client: AgentClient, task_id: str) -> Task | None:
    try:
        task = client.get_task(task_id)
    except AgentError as error:
        report.bad(f"GetTask of the probe's task failed: {type(error).__name__}: {error}.")
        return None
    report.good(f"GetTask reads the probe's task ({task.status.state}).")
    return task


def _judge_message_reply(report: CheckReport, reply: Message) -> None:
    if reply.text.strip():
        report.good(
            "The probe was answered with one Message: the turn ends as completed with its text."
        )
    else:
        report.bad(
            "The probe was answered with a Message without text: "
            f'the thread shows "{notices.NO_OUTPUT}"'
        )


def _judge_final_state(
    report: CheckReport, client: AgentClient, reading: _TurnReading, state: TaskState | None
) -> None:
    if state == TaskState.COMPLETED:
        if reading.answer_text.strip():
            report.good("The probe's answer is in artifact text.")
        else:
            report.bad(
                "The probe's task completed with no artifact text (text in status messages is not "
                f'shown): the thread shows "{notices.NO_OUTPUT}"'
            )
    elif state == TaskState.AUTH_REQUIRED:
        report.bad(
            "The probe's task paused in auth-required, which Kourier does not support: "
            "it cancels the task."
        )
    elif state == TaskState.INPUT_REQUIRED:
        report.good("The probe's task asked a question (input-required); the check cancels it.")
    elif state in (TaskState.SUBMITTED, TaskState.WORKING):
        report.bad(
            f"The probe's task is still {state} after its stream ended; the check cancels it."
        )
    else:
        report.bad(f"The probe's task ended {state}.")
    if reading.task_id and state is not None and not state.is_terminal:
        try:
            client.cancel(reading.task_id)
        except AgentError as error:
            report.bad(f"CancelTask of the probe's task failed: {type(error).__name__}: {error}.")


def _check_lookup(
    report: CheckReport, client: AgentClient, context_id: str, message_id: str
) -> None:
    try:
        found = client.task_holding_message(context_id, message_id)
    except AgentError as error:
        report.bad(f"ListTasks of the probe's context failed: {type(error).__name__}: {error}.")
        return
    if found is not None:
        report.good("ListTasks shows the probe's messageId in its task's history.")
    else:
        report.bad(
            "ListTasks does not show the probe's messageId in any task's history: after an unknown "
            "outcome every turn looks absent, so it is sent, and may run, again."
        )


class _TurnReading:
    """What a probe's stream said: its task, context, state and answer text."""

    def __init__(self) -> None:
        self.task_id: str | None = None
        self.context_id: str | None = None
        self.state: TaskState | None = None
        self.message_reply: Message | None = None
        self._artifacts: dict[str, str] = {}
        self._final_task = False

    @property
    def settled(self) -> bool:
        return self.state is not None and self.state.settles_stream

    @property
    def answer_text(self) -> str:
        return "".join(self._artifacts.values())

    def feed(self, event: StreamEvent) -> None:
        if isinstance(event, Message):
            if event.role == Role.AGENT and not event.task_id and not self.task_id:
                self.message_reply = event
            self.context_id = self.context_id or event.context_id
            return
        self.task_id = (
            self.task_id or (event.id if isinstance(event, Task) else event.task_id) or None
        )
        self.context_id = self.context_id or event.context_id
        if isinstance(event, Task):
            self.state = event.status.state
            for artifact in event.artifacts:
                self._artifacts[artifact.artifact_id] = _text(artifact.parts)
        elif isinstance(event, StatusUpdate):
            self.state = event.status.state
        elif isinstance(event, ArtifactUpdate):
            text = _text(event.artifact.parts)
            previous = self._artifacts.get(event.artifact.artifact_id, "") if event.append else ""
            self._artifacts[event.artifact.artifact_id] = previous + text


def _text(parts: Sequence[object]) -> str:
    return "".join(p.text for p in parts if isinstance(p, TextPart))


def main(argv: list[str] | None = None) -> int:
    """``python -m shared.a2a.check <backend> [--probe] [--binding NAME]``.

    Reads the config file named by KOURIER_CONFIG. Exit status 0 when the
    agent breaks no rule checked, 1 when it does, 2 on a usage or config error.
    """
    parser = argparse.ArgumentParser(
        prog="kourier agent check",
        description="Check an agent backend against Agent Kourier's agent contract.",
    )
    parser.add_argument("backend", help="the agentBackends[].name to check")
    parser.add_argument("--probe", action="store_true", help="also send one probe turn")
    parser.add_argument(
        "--binding",
        help="the binding whose identity calls the agent (default: the first that uses it)",
    )
    args = parser.parse_args(argv)
    # The probes fail on purpose; their log lines would only bury the report.
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.ERROR))
    try:
        config = load_config(Settings().config_path)
        backend = next((b for b in config.agent_backends if b.name == args.backend), None)
        if backend is None:
            raise ConfigError(
                f"no agentBackend named {args.backend!r} "
                f"(have {', '.join(b.name for b in config.agent_backends)})"
            )
        bindings = [b for b in config.bindings if b.agent_backend == backend.name]
        if args.binding:
            bindings = [b for b in bindings if b.name == args.binding]
        if not bindings:
            raise ConfigError(
                f"no binding{' ' + args.binding if args.binding else ''} "
                f"uses agentBackend {backend.name}"
            )
        report = check_agent(backend, bindings[0], args.probe)
    except ConfigError as error:
        print(f"kourier agent check: {error}", file=sys.stderr)
        return 2
    print(report.render())
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
