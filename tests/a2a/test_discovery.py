"""Each discovery rule of the contract, against agents whose card breaks (or keeps) it."""

from __future__ import annotations

from typing import Any

import pytest

from shared.a2a.discovery import read_card
from shared.a2a.errors import CardUnusable, DiscoveryFailed
from shared.core import notices
from shared.core.model import HITL_EXTENSION, OutgoingMessage
from tests.a2a.agents import (
    Exchange,
    ScriptedAgent,
    card_json,
    free_port,
    result,
    status_update,
    task,
)
from tests.a2a.conftest import MakeClient, card_03

TURN = OutgoingMessage(message_id="m1", text="hello")


def _completes(exchange: Exchange) -> None:
    if exchange.rpc_method in ("GetTask", "tasks/get"):
        exchange.json(result(task(state="TASK_STATE_COMPLETED")))
    else:
        exchange.sse([result(status_update("TASK_STATE_COMPLETED"))])


@pytest.fixture
def agent(agent: ScriptedAgent) -> ScriptedAgent:
    agent.script = _completes
    return agent


def _refused(agent: ScriptedAgent, make_client: MakeClient) -> CardUnusable:
    with pytest.raises(CardUnusable) as raised:
        list(make_client(agent.url).send(TURN))
    assert agent.posts() == []
    return raised.value


def test_a_card_without_a_jsonrpc_interface_fails_the_turn(
    agent: ScriptedAgent, make_client: MakeClient
) -> None:
    agent.card["supportedInterfaces"] = [
        {"url": agent.url, "protocolBinding": "GRPC", "protocolVersion": "1.0"},
        {"url": agent.url, "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"},
    ]

    refused = _refused(agent, make_client)

    assert notices.turn_failed(refused.reason) == (
        "Agent Kourier could not carry this message: agent card lists no JSON-RPC interface."
    )


def test_a_card_without_streaming_is_refused(agent: ScriptedAgent, make_client: MakeClient) -> None:
    agent.card["capabilities"] = {"streaming": False}

    assert _refused(agent, make_client).reason == notices.NO_STREAMING


def test_a_card_that_does_not_say_streaming_is_refused(
    agent: ScriptedAgent, make_client: MakeClient
) -> None:
    agent.card["capabilities"] = {}

    assert _refused(agent, make_client).reason == notices.NO_STREAMING


def test_an_unsupported_required_extension_fails_the_connect(
    agent: ScriptedAgent, make_client: MakeClient
) -> None:
    agent.card["capabilities"]["extensions"] = [
        {"uri": HITL_EXTENSION, "required": True},
        {"uri": "https://example.com/ext/payments/v1", "required": True},
    ]

    refused = _refused(agent, make_client)

    assert notices.turn_failed(refused.reason) == (
        "Agent Kourier could not carry this message: agent requires an unsupported extension."
    )


def test_a_required_hitl_extension_is_asked_for_on_every_call(
    agent: ScriptedAgent, make_client: MakeClient
) -> None:
    agent.card["capabilities"]["extensions"] = [
        {"uri": HITL_EXTENSION, "required": True},
        {"uri": "https://example.com/ext/optional/v1", "required": False},
    ]
    client = make_client(agent.url)

    list(client.send(TURN))
    client.get_task("t1")

    assert [p.headers.get("a2a-extensions") for p in agent.posts()] == [
        HITL_EXTENSION,
        HITL_EXTENSION,
    ]


def test_a_03_agent_listing_hitl_gets_both_extension_headers(
    agent: ScriptedAgent, make_client: MakeClient
) -> None:
    agent.card = card_03(
        agent.url, capabilities={"streaming": True, "extensions": [{"uri": HITL_EXTENSION}]}
    )
    client = make_client(agent.url)

    list(client.send(TURN))

    [sent] = agent.posts()
    assert sent.body["method"] == "message/stream"
    assert sent.headers["a2a-extensions"] == HITL_EXTENSION
    assert sent.headers["x-a2a-extensions"] == HITL_EXTENSION
    assert "a2a-version" not in sent.headers


@pytest.mark.parametrize(
    ("card_changes", "method"),
    [
        ({}, "SendStreamingMessage"),
        (
            {
                "supportedInterfaces": [
                    {"url": "http://x/", "protocolBinding": "JSONRPC", "protocolVersion": "0.3"},
                    {"url": "http://x/", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
                ]
            },
            "SendStreamingMessage",
        ),
        (
            {
                "supportedInterfaces": [
                    {"url": "http://x/", "protocolBinding": "JSONRPC", "protocolVersion": "0.3"}
                ],
            },
            "message/stream",
        ),
        (
            {
                "supportedInterfaces": [],
                "url": "http://x/grpc",
                "preferredTransport": "GRPC",
                "protocolVersion": "0.3.0",
                "additionalInterfaces": [{"url": "http://x/", "transport": "JSONRPC"}],
            },
            "message/stream",
        ),
        (
            {"supportedInterfaces": [], "url": "http://x/", "protocolVersion": "0.2.6"},
            "message/stream",
        ),
    ],
    ids=["1.0", "1.0-and-0.3", "0.3-interface", "0.3-additional", "0.3-default-transport"],
)
def test_the_version_is_1_0_when_offered_else_0_3(
    agent: ScriptedAgent, make_client: MakeClient, card_changes: dict[str, Any], method: str
) -> None:
    agent.card.update(card_changes)

    list(make_client(agent.url).send(TURN))

    [sent] = agent.posts()
    assert sent.body["method"] == method
    assert ("a2a-version" in sent.headers) == (method == "SendStreamingMessage")


def test_interface_urls_are_ignored(agent: ScriptedAgent, make_client: MakeClient) -> None:
    agent.card["supportedInterfaces"][0]["url"] = "http://127.0.0.1:1/somewhere-else"

    list(make_client(agent.url).send(TURN))

    assert len(agent.posts()) == 1


@pytest.mark.parametrize(
    ("path", "card_path", "post_path"),
    [
        ("a2a/", "/a2a/.well-known/agent-card.json", "/a2a/"),
        ("a2a", "/a2a/.well-known/agent-card.json", "/a2a"),
        ("", "/.well-known/agent-card.json", "/"),
    ],
)
def test_the_card_is_at_the_endpoint_trimmed_plus_the_well_known_path(
    agent: ScriptedAgent, make_client: MakeClient, path: str, card_path: str, post_path: str
) -> None:
    list(make_client(agent.url + path).send(TURN))

    assert [(r.method, r.path) for r in agent.received] == [("GET", card_path), ("POST", post_path)]


def test_on_kagent_v1_the_endpoint_is_url_plus_agents_namespace_name(
    agent: ScriptedAgent, make_client: MakeClient
) -> None:
    client = make_client(
        agent.url + "api",
        backend={"dialect": "kagent-v1", "namespace": "team-a", "agent": "helper"},
    )

    list(client.send(TURN))

    assert [(r.method, r.path) for r in agent.received] == [
        ("GET", "/api/agents/team-a/helper/.well-known/agent-card.json"),
        ("POST", "/api/agents/team-a/helper"),
    ]


def test_the_card_is_fetched_with_the_identity_and_static_headers(
    agent: ScriptedAgent, make_client: MakeClient
) -> None:
    list(make_client(agent.url, backend={"headers": {"X-Tenant": "acme"}}).send(TURN))

    card_request = agent.received[0]
    assert card_request.headers["x-user-id"] == "kourier-test"
    assert card_request.headers["x-tenant"] == "acme"


def test_a_redirected_card_is_not_followed(agent: ScriptedAgent, make_client: MakeClient) -> None:
    agent.card_script = lambda exchange: exchange.status(301, {"Location": agent.url + "card.json"})

    with pytest.raises(DiscoveryFailed) as raised:
        list(make_client(agent.url).send(TURN))

    assert not isinstance(raised.value, CardUnusable)
    assert raised.value.reason == notices.UNREACHABLE
    assert "redirect" in str(raised.value)
    assert [r.path for r in agent.received] == ["/.well-known/agent-card.json"]


@pytest.mark.parametrize("failure", ["500", "slow", "not-json", "not-an-object"])
def test_a_card_that_cannot_be_fetched_is_a_retryable_discovery_failure(
    agent: ScriptedAgent, make_client: MakeClient, failure: str
) -> None:
    def broken_card(exchange: Exchange) -> None:
        if failure == "500":
            exchange.status(500, {"Retry-After": "30"})
        elif failure == "slow":
            exchange.wait(10)
            exchange.json(agent.card)
        elif failure == "not-json":
            exchange.status(200, {"Content-Type": "text/html"}, b"<html></html>")
        else:
            exchange.json(["a", "list"])

    agent.card_script = broken_card

    with pytest.raises(DiscoveryFailed) as raised:
        list(make_client(agent.url, header_timeout=0.5).send(TURN))

    assert not isinstance(raised.value, CardUnusable)
    assert raised.value.reason == notices.UNREACHABLE
    if failure == "500":
        assert raised.value.retry_after == 30


def test_nothing_listening_is_a_discovery_failure(make_client: MakeClient) -> None:
    with pytest.raises(DiscoveryFailed) as raised:
        list(make_client(f"http://127.0.0.1:{free_port()}/").send(TURN))

    assert raised.value.reason == notices.UNREACHABLE


def test_the_card_is_cached_until_the_url_or_credentials_change(
    agent: ScriptedAgent, make_client: MakeClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KOURIER_SECRET_AGENT_TOKEN", "one")
    token = {"tokenSecretRef": {"name": "agent-token"}}

    for _ in range(3):
        list(make_client(agent.url, identity=token).send(TURN))
    assert agent.card_fetches() == 1

    monkeypatch.setenv("KOURIER_SECRET_AGENT_TOKEN", "two")
    list(make_client(agent.url, identity=token).send(TURN))
    assert agent.card_fetches() == 2
    assert agent.received[-2].headers["authorization"] == "Bearer two"

    list(make_client(agent.url + "v2/", identity=token).send(TURN))
    assert agent.card_fetches() == 3

    list(make_client(agent.url, identity={"userId": "someone-else"}).send(TURN))
    assert agent.card_fetches() == 4


def test_an_unusable_card_is_read_again_at_the_next_use(
    agent: ScriptedAgent, make_client: MakeClient
) -> None:
    agent.card["capabilities"] = {"streaming": False}
    with pytest.raises(CardUnusable):
        list(make_client(agent.url).send(TURN))

    agent.card = card_json(agent.url)
    list(make_client(agent.url).send(TURN))

    assert agent.card_fetches() == 2
    assert len(agent.posts()) == 1


@pytest.mark.parametrize("make_card", [card_json, card_03], ids=["1.0", "0.3"])
def test_a_cards_identity_is_its_name_provider_and_interface_urls(make_card: Any) -> None:
    def identity(**changes: Any) -> str:
        return read_card(make_card("http://agent.example/", **changes)).identity

    same = identity(provider={"organization": "sre", "url": "https://sre.example"})
    for unchanged in (
        {"version": "2.0.0"},
        {"description": "a new prompt"},
        {"skills": [{"id": "k8s", "name": "k8s", "description": "", "tags": []}]},
    ):
        assert (
            identity(**unchanged, provider={"organization": "sre", "url": "https://sre.example"})
            == same
        )
    for changed in (
        {"name": "another agent"},
        {"provider": {"organization": "ops", "url": "https://sre.example"}},
        {"provider": {"organization": "sre", "url": "https://ops.example"}},
    ):
        assert identity(**changed) != same
    moved = read_card(make_card("http://elsewhere.example/")).identity
    assert moved != identity()
