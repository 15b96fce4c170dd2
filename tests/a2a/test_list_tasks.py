"""ListTasks: pages, the page limit, and what counts as finding a turn."""

from __future__ import annotations

import pytest
from structlog.testing import capture_logs

from shared.a2a.errors import LookupIncomplete, NotSent
from tests.a2a.agents import Exchange, Script, ScriptedAgent, error, result, task
from tests.a2a.conftest import MakeClient


def test_pages_are_followed_up_to_100(agent: ScriptedAgent, make_client: MakeClient) -> None:
    def endless(exchange: Exchange) -> None:
        page = int(exchange.params.get("pageToken") or 0)
        exchange.json(result({"tasks": [task(f"t{page}")], "nextPageToken": str(page + 1)}))

    agent.script = endless

    listed = make_client(agent.url).list_tasks("c1")

    assert len(listed.tasks) == 100 and not listed.complete
    assert len(agent.posts()) == 100
    first = agent.posts()[0].body["params"]
    assert first == {"contextId": "c1", "pageSize": 100}
    assert agent.posts()[0].headers["a2a-version"] == "1.0"


def endless_pages_holding(message_id: str | None, on_page: int | None = None) -> Script:
    """Pages that never end; page ``on_page`` holds ``message_id`` in a task's history."""

    def answer(exchange: Exchange) -> None:
        page = int(exchange.params.get("pageToken") or 0)
        history = []
        if page == on_page:
            history = [{"messageId": message_id, "role": "ROLE_USER", "parts": [{"text": "hi"}]}]
        listed = [task(f"t{page}", history=history)]
        exchange.json(result({"tasks": listed, "nextPageToken": str(page + 1)}))

    return answer


def test_a_list_cut_at_100_pages_without_the_turn_is_incomplete_not_absent(
    agent: ScriptedAgent, make_client: MakeClient
) -> None:
    agent.script = endless_pages_holding("m1", on_page=None)

    with capture_logs() as logs, pytest.raises(LookupIncomplete):
        make_client(agent.url).task_holding_message("c1", "m1")

    assert len(agent.posts()) == 100
    [logged] = [entry for entry in logs if entry["event"] == "list_tasks_incomplete"]
    assert logged["context"] == "c1" and logged["pages"] == 100


def test_a_turn_found_in_a_list_cut_at_100_pages_is_found(
    agent: ScriptedAgent, make_client: MakeClient
) -> None:
    agent.script = endless_pages_holding("m1", on_page=99)

    found = make_client(agent.url).task_holding_message("c1", "m1")

    assert found is not None and found.id == "t99"


def test_a_list_whose_100th_page_is_its_last_is_complete(
    agent: ScriptedAgent, make_client: MakeClient
) -> None:
    def hundred(exchange: Exchange) -> None:
        page = int(exchange.params.get("pageToken") or 0)
        token = str(page + 1) if page < 99 else ""
        exchange.json(result({"tasks": [task(f"t{page}")], "nextPageToken": token}))

    agent.script = hundred
    client = make_client(agent.url)

    assert client.list_tasks("c1").complete
    assert client.task_holding_message("c1", "m1") is None


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
