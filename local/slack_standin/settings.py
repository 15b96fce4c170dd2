"""Settings of the Slack stand-in process.

Each setting is read from ``SLACK_STANDIN_<NAME>`` and may be overridden by
the command-line flag ``--<name>`` (underscores become dashes), so
``--signing-secret S`` and ``SLACK_STANDIN_SIGNING_SECRET=S`` are the same
setting.
"""

from __future__ import annotations

from pydantic_settings import BaseSettings, SettingsConfigDict

from local.slack_standin.models import Tunables, User

DEFAULT_USERS = "U0ALICE:Alice Liddell:alice@example.com,U0BOB:Bob Builder:bob@example.com"


class StandinSettings(Tunables, BaseSettings):
    """Everything the stand-in is started with."""

    model_config = SettingsConfigDict(env_prefix="SLACK_STANDIN_", extra="ignore")

    port: int = 8310
    signing_secret: str = "standin-signing-secret"
    bot_token: str = "xoxb-standin-token"
    # Channels the bot may post to, comma-separated. A channel a user writes
    # in through the control API joins them.
    channels: str = "C0123456789"
    # People, comma-separated, each "ID:Real Name:email".
    users: str = DEFAULT_USERS
    # For the console: the demo agent whose requests it shows, and Kourier's
    # config, whose tool approvers it marks among the people.
    agent_url: str | None = None
    kourier_config: str | None = None

    def tunables(self) -> Tunables:
        """The settings a test may change at run time, at their start values."""
        return Tunables.model_validate(self.model_dump(include=set(Tunables.model_fields)))

    def channel_ids(self) -> list[str]:
        """The channels the workspace starts with."""
        return [channel.strip() for channel in self.channels.split(",") if channel.strip()]

    def people(self) -> list[User]:
        """The people the workspace starts with."""
        return [parse_user(spec) for spec in self.users.split(",") if spec.strip()]


def parse_user(spec: str) -> User:
    """Reads "ID:Real Name:email" (email optional) into a user.

    Raises:
        ValueError: The spec has no ID or no name.
    """
    user_id, _, rest = spec.strip().partition(":")
    real_name, _, email = rest.partition(":")
    if not user_id or not real_name:
        raise ValueError(f"user spec {spec!r} is not ID:Real Name:email")
    return User(
        id=user_id,
        real_name=real_name.strip(),
        display_name=real_name.strip().split(" ", 1)[0],
        email=email.strip() or None,
    )
