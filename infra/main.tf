# Names, URLs and the config file, which every file shares.
#
# The functions call one another through Cloud Tasks, and Slack calls
# chat_ingress, so their URLs are needed before any function exists. They
# are therefore computed, not read back: a 2nd gen function answers at
# https://REGION-PROJECT.cloudfunctions.net/NAME (its `url` attribute), and
# each function checks after its deploy that the URL is the one computed
# here. The Slack manifest can so be printed before the first apply.

data "google_project" "this" {
  project_id = var.project_id

  depends_on = [time_sleep.apis_ready]
}

locals {
  prefix = var.name_prefix

  config = yamldecode(file(var.config_file))

  # Secret names that the config file gives, by the config field that names
  # them (its YAML name, as tests/infra/code_permissions.py reports the
  # fields the code reads): a binding's identity.tokenSecretRef, a backend
  # header's valueSecretRef, and a trigger's auth.secretRef. A header is
  # either `Name: value` or `Name: {valueSecretRef: {name: secret}}`.
  config_secret_names = {
    secretRef = toset(compact([
      for trigger in try(local.config.triggers, []) : try(trigger.auth.secretRef.name, "")
    ]))
    tokenSecretRef = toset(compact([
      for binding in try(local.config.bindings, []) : try(binding.identity.tokenSecretRef.name, "")
    ]))
    valueSecretRef = toset(compact(flatten([
      for backend in try(local.config.agentBackends, []) : [
        for header, value in try(backend.headers, {}) : try(value.valueSecretRef.name, "")
      ]
    ])))
  }

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

  # Where each trigger of the config receives alerts (POST, on chat_ingress).
  trigger_urls = {
    for trigger in try(local.config.triggers, []) : trigger.name => "${local.function_urls.chat_ingress}/triggers/${trigger.name}"
  }

  slack_events_url        = "${local.function_urls.chat_ingress}/slack/events"
  slack_interactivity_url = "${local.function_urls.chat_ingress}/slack/interactivity"

  pubsub_service_agent = "serviceAccount:service-${data.google_project.this.number}@gcp-sa-pubsub.iam.gserviceaccount.com"
}
