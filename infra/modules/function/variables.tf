variable "project_id" {
  description = "Project of the function."
  type        = string
}

variable "region" {
  description = "Region of the function (and of its Eventarc trigger)."
  type        = string
}

variable "name" {
  description = "Function name; also the name of its Cloud Run service."
  type        = string
}

variable "description" {
  description = "Human-readable description shown in the console."
  type        = string
}

variable "entry_point" {
  description = "Name of the Python function in main.py at the source root."
  type        = string
}

variable "source_bucket" {
  description = "Bucket that holds the source archive."
  type        = string
}

variable "source_object" {
  description = "Object name of the source archive (zip with main.py at its root)."
  type        = string
}

variable "build_service_account" {
  description = "Full resource name (projects/P/serviceAccounts/EMAIL) of the account Cloud Build runs the build as."
  type        = string
}

variable "service_account_email" {
  description = "Account the function runs as."
  type        = string
}

variable "expected_url" {
  description = "The https://REGION-PROJECT.cloudfunctions.net/NAME URL the other functions were given; the deploy fails if the function answers elsewhere."
  type        = string
}

variable "memory" {
  description = "Memory of one instance, e.g. 512Mi."
  type        = string
  default     = "512Mi"
}

variable "timeout_seconds" {
  description = "Longest run of one request or event, in seconds."
  type        = number
}

variable "min_instances" {
  description = "Instances kept warm."
  type        = number
  default     = 0
}

variable "max_instances" {
  description = "Most instances at once."
  type        = number
  default     = 20
}

variable "ingress" {
  description = "Network ingress: ALLOW_ALL, ALLOW_INTERNAL_ONLY or ALLOW_INTERNAL_AND_GCLB."
  type        = string
  default     = "ALLOW_INTERNAL_ONLY"

  validation {
    condition     = contains(["ALLOW_ALL", "ALLOW_INTERNAL_ONLY", "ALLOW_INTERNAL_AND_GCLB"], var.ingress)
    error_message = "ingress must be ALLOW_ALL, ALLOW_INTERNAL_ONLY or ALLOW_INTERNAL_AND_GCLB."
  }
}

variable "invokers" {
  description = "Members granted roles/run.invoker on the function, keyed by a label known at plan time (e.g. { tasks = \"serviceAccount:...\" }). \"allUsers\" makes it public."
  type        = map(string)
  default     = {}
}

variable "environment_variables" {
  description = "Plain environment variables of the function."
  type        = map(string)
  default     = {}
}

variable "secret_environment_variables" {
  description = "Environment variable name => Secret Manager secret ID in this project; the latest version is read when an instance starts."
  type        = map(string)
  default     = {}
}

variable "pubsub_trigger" {
  description = "When set, the function is event-driven: an Eventarc trigger delivers each message of topic (projects/P/topics/T) as a CloudEvent, authenticated as service_account_email, and retries failed deliveries when retry is true."
  type = object({
    topic                 = string
    service_account_email = string
    retry                 = optional(bool, true)
  })
  default = null
}
