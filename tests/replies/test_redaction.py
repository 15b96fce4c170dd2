"""What a person never sees of a tool's arguments or result: secrets."""

from __future__ import annotations

from shared.core.redaction import REDACTED, redact


def test_strings_under_secret_keys_are_hidden_at_any_depth_and_the_rest_is_kept() -> None:
    arguments = {
        "query": "weather in Paris",
        "api_key": "k-123",
        "max_tokens": 100,
        "headers": {"Authorization": "Basic dXNlcjpwYXNz", "Accept": "text/plain"},
        "credentials": [{"user": "ada", "pin": "1234"}],
        "clientSecret": "",
    }

    assert redact(arguments) == {
        "query": "weather in Paris",
        "api_key": REDACTED,
        "max_tokens": 100,
        "headers": {"Authorization": REDACTED, "Accept": "text/plain"},
        "credentials": [{"user": REDACTED, "pin": REDACTED}],
        "clientSecret": "",
    }


def test_credential_shaped_text_is_hidden_wherever_it_is() -> None:
    result = {
        "log": "posting with xoxb-1234-5678-abcdefgh to postgres://bob:hunter2@db:5432/app",
        "header": "Authorization: Bearer abcdefghijklmnop",
        "keys": ["AKIAABCDEFGHIJKLMNOP", "ghp_abcdefghijklmnopqrstuvwxyz0123"],
        "pem": "-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----",
    }

    assert redact(result) == {
        "log": f"posting with {REDACTED} to postgres://bob:{REDACTED}@db:5432/app",
        "header": f"Authorization: Bearer {REDACTED}",
        "keys": [REDACTED, REDACTED],
        "pem": REDACTED,
    }


def test_a_value_with_nothing_secret_comes_back_equal() -> None:
    value = {"text": "How many words?", "n": [1, 2.5, None, True], "tokenizer": 3}

    assert redact(value) == value
