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
  description = "Path of the backends and bindings YAML (the file KOURIER_CONFIG names when running locally). It is copied into the source archive as kourier.yaml, so a change to it redeploys the functions; each identity.tokenSecretRef.name in it gets a Secret Manager secret."
  type        = string

  validation {
    condition     = fileexists(var.config_file)
    error_message = "config_file must name an existing file (a path relative to the directory terraform runs in, or absolute)."
  }
}

variable "deploy_functions" {
  description = "Whether to deploy the five functions and what calls them. Set false for the first apply only: a function reads its secrets when it starts and cannot deploy before each secret has a version (README.md). Setting it false later removes the functions."
  type        = bool
  default     = true
}

variable "firestore" {
  description = "The Firestore (Native mode) database. database is \"(default)\" or a name; location is a Firestore location such as nam5, eur3 or a region; deletion_protection keeps terraform destroy from deleting it (set false, apply, then destroy to tear down); point_in_time_recovery keeps 7 days of versions."
  type = object({
    database               = optional(string, "(default)")
    location               = optional(string, "nam5")
    deletion_protection    = optional(bool, true)
    point_in_time_recovery = optional(bool, true)
  })
  default = {}
}

variable "functions" {
  description = "Per-function overrides, keyed by entry point (chat_ingress, turn_send, stream_follow, reconcile, timeout). timeout_seconds is at most 540 for turn_send (event-driven) and at most 1800 for the Cloud Tasks targets; the tasks' dispatch deadline is the shortest of those targets' timeouts. min_instances 1 on chat_ingress keeps Slack's 3-second acknowledgement fast after idle periods, for the price of one idle instance."
  type = map(object({
    memory          = optional(string)
    timeout_seconds = optional(number)
    min_instances   = optional(number)
    max_instances   = optional(number)
  }))
  default = {}

  validation {
    condition     = alltrue([for name in keys(var.functions) : contains(["chat_ingress", "turn_send", "stream_follow", "reconcile", "timeout"], name)])
    error_message = "functions may only hold the keys chat_ingress, turn_send, stream_follow, reconcile and timeout."
  }

  validation {
    condition = alltrue([
      for name, settings in var.functions :
      settings.timeout_seconds == null || try(settings.timeout_seconds <= (name == "turn_send" ? 540 : name == "chat_ingress" ? 3600 : 1800), false)
    ])
    error_message = "timeout_seconds may be at most 540 for turn_send (event-driven), 1800 for stream_follow, reconcile and timeout (the longest Cloud Tasks waits) and 3600 for chat_ingress."
  }
}

variable "turn_max_delivery_attempts" {
  description = "How many times Pub/Sub delivers a turn to turn_send (retrying with backoff from 10 s to 10 min) before it moves the turn to the dead-letter topic. 5 to 100."
  type        = number
  default     = 10

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
  description = "Cloud Monitoring notification channel IDs (projects/P/notificationChannels/N) that the example alert policy notifies. Empty: the alert opens incidents in the console only."
  type        = list(string)
  default     = []
}

variable "labels" {
  description = "Labels added to every resource that takes labels."
  type        = map(string)
  default     = {}
}
