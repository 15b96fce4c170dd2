# The turns topic and its dead letters.
#
# turn_send is subscribed to the turns topic through an Eventarc trigger
# (see functions.tf) with retries on. Eventarc creates and owns that Pub/Sub
# subscription, and neither the provider nor the Eventarc API can set a
# dead-letter policy on it yet (hashicorp/terraform-provider-google #17697,
# #25069), so scripts/attach_turn_dead_letter.sh sets it with gcloud after
# every deploy of turn_send. A turn that fails turn_max_delivery_attempts
# times lands in the dead-letter topic and is kept for 7 days in the
# dead-letter subscription for inspection.

resource "google_pubsub_topic" "turns" {
  #checkov:skip=CKV_GCP_83:Turn messages hold IDs only; Google-managed encryption, as for the rest of the deployment.
  project = var.project_id
  name    = "${local.prefix}-turns"

  depends_on = [google_project_service.enabled]
}

resource "google_pubsub_topic" "turns_dead_letter" {
  #checkov:skip=CKV_GCP_83:Turn messages hold IDs only; Google-managed encryption, as for the rest of the deployment.
  project = var.project_id
  name    = "${local.prefix}-turns-dead-letter"

  depends_on = [google_project_service.enabled]
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

# Every function publishes turns: the ingress a new one, the others the next
# waiting turn when one ends, and reconcile a turn whose function died.
resource "google_pubsub_topic_iam_member" "turn_publisher" {
  for_each = local.function_names

  project = var.project_id
  topic   = google_pubsub_topic.turns.name
  role    = "roles/pubsub.publisher"
  member  = google_service_account.function[each.key].member
}

# Pub/Sub's own service agent forwards undeliverable turns; the script grants
# it the matching subscriber role on the Eventarc subscription.
resource "google_pubsub_topic_iam_member" "dead_letter_forwarder" {
  project = var.project_id
  topic   = google_pubsub_topic.turns_dead_letter.name
  role    = "roles/pubsub.publisher"
  member  = local.pubsub_service_agent
}

resource "terraform_data" "turn_dead_letter_policy" {
  count = var.deploy_functions ? 1 : 0

  # Redeploying turn_send may give it a new subscription: attach again.
  triggers_replace = [
    module.function["turn_send"].update_time,
    google_pubsub_topic.turns_dead_letter.id,
    var.turn_max_delivery_attempts,
  ]

  provisioner "local-exec" {
    command = "bash ${path.module}/scripts/attach_turn_dead_letter.sh"
    environment = {
      PROJECT               = var.project_id
      TRIGGER               = module.function["turn_send"].eventarc_trigger
      DEAD_LETTER_TOPIC     = google_pubsub_topic.turns_dead_letter.id
      MAX_DELIVERY_ATTEMPTS = var.turn_max_delivery_attempts
      PUBSUB_SERVICE_AGENT  = local.pubsub_service_agent
    }
  }

  depends_on = [google_pubsub_topic_iam_member.dead_letter_forwarder]
}
