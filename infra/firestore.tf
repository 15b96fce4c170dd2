# Firestore in Native mode: the functions' only state.
#
# Collections (created by the code on first write): kourier_sessions,
# kourier_turns, kourier_events (Slack event de-duplication), kourier_users
# (users.info cache), kourier_audit (approval decisions),
# kourier_questions, kourier_alert_threads (one per trigger and alert group),
# kourier_triggers (each trigger's flood count) and kourier_checkpoints (the
# parts of a turn's checkpoint too large for its document) and
# kourier_slack_budgets (one small document per Slack workspace: the stream
# starts and stops of the last minute and the streams open, which every
# instance shares to stay within Slack's rate tiers). Event and user
# records, turns once they are done, checkpoint parts, and questions and
# alert threads a month after their last change expire through TTL policies
# on expire_at; TTL fields are left unindexed, as
# Firestore advises for timestamps that only grow. Every query the code makes
# filters on one field (turns by session_id or status, sessions by
# lease_until), which Firestore's automatic single-field indexes serve: no
# composite index is needed. The database sits in the functions' region
# unless var.firestore.location says otherwise: every Slack acknowledgement
# waits on it.

resource "google_firestore_database" "kourier" {
  project                           = var.project_id
  name                              = var.firestore.database
  location_id                       = coalesce(var.firestore.location, var.region)
  type                              = "FIRESTORE_NATIVE"
  app_engine_integration_mode       = "DISABLED"
  point_in_time_recovery_enablement = var.firestore.point_in_time_recovery ? "POINT_IN_TIME_RECOVERY_ENABLED" : "POINT_IN_TIME_RECOVERY_DISABLED"
  delete_protection_state           = var.firestore.deletion_protection ? "DELETE_PROTECTION_ENABLED" : "DELETE_PROTECTION_DISABLED"
  deletion_policy                   = var.firestore.deletion_protection ? "ABANDON" : "DELETE"

  depends_on = [time_sleep.apis_ready]
}

resource "google_firestore_field" "expire_at" {
  for_each = toset(["kourier_events", "kourier_users", "kourier_turns", "kourier_questions", "kourier_alert_threads", "kourier_checkpoints"])

  project    = var.project_id
  database   = google_firestore_database.kourier.name
  collection = each.value
  field      = "expire_at"

  ttl_config {}
  index_config {}
}
