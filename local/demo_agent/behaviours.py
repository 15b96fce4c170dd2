"""What the demo agent does, by keyword: one row of ``BEHAVIOURS`` per feature of Agent Kourier.

A message that holds a row's keyword as a word (case ignored; a keyword
with ``seconds`` needs a number after it, as in "long 90") gets that row's
behaviour; the first row that matches wins, and a message that matches
none gets ``ECHO``. To add a behaviour, write an async function that takes
a ``DemoTurn`` and add a row: "hello" lists every row in the order given.
A row's ``refuse`` may answer the send with a JSON-RPC error instead (the
agent calls it before the SDK sees the send).
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from local.demo_agent import hitl
from local.demo_agent.turn import Answer, DemoTurn

Run = Callable[[DemoTurn], Awaitable[None]]
Refuse = Callable[[str, int | None], int | None]
"""Given a send's messageId and the number after the keyword: a JSON-RPC error code, or None."""

COUNT_TOOL = "count_words"
TAKE_BACK_PAUSE_SECONDS = 2.0
"""How long a take-back's first words stay, so a reader sees them go."""
ESSAY_PARAGRAPHS = 45
AGENT_BUSY = -32004


@dataclass(frozen=True)
class Behaviour:
    """One keyword and what the agent does when a message holds it."""

    keywords: tuple[str, ...]
    shows: str
    """One line for the list "hello" answers with."""
    run: Run
    seconds: int | None = None
    """Set: the keyword takes a number of seconds, and this is the example shown."""
    refuse: Refuse | None = None
    _patterns: tuple[re.Pattern[str], ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        number = r"\s+(\d+)" if self.seconds is not None else ""
        patterns = tuple(
            re.compile(rf"(?<![\w-]){re.escape(keyword)}{number}(?![\w-])", re.IGNORECASE)
            for keyword in self.keywords
        )
        object.__setattr__(self, "_patterns", patterns)

    @property
    def example(self) -> str:
        """What to write to get this behaviour."""
        keyword = self.keywords[0]
        return keyword if self.seconds is None else f"{keyword} {self.seconds}"

    def match(self, written: str) -> tuple[bool, int | None]:
        """Whether ``written`` asks for this behaviour, and the number after its keyword."""
        for pattern in self._patterns:
            found = pattern.search(written)
            if found:
                return True, int(found.group(1)) if self.seconds is not None else None
        return False, None


def behaviour_for(written: str) -> tuple[Behaviour, int | None]:
    """The behaviour ``written`` asks for, and the number after its keyword."""
    for behaviour in BEHAVIOURS:
        matched, argument = behaviour.match(written)
        if matched:
            return behaviour, argument
    return ECHO, None


# --- the default: quote, count, and point at the rest ----------------------------------


async def echo_and_count(turn: DemoTurn, run_seconds: float = 0.0) -> None:
    """Quotes the message, counts its words with a tool (running ``run_seconds``)."""
    words = len(turn.written.split())
    await turn.say(f"This is turn {turn.number} in this conversation.")
    await turn.say(" You wrote:\n\n")
    await turn.say(_quote(turn.written))
    await turn.say("\n\nLet me count its words with a tool.")
    call_id = await turn.call(COUNT_TOOL, {"text": turn.written})
    await turn.work(run_seconds, COUNT_TOOL)
    await turn.result(call_id, COUNT_TOOL, {"words": words})
    await turn.say(f"\n\nYour message has {words} {'word' if words == 1 else 'words'}.")


async def echo(turn: DemoTurn) -> None:
    await echo_and_count(turn)
    await turn.say(
        " That is all for this turn. Say hello to see what else I can show you.", last=True
    )
    await turn.complete()


async def menu(turn: DemoTurn) -> None:
    await echo_and_count(turn)
    lines = [f"- `{b.example}`: {b.shows}" for b in BEHAVIOURS if b.run is not menu]
    await turn.say(
        "\n\nI can also show you what Agent Kourier does. Put one of these words in a message:\n"
        + "\n".join(lines),
        last=True,
    )
    await turn.complete()


async def long_run(turn: DemoTurn) -> None:
    await echo_and_count(turn, run_seconds=turn.argument or 0)
    await turn.say(" That is all for this turn.", last=True)
    await turn.complete()


# --- an alert (Agent Kourier's triggers) ----------------------------------------------

DEPLOYS_TOOL = "recent_deploys"
_BLOCK = re.compile(
    r"^BEGIN UNTRUSTED DATA from [^\n]*alert[^\n]*$(.*?)^END UNTRUSTED DATA",
    re.MULTILINE | re.DOTALL,
)


def alert_fields(written: str) -> dict[str, Any] | None:
    """The alert's fields that Kourier put in the untrusted-data block, if the turn has them."""
    found = _BLOCK.search(written)
    if found is None:
        return None
    lines = [line.removeprefix("> ") for line in found.group(1).strip("\n").splitlines()]
    try:
        fields = json.loads("\n".join(lines))
    except ValueError:
        return None
    return fields if isinstance(fields, dict) else None


async def investigate_alert(turn: DemoTurn) -> None:
    """Reads the alert's fields as data, checks the service's deploys with a tool, says what next."""
    fields = alert_fields(turn.written)
    if fields is None:
        await turn.say(
            "I look into the alerts Agent Kourier sends me. Run `./kourier alert` to send one.",
            last=True,
        )
        await turn.complete()
        return
    title = str(fields.get("title", "the alert"))
    labels = fields.get("commonLabels") or {}
    service = str(labels.get("service") or labels.get("job") or "the service")
    if fields.get("status") == "resolved":
        await turn.say(
            f"**{title}** has resolved. I keep the notes above in this thread; "
            "if it fires again, Agent Kourier opens a new thread.",
            last=True,
        )
        await turn.complete()
        return
    severity = f" ({fields['severity']})" if fields.get("severity") else ""
    summary = f": {fields['summary']}" if fields.get("summary") else ""
    await turn.say(f"Looking into **{title}**{severity}{summary}.\n\n")
    call_id = await turn.call(DEPLOYS_TOOL, {"service": service, "since": "2h"})
    deploy = {"version": "v2.14.1", "minutes_before_alert": 12, "author": "ci"}
    await turn.result(call_id, DEPLOYS_TOOL, {"deploys": [deploy]})
    runbook = (fields.get("links") or {}).get("Runbook")
    await turn.say(
        f"{service} {deploy['version']} went out {deploy['minutes_before_alert']} minutes "
        "before the alert began: the likeliest cause. Next, compare the error rate by version, "
        "and roll back if only the new one fails"
        + (f" (runbook: {runbook})" if runbook else "")
        + ". Reply in this thread to go on; say `approve` and I ask to restart the service.",
        last=True,
    )
    await turn.complete()


# --- tool approvals ---------------------------------------------------------------------

TOOL_RESULTS: dict[str, dict[str, Any]] = {
    "restart_service": {"status": "restarted", "pods": 3},
    "read_logs": {"lines": 120, "errors": 3},
    "scale_deployment": {"replicas": 5},
    "delete_pod": {"deleted": True},
}


async def approve_one(turn: DemoTurn) -> None:
    await turn.say("I would like to restart the checkout service, and that needs an approver.")
    tools = [("restart_service", {"service": "checkout", "namespace": "shop"})]
    await _ask_approval(turn, tools, hint="Restart the checkout service?")


async def approve_several(turn: DemoTurn) -> None:
    await turn.say("To fix checkout I would like to run three tools; each needs an approver.")
    tools: list[tuple[str, dict[str, Any]]] = [
        ("read_logs", {"service": "checkout", "since": "1h"}),
        ("scale_deployment", {"name": "checkout", "replicas": 5}),
        ("delete_pod", {"name": "checkout-7d9f-x2"}),
    ]
    await _ask_approval(turn, tools, hint=None)


async def _ask_approval(
    turn: DemoTurn, tools: list[tuple[str, dict[str, Any]]], hint: str | None
) -> None:
    """Calls each tool, then pauses for approval as kagent does.

    Without a ``hint`` of the tool's own, kagent passes on the instruction
    ADK writes for a client, which Agent Kourier drops.
    """
    gated = [hitl.GatedTool(await turn.call(name, args), name, args) for name, args in tools]
    hint = hint or (
        f"Please approve or reject the tool call {gated[0].name}() by responding with a "
        "FunctionResponse with an expected ToolConfirmation payload."
    )
    await turn.ask_hitl(hitl.approval_request(gated, hint), hint, _run_decided)


async def _run_decided(turn: DemoTurn, answer: Answer) -> None:
    assert answer.request is not None
    decided = hitl.decisions(answer.request, answer.response)
    lines = []
    for decision in decided:
        tool = decision.tool
        if decision.approved:
            await turn.result(tool.call_id, tool.name, TOOL_RESULTS.get(tool.name, {"ok": True}))
            lines.append(f"- `{tool.name}`: approved, so it ran.")
        else:
            await turn.result(tool.call_id, tool.name, hitl.REJECTED_RESULT)
            reason = f" ({decision.rejection_reason})" if decision.rejection_reason else ""
            lines.append(f"- `{tool.name}`: rejected{reason}, so it did not run.")
    await turn.say(_received(answer) + "\n".join(lines), last=True)
    await turn.complete()


# --- questions ------------------------------------------------------------------------


def _question(text: str, *choices: str, multiple: bool = False) -> dict[str, Any]:
    return {"question": text, "choices": list(choices), "multiple": multiple}


async def ask_choice(turn: DemoTurn) -> None:
    await turn.say("Before I deploy, I need to know where to.")
    question = _question("Which environment should I deploy to?", "staging", "production")
    await _ask_user(turn, question, lambda got: f"So I deploy to {got[0]}.")


async def ask_checkboxes(turn: DemoTurn) -> None:
    await turn.say("I will collect diagnostics for checkout.")
    question = _question(
        "Which signals should I collect?", "logs", "metrics", "traces", "profiles", multiple=True
    )
    await _ask_user(turn, question, lambda got: f"So I collect {' and '.join(got)}.")


async def ask_free_text(turn: DemoTurn) -> None:
    await turn.say("I am opening an incident for checkout.")
    question = _question("What should the incident be called?")
    await _ask_user(turn, question, lambda got: f"So the incident is called “{got[0]}”.")


async def _ask_user(
    turn: DemoTurn, question: dict[str, Any], then: Callable[[list[str]], str]
) -> None:
    """Calls kagent's ask_user tool with one question, and pauses for the answer."""
    questions = [question]
    call_id = await turn.call("ask_user", {"questions": questions})
    request = hitl.ask_user_request(questions)

    async def answered(turn: DemoTurn, answer: Answer) -> None:
        assert answer.request is not None
        got = hitl.answers(answer.request, answer.response)
        result = [{"question": q["question"], "answer": a} for q, a in zip(questions, got)]
        await turn.result(call_id, "ask_user", {"result": json.dumps(result)})
        await turn.say(_received(answer) + then(got[0]), last=True)
        await turn.complete()

    await turn.ask_hitl(request, "; ".join(q["question"] for q in questions), answered)


RIDDLE = "Here is a riddle: what has keys but cannot open a single lock?"


async def riddle(turn: DemoTurn) -> None:
    await turn.ask(RIDDLE, _riddle_answered)


async def _riddle_answered(turn: DemoTurn, answer: Answer) -> None:
    verdict = "That is right!" if "piano" in answer.text.lower() else "Not quite."
    await turn.say(
        f"{answer.actor} answered “{answer.text}” in plain text. {verdict} "
        "The answer I had in mind: a piano.",
        last=True,
    )
    await turn.complete()


# --- how a turn can end -----------------------------------------------------------------


async def fail(turn: DemoTurn) -> None:
    await turn.say("Let me summarise the incident with the model.")
    call_id = await turn.call("summarize_incident", {"incident": "checkout latency"})
    await turn.result(call_id, "summarize_incident", {"error": "429 Too Many Requests"})
    await turn.fail(
        "Model provider error 429 Too Many Requests: quota exceeded for project demo-7f3a "
        "(request 8f2c41). Retry after 60 s.",
        {"error_code": "RATE_LIMIT_EXCEEDED"},
    )


async def take_back(turn: DemoTurn) -> None:
    await turn.say("My first guess: the database is the culprit.")
    await asyncio.sleep(TAKE_BACK_PAUSE_SECONDS)
    await turn.replace("")
    await turn.say(
        "On second thought, I take that back: the database is fine. The cache is the culprit.",
        last=True,
    )
    await turn.complete()


class Busy:
    """Refuses a message as busy (-32004) until it has waited its seconds, then answers it."""

    def __init__(self) -> None:
        self._first_seen: dict[str, float] = {}
        self._refused: dict[str, int] = {}

    def refuse(self, message_id: str, seconds: int | None) -> int | None:
        """-32004 while ``message_id`` was first seen less than ``seconds`` ago."""
        now = time.monotonic()
        first = self._first_seen.setdefault(message_id, now)
        if now - first < (seconds or 0):
            self._refused[message_id] = self._refused.get(message_id, 0) + 1
            return AGENT_BUSY
        return None

    async def run(self, turn: DemoTurn) -> None:
        refused = self._refused.get(turn.message_id, 0)
        await turn.say(
            f"I was busy for {turn.argument} seconds and refused your message {refused} times. "
            f"Agent Kourier sent it again each time with the same messageId ({turn.message_id}), "
            "and now I answer it, once.",
            last=True,
        )
        await turn.complete()


async def essay(turn: DemoTurn) -> None:
    await turn.say(f"Here is an answer in {ESSAY_PARAGRAPHS} paragraphs, too long for one message.")
    paragraphs = [f"\n\n**{n}.** {_ESSAY_SENTENCES}" for n in range(1, ESSAY_PARAGRAPHS + 1)]
    for start in range(0, ESSAY_PARAGRAPHS, 3):
        await turn.say("".join(paragraphs[start : start + 3]))
    await turn.say("\n\nThat is the end of the essay.", last=True)
    await turn.complete()


_ESSAY_SENTENCES = (
    "Slack holds a streamed message for about five minutes and a limited amount of text, so "
    "Agent Kourier rolls a long answer over to a continuation message before either limit. "
    "The first message then says the answer goes on below, and the next one carries on where "
    "it stopped, so nothing is lost or repeated between them."
)


def _quote(text: str) -> str:
    """The text as a Markdown block quote, or a note that there was none."""
    lines = text.strip().splitlines() or ["(nothing)"]
    return "\n".join(f"> {line}" for line in lines)


def _received(answer: Answer) -> str:
    """What the agent got: who answered, and the extension's payload as sent."""
    payload = json.dumps(answer.response, ensure_ascii=False)
    return f"Resumed with the answer from {answer.actor}:\n```\n{payload}\n```\n"


_busy = Busy()

ECHO = Behaviour((), "quotes your message and counts its words with a tool.", echo)
BEHAVIOURS: tuple[Behaviour, ...] = (
    # First: an alert's fields are data that may hold any other keyword.
    Behaviour(
        ("alert",),
        "I look into an alert that Agent Kourier sent me (run `./kourier alert`).",
        investigate_alert,
    ),
    Behaviour(("hello", "help"), "this list.", menu),
    Behaviour(
        ("approve",),
        "I ask to restart a service; an approver decides (Approve, Reject).",
        approve_one,
    ),
    Behaviour(
        ("approvals",),
        "I ask to run three tools at once (Approve all, Reject all, or one by one).",
        approve_several,
    ),
    Behaviour(("choose",), "I ask a question with choices.", ask_choice),
    Behaviour(("checkboxes",), "I ask a question you answer with several choices.", ask_checkboxes),
    Behaviour(("freetext",), "I ask a question you answer in your own words.", ask_free_text),
    Behaviour(("riddle",), "I ask in plain text; a reply in the thread answers.", riddle),
    Behaviour(
        ("long",),
        "a tool runs that long, past one function's time to follow a stream, "
        "so Agent Kourier hands the stream over.",
        long_run,
        seconds=90,
    ),
    Behaviour(("fail",), "my task fails, and says why (a rate limit).", fail),
    Behaviour(("takeback",), "I write a guess, then take it back.", take_back),
    Behaviour(
        ("busy",),
        "I refuse your message as busy (-32004) that long, then answer it.",
        _busy.run,
        seconds=30,
        refuse=_busy.refuse,
    ),
    Behaviour(("essay",), "an answer too long for one Slack message.", essay),
)
