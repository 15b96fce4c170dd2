# The identities that are not a function's own (those are in
# permissions.tf), and what each may do.
#
# - build: Cloud Build runs the functions' builds as this account instead
#   of the Compute Engine default one, which new projects no longer make an
#   Editor.
# - tasks: every Cloud Task carries an OIDC token of this account, the only
#   one that may invoke stream_follow and timeout.
# - scheduler: the reconcile sweep's OIDC token, the only one that may
#   invoke reconcile.
# - turn_pusher: the turns push subscription's OIDC token, the only one that
#   may invoke turn_send.

resource "google_service_account" "build" {
  project      = var.project_id
  account_id   = "${local.prefix}-build"
  display_name = "Agent Kourier function builds"

  depends_on = [time_sleep.apis_ready]
}

resource "google_service_account" "tasks_invoker" {
  project      = var.project_id
  account_id   = "${local.prefix}-tasks"
  display_name = "Agent Kourier Cloud Tasks calls (OIDC)"

  depends_on = [time_sleep.apis_ready]
}

resource "google_service_account" "scheduler_invoker" {
  project      = var.project_id
  account_id   = "${local.prefix}-scheduler"
  display_name = "Agent Kourier reconcile sweep (Cloud Scheduler)"

  depends_on = [time_sleep.apis_ready]
}

resource "google_service_account" "turn_pusher" {
  project      = var.project_id
  account_id   = "${local.prefix}-turn-pusher"
  display_name = "Agent Kourier turns push subscription (Pub/Sub to turn_send)"

  depends_on = [time_sleep.apis_ready]
}

# The minimum that Cloud Functions documents for a build account. Cloud
# Functions copies the source into a bucket and the image into a repository
# that it creates itself, so these roles cannot be narrowed to a resource
# that exists here.
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

# Pub/Sub signs the push OIDC token as turn_pusher. Projects made before
# April 2021 need this grant to its service agent; newer ones have it.
resource "google_service_account_iam_member" "pubsub_signs_as_turn_pusher" {
  service_account_id = google_service_account.turn_pusher.name
  role               = "roles/iam.serviceAccountTokenCreator"
  member             = local.pubsub_service_agent
}
