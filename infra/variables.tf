variable "project_id" {
  description = "Google Cloud project to deploy into. It may start empty apart from billing: every API Kourier needs is enabled here."
  type        = string
}

variable "region" {
  description = "Region of the functions, queues, scheduler job and source bucket."
  type        = string
  default     = "us-central1"
}

variable "name_prefix" {
  description = "Prefix of every resource name (functions, topics, queues, service accounts, secrets). Short, so that service account IDs stay within 30 characters."
  type        = string
  default     = "kourier"

  validation {
    condition     = can(regex("^[a-z][a-z0-9-]{0,11}$", var.name_prefix))
    error_message = "name_prefix must start with a letter and hold at most 12 lowercase letters, digits or dashes."
  }
}

variable "config_file" {
  description = "Path of the backends and bindings YAML (the file KOURIER_CONFIG names when running locally). It is copied into the source archive as kourier.yaml, so a change to it redeploys the functions, and it must hold no credential; each tokenSecretRef.name and valueSecretRef.name in it gets a Secret Manager secret (values in config_secret_values)."
  type        = string

  validation {
    condition     = fileexists(var.config_file)
    error_message = "config_file must name an existing file (a path relative to the directory terraform runs in, or absolute)."
  }
}

variable "firestore" {
  description = "The Firestore (Native mode) database. database is \"(default)\" or a name; location is a Firestore location such as nam5, eur3 or a region, and defaults to region (every Slack acknowledgement waits on Firestore, so keep it near the functions); deletion_protection keeps terraform destroy from deleting it (set false, apply, then destroy to tear down); point_in_time_recovery keeps 7 days of versions."
  type = object({
    database               = optional(string, "(default)")
    location               = optional(string)
    deletion_protection    = optional(bool, true)
    point_in_time_recovery = optional(bool, true)
  })
  default = {}
}

variable "functions" {
  description = "Per-function overrides of sizing.tf, keyed by entry point (chat_ingress, turn_send, stream_follow, reconcile, timeout): cpu (\"1\", \"0.5\"...), memory (\"1Gi\"...), concurrency, min_instances, max_instances, timeout_seconds. infra/README.md explains the defaults."
  type = map(object({
    cpu             = optional(string)
    memory          = optional(string)
    concurrency     = optional(number)
    min_instances   = optional(number)
    max_instances   = optional(number)
    timeout_seconds = optional(number)
  }))
  default = {}

  validation {
    condition     = alltrue([for name in keys(var.functions) : contains(["chat_ingress", "turn_send", "stream_follow", "reconcile", "timeout"], name)])
    error_message = "functions may only hold the keys chat_ingress, turn_send, stream_follow, reconcile and timeout."
  }

  validation {
    condition = alltrue([
      for name, settings in var.functions :
      settings.timeout_seconds == null || try(
        settings.timeout_seconds <= (name == "turn_send" ? 540 : name == "chat_ingress" ? 3600 : 1800) &&
        settings.timeout_seconds >= (contains(["turn_send", "stream_follow", "timeout"], name) ? 120 : 15),
        false,
      )
    ])
    error_message = "timeout_seconds must be at most 540 for turn_send (Pub/Sub waits 600 s for a push), 1800 for stream_follow, reconcile and timeout (the longest Cloud Tasks and Scheduler wait) and 3600 for chat_ingress; and at least 120 for the functions that follow streams (they hand over 60 s before it)."
  }

  validation {
    condition = alltrue([
      for name, settings in var.functions :
      settings.concurrency == null || try(settings.concurrency >= 1 && settings.concurrency <= 1000, false)
    ])
    error_message = "concurrency must be between 1 and 1000 (more than 1 needs cpu of at least \"1\")."
  }
}

variable "turn_max_delivery_attempts" {
  description = "How many times Pub/Sub pushes a turn to turn_send (retrying with backoff from 10 s to 10 min) before it moves the turn to the dead-letter topic. 5 to 100; 20 spans about 2.5 hours, which a burst that fills every turn_send instance cannot use up (README.md, Sizing)."
  type        = number
  default     = 20

  validation {
    condition     = var.turn_max_delivery_attempts >= 5 && var.turn_max_delivery_attempts <= 100
    error_message = "Pub/Sub allows 5 to 100 delivery attempts."
  }
}

variable "reconcile_schedule" {
  description = "Cron schedule (UTC) of the reconcile sweep that resumes turns a dead function left."
  type        = string
  default     = "* * * * *"
}

variable "alert_notification_channels" {
  description = "Cloud Monitoring notification channel IDs (projects/P/notificationChannels/N) that every alert policy notifies, e.g. an e-mail channel made with `gcloud beta monitoring channels create`. Empty: alerts open incidents in the console only, and plan warns."
  type        = list(string)
  default     = []
}

variable "slack_bot_token" {
  description = "The Slack app's Bot User OAuth Token (xoxb-...). Written into Secret Manager, never into the state; give it (TF_VAR_slack_bot_token) on the first apply and when secret_values_version changes."
  type        = string
  default     = null
  sensitive   = true
  ephemeral   = true
}

variable "slack_signing_secret" {
  description = "The Slack app's Signing Secret. Written into Secret Manager, never into the state; give it (TF_VAR_slack_signing_secret) on the first apply and when secret_values_version changes."
  type        = string
  default     = null
  sensitive   = true
  ephemeral   = true
}

variable "config_secret_values" {
  description = "Secret name in the config file (tokenSecretRef.name, valueSecretRef.name) => its value. Written into Secret Manager, never into the state; give it (TF_VAR_config_secret_values='{\"helper-token\":\"...\"}') on the first apply and when secret_values_version changes."
  type        = map(string)
  default     = {}
  sensitive   = true
  ephemeral   = true
}

variable "secret_values_version" {
  description = "Raise it by one to write the secret values given with this apply as new versions (rotation); instances that start afterwards read them."
  type        = number
  default     = 1
}

variable "labels" {
  description = "Labels added to every resource that takes labels."
  type        = map(string)
  default     = {}
}
