"""ListTasks: pages, the page limit, and what counts as finding a turn."""

from __future__ import annotations

import pytest

from shared.a2a.errors import NotSent
from tests.a2a.agents import Exchange, ScriptedAgent, error, result, task
from tests.a2a.conftest import MakeClient


def test_pages_are_followed_up_to_100(agent: ScriptedAgent, make_client: MakeClient) -> None:
    def endless(exchange: Exchange) -> None:
        page = int(exchange.params.get("pageToken") or 0)
        exchange.json(result({"tasks": [task(f"t{page}")], "nextPageToken": str(page + 1)}))

    agent.script = endless

    tasks = make_client(agent.url).list_tasks("c1")

    assert len(tasks) == 100
    assert len(agent.posts()) == 100
    first = agent.posts()[0].body["params"]
    assert first == {"contextId": "c1", "pageSize": 100}
    assert agent.posts()[0].headers["a2a-version"] == "1.0"


def test_a_list_without_history_makes_a_turn_look_absent(
    agent: ScriptedAgent, make_client: MakeClient
) -> None:
    with_history = task(
        "t1", history=[{"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}]
    )
    without_history = task("t2")

    agent.script = lambda exchange: exchange.json(
        result({"tasks": [without_history, with_history]})
    )
    client = make_client(agent.url)

    found = client.task_holding_message("c1", "m1")
    assert found is not None and found.id == "t1"

    agent.script = lambda exchange: exchange.json(result({"tasks": [without_history]}))
    assert client.task_holding_message("c1", "m1") is None


def test_an_agent_without_list_tasks_is_not_sent(
    agent: ScriptedAgent, make_client: MakeClient
) -> None:
    agent.script = lambda exchange: exchange.json(error(-32601, "Method not found"))

    with pytest.raises(NotSent) as raised:
        make_client(agent.url).list_tasks("c1")

    assert raised.value.rpc_code == -32601
