# The reconcile sweep: every minute, Cloud Scheduler POSTs {} to reconcile,
# which re-triggers turns whose function died and turns nobody started.
# A missed or failed sweep is not retried: the next one comes a minute later,
# and repeated failures alert (monitoring.tf).

resource "google_cloud_scheduler_job" "reconcile_sweep" {
  project          = var.project_id
  region           = var.region
  name             = "${local.prefix}-reconcile-sweep"
  description      = "Agent Kourier: resume turns that a dead function left"
  schedule         = var.reconcile_schedule
  time_zone        = "Etc/UTC"
  attempt_deadline = "${local.function_settings.reconcile.timeout_seconds}s"

  retry_config {
    retry_count = 0
  }

  http_target {
    http_method = "POST"
    uri         = local.function_urls.reconcile
    body        = base64encode("{}")
    headers = {
      "Content-Type" = "application/json"
    }

    oidc_token {
      service_account_email = google_service_account.scheduler_invoker.email
      audience              = local.function_urls.reconcile
    }
  }

  depends_on = [google_cloud_run_v2_service_iam_member.invoker]
}
