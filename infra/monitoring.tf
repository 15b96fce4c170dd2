# Log-based metrics and an example alert.
#
# The functions write one JSON line per event to stdout (shared/logs.py);
# Cloud Logging keeps the event name in jsonPayload.message and reads
# severity and logging.googleapis.com/trace itself. A 2nd gen function logs
# as its Cloud Run revision.

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

  depends_on = [google_project_service.enabled]
}

# Example: page someone when an agent refuses Kourier's credentials, which
# needs a person (an expired or rotated token) and fails every turn of the
# binding until fixed.
resource "google_monitoring_alert_policy" "credential_rejections" {
  project               = var.project_id
  display_name          = "Agent Kourier: an agent rejected its credentials"
  combiner              = "OR"
  notification_channels = var.alert_notification_channels

  conditions {
    display_name = "Credential rejections in the last 5 minutes"

    condition_threshold {
      filter          = "resource.type = \"cloud_run_revision\" AND metric.type = \"logging.googleapis.com/user/${google_logging_metric.kourier["credential_rejections"].name}\""
      comparison      = "COMPARISON_GT"
      threshold_value = 0
      duration        = "0s"

      aggregations {
        alignment_period     = "300s"
        per_series_aligner   = "ALIGN_SUM"
        cross_series_reducer = "REDUCE_SUM"
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
    content   = <<-EOT
      An agent answered Agent Kourier with HTTP 401 or 403, so the turns of
      that binding fail until its token is fixed. Find the binding in the
      logs (`jsonPayload.message="credential_rejected"`), then add a new
      version of its secret (`gcloud secrets versions add`) and redeploy.
    EOT
  }
}
