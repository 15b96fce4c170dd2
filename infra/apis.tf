# Every API the deployment uses. They stay enabled on terraform destroy:
# turning an API off can break other things in the project.
#
# A freshly enabled API answers "has not been used in project ... or it is
# disabled" for a minute or two, and the service agents it creates (Pub/Sub's
# among them, which dead-letters turns) appear a little later still. Every
# resource therefore waits on apis_ready, not on the APIs themselves, so
# that the first apply on an empty project goes through in one run.

locals {
  apis = toset([
    "artifactregistry.googleapis.com",
    "cloudbuild.googleapis.com",
    "cloudfunctions.googleapis.com",
    "cloudresourcemanager.googleapis.com",
    "cloudscheduler.googleapis.com",
    "cloudtasks.googleapis.com",
    "firestore.googleapis.com",
    "iam.googleapis.com",
    "logging.googleapis.com",
    "monitoring.googleapis.com",
    "pubsub.googleapis.com",
    "run.googleapis.com",
    "secretmanager.googleapis.com",
    "storage.googleapis.com",
  ])
}

resource "google_project_service" "enabled" {
  for_each = local.apis

  project            = var.project_id
  service            = each.value
  disable_on_destroy = false
}

resource "time_sleep" "apis_ready" {
  create_duration = "90s"

  triggers = {
    apis = join(",", sort(local.apis))
  }

  depends_on = [google_project_service.enabled]
}
