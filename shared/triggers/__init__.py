"""Triggers: an alert opens a Slack thread and starts a turn that no person wrote.

``payloads`` reads what Alertmanager, Grafana and a generic webhook send,
``matchers`` filters alerts by their labels, ``threads`` decides what a
notification does to its alert group's thread (open, note, resolve, nothing)
and caps the threads a trigger opens, ``messages`` writes what Slack shows
and what the agent receives; all four are pure. ``auth`` checks a request's
bearer token or HMAC signature, and ``route`` is the adapter that chat_ingress
calls for ``/triggers/<name>``.
"""
