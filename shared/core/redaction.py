"""Secrets taken out of what an agent's tools say, before a person sees it.

Theory of operation: ``redact`` returns a copy of a JSON value (a tool's
arguments or result, an approval's arguments) in which every string that
looks secret reads ``REDACTED``; keys, structure and every other value stay
exactly as sent, so a redacted value still shows what a tool was called
with. A string is secret in two ways. By its key: every string under an
object key whose name speaks of a secret (``password``, ``api_key``,
``Authorization``, ``client_secret``, ...), however deeply nested below it.
Numbers and booleans under such keys stay, so ``max_tokens: 100`` is shown.
By its shape, wherever it is: a known credential format (a Slack, GitHub,
AWS, Google or OpenAI-style key, a JSON Web Token, a PEM private key, a
``Bearer`` credential) or the password in a URL's ``user:password@`` is
replaced inside the string, the rest of which stays. Both lists lean
towards hiding too much: a person loses a detail, never a credential.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

REDACTED = "[redacted]"

_SECRET_KEY_WORDS = (
    "password",
    "passwd",
    "passphrase",
    "secret",
    "token",
    "apikey",
    "accesskey",
    "privatekey",
    "credential",
    "authorization",
    "cookie",
    "sessionid",
    "signingkey",
)
"""A key is secret when, lower-cased with everything but letters and digits
dropped, it contains one of these."""

_SECRET_SHAPES = re.compile(
    "|".join(
        (
            r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)",
            r"\bxox[abeoprs]-[A-Za-z0-9-]{8,}",  # Slack tokens
            r"\bxapp-[A-Za-z0-9-]{8,}",  # Slack app-level tokens
            r"\bgh[pousr]_[A-Za-z0-9]{20,}",  # GitHub tokens
            r"\bgithub_pat_[A-Za-z0-9_]{20,}",
            r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b",  # AWS access key IDs
            r"\bAIza[0-9A-Za-z_-]{35}",  # Google API keys
            r"\bsk-[A-Za-z0-9_-]{20,}",  # OpenAI-style secret keys
            r"\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]+",  # JSON Web Tokens
        )
    )
)
_BEARER = re.compile(r"\b(Bearer|Basic|Token)\s+[A-Za-z0-9._~+/=-]{8,}", re.IGNORECASE)
_URL_PASSWORD = re.compile(r"(\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s:/@]+:)[^\s@/]+@")


def redact(value: Any) -> Any:
    """A copy of a JSON value with every secret-looking string replaced.

    Args:
        value: Any JSON value (dicts, lists, strings, numbers, booleans, None).

    Returns:
        The same structure, with the secrets ``REDACTED``.
    """
    return _redact(value, under_secret_key=False)


def is_secret_key(key: str) -> bool:
    """Whether an object key names a secret (its strings are never shown)."""
    folded = re.sub(r"[^a-z0-9]", "", key.lower())
    return any(word in folded for word in _SECRET_KEY_WORDS)


def redact_text(text: str) -> str:
    """``text`` with every credential-shaped piece of it replaced."""
    text = _SECRET_SHAPES.sub(REDACTED, text)
    text = _BEARER.sub(lambda match: f"{match.group(1)} {REDACTED}", text)
    return _URL_PASSWORD.sub(lambda match: f"{match.group(1)}{REDACTED}@", text)


def _redact(value: Any, under_secret_key: bool) -> Any:
    if isinstance(value, str):
        return REDACTED if under_secret_key and value else redact_text(value)
    if isinstance(value, Mapping):
        return {
            key: _redact(item, under_secret_key or is_secret_key(str(key)))
            for key, item in value.items()
        }
    if isinstance(value, list | tuple):
        return [_redact(item, under_secret_key) for item in value]
    return value
