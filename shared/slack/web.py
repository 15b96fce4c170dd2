"""Slack's Web API client, as every Kourier process builds it.

Everything Kourier writes to Slack goes through slack_sdk's WebClient, at
``SLACK_API_URL`` with ``SLACK_BOT_TOKEN`` (``shared.bootstrap`` builds the
one of a process). Rate limits (HTTP 429 with Retry-After) are retried by
slack_sdk's own handler, in order, so no text is lost or reordered; a fenced
call is checked again before each retry (``shared.slack.retry``).
"""

from __future__ import annotations

from slack_sdk import WebClient
from slack_sdk.http_retry.builtin_handlers import ConnectionErrorRetryHandler

from shared.slack.retry import RateLimitRetry


def web_client(api_url: str, token: str) -> WebClient:
    """A WebClient for the Web API at ``api_url``, retrying as every Kourier client does."""
    return WebClient(
        token=token,
        base_url=api_url if api_url.endswith("/") else api_url + "/",
        timeout=30,
        retry_handlers=[
            ConnectionErrorRetryHandler(max_retry_count=2),
            RateLimitRetry(max_retry_count=5),
        ],
    )
