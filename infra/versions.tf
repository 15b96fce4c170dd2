terraform {
  # 1.11 for write-only arguments (secret values that never reach the state)
  # and ephemeral variables (1.10).
  required_version = ">= 1.11.0"

  # Versions locked in .terraform.lock.hcl; the ranges let `terraform init
  # -upgrade` take fixes within one major version only.
  required_providers {
    google = {
      source  = "hashicorp/google"
      version = ">= 6.50.0, < 7.0.0"
    }
    archive = {
      source  = "hashicorp/archive"
      version = ">= 2.7.1, < 3.0.0"
    }
    time = {
      source  = "hashicorp/time"
      version = ">= 0.13.1, < 1.0.0"
    }
  }
}

provider "google" {
  project        = var.project_id
  region         = var.region
  default_labels = var.labels

  # With user credentials (gcloud auth application-default login), bill API
  # calls to this project instead of asking for a quota project.
  user_project_override = true
  billing_project       = var.project_id
}
