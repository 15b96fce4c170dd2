# Secrets: the Slack signing secret, the Slack bot token and each agent token
# that a binding names in identity.tokenSecretRef.name.
#
# Terraform creates the secrets but never their values, so no secret is in
# the state, a plan or a tfvars file: add each value with
# `gcloud secrets versions add` (README.md). Cloud Functions injects the
# latest version into the function's environment when an instance starts
# (secret_environment_variables), under the same variable that the local
# run uses: SLACK_SIGNING_SECRET, SLACK_BOT_TOKEN and, for a token named
# my-agent, KOURIER_SECRET_MY_AGENT. The function's configuration holds only
# the secret's name. A new version reaches instances that start after it is
# added; redeploy (terraform apply -replace) to roll it out at once.

locals {
  # Environment variable => Secret Manager secret ID.
  secrets = merge(
    {
      SLACK_SIGNING_SECRET = "${local.prefix}-slack-signing-secret"
      SLACK_BOT_TOKEN      = "${local.prefix}-slack-bot-token"
    },
    {
      for name in local.agent_token_secrets :
      "KOURIER_SECRET_${upper(replace(name, "-", "_"))}" => "${local.prefix}-agent-${name}"
    },
  )

  agent_token_variables = [for variable, _ in local.secrets : variable if startswith(variable, "KOURIER_SECRET_")]

  # Entry point => the environment variables it reads from secrets.
  function_secrets = {
    for entry_point, access in local.function_access : entry_point => concat(
      ["SLACK_BOT_TOKEN"],
      access.verifies_slack ? ["SLACK_SIGNING_SECRET"] : [],
      access.calls_agents ? local.agent_token_variables : [],
    )
  }

  secret_accessors = merge([
    for entry_point, variables in local.function_secrets : {
      for variable in variables : "${entry_point}/${variable}" => { entry_point = entry_point, variable = variable }
    }
  ]...)
}

resource "google_secret_manager_secret" "kourier" {
  for_each = local.secrets

  project   = var.project_id
  secret_id = each.value

  replication {
    auto {}
  }

  depends_on = [google_project_service.enabled]
}

resource "google_secret_manager_secret_iam_member" "accessor" {
  for_each = local.secret_accessors

  project   = var.project_id
  secret_id = google_secret_manager_secret.kourier[each.value.variable].secret_id
  role      = "roles/secretmanager.secretAccessor"
  member    = google_service_account.function[each.value.entry_point].member
}
