"""Fixtures for the A2A client tests: scripted agents, the demo agent, clients."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from starlette.responses import JSONResponse

from local.demo_agent import build_app
from shared.a2a.client import AgentClient
from shared.a2a.discovery import CARD_PATH, CardCache
from shared.a2a.transport import HttpLink
from shared.config import AgentBackend, Binding
from shared.settings import Settings
from shared.system import SystemClock, SystemIds

DEFAULTS = Settings()
from tests.a2a.agents import ScriptedAgent, free_port, scripted_agent, serve_asgi

MakeClient = Callable[..., AgentClient]


@pytest.fixture
def agent() -> Iterator[ScriptedAgent]:
    """A scripted raw-HTTP agent, stopped after the test."""
    with scripted_agent() as running:
        yield running


def backend_for(url: str, **fields: Any) -> AgentBackend:
    """An AgentBackend named "agent" at ``url``."""
    return AgentBackend.model_validate({"name": "agent", "url": url, **fields})


def binding_for(identity: dict[str, Any] | None = None) -> Binding:
    """A binding of backend "agent" with ``identity`` (X-User-Id kourier-test by default)."""
    return Binding.model_validate(
        {
            "name": "test-binding",
            "channels": ["C1"],
            "agentBackend": "agent",
            "identity": identity or {"userId": "kourier-test"},
        }
    )


@pytest.fixture
def make_client() -> MakeClient:
    """Builds clients that share one fresh card cache (per test).

    ``make_client(url, identity=..., backend=dict(...), **client_kwargs)``.
    """
    cards = CardCache()
    http = httpx.Client(follow_redirects=False)

    def make(
        url: str,
        *,
        identity: dict[str, Any] | None = None,
        backend: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> AgentClient:
        kwargs.setdefault("cards", cards)
        kwargs.setdefault("link", HttpLink(http))
        kwargs.setdefault("clock", SystemClock())
        kwargs.setdefault("ids", SystemIds())
        kwargs.setdefault("max_response_bytes", DEFAULTS.max_agent_response_bytes)
        kwargs.setdefault("call_seconds", DEFAULTS.agent_call_seconds)
        return AgentClient(backend_for(url, **(backend or {})), binding_for(identity), **kwargs)

    return make


def card_03(url: str, **changes: Any) -> dict[str, Any]:
    """An A2A 0.3 card (top-level url, preferredTransport, protocolVersion), as kagent serves."""
    return {
        "name": "demo over 0.3",
        "description": "the demo agent, offered as 0.3 only",
        "url": url,
        "preferredTransport": "JSONRPC",
        "protocolVersion": "0.3.0",
        "version": "1",
        "capabilities": {"streaming": True},
        "defaultInputModes": ["text"],
        "defaultOutputModes": ["text"],
        "skills": [],
        **changes,
    }


def with_card(app: Any, card: dict[str, Any]) -> Any:
    """``app`` with its agent card replaced by ``card``."""

    async def wrapped(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["path"] == CARD_PATH:
            await JSONResponse(card)(scope, receive, send)
            return
        await app(scope, receive, send)

    return wrapped


@pytest.fixture(scope="module", params=["1.0", "0.3"])
def demo_agent(request: pytest.FixtureRequest) -> Iterator[str]:
    """The a2a-sdk 1.3.0 demo agent, offered as A2A 1.0 or (compat mode) 0.3; its URL."""
    port = free_port()
    app = build_app(port, chunk_delay=0.02, heartbeat_seconds=0.5)
    if request.param == "0.3":
        app = with_card(app, card_03(f"http://127.0.0.1:{port}/"))
    with serve_asgi(app, port) as url:
        yield url
