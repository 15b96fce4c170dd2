"""Each SDK peer answers a streamed turn with a completed task, text and one tool step."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from tests.peers import wire
from tests.peers.launch import PeerKind
from tests.peers.record_streams import CAPTURES_DIR
from tests.peers.scenarios import SCENARIOS, Scenario, converse


def _assert_one_tool_step(summary: wire.StreamSummary, tool: str) -> None:
    """One call of ``tool`` and, with the same ID, its result."""
    calls = [call for call in summary.tool_parts("function_call") if call["name"] == tool]
    results = [
        result for result in summary.tool_parts("function_response") if result["name"] == tool
    ]
    assert len(calls) == 1, summary
    assert results, summary
    assert {result["id"] for result in results} == {calls[0]["id"]}


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda scenario: scenario.name)
def test_peer_completes_a_streamed_turn_with_text_and_a_tool_step(
    scenario: Scenario, peer_url: Callable[[PeerKind], str]
) -> None:
    streams = converse(peer_url(scenario.peer), scenario)

    if scenario.pauses:
        pause = wire.summarize(streams["send"])
        assert pause.final_state == "input-required"
        assert pause.confirmation_call["args"]["originalFunctionCall"]["name"] == "publish_note"
        final = wire.summarize(streams["resume"])
        assert final.final_state == "completed"
        assert "The publish_note tool answered" in final.artifact_text
        results = final.tool_parts("function_response")
        assert [result["name"] for result in results] == ["publish_note"]
        assert results[0]["response"]["published"] is True
        return

    final = wire.summarize(streams["send"])
    assert final.final_state == "completed"
    assert final.task_id and final.context_id
    _assert_one_tool_step(final, "count_words")
    if scenario.peer == "demo":
        assert "This is turn 1 in this conversation." in final.artifact_text
        assert "> How many words are in this sentence?" in final.artifact_text
        assert "[Slack:" not in final.artifact_text
    else:
        assert "The count_words tool answered" in final.artifact_text


@pytest.mark.parametrize("version", ["1.0", "0.3"])
def test_adk_puts_tool_parts_in_artifacts_only_when_asked_for_its_newer_converter(
    version: wire.ProtocolVersion, peer_url: Callable[[PeerKind], str]
) -> None:
    legacy = wire.summarize(converse(peer_url("adk"), Scenario("adk", version))["send"])
    newer = wire.summarize(converse(peer_url("adk"), Scenario("adk", version, adk_v2=True))["send"])

    assert not any(wire.tool_kind(part) for part in legacy.artifact_parts)
    assert {wire.tool_kind(part) for part in newer.artifact_parts} >= {
        "function_call",
        "function_response",
    }


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda scenario: scenario.name)
def test_the_recorded_captures_hold_each_scenario_to_its_end(scenario: Scenario) -> None:
    def recorded(stream: str) -> wire.StreamSummary:
        path = CAPTURES_DIR / f"{scenario.name}-{stream}.jsonl"
        return wire.summarize([json.loads(line) for line in path.read_text().splitlines()])

    send = recorded("send")
    final = recorded("resume") if scenario.pauses else send

    assert send.final_state == ("input-required" if scenario.pauses else "completed")
    assert final.final_state == "completed"
    assert final.artifact_text
    assert final.tool_parts("function_response")
