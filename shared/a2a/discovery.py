"""The agent card: where it is, what Kourier reads from it, and its cache.

Theory of operation: the card is at the endpoint, trailing slash trimmed,
plus ``/.well-known/agent-card.json``, fetched with the same identity and
static headers as every call. Cards in the wild list their interfaces in
three places: 1.0's ``supportedInterfaces`` (binding and version per
interface), 0.3's ``additionalInterfaces`` (transport only) and 0.3's
top-level ``url``/``preferredTransport``/``protocolVersion`` (JSON-RPC when
no transport is named). Every interface that is not JSON-RPC, or whose
version is neither 1.x nor 0.x, is dropped; of what is left, 1.0 is chosen
when offered, else 0.3. Interface URLs are ignored: every call goes to the
endpoint. A card is usable when it keeps a JSON-RPC interface, sets
``capabilities.streaming`` to true and requires no extension other than
kagent's human-in-the-loop one; ``AgentCard.problems`` lists, in the
contract's words, each rule it breaks. Usable cards are cached per process
by endpoint and a fingerprint of the headers, so a new URL or new
credentials fetch the card again; an unusable card is never cached, so a
fixed agent is seen at the next turn.

A card also says which agent it is (``AgentCard.identity``): a fingerprint
of its ``name``, its ``provider`` (organization and url) and the URLs of
the interfaces it lists, the fields that name an agent rather than
describe a version of it (``version``, ``description``, skills and
capabilities change when the same agent is redeployed). kagent's cards
carry no UID of the agent, so a kagent agent deleted and created again
under the same name and namespace has the same identity.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from shared.a2a.errors import DiscoveryFailed, NotSent, OutcomeUnknown
from shared.a2a.transport import Transport
from shared.a2a.wire import ProtocolVersion
from shared.core import notices
from shared.core.model import HITL_EXTENSION

CARD_PATH = "/.well-known/agent-card.json"


@dataclass(frozen=True)
class AgentCard:
    """What Kourier reads from an agent card.

    Attributes:
        name: The agent's name.
        protocol_version: The version Kourier speaks to the agent; None when
            the card keeps no JSON-RPC interface.
        streaming: Whether ``capabilities.streaming`` is true.
        lists_hitl: Whether the card lists kagent's human-in-the-loop extension.
        unsupported_extensions: Required extensions Kourier does not speak.
        dropped_interfaces: The interfaces dropped, as "BINDING version".
        identity: A fingerprint of the fields that name the agent.
    """

    name: str
    protocol_version: ProtocolVersion | None
    streaming: bool
    lists_hitl: bool
    unsupported_extensions: tuple[str, ...] = ()
    dropped_interfaces: tuple[str, ...] = ()
    identity: str = ""

    @property
    def problems(self) -> tuple[str, ...]:
        """The contract's text for each discovery rule the card breaks, in order."""
        problems = []
        if self.protocol_version is None:
            problems.append(notices.NO_JSONRPC_INTERFACE)
        if not self.streaming:
            problems.append(notices.NO_STREAMING)
        if self.unsupported_extensions:
            problems.append(notices.UNSUPPORTED_EXTENSION)
        return tuple(problems)


def card_url(endpoint: str) -> str:
    """The card's URL for an endpoint."""
    return endpoint.rstrip("/") + CARD_PATH


def read_card(raw: Mapping[str, Any]) -> AgentCard:
    """Interpret a card's JSON."""
    versions: set[ProtocolVersion] = set()
    dropped: list[str] = []
    for binding, version in _interfaces(raw):
        major = _major(version)
        if _is_jsonrpc(binding) and major is not None:
            versions.add(major)
        else:
            dropped.append(f"{binding or 'unnamed binding'} {version or 'unversioned'}")
    capabilities = _mapping(raw.get("capabilities"))
    extensions = [e for e in _list(capabilities.get("extensions")) if isinstance(e, Mapping)]
    uris = [e.get("uri") for e in extensions]
    return AgentCard(
        name=str(raw.get("name") or ""),
        protocol_version="1.0" if "1.0" in versions else ("0.3" if versions else None),
        streaming=capabilities.get("streaming") is True,
        lists_hitl=HITL_EXTENSION in uris,
        unsupported_extensions=tuple(
            str(e.get("uri"))
            for e in extensions
            if e.get("required") is True and e.get("uri") != HITL_EXTENSION
        ),
        dropped_interfaces=tuple(dropped),
        identity=_identity(raw),
    )


def _identity(raw: Mapping[str, Any]) -> str:
    """A fingerprint of the card's name, provider and interface URLs."""
    provider = _mapping(raw.get("provider"))
    listed = _list(raw.get("supportedInterfaces")) + _list(raw.get("additionalInterfaces"))
    urls = {str(i.get("url")) for i in listed if isinstance(i, Mapping) and i.get("url")}
    if raw.get("url"):
        urls.add(str(raw.get("url")))
    named = [raw.get("name"), provider.get("organization"), provider.get("url"), sorted(urls)]
    return hashlib.sha256(json.dumps(named, default=str).encode()).hexdigest()[:16]


def fetch_card(transport: Transport, endpoint: str, headers: Mapping[str, str]) -> AgentCard:
    """Fetch and interpret the card of ``endpoint``.

    Raises:
        CredentialsRejected: The card fetch got 401 or 403.
        DiscoveryFailed: The card could not be fetched or is not a JSON object.
    """
    url = card_url(endpoint)
    try:
        raw = transport.get_json(url, headers)
    except (NotSent, OutcomeUnknown) as error:
        raise DiscoveryFailed(
            f"agent card at {url}: {error}",
            retry_after=error.retry_after,
            http_status=error.http_status,
        ) from None
    if not isinstance(raw, Mapping):
        raise DiscoveryFailed(f"agent card at {url} is not a JSON object")
    return read_card(raw)


class CardCache:
    """Usable cards by endpoint and headers fingerprint, for the life of the process."""

    def __init__(self) -> None:
        self._cards: dict[tuple[str, str], AgentCard] = {}
        self._lock = threading.Lock()

    def card(
        self, endpoint: str, headers: Mapping[str, str], fetch: Callable[[], AgentCard]
    ) -> AgentCard:
        """The cached card for ``endpoint`` and ``headers``, or ``fetch()``'s."""
        key = (endpoint, _fingerprint(headers))
        with self._lock:
            cached = self._cards.get(key)
        if cached is not None:
            return cached
        card = fetch()
        if not card.problems:
            with self._lock:
                self._cards[key] = card
        return card


def _fingerprint(headers: Mapping[str, str]) -> str:
    text = "\n".join(
        f"{k.lower()}:{v}" for k, v in sorted(headers.items(), key=lambda i: i[0].lower())
    )
    return hashlib.sha256(text.encode()).hexdigest()


def _interfaces(raw: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Every (binding, version) the card lists, wherever it lists it."""
    top_version = str(raw.get("protocolVersion") or "")
    found = [
        (str(i.get("protocolBinding") or ""), str(i.get("protocolVersion") or top_version or "1.0"))
        for i in _list(raw.get("supportedInterfaces"))
        if isinstance(i, Mapping)
    ]
    found += [
        (str(i.get("transport") or ""), top_version or "0.3")
        for i in _list(raw.get("additionalInterfaces"))
        if isinstance(i, Mapping)
    ]
    if raw.get("url"):
        found.append((str(raw.get("preferredTransport") or "JSONRPC"), top_version or "0.3"))
    return found


def _is_jsonrpc(binding: str) -> bool:
    return re.sub(r"[^A-Z]", "", binding.upper()) == "JSONRPC"


def _major(version: str) -> ProtocolVersion | None:
    if re.match(r"^1(\.|$)", version.strip()):
        return "1.0"
    if re.match(r"^0\.", version.strip()):
        return "0.3"
    return None


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []
