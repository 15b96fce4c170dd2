# The turns topic, how turns reach turn_send, and their dead letters.
#
# turn_send is an HTTP function. The push subscription below POSTs each
# turn to it with an OIDC token of the turn_pusher account, on its run.app
# URL (which is what lets an internal-only service take Pub/Sub pushes);
# functions-framework turns the push envelope into the same CloudEvent that
# an Eventarc trigger would deliver (local/provision.py runs this design on
# the emulators). Pub/Sub waits up to 600 s for turn_send's answer (it stops
# at 540 s), retries a failed push with backoff from 10 s to 10 min, and
# after turn_max_delivery_attempts moves the turn to the dead-letter topic,
# where a pull subscription keeps it 7 days for inspection.

locals {
  topics = {
    turns = google_pubsub_topic.turns.name
  }
}

resource "google_pubsub_topic" "turns" {
  #checkov:skip=CKV_GCP_83:Turn messages hold two IDs and no content; Google-managed encryption, as for the rest of the deployment.
  project = var.project_id
  name    = "${local.prefix}-turns"

  depends_on = [time_sleep.apis_ready]
}

resource "google_pubsub_topic" "turns_dead_letter" {
  #checkov:skip=CKV_GCP_83:Turn messages hold two IDs and no content; Google-managed encryption, as for the rest of the deployment.
  project = var.project_id
  name    = "${local.prefix}-turns-dead-letter"

  depends_on = [time_sleep.apis_ready]
}

resource "google_pubsub_subscription" "turn_send" {
  project = var.project_id
  name    = "${local.prefix}-turns-turn-send"
  topic   = google_pubsub_topic.turns.id

  ack_deadline_seconds       = 600
  message_retention_duration = "86400s"

  retry_policy {
    minimum_backoff = "10s"
    maximum_backoff = "600s"
  }

  dead_letter_policy {
    dead_letter_topic     = google_pubsub_topic.turns_dead_letter.id
    max_delivery_attempts = var.turn_max_delivery_attempts
  }

  push_config {
    push_endpoint = "${google_cloudfunctions2_function.kourier["turn_send"].service_config[0].uri}/${google_pubsub_topic.turns.id}"

    oidc_token {
      service_account_email = google_service_account.turn_pusher.email
      audience              = google_cloudfunctions2_function.kourier["turn_send"].service_config[0].uri
    }
  }

  expiration_policy {
    ttl = ""
  }

  depends_on = [google_cloud_run_v2_service_iam_member.invoker]
}

resource "google_pubsub_subscription" "turns_dead_letter" {
  project = var.project_id
  name    = "${local.prefix}-turns-dead-letter"
  topic   = google_pubsub_topic.turns_dead_letter.id

  message_retention_duration = "604800s"
  ack_deadline_seconds       = 60

  expiration_policy {
    ttl = ""
  }
}

# Pub/Sub's own service agent moves an undeliverable turn: it acknowledges
# it on the push subscription and publishes it to the dead-letter topic.
resource "google_pubsub_topic_iam_member" "dead_letter_forwarder" {
  project = var.project_id
  topic   = google_pubsub_topic.turns_dead_letter.name
  role    = "roles/pubsub.publisher"
  member  = local.pubsub_service_agent
}

resource "google_pubsub_subscription_iam_member" "dead_letter_acknowledger" {
  project      = var.project_id
  subscription = google_pubsub_subscription.turn_send.name
  role         = "roles/pubsub.subscriber"
  member       = local.pubsub_service_agent
}
