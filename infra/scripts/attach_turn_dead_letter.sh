#!/usr/bin/env bash
# Give turn_send's Eventarc-managed Pub/Sub subscription a dead-letter topic.
#
# Run by terraform (pubsub.tf) after each deploy of turn_send, because
# Terraform cannot configure a subscription that Eventarc owns. Idempotent.
# Environment: PROJECT, TRIGGER (the Eventarc trigger's full name),
# DEAD_LETTER_TOPIC (projects/P/topics/T), MAX_DELIVERY_ATTEMPTS and
# PUBSUB_SERVICE_AGENT (serviceAccount:service-N@gcp-sa-pubsub...).
set -euo pipefail

subscription=$(gcloud eventarc triggers describe "$TRIGGER" \
  --project "$PROJECT" --format 'value(transport.pubsub.subscription)')
if [[ -z "$subscription" ]]; then
  echo "attach_turn_dead_letter: trigger $TRIGGER has no Pub/Sub subscription" >&2
  exit 1
fi

# The ack deadline covers turn_send's longest run (540 s); retries back off
# from 10 s to 10 min until the dead-letter topic takes the turn.
gcloud pubsub subscriptions update "$subscription" --project "$PROJECT" \
  --dead-letter-topic "$DEAD_LETTER_TOPIC" \
  --max-delivery-attempts "$MAX_DELIVERY_ATTEMPTS" \
  --ack-deadline 600 \
  --min-retry-delay 10s \
  --max-retry-delay 600s

gcloud pubsub subscriptions add-iam-policy-binding "$subscription" --project "$PROJECT" \
  --member "$PUBSUB_SERVICE_AGENT" --role roles/pubsub.subscriber >/dev/null

echo "attach_turn_dead_letter: $subscription -> $DEAD_LETTER_TOPIC after $MAX_DELIVERY_ATTEMPTS attempts"
