output "slack_events_url" {
  description = "Paste into the Slack app: Event Subscriptions > Request URL."
  value       = local.slack_events_url
}

output "slack_interactivity_url" {
  description = "Paste into the Slack app: Interactivity & Shortcuts > Request URL."
  value       = local.slack_interactivity_url
}

output "slack_app_manifest" {
  description = "Slack app manifest (YAML) with both request URLs, bot scopes and event subscriptions: Create New App > From a manifest."
  value = templatefile("${path.module}/slack-manifest.yaml", {
    events_url        = local.slack_events_url
    interactivity_url = local.slack_interactivity_url
  })
}

output "trigger_urls" {
  description = "Trigger name => the URL its alert source POSTs to (chat_ingress /triggers/<name>), authenticated by the trigger's auth.secretRef."
  value       = local.trigger_urls
}

output "health_check_url" {
  description = "GET it after deploying: chat_ingress answers {\"ok\": true, ...} when it can reach Firestore."
  value       = "${local.function_urls.chat_ingress}/healthz"
}

output "secrets" {
  description = "Environment variable => Secret Manager secret ID. Their values come from slack_bot_token, slack_signing_secret and config_secret_values."
  value       = local.secrets
}

output "function_urls" {
  description = "Entry point => URL of each function."
  value       = local.function_urls
}

output "function_permissions" {
  description = "Entry point => what its service account may do (permissions.tf)."
  value       = local.function_permissions
}

output "turns_dead_letter_subscription" {
  description = "Pull subscription holding turns that turn_send failed turn_max_delivery_attempts times (kept 7 days)."
  value       = google_pubsub_subscription.turns_dead_letter.id
}
