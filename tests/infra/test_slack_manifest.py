"""The Slack app manifest asks for exactly what the code uses.

Theory of operation: the scopes and event subscriptions are derived from the
product code (shared/ and functions/), never listed by hand twice. Web API
calls are found by reading the code's syntax tree for calls of slack_sdk
``WebClient`` methods (``client.chat_postMessage(...)``) and for
``api_call("method.name", ...)``; each WebClient method is mapped to the Web
API method it calls by reading slack_sdk's own source. Event types are
``HANDLED_EVENT_TYPES`` in shared/slack/events.py. The tables below give the
scopes each method and event needs; a method or event missing from them
fails the test with a message saying which table to extend.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml
from slack_sdk import WebClient

from tests.infra.layout import INFRA_DIR, REPO_ROOT

MANIFEST = INFRA_DIR / "slack-manifest.yaml"
PRODUCT_DIRS = (REPO_ROOT / "shared", REPO_ROOT / "functions")

# Bot scopes each Web API method needs (docs.slack.dev/reference/methods).
METHOD_SCOPES: dict[str, frozenset[str]] = {
    "auth.test": frozenset(),
    "chat.postMessage": frozenset({"chat:write"}),
    "chat.update": frozenset({"chat:write"}),
    "chat.postEphemeral": frozenset({"chat:write"}),
    "chat.startStream": frozenset({"chat:write"}),
    "chat.appendStream": frozenset({"chat:write"}),
    "chat.stopStream": frozenset({"chat:write"}),
    # Accepts chat:write since 2026-03-05 (shared/research/slack-anchors.md),
    # so the app needs no assistant:write.
    "assistant.threads.setStatus": frozenset({"chat:write"}),
    # The agent session methods check chat:write (shared/research/slack-agent-sessions.md).
    "agents.sessions.setStatus": frozenset({"chat:write"}),
    "agents.sessions.rename": frozenset({"chat:write"}),
    # users:read.email for the email in the actor line of a turn.
    "users.info": frozenset({"users:read", "users:read.email"}),
    "views.open": frozenset(),
    # A thread read back (a turn's end notice, told once): public and private channels.
    "conversations.replies": frozenset({"channels:history", "groups:history"}),
}

# WebClient helpers that call several Web API methods.
SDK_HELPERS: dict[str, tuple[str, ...]] = {
    "chat_stream": ("chat.startStream", "chat.appendStream", "chat.stopStream"),
}

# Event type in a callback => the manifest's bot_events that deliver it.
# Kourier listens in public and private channels it is bound to.
EVENT_SUBSCRIPTIONS: dict[str, tuple[str, ...]] = {
    "app_mention": ("app_mention",),
    "message": ("message.channels", "message.groups"),
    "agent_session_stopped": ("agent_session_stopped",),
}

SUBSCRIPTION_SCOPES: dict[str, frozenset[str]] = {
    "app_mention": frozenset({"app_mentions:read"}),
    "message.channels": frozenset({"channels:history"}),
    "message.groups": frozenset({"groups:history"}),
    "agent_session_stopped": frozenset(),
}

FEATURE_SCOPES: dict[str, frozenset[str]] = {
    # Declaring the app an agent adds assistant:write (Slack adds it in the app settings too).
    "agent_view": frozenset({"assistant:write"}),
}


@cache
def webclient_api_methods() -> dict[str, tuple[str, ...]]:
    """Each public WebClient method => the Web API methods it calls."""
    methods: dict[str, tuple[str, ...]] = {}
    for name, function in inspect.getmembers(WebClient, inspect.isfunction):
        if name.startswith("_") or name == "api_call":
            continue
        called = tuple(re.findall(r"api_call\(\s*[\"']([\w.]+)[\"']", inspect.getsource(function)))
        methods[name] = SDK_HELPERS.get(name, called)
    return methods


def product_sources() -> Iterator[Path]:
    """Every Python file of the deployed product."""
    for directory in PRODUCT_DIRS:
        yield from sorted(directory.rglob("*.py"))


def called_api_methods() -> dict[str, str]:
    """Web API method => first place in the product code that calls it."""
    sdk_methods = webclient_api_methods()
    found: dict[str, str] = {}
    for source in product_sources():
        tree = ast.parse(source.read_text(encoding="utf-8"), filename=str(source))
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            where = f"{source.relative_to(REPO_ROOT)}:{node.lineno}"
            attribute = node.func.attr
            if attribute == "api_call":
                method = (
                    node.args[0]
                    if node.args
                    else next((k.value for k in node.keywords if k.arg == "api_method"), None)
                )
                assert isinstance(method, ast.Constant) and isinstance(method.value, str), (
                    f"{where}: api_call with a method name that is not a literal; name it literally"
                )
                found.setdefault(method.value, where)
            elif attribute in sdk_methods:
                assert sdk_methods[attribute], (
                    f"{where}: WebClient.{attribute} calls no single Web API method; "
                    "add it to SDK_HELPERS"
                )
                for method_name in sdk_methods[attribute]:
                    found.setdefault(method_name, where)
    return found


def handled_event_types() -> tuple[str, ...]:
    """HANDLED_EVENT_TYPES of shared/slack/events.py."""
    try:
        events = importlib.import_module("shared.slack.events")
    except ModuleNotFoundError:
        pytest.fail("shared/slack/events.py does not exist: it must define HANDLED_EVENT_TYPES")
    if not hasattr(events, "HANDLED_EVENT_TYPES"):
        pytest.fail(
            "shared/slack/events.py must define HANDLED_EVENT_TYPES, "
            "the event types chat_ingress handles"
        )
    return tuple(events.HANDLED_EVENT_TYPES)


def required_subscriptions() -> set[str]:
    """The bot_events that deliver every handled event type."""
    unknown = [kind for kind in handled_event_types() if kind not in EVENT_SUBSCRIPTIONS]
    assert unknown == [], (
        f"event types {unknown} are not in EVENT_SUBSCRIPTIONS; add their bot_events"
    )
    return {
        subscription for kind in handled_event_types() for subscription in EVENT_SUBSCRIPTIONS[kind]
    }


def required_scopes() -> set[str]:
    """Bot scopes for every Web API method called, every event subscribed, every feature."""
    calls = called_api_methods()
    unknown = {method: where for method, where in calls.items() if method not in METHOD_SCOPES}
    assert unknown == {}, f"Web API methods without a scope in METHOD_SCOPES: {unknown}"
    scopes = {scope for method in calls for scope in METHOD_SCOPES[method]}
    return (
        scopes
        | {scope for event in required_subscriptions() for scope in SUBSCRIPTION_SCOPES[event]}
        | {scope for feature in FEATURE_SCOPES for scope in FEATURE_SCOPES[feature]}
    )


@pytest.fixture(scope="module")
def manifest() -> dict[str, Any]:
    """The manifest template, parsed (its ${...} placeholders read as strings)."""
    parsed: dict[str, Any] = yaml.safe_load(MANIFEST.read_text(encoding="utf-8"))
    return parsed


def test_bot_scopes_are_exactly_those_the_code_needs(manifest: dict[str, Any]) -> None:
    granted = set(manifest["oauth_config"]["scopes"]["bot"])
    needed = required_scopes()
    assert granted == needed, (
        f"missing from the manifest: {sorted(needed - granted)}; "
        f"not needed by the code: {sorted(granted - needed)}"
    )
    assert "user" not in manifest["oauth_config"]["scopes"], (
        "Kourier acts as its bot only: no user scopes"
    )


def test_event_subscriptions_are_exactly_the_handled_event_types(manifest: dict[str, Any]) -> None:
    subscribed = set(manifest["settings"]["event_subscriptions"]["bot_events"])
    needed = required_subscriptions()
    assert subscribed == needed, (
        f"missing from the manifest: {sorted(needed - subscribed)}; "
        f"not handled by chat_ingress: {sorted(subscribed - needed)}"
    )


def test_the_app_is_declared_an_agent(manifest: dict[str, Any]) -> None:
    features = manifest["features"]
    assert set(FEATURE_SCOPES) <= set(features)
    assert 0 < len(features["agent_view"]["agent_description"]) <= 300


def test_request_urls_are_filled_in_by_terraform(manifest: dict[str, Any]) -> None:
    settings = manifest["settings"]
    assert settings["event_subscriptions"]["request_url"] == "${events_url}"
    assert settings["interactivity"] == {"is_enabled": True, "request_url": "${interactivity_url}"}
    assert settings["socket_mode_enabled"] is False
    outputs = (INFRA_DIR / "outputs.tf").read_text(encoding="utf-8")
    assert re.search(r'templatefile\("\$\{path\.module\}/slack-manifest\.yaml"', outputs), (
        "outputs.tf must render slack-manifest.yaml"
    )
    assert "events_url" in outputs and "interactivity_url" in outputs
