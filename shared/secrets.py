"""Secrets named in the config (``tokenSecretRef.name``).

In the cloud, Cloud Functions mounts each Secret Manager secret as the
environment variable ``KOURIER_SECRET_<NAME>`` at run time (see infra/);
locally the run command or the user sets the same variable. One way, both
places.
"""

from __future__ import annotations

import os

from shared.errors import ConfigError


def secret_env_var(name: str) -> str:
    """The environment variable that carries secret ``name``."""
    return "KOURIER_SECRET_" + name.upper().replace("-", "_")


def read_secret(name: str) -> str:
    """The value of secret ``name``; ConfigError if it is not provided."""
    value = os.environ.get(secret_env_var(name), "")
    if not value:
        raise ConfigError(f"secret {name!r} is not set (expected in {secret_env_var(name)})")
    return value
