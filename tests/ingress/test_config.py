"""The config file: valid shapes load, bad ones name the bad field."""

from __future__ import annotations

from datetime import timedelta

import pytest

from shared.config import parse_config
from shared.core.questions import Allowed
from shared.errors import ConfigError

GOOD = """
agentBackends:
  - name: demo
    url: http://127.0.0.1:9101/
    headers: {X-Team: sre}
  - name: k8s
    url: https://kagent.example/api/
    headers:
      X-Team: ops
      X-API-Key: {valueSecretRef: {name: k8s-api-key}}
    dialect: kagent-v1
    namespace: kagent
    agent: k8s-agent
bindings:
  - name: sre
    platform: slack
    channels: [C0123456789]
    agentBackend: demo
    identity: {userId: kourier}
    interactions:
      questions: {timeout: 15m}
      toolApprovals: {approvers: [U0123456789], timeout: 1h30m}
  - name: ops
    channels: [C0OPS]
    agentBackend: k8s
    identity: {tokenSecretRef: {name: k8s-token}}
"""


def test_the_documented_shape_loads() -> None:
    config = parse_config(GOOD)
    sre = config.binding_for_channel("C0123456789")
    assert sre is not None and sre.name == "sre"
    assert sre.interactions.tool_approvals is not None
    assert sre.interactions.tool_approvals.timeout == timedelta(hours=1, minutes=30)
    assert config.backend("demo").endpoint == "http://127.0.0.1:9101/"
    assert config.backend("k8s").endpoint == "https://kagent.example/api/agents/kagent/k8s-agent"
    assert config.backend("k8s").secret_headers["X-API-Key"].name == "k8s-api-key"
    ops = config.binding("ops")
    assert ops.interactions.questions is None and ops.interactions.tool_approvals is None
    assert config.binding_for_channel("C0NOBODY") is None


def test_what_a_binding_lets_the_agent_ask_is_read_as_the_core_reads_it() -> None:
    config = parse_config(GOOD)
    sre, ops = config.binding_for_channel("C0123456789"), config.binding_for_channel("C0OPS")
    assert sre is not None and ops is not None
    assert sre.interactions.allowed() == Allowed(
        questions=timedelta(minutes=15), approvals=timedelta(hours=1, minutes=30)
    )
    assert ops.interactions.allowed() == Allowed(questions=None, approvals=None)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            ("agentBackend: demo", "agentBackend: dmeo"),
            "bindings[0].agentBackend: no agentBackend named 'dmeo'",
        ),
        (
            ("{userId: kourier}", "{}"),
            "bindings[0].identity: set exactly one of userId or tokenSecretRef",
        ),
        (
            ("timeout: 15m", "timeout: soon"),
            "bindings[0].interactions.questions.timeout: 'soon' is not a duration",
        ),
        (("url: http://127", "url: ftp://127"), "agentBackends[0].url"),
        (("agent: k8s-agent", "agent: ''"), "dialect kagent-v1 needs both namespace and agent"),
        (("channels: [C0OPS]", "channels: [C0123456789]"), "channel C0123456789 is bound twice"),
        (
            ("approvers: [U0123456789]", "approvers: []"),
            "bindings[0].interactions.toolApprovals.approvers",
        ),
        (("platform: slack", "platform: teams"), "bindings[0].platform"),
        (("    headers: {X-Team: sre}", "    hedaers: {X-Team: sre}"), "agentBackends[0].hedaers"),
        (
            ("{X-Team: sre}", "{X-Team: sre, Authorization: {valueSecretRef: {name: tok}}}"),
            (
                "agentBackends[0].headers: Authorization is an identity header: "
                "the Binding's identity sets it, and a request carries one identity"
            ),
        ),
        (("{X-Team: sre}", "{x-user-id: someone}"), "agentBackends[0].headers: x-user-id is an"),
        (("{X-Team: sre}", "{' X-USER-ID': someone}"), "is an identity header"),
    ],
)
def test_a_bad_file_fails_with_a_message_naming_the_field(
    change: tuple[str, str], message: str
) -> None:
    with pytest.raises(ConfigError) as error:
        parse_config(GOOD.replace(*change, 1), source="kourier.yaml")
    assert str(error.value).startswith("kourier.yaml: ")
    assert message in str(error.value)


def test_a_file_that_is_not_yaml_says_so() -> None:
    with pytest.raises(ConfigError, match="not valid YAML"):
        parse_config("agentBackends: [", source="kourier.yaml")


TRIGGERS = """
triggers:
  - name: prod-alerts
    source: alertmanager
    binding: sre
    auth: {type: bearer, secretRef: {name: am-token}}
    matchers: ["severity=~critical|warning", "env!=dev"]
  - name: grafana
    source: grafana
    binding: ops
    channel: C0OPS
    auth:
      type: hmac
      secretRef: {name: grafana-hmac}
      timestampHeader: X-Grafana-Alerting-Timestamp
    resolvedStartsTurn: true
    limits: {threadsPerHour: 3}
"""


def test_triggers_load_with_their_defaults() -> None:
    config = parse_config(GOOD + TRIGGERS)

    prod = config.trigger("prod-alerts")
    assert prod is not None
    assert config.trigger_channel(prod) == "C0123456789", "the Binding's first channel"
    assert [m.label for m in prod.label_matchers] == ["severity", "env"]
    assert not prod.resolved_starts_turn and prod.limits.threads_per_hour == 10
    grafana = config.trigger("grafana")
    assert grafana is not None
    assert grafana.signature_header == "X-Grafana-Alerting-Signature"
    assert grafana.auth.max_skew == timedelta(minutes=5)
    assert grafana.resolved_starts_turn and grafana.limits.threads_per_hour == 3
    assert config.trigger("nope") is None
    assert parse_config(GOOD).triggers == []


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (("binding: sre", "binding: ser"), "triggers[0].binding: no binding named 'ser'"),
        (("channel: C0OPS", "channel: C0123456789"), "triggers[1].channel: C0123456789 is not"),
        (("name: grafana", "name: prod-alerts"), "triggers[1].name: 'prod-alerts' is used twice"),
        (("name: grafana", "name: Grafana/x"), "triggers[1].name"),
        (("source: grafana", "source: nagios"), "triggers[1].source"),
        (("env!=dev", "env!~("), "triggers[0].matchers[1]: 'env!~(': not a regular expression"),
        (("env!=dev", "env"), "triggers[0].matchers[1]: 'env' is not a matcher"),
        (("threadsPerHour: 3", "threadsPerHour: 0"), "triggers[1].limits.threadsPerHour"),
        (("type: hmac", "type: basic"), "triggers[1].auth.type"),
        (
            ("type: bearer, secretRef", "type: bearer, header: X-A, secretRef"),
            "triggers[0].auth: header and timestampHeader are for type hmac",
        ),
        (("secretRef: {name: am-token}", "secret: am-token"), "triggers[0].auth.secretRef"),
    ],
)
def test_a_bad_trigger_fails_at_load_naming_the_field(
    change: tuple[str, str], message: str
) -> None:
    with pytest.raises(ConfigError) as error:
        parse_config(GOOD + TRIGGERS.replace(*change, 1), source="kourier.yaml")
    assert message in str(error.value)


# The file is copied into the source archive and the Terraform state, and
# agent URLs reach logs: no credential may be written in it.
@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            ("url: https://kagent.example/api/", "url: https://bob:pw@kagent.example/api/"),
            "agentBackends[1].url: a URL with user:password@ puts a credential in logs",
        ),
        (
            ("url: https://kagent.example/api/", "url: https://kagent.example/api/?api_key=k1"),
            "agentBackends[1].url: the query parameter 'api_key' looks like a credential",
        ),
        (
            ("X-Team: ops", "X-Api-Key: k1"),
            "agentBackends[1].headers: X-Api-Key: a credential given inline sits in plain text",
        ),
        (
            ("X-Team: ops", "Authorization: Basic dXNlcjpwYXNz"),
            "agentBackends[1].headers: Authorization: a credential given inline",
        ),
        (
            ("url: https://kagent.example/api/", "url: http://kagent.example/api/"),
            "a secret header would travel over plain http://",
        ),
    ],
)
def test_a_credential_written_in_the_file_is_refused(change: tuple[str, str], message: str) -> None:
    with pytest.raises(ConfigError) as error:
        parse_config(GOOD.replace(*change, 1), source="kourier.yaml")
    assert message in str(error.value)


def test_a_bearer_token_never_travels_over_plain_http_except_to_this_machine() -> None:
    plain = GOOD.replace("url: https://kagent.example/api/", "url: http://kagent.example/api/")
    plain = plain.replace("      X-API-Key: {valueSecretRef: {name: k8s-api-key}}\n", "")
    with pytest.raises(ConfigError, match=r"bindings\[1\].identity: a bearer token would travel"):
        parse_config(plain)
    for local in ("http://127.0.0.1:8083/", "http://localhost:8083/", "http://[::1]:8083/"):
        parse_config(plain.replace("http://kagent.example/api/", local))
