"""The one Slack Web API client of a process.

Everything Kourier writes to Slack goes through slack_sdk's WebClient, at
``SLACK_API_URL`` with ``SLACK_BOT_TOKEN``. Rate limits (HTTP 429 with
Retry-After) are retried by slack_sdk's own handler, in order, so no text is
lost or reordered.
"""

from __future__ import annotations

from functools import lru_cache

from slack_sdk import WebClient
from slack_sdk.http_retry.builtin_handlers import (
    ConnectionErrorRetryHandler,
    RateLimitErrorRetryHandler,
)

from shared.settings import get_settings


@lru_cache(maxsize=1)
def slack_client() -> WebClient:
    """The process's WebClient (built on first use)."""
    settings = get_settings()
    return web_client(settings.slack_api_url, settings.slack_bot_token)


def web_client(api_url: str, token: str) -> WebClient:
    """A WebClient for the Web API at ``api_url``, retrying as every Kourier client does."""
    return WebClient(
        token=token,
        base_url=api_url if api_url.endswith("/") else api_url + "/",
        timeout=30,
        retry_handlers=[
            ConnectionErrorRetryHandler(max_retry_count=2),
            RateLimitErrorRetryHandler(max_retry_count=5),
        ],
    )


@lru_cache(maxsize=1)
def bot_user_id() -> str:
    """Our bot's own user ID (auth.test), to ignore our own messages."""
    return str(slack_client().auth_test()["user_id"])
