"""The backends and bindings file (YAML, path in ``KOURIER_CONFIG``).

Validated with pydantic when first read; a bad file raises ``ConfigError``
whose message names the bad field by its path in the file, e.g.
``bindings[0].agentBackend: no agentBackend named 'dmeo'``.

The file is copied into the functions' source archive and Terraform's
state, and agent URLs reach logs, so it must hold no credential: a URL with
``user:password@`` or a secret-looking query parameter is refused, and so is
a static header whose name speaks of a credential given inline rather than
through ``valueSecretRef`` (read like ``tokenSecretRef``, see
``shared.secrets``). A credential never travels over plain ``http://``,
except to this machine.
"""

from __future__ import annotations

import ipaddress
import re
from datetime import timedelta
from pathlib import Path
from typing import Annotated, Literal
from urllib.parse import parse_qsl, urlsplit

import yaml
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from shared.core.questions import Allowed
from shared.core.redaction import is_secret_key, key_words
from shared.errors import ConfigError
from shared.triggers.matchers import Matcher, parse_matcher

_DURATION = re.compile(r"^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$")


def parse_duration(text: str) -> timedelta:
    """``15m``, ``1h30m``, ``45s`` -> timedelta."""
    match = _DURATION.match(text.strip())
    if not text.strip() or match is None:
        raise ValueError(f"{text!r} is not a duration like 90s, 15m or 1h")
    hours, minutes, seconds = (int(g or 0) for g in match.groups())
    return timedelta(hours=hours, minutes=minutes, seconds=seconds)


IDENTITY_HEADERS = ("authorization", "x-user-id")
"""The headers a Binding's identity sets (contract, What Agent Kourier sends); lower case."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class SecretRef(_Strict):
    """A secret by name (Secret Manager in the cloud, env locally)."""

    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_-]+$")


class SecretHeader(_Strict):
    """A static header whose value is a secret."""

    value_secret_ref: SecretRef = Field(alias="valueSecretRef")


class AgentBackend(_Strict):
    """Where an agent lives and how its URL is built."""

    name: str = Field(min_length=1)
    url: str = Field(pattern=r"^https?://")
    dialect: Literal["a2a", "kagent-v1"] = "a2a"
    namespace: str | None = None
    agent: str | None = None
    headers: dict[str, str | SecretHeader] = Field(default_factory=dict)
    """Sent on every call: a value inline, or ``{valueSecretRef: {name: ...}}``."""

    @field_validator("url")
    @classmethod
    def _no_credential_in_url(cls, url: str) -> str:
        parts = urlsplit(url)
        if parts.username is not None or parts.password is not None:
            raise ValueError(
                "a URL with user:password@ puts a credential in logs and in the source archive; "
                "use identity.tokenSecretRef or a header's valueSecretRef"
            )
        for name, _ in parse_qsl(parts.query, keep_blank_values=True):
            if is_secret_key(name):
                raise ValueError(
                    f"the query parameter {name!r} looks like a credential, which would reach "
                    "logs and the source archive; send it in a header with valueSecretRef"
                )
        return url

    @field_validator("headers")
    @classmethod
    def _no_inline_credential(
        cls, headers: dict[str, str | SecretHeader]
    ) -> dict[str, str | SecretHeader]:
        for name, value in headers.items():
            if isinstance(value, str) and is_credential_header(name):
                raise ValueError(
                    f"{name}: a credential given inline sits in plain text in the source archive "
                    "and the Terraform state; give it as {valueSecretRef: {name: ...}}"
                )
        return headers

    @field_validator("headers")
    @classmethod
    def _no_identity_header(
        cls, headers: dict[str, str | SecretHeader]
    ) -> dict[str, str | SecretHeader]:
        for name in headers:
            if name.strip().lower() in IDENTITY_HEADERS:
                raise ValueError(
                    f"{name} is an identity header: the Binding's identity sets it, "
                    "and a request carries one identity"
                )
        return headers

    @model_validator(mode="after")
    def _kagent_needs_agent(self) -> AgentBackend:
        if self.dialect == "kagent-v1" and not (self.namespace and self.agent):
            raise ValueError("dialect kagent-v1 needs both namespace and agent")
        if self.secret_headers and not self.encrypted_or_local:
            raise ValueError(
                "a secret header would travel over plain http://; use https:// "
                "(plain http is allowed only to this machine)"
            )
        return self

    @property
    def secret_headers(self) -> dict[str, SecretRef]:
        """The headers whose value is a secret, by name."""
        return {
            name: value.value_secret_ref
            for name, value in self.headers.items()
            if isinstance(value, SecretHeader)
        }

    @property
    def encrypted_or_local(self) -> bool:
        """Whether calls are encrypted (https) or stay on this machine (loopback)."""
        parts = urlsplit(self.url)
        return parts.scheme == "https" or _is_loopback(parts.hostname or "")

    @property
    def endpoint(self) -> str:
        """The agent's endpoint: every call goes here (contract, Discovery)."""
        if self.dialect == "kagent-v1":
            return f"{self.url.rstrip('/')}/agents/{self.namespace}/{self.agent}"
        return self.url


class Identity(_Strict):
    """The one identity header of every call to the agent."""

    user_id: str | None = Field(None, alias="userId")
    token_secret_ref: SecretRef | None = Field(None, alias="tokenSecretRef")

    @model_validator(mode="after")
    def _exactly_one(self) -> Identity:
        if (self.user_id is None) == (self.token_secret_ref is None):
            raise ValueError("set exactly one of userId or tokenSecretRef")
        return self


def _duration(value: object) -> timedelta:
    if isinstance(value, timedelta):
        return value
    if not isinstance(value, str):
        raise ValueError("expected a duration like 90s, 15m or 1h")  # noqa: TRY004 - pydantic reads a ValueError
    return parse_duration(value)


class QuestionSettings(_Strict):
    """The agent may ask questions; unanswered ones time out."""

    timeout: Annotated[timedelta, Field(default=timedelta(minutes=15))]

    _parse_timeout = field_validator("timeout", mode="before")(_duration)


class ApprovalSettings(_Strict):
    """Who may approve tool calls, and how long a prompt waits."""

    approvers: list[str] = Field(min_length=1)
    timeout: Annotated[timedelta, Field(default=timedelta(minutes=15))]

    _parse_timeout = field_validator("timeout", mode="before")(_duration)


class Interactions(_Strict):
    """What the agent may ask of people in the thread."""

    questions: QuestionSettings | None = None
    tool_approvals: ApprovalSettings | None = Field(None, alias="toolApprovals")

    def allowed(self) -> Allowed:
        """What the agent may ask, and how long each waits, as the core reads it."""
        return Allowed(
            questions=self.questions.timeout if self.questions else None,
            approvals=self.tool_approvals.timeout if self.tool_approvals else None,
        )


class Binding(_Strict):
    """Slack channels bound to one agent backend."""

    name: str = Field(min_length=1)
    platform: Literal["slack"] = "slack"
    channels: list[str] = Field(min_length=1)
    agent_backend: str = Field(alias="agentBackend")
    identity: Identity
    interactions: Interactions = Field(default_factory=Interactions)
    max_turn: Annotated[
        timedelta, Field(default=timedelta(hours=4), gt=timedelta(0), alias="maxTurnDuration")
    ]
    """How long one turn may keep the agent at work (a person's answer starts it anew)
    before its task is cancelled and the thread told."""

    _parse_max_turn = field_validator("max_turn", mode="before")(_duration)


class TriggerAuth(_Strict):
    """How a trigger's requests prove their sender: a bearer token, or an HMAC of the body."""

    type: Literal["bearer", "hmac"]
    secret_ref: SecretRef = Field(alias="secretRef")
    header: str | None = Field(None, pattern=r"^[A-Za-z0-9-]+$")
    """hmac: the header with the hex HMAC-SHA256 (default: the source's own)."""
    timestamp_header: str | None = Field(None, alias="timestampHeader", pattern=r"^[A-Za-z0-9-]+$")
    """hmac: a header with the Unix time the sender signed as ``<time>:<body>`` (Grafana's way)."""
    max_skew: Annotated[timedelta, Field(default=timedelta(minutes=5), alias="maxSkew")]

    _parse_skew = field_validator("max_skew", mode="before")(_duration)

    @model_validator(mode="after")
    def _hmac_only(self) -> TriggerAuth:
        if self.type == "bearer" and (self.header or self.timestamp_header):
            raise ValueError("header and timestampHeader are for type hmac")
        return self


class TriggerLimits(_Strict):
    """How much one trigger may do."""

    threads_per_hour: int = Field(10, ge=1, alias="threadsPerHour")


def _valid_matcher(text: str) -> str:
    parse_matcher(text)
    return text


SIGNATURE_HEADERS = {
    "alertmanager": "X-Kourier-Signature",
    "grafana": "X-Grafana-Alerting-Signature",
    "generic": "X-Kourier-Signature",
}
"""The HMAC header of each source when the trigger names none."""


class Trigger(_Strict):
    """An alert source that opens threads and starts turns on a Binding (``/triggers/<name>``)."""

    name: str = Field(pattern=r"^[a-z0-9][a-z0-9-]{0,62}$")
    source: Literal["alertmanager", "grafana", "generic"]
    binding: str
    channel: str | None = None
    """Where its threads open: one of the Binding's channels (default: its first)."""
    auth: TriggerAuth
    matchers: list[Annotated[str, AfterValidator(_valid_matcher)]] = Field(default_factory=list)
    """Alertmanager-style label matchers; an alert that fails one is left out."""
    resolved_starts_turn: bool = Field(False, alias="resolvedStartsTurn")
    limits: TriggerLimits = TriggerLimits.model_validate({})

    @property
    def label_matchers(self) -> tuple[Matcher, ...]:
        """The matchers, parsed."""
        return tuple(parse_matcher(m) for m in self.matchers)

    @property
    def signature_header(self) -> str:
        """The header that carries the HMAC signature."""
        return self.auth.header or SIGNATURE_HEADERS[self.source]


class KourierConfig(_Strict):
    """The whole file."""

    agent_backends: list[AgentBackend] = Field(alias="agentBackends", min_length=1)
    bindings: list[Binding] = Field(min_length=1)
    triggers: list[Trigger] = Field(default_factory=list)

    @model_validator(mode="after")
    def _references_resolve(self) -> KourierConfig:
        names = [b.name for b in self.agent_backends]
        for index, binding in enumerate(self.bindings):
            if binding.agent_backend not in names:
                raise ValueError(
                    f"bindings[{index}].agentBackend: no agentBackend named "
                    f"{binding.agent_backend!r} (have {', '.join(names)})"
                )
            backend = self.backend(binding.agent_backend)
            if binding.identity.token_secret_ref is not None and not backend.encrypted_or_local:
                raise ValueError(
                    f"bindings[{index}].identity: a bearer token would travel over plain "
                    f"http:// to {backend.name}; use https:// (plain http is allowed only "
                    "to this machine)"
                )
        seen: dict[str, str] = {}
        for binding in self.bindings:
            for channel in binding.channels:
                if channel in seen:
                    raise ValueError(
                        f"channel {channel} is bound twice ({seen[channel]} and {binding.name})"
                    )
                seen[channel] = binding.name
        self._triggers_resolve()
        return self

    def _triggers_resolve(self) -> None:
        bindings = {b.name: b for b in self.bindings}
        names: set[str] = set()
        for index, trigger in enumerate(self.triggers):
            binding = bindings.get(trigger.binding)
            if binding is None:
                raise ValueError(
                    f"triggers[{index}].binding: no binding named {trigger.binding!r} "
                    f"(have {', '.join(bindings)})"
                )
            if trigger.channel is not None and trigger.channel not in binding.channels:
                raise ValueError(
                    f"triggers[{index}].channel: {trigger.channel} is not a channel of binding "
                    f"{binding.name} (have {', '.join(binding.channels)})"
                )
            if trigger.name in names:
                raise ValueError(f"triggers[{index}].name: {trigger.name!r} is used twice")
            names.add(trigger.name)

    def binding_for_channel(self, channel: str) -> Binding | None:
        """The binding that listens in ``channel``, if any."""
        return next((b for b in self.bindings if channel in b.channels), None)

    def binding(self, name: str) -> Binding | None:
        """The binding called ``name``; None once a deploy removed or renamed it."""
        return next((b for b in self.bindings if b.name == name), None)

    def backend(self, name: str) -> AgentBackend:
        """The agent backend called ``name`` (a binding's always exists: validated)."""
        return next(b for b in self.agent_backends if b.name == name)

    def trigger(self, name: str) -> Trigger | None:
        """The trigger called ``name``, if any."""
        return next((t for t in self.triggers if t.name == name), None)

    def trigger_binding(self, trigger: Trigger) -> Binding:
        """The binding ``trigger`` starts turns on (it always exists: validated at load)."""
        return next(b for b in self.bindings if b.name == trigger.binding)

    def trigger_channel(self, trigger: Trigger) -> str:
        """The channel where ``trigger`` opens its threads."""
        return trigger.channel or self.trigger_binding(trigger).channels[0]


def describe_errors(error: ValidationError) -> str:
    """Each problem by the path of its field, e.g. ``bindings[0].agentBackend: ...``."""
    problems = []
    for item in error.errors():
        where = ""
        for part in item["loc"]:
            where += f"[{part}]" if isinstance(part, int) else (f".{part}" if where else str(part))
        message = item["msg"].removeprefix("Value error, ")
        problems.append(f"{where}: {message}" if where else message)
    return "; ".join(problems)


CREDENTIAL_HEADER_PARTS = frozenset({"auth", "key", "pat", "sig"})
"""A header whose name has one of these words (``X-Api-Key``, ``X-Auth``) carries a credential."""


def is_credential_header(name: str) -> bool:
    """Whether a header's name speaks of a credential (``X-API-Key``, ``Authorization``, ...).

    infra/config_checks.tf refuses the same names before a deploy (a test keeps them equal).
    """
    words = {word.lower() for word in re.split(r"[^A-Za-z0-9]+", name)} | key_words(name)
    return is_secret_key(name) or not words.isdisjoint(CREDENTIAL_HEADER_PARTS)


def _is_loopback(host: str) -> bool:
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def parse_config(text: str, source: str = "config") -> KourierConfig:
    """Parse and validate the YAML text of a config file."""
    try:
        raw = yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise ConfigError(f"{source}: not valid YAML: {error}") from None
    try:
        return KourierConfig.model_validate(raw if raw is not None else {})
    except ValidationError as error:
        raise ConfigError(f"{source}: {describe_errors(error)}") from None


def load_config(path: str) -> KourierConfig:
    """Read and validate the config file at ``path``."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as error:
        raise ConfigError(f"cannot read KOURIER_CONFIG file {path}: {error.strerror}") from None
    return parse_config(text, source=path)
