output "name" {
  description = "Function name."
  value       = google_cloudfunctions2_function.this.name
}

output "url" {
  description = "The function's https://REGION-PROJECT.cloudfunctions.net/NAME URL."
  value       = google_cloudfunctions2_function.this.url
}

output "service" {
  description = "The Cloud Run service that runs the function."
  value       = google_cloudfunctions2_function.this.service_config[0].service
}

output "update_time" {
  description = "When the function was last deployed."
  value       = google_cloudfunctions2_function.this.update_time
}

output "eventarc_trigger" {
  description = "Full name of the Eventarc trigger of an event-driven function; null for an HTTP one."
  value       = var.pubsub_trigger == null ? null : google_cloudfunctions2_function.this.event_trigger[0].trigger
}
