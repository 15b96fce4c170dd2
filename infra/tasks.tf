# Cloud Tasks queues: work handed to an HTTP function for later, or to a
# fresh function after a deadline. kourier-follow feeds stream_follow,
# kourier-timers feeds timeout; each task's dispatch deadline is its target
# function's timeout (KOURIER_DISPATCH_DEADLINE_SECONDS), and carries an
# OIDC token of the tasks account. A failed attempt is retried with backoff;
# the engine's own deadlines end a turn long before a queue gives up. An
# attempt that fails for good is logged (sampling 1.0) and alerts
# (monitoring.tf).

locals {
  queues = {
    follow = "${local.prefix}-follow"
    timers = "${local.prefix}-timers"
  }

  # A queue dispatches at most as many tasks at once as its target function
  # can serve (instances x concurrency, sizing.tf); more would only be
  # refused with 429 and retried.
  queue_target = { follow = "stream_follow", timers = "timeout" }
  queue_concurrency = {
    for queue, target in local.queue_target :
    queue => local.function_settings[target].max_instances * local.function_settings[target].concurrency
  }
}

resource "google_cloud_tasks_queue" "kourier" {
  for_each = local.queues

  project  = var.project_id
  location = var.region
  name     = each.value

  rate_limits {
    max_dispatches_per_second = 50
    max_concurrent_dispatches = local.queue_concurrency[each.key]
  }

  retry_config {
    max_attempts       = 50
    max_retry_duration = "86400s"
    min_backoff        = "2s"
    max_backoff        = "300s"
    max_doublings      = 8
  }

  stackdriver_logging_config {
    sampling_ratio = 1.0
  }

  depends_on = [time_sleep.apis_ready]
}
