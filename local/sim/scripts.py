"""Agent scripts: random legal A2A histories, and the contract's misbehaviours.

Theory of operation. A script is what one task does, as timed events in an
internal form (``local.sim.agent.Wire`` spells them as A2A 1.0 or 0.3): status
updates, artifact chunks (the first chunk of an artifact replaces, the rest
append, as a2a-sdk's task store needs), replaces and take-backs, tool calls
and results written the way one framework writes them (in append chunks of
one artifact, in a fresh artifact each, or in working status messages, with
ADK's, kagent 0.9's or kagent 1.0's metadata key), a one-Message reply,
pauses, and an end state. Status messages sometimes carry text, which must
never be shown. The generator draws each script from the stream
``agent/<messageId>``, so a message's script is the same whatever the
scheduler did before it was sent. The profile (version, dialect, which
methods the agent implements, whether it de-duplicates messageIds) is drawn
once per seed.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from local.sim.world import stream_seed, us

WORDS = [
    "alpha",
    "bravo",
    "charlie",
    "delta",
    "echo",
    "foxtrot",
    "golf",
    "hotel",
    "india",
    "juliet",
    "kilo",
    "lima",
    "mike",
    "november",
    "oscar",
    "papa",
    "quebec",
    "romeo",
    "sierra",
    "tango",
    "uniform",
    "victor",
    "whiskey",
    "xray",
    "yankee",
    "zulu",
]
HITL = "https://kagent.dev/extensions/hitl/v1"
TOOL_KEYS = ("adk_type", "kagent_type", "kagent.dev/a2a/part-type")
TOOL_NAMES = ("search_docs", "read_runbook", "list_pods", "get_metrics", "open_ticket")


@dataclass(frozen=True)
class AgentProfile:
    """How the agents of one seed behave, for all their turns."""

    version: str = "1.0"
    dialect: str = "a2a"
    tool_key: str = "adk_type"
    tool_place: str = "append"
    """Where tool parts go: "append" (chunks of one artifact), "fresh" (an artifact each), "status"."""
    dedup: bool = True
    can_subscribe: bool = True
    list_history: bool = True
    lists_hitl: bool = False
    pauses: bool = False
    """Whether scripts pause for questions and approvals."""

    @classmethod
    def draw(cls, rng: random.Random) -> AgentProfile:
        """A random profile (the per-seed swarm of agent behaviours)."""
        dialect = "kagent-v1" if rng.random() < 0.3 else "a2a"
        return cls(
            version="0.3" if rng.random() < 0.5 else "1.0",
            dialect=dialect,
            tool_key=rng.choice(TOOL_KEYS),
            tool_place=rng.choice(("append", "fresh", "status")),
            dedup=rng.random() >= 0.1,
            can_subscribe=rng.random() >= 0.2,
            list_history=rng.random() >= 0.1,
            lists_hitl=dialect == "kagent-v1" or rng.random() < 0.5,
            pauses=rng.random() < 0.5,
        )


@dataclass(frozen=True)
class Step:
    """One event of a task, ``at_us`` after the task started (or was answered)."""

    at_us: int
    event: dict[str, Any]


@dataclass
class Script:
    """What one send leads to."""

    steps: list[Step] = field(default_factory=list)
    message_reply: dict[str, Any] | None = None
    """The whole turn is this one Message (no task)."""
    busy_seconds: float = 0.0
    """The agent answers -32004 to this messageId for this long after its first send."""
    new_context: bool = False
    """The agent puts the task in a new context (the thread is told)."""


class ScriptGenerator:
    """Scripts for one seed's agents, keyed by messageId."""

    def __init__(self, seed: int, profile: AgentProfile) -> None:
        self.seed = seed
        self.profile = profile
        self._scripts: dict[str, Script] = {}

    def for_message(self, message_id: str) -> Script:
        """The script of a new turn (the same for every send of the messageId)."""
        found = self._scripts.get(message_id)
        if found is None:
            rng = random.Random(stream_seed(self.seed, "agent", message_id))
            found = self._new_turn(rng, message_id)
            self._scripts[message_id] = found
        return found

    def after_answer(self, message_id: str, task_id: str) -> Script:
        """What a paused task does once answered."""
        rng = random.Random(stream_seed(self.seed, "agent-answer", f"{message_id}/{task_id}"))
        builder = _Builder(rng, self.profile, prefix=f"{message_id}")
        builder.status("working")
        builder.body(rng.randint(1, 5))
        builder.end(rng)
        return Script(steps=builder.steps)

    def _new_turn(self, rng: random.Random, message_id: str) -> Script:
        script = Script()
        if rng.random() < 0.03:
            script.busy_seconds = rng.uniform(30, 400)
        if rng.random() < 0.05:
            parts = [] if rng.random() < 0.2 else [{"text": _words(rng, 3, 12)}]
            script.message_reply = {
                "role": "agent",
                "parts": parts,
                "messageId": f"reply-{message_id}",
            }
            return script
        script.new_context = rng.random() < 0.005
        builder = _Builder(rng, self.profile, prefix=message_id)
        builder.status("working")
        builder.body(rng.randint(1, 12))
        if self.profile.pauses and rng.random() < 0.25:
            builder.pause(rng, self.profile.dialect)
        else:
            builder.end(rng)
        script.steps = builder.steps
        return script


class _Builder:
    """Builds a script's steps, keeping each artifact's parts (for replaces)."""

    def __init__(self, rng: random.Random, profile: AgentProfile, prefix: str) -> None:
        self.rng = rng
        self.profile = profile
        self.prefix = prefix
        self.steps: list[Step] = []
        self.t = 0
        self.parts: dict[str, list[dict[str, Any]]] = {}
        self.calls = 0
        self.messages = 0
        self.open_calls: list[tuple[str, str]] = []

    def gap(self) -> None:
        roll = self.rng.random()
        if roll < 0.003:
            seconds = self.rng.uniform(310, 400)  # past the idle limit: the stream is cut
        elif roll < 0.01:
            seconds = self.rng.uniform(200, 900)  # a long tool call: past a hand-over
        elif roll < 0.04:
            seconds = self.rng.uniform(5, 60)
        else:
            seconds = self.rng.uniform(0.01, 2.0)
        self.t += us(seconds)

    def add(self, event: dict[str, Any]) -> None:
        self.gap()
        self.steps.append(Step(self.t, event))

    def status(
        self, state: str, message: dict[str, Any] | None = None, final: bool = False
    ) -> None:
        event: dict[str, Any] = {"kind": "status", "state": state, "final": final}
        if message is not None:
            event["message"] = message
        self.add(event)

    def chunk(self, artifact_id: str, parts: list[dict[str, Any]]) -> None:
        known = artifact_id in self.parts
        if known:
            self.parts[artifact_id].extend(parts)
        else:
            self.parts[artifact_id] = list(parts)
        self.add({"kind": "artifact", "artifact_id": artifact_id, "parts": parts, "append": known})

    def replace(self, artifact_id: str, text: str) -> None:
        """A chunk that replaces the artifact: its parts again, with the text changed."""
        old = self.parts.get(artifact_id, [])
        new: list[dict[str, Any]] = []
        placed = False
        for part in old:
            if "text" in part:
                if not placed:
                    new.append({"text": text})
                    placed = True
            else:
                new.append(part)
        if not placed:
            new.append({"text": text})
        self.parts[artifact_id] = new
        self.add(
            {"kind": "artifact", "artifact_id": artifact_id, "parts": list(new), "append": False}
        )

    def tool_part(
        self, name: str, call_id: str, result: bool, failed: bool = False
    ) -> dict[str, Any]:
        key = self.profile.tool_key
        data: dict[str, Any] = {"name": name, "id": call_id}
        if result:
            data["response"] = (
                {"error": "it broke"} if failed else {"result": _words(self.rng, 1, 3)}
            )
        else:
            data["args"] = {"query": _words(self.rng, 1, 2)}
        return {"data": data, "metadata": {key: "function_response" if result else "function_call"}}

    def place_tool(self, part: dict[str, Any]) -> None:
        place = self.profile.tool_place
        if place == "append":
            self.chunk("a1", [part])
        elif place == "fresh":
            self.calls += 1
            self.chunk(f"tool-{self.prefix}-{self.calls}-{len(self.steps)}", [part])
        else:
            self.messages += 1
            message: dict[str, Any] = {"role": "agent", "parts": [part]}
            if self.rng.random() < 0.7:
                message["messageId"] = f"status-{self.prefix}-{self.messages}"
            self.status("working", message)

    def agent_message(self) -> None:
        """A Message in the middle of a task: never the reply (the contract's ignored Messages)."""
        self.messages += 1
        message: dict[str, Any] = {
            "role": self.rng.choice(("agent", "agent", "user")),
            "parts": [{"text": "aside " + _words(self.rng, 1, 3)}],
            "messageId": f"aside-{self.prefix}-{self.messages}",
        }
        if self.rng.random() < 0.5:
            message["taskId"] = "named"  # replaced by the task's id when emitted
        self.add({"kind": "message", "message": message})

    def body(self, count: int) -> None:
        rng = self.rng
        for _ in range(count):
            roll = rng.random()
            if roll < 0.45:
                self.chunk("a1", [{"text": _words(rng, 1, 6) + " "}])
            elif roll < 0.55:
                self.chunk("a2", [{"text": _words(rng, 1, 4) + " "}])
            elif roll < 0.72:
                self.calls += 1
                call = (rng.choice(TOOL_NAMES), f"call-{self.prefix}-{self.calls}")
                if rng.random() < 0.05:  # the result comes before its call
                    self.place_tool(self.tool_part(call[0], call[1], result=True))
                    self.place_tool(self.tool_part(call[0], call[1], result=False))
                    continue
                self.place_tool(self.tool_part(call[0], call[1], result=False))
                self.open_calls.append(call)
            elif roll < 0.85 and self.open_calls:
                name, call_id = self.open_calls.pop(rng.randrange(len(self.open_calls)))
                failed = rng.random() < 0.2
                self.place_tool(self.tool_part(name, call_id, result=True, failed=failed))
                if rng.random() < 0.05:  # a second, different result: the first one counts
                    self.place_tool(self.tool_part(name, call_id, result=True, failed=not failed))
            elif roll < 0.9:
                text = "" if rng.random() < 0.4 else _words(rng, 1, 5) + " "
                self.replace(rng.choice(("a1", "a2")), text)
            elif roll < 0.92:
                self.agent_message()
            elif roll < 0.95:
                self.status(
                    "working", {"role": "agent", "parts": [{"text": "status " + _words(rng, 1, 3)}]}
                )
            else:
                self.chunk("a1", [{"data": {"note": _words(rng, 1, 2)}}])
        for name, call_id in self.open_calls:
            if rng.random() < 0.8:
                self.place_tool(self.tool_part(name, call_id, result=True))
        self.open_calls = []

    def pause(self, rng: random.Random, dialect: str) -> None:
        """input-required: a tool approval (the HITL payload) or, on a2a, a text question."""
        self.messages += 1
        message_id = f"pause-{self.prefix}-{self.messages}"
        if dialect == "a2a" and rng.random() < 0.4:
            question = {
                "role": "agent",
                "parts": [{"text": "which cluster, " + _words(rng, 1, 2) + "?"}],
            }
            question["messageId"] = message_id
            self.status("input-required", question, final=True)
            return
        tools = [
            {
                "id": f"tool-{self.prefix}-{self.messages}-{n}",
                "name": rng.choice(TOOL_NAMES),
                "args": {"target": _words(rng, 1, 2)},
            }
            for n in range(rng.randint(1, 3))
        ]
        payload = {
            "type": "tool_approval_request",
            "hint": "approve " + _words(rng, 1, 2),
            "tools": tools,
        }
        message = {
            "role": "agent",
            "parts": [{"text": "please approve"}],
            "messageId": message_id,
            "metadata": {HITL: payload},
            "extensions": [HITL],
        }
        self.status("input-required", message, final=True)

    def end(self, rng: random.Random) -> None:
        roll = rng.random()
        if roll < 0.86:
            self.status("completed", final=True)
        elif roll < 0.93:
            said = rng.choice(
                ("context length exceeded", "rate limit hit", "boom", "deadline exceeded")
            )
            message = {"role": "agent", "parts": [{"text": f"{said} CANARY-7f3a"}]}
            self.status("failed", message, final=True)
        elif roll < 0.96:
            self.status("rejected", final=True)
        else:
            self.status("canceled", final=True)


def _words(rng: random.Random, least: int, most: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(least, most)))
