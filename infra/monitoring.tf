# Log-based metrics, alerts and an uptime check.
#
# The functions write one JSON line per event to stdout (shared/logs.py);
# Cloud Logging keeps the event name in jsonPayload.message and reads
# severity and logging.googleapis.com/trace itself. A 2nd gen function logs
# as its Cloud Run revision.
#
# Every alert notifies var.alert_notification_channels. Alerts on events
# (a log line) match the log entries themselves rather than a log-based
# metric, and the others watch metrics Google defines: a metric created in
# the same apply is not visible to the monitoring API for minutes, and a
# policy on it would fail the first apply. The log-based metrics count the
# same events for dashboards.

locals {
  kourier_logs = "resource.type=\"cloud_run_revision\" AND resource.labels.service_name=~\"^${local.prefix}-\""

  log_metrics = {
    credential_rejections = {
      name        = "agentkourier_credential_rejections_total"
      event       = "credential_rejected"
      description = "Calls to an agent answered with HTTP 401 or 403: the binding's credentials were rejected."
    }
    cancels_failed = {
      name        = "agentkourier_cancels_failed_total"
      event       = "cancel_failed"
      description = "Tasks Kourier cancelled whose CancelTask kept failing: the thread was told whether the task still runs."
    }
    turns_failed = {
      name        = "agentkourier_turns_failed_total"
      event       = "turn_failed"
      description = "Turns that ended in failure and were reported to their thread."
    }
    events_failed = {
      name        = "agentkourier_events_failed_total"
      event       = "event_failed"
      description = "Deliveries a function failed on and acknowledged, so that they are never retried."
    }
  }

  # Alerts on log entries: event => what it means and what to do.
  log_alerts = {
    credential_rejections = {
      title  = "an agent rejected its credentials"
      filter = "${local.kourier_logs} AND jsonPayload.message=\"credential_rejected\""
      advice = "An agent answered HTTP 401 or 403, so the turns of that binding fail until its token is fixed. Find the binding in the log entry, write a new value of its secret (terraform apply with config_secret_values and a higher secret_values_version), and redeploy."
    }
    turns_failed = {
      title  = "a turn failed"
      filter = "${local.kourier_logs} AND jsonPayload.message=\"turn_failed\""
      advice = "A turn ended in failure and its thread was told. The log entry names the session and the reason; several in a row point at the agent."
    }
    events_failed = {
      title  = "a delivery failed and was dropped"
      filter = "${local.kourier_logs} AND jsonPayload.message=\"event_failed\""
      advice = "A function failed on a delivery with an error that retrying cannot fix, logged it with its stack and acknowledged it. The turn it carried may be stuck; read the stack."
    }
    tasks_failed_for_good = {
      title  = "a Cloud Task failed for good"
      filter = "resource.type=\"cloud_tasks_queue\" AND resource.labels.queue_id=~\"^${local.prefix}-\" AND jsonPayload.attemptResponseLog.status!=\"OK\" AND NOT jsonPayload.attemptResponseLog.retryTime:*"
      advice = "Cloud Tasks gave up on a task (a resume, an answer or a timer) after its last attempt; Cloud Tasks keeps no dead letters. The log entry names the task and its target; the turn it belonged to is resumed by the reconcile sweep if its lease ran out."
    }
    reconcile_failed = {
      title  = "the reconcile sweep failed"
      filter = "resource.type=\"cloud_scheduler_job\" AND resource.labels.job_id=\"${local.prefix}-reconcile-sweep\" AND severity>=ERROR"
      advice = "The sweep that resumes turns left by a dead function did not succeed. Until it does, such turns stay stuck. Check the reconcile function's logs."
    }
  }

  # Alerts on metrics: what to watch, over which resource, and when to fire.
  metric_alerts = {
    dead_letters = {
      title     = "turns in the dead-letter subscription"
      filter    = "resource.type=\"pubsub_subscription\" AND resource.labels.subscription_id=\"${local.prefix}-turns-dead-letter\" AND metric.type=\"pubsub.googleapis.com/subscription/num_undelivered_messages\""
      aligner   = "ALIGN_MAX"
      reducer   = "REDUCE_MAX"
      group_by  = []
      threshold = 0
      duration  = "0s"
      advice    = "turn_send failed a turn turn_max_delivery_attempts times. Read it with `gcloud pubsub subscriptions pull ${local.prefix}-turns-dead-letter --limit 10` and turn_send's logs."
    }
    oldest_turn = {
      title     = "a turn has waited more than 15 minutes for turn_send"
      filter    = "resource.type=\"pubsub_subscription\" AND resource.labels.subscription_id=\"${local.prefix}-turns-turn-send\" AND metric.type=\"pubsub.googleapis.com/subscription/oldest_unacked_message_age\""
      aligner   = "ALIGN_MAX"
      reducer   = "REDUCE_MAX"
      group_by  = []
      threshold = 900
      duration  = "300s"
      advice    = "Pushes to turn_send keep failing or it is at its instance cap (see the 429 alert). People are waiting for answers."
    }
    server_errors = {
      title     = "a function answers with 5xx"
      filter    = "${local.kourier_logs_metric} AND metric.type=\"run.googleapis.com/request_count\" AND metric.labels.response_code_class=\"5xx\""
      aligner   = "ALIGN_RATE"
      reducer   = "REDUCE_SUM"
      group_by  = ["resource.labels.service_name"]
      threshold = 0.05
      duration  = "300s"
      advice    = "More than 3 failed requests a minute for 5 minutes. A few are normal (a turn_send or task that asks to be retried answers 500); a steady rate is not. The function's logs say why."
    }
    throttled = {
      title     = "a function is at its instance cap (429)"
      filter    = "${local.kourier_logs_metric} AND metric.type=\"run.googleapis.com/request_count\" AND metric.labels.response_code=\"429\""
      aligner   = "ALIGN_RATE"
      reducer   = "REDUCE_SUM"
      group_by  = ["resource.labels.service_name"]
      threshold = 0
      duration  = "300s"
      advice    = "Requests were refused for 5 minutes because every instance was busy. Slack, Pub/Sub and Cloud Tasks retry, but raise max_instances or concurrency for that function (var.functions) if it lasts."
    }
    slow_ingress = {
      title     = "chat_ingress p95 latency above 1 s"
      filter    = "resource.type=\"cloud_run_revision\" AND resource.labels.service_name=\"${local.function_names.chat_ingress}\" AND metric.type=\"run.googleapis.com/request_latencies\""
      aligner   = "ALIGN_PERCENTILE_95"
      reducer   = "REDUCE_MAX"
      group_by  = []
      threshold = 1000
      duration  = "300s"
      advice    = "Slack gives chat_ingress 3 s to acknowledge and retries slower answers. Check Firestore latency (its location should be near the region) and instance starts (min_instances)."
    }
    health = {
      title     = "the health check of chat_ingress fails"
      filter    = "resource.type=\"uptime_url\" AND metric.type=\"monitoring.googleapis.com/uptime_check/check_passed\" AND metric.labels.check_id=\"${local.uptime_check_id}\""
      aligner   = "ALIGN_NEXT_OLDER"
      reducer   = "REDUCE_COUNT_FALSE"
      group_by  = ["resource.labels.host"]
      threshold = 1
      duration  = "300s"
      advice    = "GET /healthz on chat_ingress has failed from more than one place for 5 minutes: Slack cannot reach Kourier, or it cannot reach Firestore."
    }
  }

  kourier_logs_metric = "resource.type=\"cloud_run_revision\" AND resource.labels.service_name=monitoring.regex.full_match(\"${local.prefix}-.*\")"
  uptime_check_id     = google_monitoring_uptime_check_config.health.uptime_check_id
}

check "alerts_reach_someone" {
  assert {
    condition     = length(var.alert_notification_channels) > 0
    error_message = "alert_notification_channels is empty: alerts only open incidents in the console, and nobody is told."
  }
}

resource "google_logging_metric" "kourier" {
  for_each = local.log_metrics

  project     = var.project_id
  name        = each.value.name
  description = each.value.description
  filter      = "${local.kourier_logs} AND jsonPayload.message=\"${each.value.event}\""

  metric_descriptor {
    metric_kind = "DELTA"
    value_type  = "INT64"
    unit        = "1"

    labels {
      key         = "function"
      value_type  = "STRING"
      description = "The function (Cloud Run service) that logged the event."
    }
  }

  label_extractors = {
    function = "EXTRACT(resource.labels.service_name)"
  }

  depends_on = [time_sleep.apis_ready]
}

# What people thought of each agent backend's answers: every 👍 or 👎 that set
# or changed a person's rating of an answer (shared/feedback.py).
resource "google_logging_metric" "feedback" {
  project     = var.project_id
  name        = "agentkourier_feedback_total"
  description = "Ratings people gave answers with the feedback buttons, by agent backend and rating (up, down)."
  filter      = "${local.kourier_logs} AND jsonPayload.message=\"feedback_recorded\""

  metric_descriptor {
    metric_kind = "DELTA"
    value_type  = "INT64"
    unit        = "1"

    labels {
      key         = "backend"
      value_type  = "STRING"
      description = "The agentBackends name of the answer."
    }
    labels {
      key         = "rating"
      value_type  = "STRING"
      description = "up or down."
    }
  }

  label_extractors = {
    backend = "EXTRACT(jsonPayload.backend)"
    rating  = "EXTRACT(jsonPayload.rating)"
  }

  depends_on = [time_sleep.apis_ready]
}

resource "google_monitoring_alert_policy" "log_event" {
  for_each = local.log_alerts

  project               = var.project_id
  display_name          = "Agent Kourier: ${each.value.title}"
  combiner              = "OR"
  notification_channels = var.alert_notification_channels

  conditions {
    display_name = each.value.title

    condition_matched_log {
      filter = each.value.filter
    }
  }

  alert_strategy {
    auto_close = "1800s"

    notification_rate_limit {
      period = "300s"
    }
  }

  documentation {
    mime_type = "text/markdown"
    content   = each.value.advice
  }

  depends_on = [time_sleep.apis_ready]
}

resource "google_monitoring_alert_policy" "metric" {
  for_each = local.metric_alerts

  project               = var.project_id
  display_name          = "Agent Kourier: ${each.value.title}"
  combiner              = "OR"
  notification_channels = var.alert_notification_channels

  conditions {
    display_name = each.value.title

    condition_threshold {
      filter          = each.value.filter
      comparison      = "COMPARISON_GT"
      threshold_value = each.value.threshold
      duration        = each.value.duration

      aggregations {
        alignment_period     = "60s"
        per_series_aligner   = each.value.aligner
        cross_series_reducer = each.value.reducer
        group_by_fields      = each.value.group_by
      }

      trigger {
        count = 1
      }
    }
  }

  alert_strategy {
    auto_close = "1800s"
  }

  documentation {
    mime_type = "text/markdown"
    content   = each.value.advice
  }

  depends_on = [time_sleep.apis_ready]
}

# GET /healthz on chat_ingress every 5 minutes from three regions.
resource "google_monitoring_uptime_check_config" "health" {
  project          = var.project_id
  display_name     = "Agent Kourier chat_ingress /healthz"
  timeout          = "10s"
  period           = "300s"
  selected_regions = ["USA", "EUROPE", "ASIA_PACIFIC"]

  http_check {
    path         = "/${local.function_names.chat_ingress}/healthz"
    port         = 443
    use_ssl      = true
    validate_ssl = true
  }

  monitored_resource {
    type = "uptime_url"
    labels = {
      project_id = var.project_id
      host       = "${var.region}-${var.project_id}.cloudfunctions.net"
    }
  }

  depends_on = [time_sleep.apis_ready]
}
