"""What a function's settings show of the Slack secrets when printed: nothing.

A log line or an error that prints the settings (a startup report, a
validation error, a debugger's repr) goes to Cloud Logging, which keeps it.
"""

from __future__ import annotations

import pytest

from shared.settings import Settings


def test_printed_settings_show_no_slack_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-123-456-abcdefghijkl")
    monkeypatch.setenv("SLACK_SIGNING_SECRET", "8f742231b10e8888abcd99yyyzzz85a5")

    settings = Settings()

    for printed in (repr(settings), str(settings), str(settings.model_dump())):
        assert "xoxb-123-456-abcdefghijkl" not in printed
        assert "8f742231b10e8888abcd99yyyzzz85a5" not in printed
    assert settings.slack_bot_token.get_secret_value() == "xoxb-123-456-abcdefghijkl"
    assert settings.slack_signing_secret.get_secret_value() == "8f742231b10e8888abcd99yyyzzz85a5"
