# Names and URLs every file shares.
#
# The functions call one another through Cloud Tasks, so each needs the
# others' URLs in its environment before any of them exists. The URLs are
# therefore computed, not read back: a 2nd gen function also answers at
# https://REGION-PROJECT.cloudfunctions.net/NAME (its `url` attribute), and
# the function module checks after each deploy that the URL is the one
# computed here.

data "google_project" "this" {
  project_id = var.project_id

  depends_on = [google_project_service.enabled]
}

locals {
  prefix = var.name_prefix

  config = yamldecode(file(var.config_file))

  # Secret names referenced by a binding's identity.tokenSecretRef.name.
  agent_token_secrets = toset(compact([
    for binding in local.config.bindings : try(binding.identity.tokenSecretRef.name, "")
  ]))

  function_names = {
    chat_ingress  = "${local.prefix}-chat-ingress"
    turn_send     = "${local.prefix}-turn-send"
    stream_follow = "${local.prefix}-stream-follow"
    reconcile     = "${local.prefix}-reconcile"
    timeout       = "${local.prefix}-timeout"
  }

  function_urls = {
    for entry_point, name in local.function_names :
    entry_point => "https://${var.region}-${var.project_id}.cloudfunctions.net/${name}"
  }

  slack_events_url        = "${local.function_urls.chat_ingress}/slack/events"
  slack_interactivity_url = "${local.function_urls.chat_ingress}/slack/interactivity"

  pubsub_service_agent = "serviceAccount:service-${data.google_project.this.number}@gcp-sa-pubsub.iam.gserviceaccount.com"
}
