# What each function's service account may do: one table, and every grant
# to a function's account made from it, here and nowhere else.
#
# The table says what the function's code does with Google services.
# tests/infra/test_permissions.py reads the code (from each entry point in
# functions/main.py through every call it can make) and fails when the code
# needs something the table does not grant, or the table grants something
# the code never uses; its message names the line to change here.
#
# Columns:
# - firestore: reads and writes documents (roles/datastore.user on the
#   Kourier database only, by an IAM condition).
# - publish: topics (keys of local.topics) it publishes turns to
#   (roles/pubsub.publisher on each).
# - enqueue: queues (keys of local.queues) it creates Cloud Tasks on
#   (roles/cloudtasks.enqueuer on each).
# - act_as_tasks: its tasks carry an OIDC token of the tasks account, which
#   needs iam.serviceAccounts.actAs on that account
#   (roles/iam.serviceAccountUser on it, not on the project).
# - secrets: environment variables it reads that hold Slack secrets.
# - config_secrets: config fields (YAML names) whose secrets it reads, for
#   example tokenSecretRef, the agent tokens of the bindings, or secretRef,
#   what authenticates a trigger's requests.
#   Both give roles/secretmanager.secretAccessor on exactly those secrets,
#   which Cloud Functions mounts into its environment.

locals {
  function_permissions = {
    # The composition root (shared/bootstrap.py) builds every adapter of a
    # process: a function is granted what its adapters can reach, so
    # chat_ingress may enqueue to timers and reconcile reads the bot token.
    chat_ingress = {
      firestore      = true
      publish        = ["turns"]
      enqueue        = ["follow", "timers"]
      act_as_tasks   = true
      secrets        = ["SLACK_BOT_TOKEN", "SLACK_SIGNING_SECRET"]
      config_secrets = ["secretRef"]
    }
    turn_send = {
      firestore      = true
      publish        = ["turns"]
      enqueue        = ["follow", "timers"]
      act_as_tasks   = true
      secrets        = ["SLACK_BOT_TOKEN"]
      config_secrets = ["tokenSecretRef", "valueSecretRef"]
    }
    stream_follow = {
      firestore      = true
      publish        = ["turns"]
      enqueue        = ["follow", "timers"]
      act_as_tasks   = true
      secrets        = ["SLACK_BOT_TOKEN"]
      config_secrets = ["tokenSecretRef", "valueSecretRef"]
    }
    timeout = {
      firestore      = true
      publish        = ["turns"]
      enqueue        = ["follow", "timers"]
      act_as_tasks   = true
      secrets        = ["SLACK_BOT_TOKEN"]
      config_secrets = ["tokenSecretRef", "valueSecretRef"]
    }
    reconcile = {
      firestore      = true
      publish        = ["turns"]
      enqueue        = []
      act_as_tasks   = false
      secrets        = ["SLACK_BOT_TOKEN"]
      config_secrets = []
    }
  }

  # The table, as the pairs each grant below is made for.
  firestore_users = toset([for function, grants in local.function_permissions : function if grants.firestore])
  topic_publishers = merge([
    for function, grants in local.function_permissions : {
      for topic in grants.publish : "${topic}/${function}" => { topic = topic, function = function }
    }
  ]...)
  queue_enqueuers = merge([
    for function, grants in local.function_permissions : {
      for queue in grants.enqueue : "${queue}/${function}" => { queue = queue, function = function }
    }
  ]...)
  task_actors = toset([for function, grants in local.function_permissions : function if grants.act_as_tasks])

  # Entry point => the environment variables it reads from Secret Manager.
  function_secrets = {
    for function, grants in local.function_permissions : function => concat(
      grants.secrets,
      flatten([
        for field in grants.config_secrets : [
          for name in local.config_secret_names[field] : local.config_secret_variables[name]
        ]
      ]),
    )
  }
  secret_accessors = merge([
    for function, variables in local.function_secrets : {
      for variable in variables : "${function}/${variable}" => { function = function, variable = variable }
    }
  ]...)
}

resource "google_service_account" "function" {
  for_each = local.function_names

  project      = var.project_id
  account_id   = each.value
  display_name = "Agent Kourier ${each.key} (function runtime)"

  depends_on = [time_sleep.apis_ready]
}

# Document access, limited to this database by an IAM condition.
resource "google_project_iam_member" "firestore_user" {
  for_each = local.firestore_users

  project = var.project_id
  role    = "roles/datastore.user"
  member  = google_service_account.function[each.key].member

  condition {
    title       = "kourier-database-only"
    description = "Only the Agent Kourier Firestore database"
    expression  = "resource.name == \"projects/${var.project_id}/databases/${google_firestore_database.kourier.name}\""
  }
}

resource "google_pubsub_topic_iam_member" "publisher" {
  for_each = local.topic_publishers

  project = var.project_id
  topic   = local.topics[each.value.topic]
  role    = "roles/pubsub.publisher"
  member  = google_service_account.function[each.value.function].member
}

resource "google_cloud_tasks_queue_iam_member" "enqueuer" {
  for_each = local.queue_enqueuers

  project  = var.project_id
  location = var.region
  name     = google_cloud_tasks_queue.kourier[each.value.queue].name
  role     = "roles/cloudtasks.enqueuer"
  member   = google_service_account.function[each.value.function].member
}

resource "google_service_account_iam_member" "acts_as_tasks" {
  for_each = local.task_actors

  service_account_id = google_service_account.tasks_invoker.name
  role               = "roles/iam.serviceAccountUser"
  member             = google_service_account.function[each.key].member
}

resource "google_secret_manager_secret_iam_member" "accessor" {
  for_each = local.secret_accessors

  project   = var.project_id
  secret_id = google_secret_manager_secret.kourier[each.value.variable].secret_id
  role      = "roles/secretmanager.secretAccessor"
  member    = google_service_account.function[each.value.function].member
}
