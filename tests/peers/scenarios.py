"""The conversations held with each peer, for the smoke test and the recordings.

A scenario is one peer spoken to in one protocol version. Its conversation
is one streamed send of a Slack-style turn; a "-confirm" peer pauses for
approval, and the conversation then approves, which is a second stream.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tests.peers import wire
from tests.peers.launch import PeerKind

TURN_TEXT = "[Slack: Ada Lovelace (U123) <ada@example.com>]\nHow many words are in this sentence?"
ACTOR = {"id": "U123", "platform": "slack", "name": "Ada Lovelace", "email": "ada@example.com"}


@dataclass(frozen=True)
class Scenario:
    """One peer, one protocol version, and whether to ask ADK for its newer converter."""

    peer: PeerKind
    version: wire.ProtocolVersion
    adk_v2: bool = False

    @property
    def name(self) -> str:
        """The scenario's name, as in its recordings: e.g. "adk-1.0-adkv2"."""
        return f"{self.peer}-{self.version}" + ("-adkv2" if self.adk_v2 else "")

    @property
    def headers(self) -> dict[str, str]:
        """Headers sent besides the version header, as Kourier would send them."""
        headers = {"X-User-Id": "kourier-test"}
        if self.adk_v2:
            headers["A2A-Extensions"] = wire.ADK_V2_EXTENSION
        return headers

    @property
    def pauses(self) -> bool:
        """Whether the peer pauses for approval before its tool runs."""
        return self.peer.endswith("-confirm")


SCENARIOS = (
    Scenario("demo", "1.0"),
    Scenario("demo", "0.3"),
    Scenario("adk", "1.0"),
    Scenario("adk", "0.3"),
    Scenario("adk", "1.0", adk_v2=True),
    Scenario("adk-confirm", "1.0"),
    Scenario("adk-confirm", "0.3"),
    Scenario("kagent", "0.3"),
    Scenario("kagent-confirm", "0.3"),
)


def converse(base_url: str, scenario: Scenario) -> dict[str, list[dict[str, Any]]]:
    """Holds the scenario's conversation with the peer at ``base_url``.

    Returns:
        The frames of each stream, by name: "send", then "resume" for a
        peer that pauses.
    """
    version = scenario.version
    send = wire.stream_request(
        [wire.text_part(TURN_TEXT, version)], version, metadata={"agentkourier.dev/actor": ACTOR}
    )
    streams = {"send": wire.stream(base_url, send, version, scenario.headers)}
    if scenario.pauses:
        pause = wire.summarize(streams["send"])
        framework: wire.Framework = "kagent" if scenario.peer.startswith("kagent") else "adk"
        answer = wire.stream_request(
            [wire.approval_part(framework, pause, version)],
            version,
            context_id=pause.context_id,
            task_id=pause.task_id,
        )
        streams["resume"] = wire.stream(base_url, answer, version, scenario.headers)
    return streams
