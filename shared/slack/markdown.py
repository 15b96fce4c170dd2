"""The agent's Markdown, as Slack renders it.

Slack's streaming and ``markdown_text`` fields take standard Markdown, so
most text passes unchanged; what Slack does not render is rewritten: ATX
headings become bold lines, and ``[text](url)`` links are kept (Slack
renders them in markdown_text).
"""

from __future__ import annotations

import re

_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$", re.MULTILINE)


def to_slack_markdown(text: str) -> str:
    """Rewrite what Slack's Markdown does not render."""
    return _HEADING.sub(lambda m: f"**{m.group(2)}**", text)
