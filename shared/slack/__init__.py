"""The Slack adapter: verifying callbacks, reading events, writing to threads."""
