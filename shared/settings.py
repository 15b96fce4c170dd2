"""Process settings, read once from the environment.

Every environment variable the product reads is declared here and nowhere
else. Emulators are found only through the standard variables
(``FIRESTORE_EMULATOR_HOST``, ``PUBSUB_EMULATOR_HOST``) and
``CLOUD_TASKS_EMULATOR_HOST`` for Cloud Tasks, which has no official one.
"""

from __future__ import annotations

from datetime import timedelta

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    """Environment of one function process."""

    model_config = SettingsConfigDict(extra="ignore", populate_by_name=True)

    project: str = Field("demo-kourier", alias="GOOGLE_CLOUD_PROJECT")
    location: str = Field("us-central1", alias="KOURIER_LOCATION")
    # The Firestore database: "(default)", or a named one (infra/ sets it).
    firestore_database: str = Field("(default)", alias="KOURIER_FIRESTORE_DATABASE")
    config_path: str = Field("kourier.yaml", alias="KOURIER_CONFIG")

    slack_api_url: str = Field("https://slack.com/api/", alias="SLACK_API_URL")
    # Secrets print as '**********' (a log line or an error that shows the
    # settings shows no credential); get_secret_value() reads them.
    slack_bot_token: SecretStr = Field(SecretStr(""), alias="SLACK_BOT_TOKEN")
    slack_signing_secret: SecretStr = Field(SecretStr(""), alias="SLACK_SIGNING_SECRET")

    turns_topic: str = Field("kourier-turns", alias="KOURIER_TURNS_TOPIC")
    follow_queue: str = Field("kourier-follow", alias="KOURIER_FOLLOW_QUEUE")
    timers_queue: str = Field("kourier-timers", alias="KOURIER_TIMERS_QUEUE")
    stream_follow_url: str = Field("http://127.0.0.1:8302/", alias="KOURIER_STREAM_FOLLOW_URL")
    timeout_url: str = Field("http://127.0.0.1:8304/", alias="KOURIER_TIMEOUT_URL")
    tasks_service_account: str = Field("", alias="KOURIER_TASKS_SERVICE_ACCOUNT")
    # How long Cloud Tasks waits for a task's target before it counts the
    # attempt as failed and retries it (the task's dispatch_deadline; Cloud
    # Tasks allows 15 to 1800 s), by queue name, as JSON: each queue has its
    # own target, and infra/ sets each to its target function's timeout. A
    # queue not named here gets 1800 s.
    dispatch_deadline_seconds: dict[str, float] = Field(
        default_factory=dict, alias="KOURIER_DISPATCH_DEADLINE_SECONDS"
    )

    # What a Slack callback may carry (README, "Guarantees and limits"): a
    # body longer than this is refused before its signature is checked, and
    # a message longer than this many characters is not carried (the thread
    # is told). Slack keeps a message to 40,000 characters itself.
    max_callback_bytes: int = Field(1_048_576, alias="KOURIER_MAX_CALLBACK_BYTES")
    max_message_chars: int = Field(40_000, alias="KOURIER_MAX_MESSAGE_CHARS")
    # Turns waiting behind the one the agent works on, per thread and per
    # person: a message past either is not carried (its author is told).
    max_queued_turns_per_thread: int = Field(10, alias="KOURIER_MAX_QUEUED_TURNS_PER_THREAD")
    max_queued_turns_per_user: int = Field(20, alias="KOURIER_MAX_QUEUED_TURNS_PER_USER")

    # What an agent may send (README, "Guarantees and limits"): one answer,
    # or one event of a stream, holds at most this many bytes, and a call
    # answered with one JSON document takes at most this long, body included.
    max_agent_response_bytes: int = Field(8 << 20, alias="KOURIER_MAX_AGENT_RESPONSE_BYTES")
    agent_call_seconds: float = Field(120.0, alias="KOURIER_AGENT_CALL_SECONDS")

    cloud_tasks_emulator_host: str = Field("", alias="CLOUD_TASKS_EMULATOR_HOST")

    # Other functions the ingress health check pings (comma-separated URLs);
    # set by the local run, empty in the cloud where they need a token.
    health_urls: str = Field("", alias="KOURIER_HEALTH_URLS")

    # How long one function may follow a stream before it hands over
    # through a checkpoint (seconds). Deadlines are settings so tests can
    # use seconds.
    follow_budget_seconds: float = Field(480.0, alias="KOURIER_FOLLOW_BUDGET_SECONDS")

    # A claim's lease outlives the follow budget by this much; a function
    # that died is taken over once its lease has run out.
    lease_margin_seconds: float = Field(60.0, alias="KOURIER_LEASE_MARGIN_SECONDS")

    # A turn taken over this many times (its functions died or failed each
    # time) ends with a notice instead of being tried again.
    max_takeovers: int = Field(5, alias="KOURIER_MAX_TAKEOVERS")

    # The turn engine's delays and limits (seconds), per the agent contract.
    backoff_start_seconds: float = Field(1.0, alias="KOURIER_BACKOFF_START_SECONDS")
    backoff_cap_seconds: float = Field(60.0, alias="KOURIER_BACKOFF_CAP_SECONDS")
    poll_cap_seconds: float = Field(60.0, alias="KOURIER_POLL_CAP_SECONDS")
    busy_notice_seconds: float = Field(120.0, alias="KOURIER_BUSY_NOTICE_SECONDS")
    give_up_seconds: float = Field(900.0, alias="KOURIER_GIVE_UP_SECONDS")
    no_sign_of_life_seconds: float = Field(3600.0, alias="KOURIER_NO_SIGN_OF_LIFE_SECONDS")
    reread_after_drop_seconds: float = Field(1.0, alias="KOURIER_REREAD_AFTER_DROP_SECONDS")
    # Waits up to this long happen inside the function; longer ones are a
    # Cloud Task to ``timeout``, so no function idles through a backoff.
    inline_wait_seconds: float = Field(5.0, alias="KOURIER_INLINE_WAIT_SECONDS")
    # At most one checkpoint write per this many seconds while a stream runs.
    checkpoint_seconds: float = Field(5.0, alias="KOURIER_CHECKPOINT_SECONDS")
    # Log every Firestore document write ("firestore_write"), so that
    # bench/writes_per_turn.py can count them; off in production.
    log_firestore_writes: bool = Field(False, alias="KOURIER_LOG_FIRESTORE_WRITES")

    @property
    def lease(self) -> timedelta:
        """How long a claim on a session holds without renewal."""
        return timedelta(seconds=self.follow_budget_seconds + self.lease_margin_seconds)
