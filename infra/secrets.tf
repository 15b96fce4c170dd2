# Secrets: the Slack signing secret, the Slack bot token and each secret
# that the config file names (local.config_secret_names).
#
# Terraform writes their values with write-only arguments, fed from
# ephemeral variables (TF_VAR_...), so no value is ever in the state, a plan
# or a tfvars file. A value is written when its version is created and again
# whenever secret_values_version changes; other applies need no values.
# Cloud Functions injects the latest version into the function's
# environment when an instance starts (secret_environment_variables), under
# the same variable that the local run uses: SLACK_SIGNING_SECRET,
# SLACK_BOT_TOKEN and, for a secret named my-agent in the config,
# KOURIER_SECRET_MY_AGENT. The function's configuration holds only the
# secret's name.

locals {
  slack_secrets = {
    SLACK_SIGNING_SECRET = "${local.prefix}-slack-signing-secret"
    SLACK_BOT_TOKEN      = "${local.prefix}-slack-bot-token"
  }

  # Secret name in the config => the environment variable that carries it.
  config_secret_variables = {
    for name in setunion(values(local.config_secret_names)...) :
    name => "KOURIER_SECRET_${upper(replace(name, "-", "_"))}"
  }

  # Environment variable => Secret Manager secret ID.
  secrets = merge(
    local.slack_secrets,
    { for name, variable in local.config_secret_variables : variable => "${local.prefix}-config-${name}" },
  )

  # Environment variable => its value for this apply (ephemeral, may be null).
  secret_values = merge(
    {
      SLACK_SIGNING_SECRET = var.slack_signing_secret
      SLACK_BOT_TOKEN      = var.slack_bot_token
    },
    { for name, variable in local.config_secret_variables : variable => lookup(var.config_secret_values, name, null) },
  )
}

resource "google_secret_manager_secret" "kourier" {
  for_each = local.secrets

  project   = var.project_id
  secret_id = each.value

  replication {
    auto {}
  }

  depends_on = [time_sleep.apis_ready]
}

resource "google_secret_manager_secret_version" "kourier" {
  for_each = local.secrets

  secret                 = google_secret_manager_secret.kourier[each.key].id
  secret_data_wo         = local.secret_values[each.key]
  secret_data_wo_version = var.secret_values_version
}
