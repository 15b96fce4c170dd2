# Cloud Tasks queues: work handed to an HTTP function for later or for a
# fresh function after a deadline. Every task carries an OIDC token of the
# tasks account, the only caller (with the scheduler) that may invoke those
# functions. A failed attempt is retried with backoff; the engine's own
# deadlines end a turn long before a queue gives up.

locals {
  queues = {
    follow    = "${local.prefix}-follow"
    timers    = "${local.prefix}-timers"
    reconcile = "${local.prefix}-reconcile"
  }

  queue_creator_pairs = {
    for pair in setproduct(keys(local.queues), local.task_creators) :
    "${pair[0]}/${pair[1]}" => { queue = pair[0], creator = pair[1] }
  }
}

resource "google_cloud_tasks_queue" "kourier" {
  for_each = local.queues

  project  = var.project_id
  location = var.region
  name     = each.value

  rate_limits {
    max_dispatches_per_second = 50
    max_concurrent_dispatches = 100
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

  depends_on = [google_project_service.enabled]
}

resource "google_cloud_tasks_queue_iam_member" "enqueuer" {
  for_each = local.queue_creator_pairs

  project  = var.project_id
  location = var.region
  name     = google_cloud_tasks_queue.kourier[each.value.queue].name
  role     = "roles/cloudtasks.enqueuer"
  member   = google_service_account.function[each.value.creator].member
}
