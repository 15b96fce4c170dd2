"""Terraform refuses, before a deploy, the config files that the functions refuse when they load.

infra/config_checks.tf finds the headers given inline whose names speak of a
credential, and a precondition stops the apply; shared/config.py refuses the
same headers when a function loads the file. Were Terraform to let a name
through that the functions refuse, the credential would already be in the
source archive and the Terraform state, and every function would then fail
to start. The test applies config_checks.tf for real (Terraform as a library,
no provider, offline) to a config whose headers are the names below, and
compares what it refuses with what ``is_credential_header`` refuses.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import yaml

from shared.config import CREDENTIAL_HEADER_PARTS, is_credential_header
from shared.core.redaction import SECRET_KEY_PARTS, SECRET_KEY_WORDS, SECRET_KEYS
from tests.infra.layout import CHECKOV_VENV, INFRA_DIR, TERRAFORM_EVAL

HEADER_NAMES = [
    # Credentials, as real services name them.
    "Authorization",
    "Proxy-Authorization",
    "Cookie",
    "X-Api-Key",
    "x-api-key",
    "apikey",
    "X-Goog-Api-Key",
    "Ocp-Apim-Subscription-Key",
    "X-Auth",
    "X-Auth-Token",
    "X-Access-Key",
    "X-Amz-Security-Token",
    "X-Vault-Token",
    "PRIVATE-TOKEN",
    "X-Gitlab-Pat",
    "X-Credential",
    "X-Private-Key",
    "X-Session-Id",
    "X-Signature",
    "X-Hub-Signature-256",
    "X-Passphrase",
    "X-Pass",
    "X-PIN",
    "X-Otp",
    "X_PWD",
    "userPwd",
    "clientKey",
    "APIKey",
    # Not credentials.
    "X-Team",
    "Accept",
    "Content-Type",
    "User-Agent",
    "X-Request-Id",
    "X-Tenant",
    "X-Path",
    "X-Shipping",
    "X-Design",
    "X-Client-Cert",
    "X-Keyboard-Layout",
]

STUB = """
variable "config_yaml" {
  type = string
}

locals {
  config = yamldecode(var.config_yaml)
}

output "inline_credential_headers" {
  value = local.inline_credential_headers
}

output "credential_name_words" {
  value = local.credential_name_words
}

output "credential_name_parts" {
  value = local.credential_name_parts
}
"""


def applied(config: dict[str, Any], workdir: Path) -> dict[str, Any]:
    """The outputs of config_checks.tf applied to ``config``."""
    shutil.copy(INFRA_DIR / "config_checks.tf", workdir / "config_checks.tf")
    (workdir / "stub.tf").write_text(STUB)
    result = subprocess.run(
        [
            str(CHECKOV_VENV / "bin" / "python"),
            str(TERRAFORM_EVAL),
            str(workdir),
            json.dumps({"config_yaml": yaml.safe_dump(config)}),
        ],
        check=False,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    outputs: dict[str, Any] = json.loads(result.stdout)
    return outputs


def test_terraform_refuses_exactly_the_inline_headers_the_functions_refuse(
    checkov_bin: Path, tmp_path: Path
) -> None:
    config = {
        "agentBackends": [
            {
                "name": "inline",
                "url": "https://agent.example.com/",
                "headers": dict.fromkeys(HEADER_NAMES, "value"),
            },
            {
                "name": "by-secret",
                "url": "https://agent.example.com/",
                "headers": {"X-Api-Key": {"valueSecretRef": {"name": "agent-key"}}},
            },
        ]
    }

    outputs = applied(config, tmp_path)

    refused_by_terraform = {
        name.removeprefix("inline: ") for name in outputs["inline_credential_headers"]
    }
    refused_by_functions = {name for name in HEADER_NAMES if is_credential_header(name)}
    assert sorted(refused_by_functions - refused_by_terraform) == [], (
        "Terraform lets these through, so they reach the source archive and the state"
    )
    assert sorted(refused_by_terraform - refused_by_functions) == []
    assert "Ocp-Apim-Subscription-Key" in refused_by_terraform
    assert "X-Team" not in refused_by_terraform
    assert outputs["credential_name_words"] == list(SECRET_KEY_WORDS)
    assert sorted(outputs["credential_name_parts"]) == sorted(
        SECRET_KEY_PARTS | SECRET_KEYS | CREDENTIAL_HEADER_PARTS
    )
