# The five functions, built from one source archive.
#
# The archive holds functions/main.py at its root (Cloud Functions loads
# main.py from the source root), shared/ beside it, the pinned
# requirements.txt and the config file as kourier.yaml (KOURIER_CONFIG).
# Its object name carries the archive's hash, so any change to the code or
# the config redeploys every function.
#
# Timeouts: turn_send is event-driven (at most 540 s); the Cloud Tasks
# targets may run up to 1800 s, the longest dispatch deadline Cloud Tasks
# allows. Each function that follows an agent's stream hands it over 60 s
# before its timeout (KOURIER_FOLLOW_BUDGET_SECONDS).

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

  function_defaults = {
    chat_ingress  = { memory = "512Mi", timeout_seconds = 60, min_instances = 0, max_instances = 20 }
    turn_send     = { memory = "512Mi", timeout_seconds = 540, min_instances = 0, max_instances = 50 }
    stream_follow = { memory = "512Mi", timeout_seconds = 1800, min_instances = 0, max_instances = 50 }
    reconcile     = { memory = "512Mi", timeout_seconds = 1800, min_instances = 0, max_instances = 10 }
    timeout       = { memory = "512Mi", timeout_seconds = 1800, min_instances = 0, max_instances = 20 }
  }

  function_settings = {
    for entry_point, defaults in local.function_defaults : entry_point => {
      for key, value in defaults : key => coalesce(try(var.functions[entry_point][key], null), value)
    }
  }

  task_targets              = ["stream_follow", "reconcile", "timeout"]
  follow_handover_margin    = 60
  tasks_dispatch_deadline_s = min([for target in local.task_targets : local.function_settings[target].timeout_seconds]...)

  common_environment = {
    GOOGLE_CLOUD_PROJECT                    = var.project_id
    KOURIER_LOCATION                        = var.region
    KOURIER_FIRESTORE_DATABASE              = google_firestore_database.kourier.name
    KOURIER_CONFIG                          = "kourier.yaml"
    KOURIER_TURNS_TOPIC                     = google_pubsub_topic.turns.name
    KOURIER_FOLLOW_QUEUE                    = google_cloud_tasks_queue.kourier["follow"].name
    KOURIER_TIMERS_QUEUE                    = google_cloud_tasks_queue.kourier["timers"].name
    KOURIER_RECONCILE_QUEUE                 = google_cloud_tasks_queue.kourier["reconcile"].name
    KOURIER_STREAM_FOLLOW_URL               = local.function_urls.stream_follow
    KOURIER_RECONCILE_URL                   = local.function_urls.reconcile
    KOURIER_TIMEOUT_URL                     = local.function_urls.timeout
    KOURIER_TASKS_SERVICE_ACCOUNT           = google_service_account.tasks_invoker.email
    KOURIER_TASKS_DISPATCH_DEADLINE_SECONDS = tostring(local.tasks_dispatch_deadline_s)
  }

  tasks_invoker     = { tasks = google_service_account.tasks_invoker.member }
  scheduler_invoker = { scheduler = google_service_account.scheduler_invoker.member }

  # Entry point => how it is called. Only chat_ingress is public (Slack
  # calls it and every request is checked against the signing secret);
  # turn_send takes Eventarc deliveries only; the rest take requests that
  # carry an OIDC token of the tasks or scheduler account.
  function_triggers = {
    chat_ingress  = { ingress = "ALLOW_ALL", invokers = { public = "allUsers" }, turns_trigger = false }
    turn_send     = { ingress = "ALLOW_INTERNAL_ONLY", invokers = { trigger = google_service_account.turn_trigger.member }, turns_trigger = true }
    stream_follow = { ingress = "ALLOW_ALL", invokers = local.tasks_invoker, turns_trigger = false }
    reconcile     = { ingress = "ALLOW_ALL", invokers = merge(local.tasks_invoker, local.scheduler_invoker), turns_trigger = false }
    timeout       = { ingress = "ALLOW_ALL", invokers = local.tasks_invoker, turns_trigger = false }
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
  #checkov:skip=CKV_GCP_62:Holds build inputs only; Cloud Audit Logs record access, and a second bucket just for access logs adds nothing.
  project                     = var.project_id
  name                        = "${var.project_id}-${local.prefix}-sources"
  location                    = var.region
  uniform_bucket_level_access = true
  public_access_prevention    = "enforced"
  force_destroy               = true

  versioning {
    enabled = true
  }

  lifecycle_rule {
    condition {
      num_newer_versions = 3
      with_state         = "ARCHIVED"
    }
    action {
      type = "Delete"
    }
  }

  depends_on = [google_project_service.enabled]
}

resource "google_storage_bucket_object" "source" {
  bucket = google_storage_bucket.sources.name
  name   = "kourier-source-${data.archive_file.source.output_md5}.zip"
  source = data.archive_file.source.output_path
}

# The build account reads the archive from this bucket.
resource "google_storage_bucket_iam_member" "build_reads_sources" {
  bucket = google_storage_bucket.sources.name
  role   = "roles/storage.objectViewer"
  member = google_service_account.build.member
}

module "function" {
  source   = "./modules/function"
  for_each = var.deploy_functions ? local.function_names : {}

  project_id            = var.project_id
  region                = var.region
  name                  = each.value
  description           = "Agent Kourier ${each.key}"
  entry_point           = each.key
  source_bucket         = google_storage_bucket.sources.name
  source_object         = google_storage_bucket_object.source.name
  build_service_account = google_service_account.build.id
  service_account_email = google_service_account.function[each.key].email
  expected_url          = local.function_urls[each.key]

  memory          = local.function_settings[each.key].memory
  timeout_seconds = local.function_settings[each.key].timeout_seconds
  min_instances   = local.function_settings[each.key].min_instances
  max_instances   = local.function_settings[each.key].max_instances
  ingress         = local.function_triggers[each.key].ingress
  invokers        = local.function_triggers[each.key].invokers

  environment_variables = merge(
    local.common_environment,
    local.function_access[each.key].calls_agents ? {
      KOURIER_FOLLOW_BUDGET_SECONDS = tostring(local.function_settings[each.key].timeout_seconds - local.follow_handover_margin)
    } : {},
  )
  secret_environment_variables = {
    for variable in local.function_secrets[each.key] : variable => google_secret_manager_secret.kourier[variable].secret_id
  }

  pubsub_trigger = local.function_triggers[each.key].turns_trigger ? {
    topic                 = google_pubsub_topic.turns.id
    service_account_email = google_service_account.turn_trigger.email
  } : null

  depends_on = [
    google_project_iam_member.build,
    google_storage_bucket_iam_member.build_reads_sources,
    google_project_iam_member.turn_trigger_receiver,
    google_secret_manager_secret_iam_member.accessor,
    google_project_iam_member.firestore_user,
  ]
}
