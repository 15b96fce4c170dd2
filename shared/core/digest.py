"""Plain copies and short stable digests of the JSON values agents send.

Reply state is stored per task, so it remembers what it has seen by digest
rather than by content. Two values that say the same have the same digest
even when a task store turned their whole numbers into floats (a2a-sdk does).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any


def plain(value: Any) -> Any:
    """``value`` with every mapping made a dict and every list or tuple a list."""
    if isinstance(value, Mapping):
        return {str(key): plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [plain(item) for item in value]
    return value


def digest(value: Any) -> str:
    """A 16-hex-digit digest of a JSON value; whole floats count as integers."""
    text = json.dumps(_canonical(value), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _canonical(value: Any) -> Any:
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:
        return value  # the most common values first: an ABC check costs more than these
    if kind is dict or isinstance(value, Mapping):
        return {str(key): _canonical(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_canonical(item) for item in value]
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value
