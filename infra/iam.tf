# Identities and the project-wide roles they hold.
#
# Each function runs as its own service account, and each caller of a
# function has its own identity too: Cloud Tasks (OIDC token of the tasks
# account), Cloud Scheduler, and the Eventarc trigger that feeds turn_send.
# Grants on a single resource (a topic, queue, secret or function) live in
# the file of that resource, driven by the table below, so that each
# account can do what its function's code does and nothing else.

locals {
  # Beyond Firestore and posting to Slack, which every function does.
  function_access = {
    chat_ingress  = { verifies_slack = true, calls_agents = false, creates_tasks = false }
    turn_send     = { verifies_slack = false, calls_agents = true, creates_tasks = true }
    stream_follow = { verifies_slack = false, calls_agents = true, creates_tasks = true }
    reconcile     = { verifies_slack = false, calls_agents = true, creates_tasks = true }
    timeout       = { verifies_slack = false, calls_agents = true, creates_tasks = true }
  }

  task_creators = toset([for entry_point, access in local.function_access : entry_point if access.creates_tasks])
}

resource "google_service_account" "function" {
  for_each = local.function_names

  project      = var.project_id
  account_id   = each.value
  display_name = "Agent Kourier ${each.key} (function runtime)"

  depends_on = [google_project_service.enabled]
}

resource "google_service_account" "build" {
  project      = var.project_id
  account_id   = "${local.prefix}-build"
  display_name = "Agent Kourier function builds"

  depends_on = [google_project_service.enabled]
}

resource "google_service_account" "tasks_invoker" {
  project      = var.project_id
  account_id   = "${local.prefix}-tasks"
  display_name = "Agent Kourier Cloud Tasks calls (OIDC)"

  depends_on = [google_project_service.enabled]
}

resource "google_service_account" "scheduler_invoker" {
  project      = var.project_id
  account_id   = "${local.prefix}-scheduler"
  display_name = "Agent Kourier reconcile sweep (Cloud Scheduler)"

  depends_on = [google_project_service.enabled]
}

resource "google_service_account" "turn_trigger" {
  project      = var.project_id
  account_id   = "${local.prefix}-turn-trigger"
  display_name = "Agent Kourier turns trigger (Eventarc to turn_send)"

  depends_on = [google_project_service.enabled]
}

# Builds run as their own account instead of the Compute Engine default one,
# which new projects no longer make an Editor. Cloud Functions copies the
# source into a bucket and the image into a repository that it creates
# itself, so these roles cannot be narrowed to a resource that exists here.
resource "google_project_iam_member" "build" {
  for_each = toset([
    "roles/artifactregistry.writer",
    "roles/logging.logWriter",
    "roles/storage.objectViewer",
  ])

  project = var.project_id
  role    = each.value
  member  = google_service_account.build.member
}

# Eventarc checks this role on the trigger's account when it delivers events.
resource "google_project_iam_member" "turn_trigger_receiver" {
  project = var.project_id
  role    = "roles/eventarc.eventReceiver"
  member  = google_service_account.turn_trigger.member
}

# Creating a task whose OIDC token is the tasks account's needs actAs on it.
resource "google_service_account_iam_member" "task_creator_acts_as_invoker" {
  for_each = local.task_creators

  service_account_id = google_service_account.tasks_invoker.name
  role               = "roles/iam.serviceAccountUser"
  member             = google_service_account.function[each.key].member
}
