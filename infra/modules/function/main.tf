# One Cloud Function (2nd gen, Python 3.11) and who may invoke it.
#
# A 2nd gen function is a Cloud Run service of the same name, so invoking
# it takes roles/run.invoker on that service. With pubsub_trigger set, the
# function is event-driven and its Eventarc trigger's account is the one to
# grant in invokers.

resource "google_cloudfunctions2_function" "this" {
  project     = var.project_id
  location    = var.region
  name        = var.name
  description = var.description

  build_config {
    runtime         = "python311"
    entry_point     = var.entry_point
    service_account = var.build_service_account

    source {
      storage_source {
        bucket = var.source_bucket
        object = var.source_object
      }
    }
  }

  service_config {
    available_memory               = var.memory
    timeout_seconds                = var.timeout_seconds
    min_instance_count             = var.min_instances
    max_instance_count             = var.max_instances
    ingress_settings               = var.ingress
    all_traffic_on_latest_revision = true
    service_account_email          = var.service_account_email
    environment_variables          = var.environment_variables

    dynamic "secret_environment_variables" {
      for_each = var.secret_environment_variables
      content {
        key        = secret_environment_variables.key
        project_id = var.project_id
        secret     = secret_environment_variables.value
        version    = "latest"
      }
    }
  }

  dynamic "event_trigger" {
    for_each = var.pubsub_trigger == null ? [] : [var.pubsub_trigger]
    content {
      trigger_region        = var.region
      event_type            = "google.cloud.pubsub.topic.v1.messagePublished"
      pubsub_topic          = event_trigger.value.topic
      service_account_email = event_trigger.value.service_account_email
      retry_policy          = event_trigger.value.retry ? "RETRY_POLICY_RETRY" : "RETRY_POLICY_DO_NOT_RETRY"
    }
  }

  lifecycle {
    postcondition {
      condition     = self.url == var.expected_url
      error_message = "Function ${var.name} answers at ${self.url}, not at ${var.expected_url} where the other functions and Slack will call it."
    }
  }
}

resource "google_cloud_run_v2_service_iam_member" "invoker" {
  for_each = var.invokers

  project  = var.project_id
  location = var.region
  name     = google_cloudfunctions2_function.this.service_config[0].service
  role     = "roles/run.invoker"
  member   = each.value
}
