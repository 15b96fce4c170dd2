# The five functions, built from one source archive.
#
# The archive holds functions/main.py at its root (Cloud Functions loads
# main.py from the source root), shared/ beside it, the pinned
# requirements.txt and the config file as kourier.yaml (KOURIER_CONFIG). Its
# object name carries the archive's hash, so any change to the code or the
# config redeploys every function. Terraform keeps the archive's files in
# its state (about 0.4 MB today, README.md): they are code and the config,
# which holds no credential (a header that looks like one must come from
# Secret Manager, checked below).
#
# Sizes come from sizing.tf, grants from permissions.tf.

locals {
  repo_root = "${path.module}/.."

  shared_files = [
    for file in fileset("${local.repo_root}/shared", "**") : file
    if !strcontains(file, "__pycache__")
  ]

  source_files = merge(
    {
      "main.py"          = file("${local.repo_root}/functions/main.py")
      "requirements.txt" = file("${local.repo_root}/requirements.txt")
      "kourier.yaml"     = file(var.config_file)
    },
    { for file in local.shared_files : "shared/${file}" => file("${local.repo_root}/shared/${file}") },
  )

  common_environment = {
    GOOGLE_CLOUD_PROJECT          = var.project_id
    KOURIER_LOCATION              = var.region
    KOURIER_FIRESTORE_DATABASE    = google_firestore_database.kourier.name
    KOURIER_CONFIG                = "kourier.yaml"
    KOURIER_TURNS_TOPIC           = google_pubsub_topic.turns.name
    KOURIER_FOLLOW_QUEUE          = google_cloud_tasks_queue.kourier["follow"].name
    KOURIER_TIMERS_QUEUE          = google_cloud_tasks_queue.kourier["timers"].name
    KOURIER_STREAM_FOLLOW_URL     = local.function_urls.stream_follow
    KOURIER_TIMEOUT_URL           = local.function_urls.timeout
    KOURIER_TASKS_SERVICE_ACCOUNT = google_service_account.tasks_invoker.email
    KOURIER_DISPATCH_DEADLINE_SECONDS = jsonencode({
      for queue, name in local.queues : name => local.dispatch_deadline_seconds[queue]
    })
  }

  # Entry point => who may invoke it. Only chat_ingress is public (Slack
  # calls it, and every request is checked against the signing secret); the
  # others take only requests with an OIDC token of their caller's account.
  function_invokers = {
    chat_ingress  = { public = "allUsers" }
    turn_send     = { pusher = google_service_account.turn_pusher.member }
    stream_follow = { tasks = google_service_account.tasks_invoker.member }
    timeout       = { tasks = google_service_account.tasks_invoker.member }
    reconcile     = { scheduler = google_service_account.scheduler_invoker.member }
  }
  invoker_grants = merge([
    for entry_point, members in local.function_invokers : {
      for label, member in members : "${entry_point}/${label}" => { entry_point = entry_point, member = member }
    }
  ]...)

  # turn_send takes pushes from Pub/Sub only, on its run.app URL; the rest
  # must be reachable on their cloudfunctions.net URL (Slack, and the URLs
  # Cloud Tasks and Scheduler are given before the functions exist).
  function_ingress = {
    chat_ingress  = "ALLOW_ALL"
    turn_send     = "ALLOW_INTERNAL_ONLY"
    stream_follow = "ALLOW_ALL"
    timeout       = "ALLOW_ALL"
    reconcile     = "ALLOW_ALL"
  }

  function_environment = {
    for entry_point, settings in local.function_settings : entry_point => merge(
      local.common_environment,
      # functions-framework serves this many requests at once per instance.
      { THREADS = tostring(settings.concurrency) },
      settings.follows_streams ? { KOURIER_FOLLOW_BUDGET_SECONDS = tostring(local.follow_budget_seconds[entry_point]) } : {},
    )
  }
}

data "archive_file" "source" {
  type        = "zip"
  output_path = "${path.module}/.build/kourier-source.zip"

  dynamic "source" {
    for_each = local.source_files
    content {
      filename = source.key
      content  = source.value
    }
  }
}

resource "google_storage_bucket" "sources" {
  #checkov:skip=CKV_GCP_62:Holds build inputs only, read by Cloud Build; an access-log bucket for it would log nothing anyone reads.
  project                     = var.project_id
  name                        = "${var.project_id}-${local.prefix}-sources"
  location                    = var.region
  uniform_bucket_level_access = true
  public_access_prevention    = "enforced"
  force_destroy               = true

  versioning {
    enabled = true
  }

  # Each archive has its own name; when a new one replaces it, Terraform
  # deletes the old object, which versioning keeps as noncurrent for a week
  # (to look back at what was deployed) and then removes.
  lifecycle_rule {
    condition {
      days_since_noncurrent_time = 7
      with_state                 = "ARCHIVED"
    }
    action {
      type = "Delete"
    }
  }

  depends_on = [time_sleep.apis_ready]
}

resource "google_storage_bucket_object" "source" {
  bucket = google_storage_bucket.sources.name
  name   = "kourier-source-${data.archive_file.source.output_md5}.zip"
  source = data.archive_file.source.output_path

  lifecycle {
    precondition {
      condition     = length(local.inline_credential_headers) == 0
      error_message = "The config file is uploaded with the source, so it must hold no credential; give these headers with valueSecretRef instead: ${join(", ", local.inline_credential_headers)}."
    }
  }
}

resource "google_cloudfunctions2_function" "kourier" {
  #checkov:skip=CKV_GCP_124:turn_send is internal-only; Slack must reach chat_ingress, and Cloud Tasks and Scheduler call the others on their cloudfunctions.net URL; only chat_ingress is public (run.invoker), the others refuse a request without their caller's OIDC token.
  for_each = local.function_names

  project     = var.project_id
  location    = var.region
  name        = each.value
  description = "Agent Kourier ${each.key}"

  build_config {
    runtime         = "python311"
    entry_point     = each.key
    service_account = google_service_account.build.id

    source {
      storage_source {
        bucket = google_storage_bucket.sources.name
        object = google_storage_bucket_object.source.name
      }
    }
  }

  service_config {
    available_cpu                    = local.function_settings[each.key].cpu
    available_memory                 = local.function_settings[each.key].memory
    max_instance_request_concurrency = local.function_settings[each.key].concurrency
    timeout_seconds                  = local.function_settings[each.key].timeout_seconds
    min_instance_count               = local.function_settings[each.key].min_instances
    max_instance_count               = local.function_settings[each.key].max_instances
    ingress_settings                 = local.function_ingress[each.key]
    all_traffic_on_latest_revision   = true
    service_account_email            = google_service_account.function[each.key].email
    environment_variables            = local.function_environment[each.key]

    dynamic "secret_environment_variables" {
      for_each = toset(local.function_secrets[each.key])
      content {
        key        = secret_environment_variables.value
        project_id = var.project_id
        secret     = google_secret_manager_secret.kourier[secret_environment_variables.value].secret_id
        version    = "latest"
      }
    }
  }

  lifecycle {
    precondition {
      condition     = local.function_settings[each.key].concurrency == 1 || tonumber(local.function_settings[each.key].cpu) >= 1
      error_message = "${each.key}: a function that serves more than one request at a time needs cpu of at least \"1\" (Cloud Run)."
    }
    postcondition {
      condition     = self.url == local.function_urls[each.key]
      error_message = "Function ${each.value} answers at ${self.url}, not at ${local.function_urls[each.key]} where the other functions and Slack will call it."
    }
  }

  depends_on = [
    google_project_iam_member.build,
    google_project_iam_member.firestore_user,
    google_secret_manager_secret_iam_member.accessor,
    google_secret_manager_secret_version.kourier,
  ]
}

resource "google_cloud_run_v2_service_iam_member" "invoker" {
  for_each = local.invoker_grants

  project  = var.project_id
  location = var.region
  name     = google_cloudfunctions2_function.kourier[each.value.entry_point].service_config[0].service
  role     = "roles/run.invoker"
  member   = each.value.member
}
