# How big each function is, in one table (README.md, "Sizing", explains
# every number; change them here or per deployment with var.functions).
#
# - cpu / memory: one instance. A function that serves more than one request
#   at a time needs a whole vCPU; memory covers the streams it holds.
# - concurrency: requests one instance serves at once
#   (max_instance_request_concurrency; functions-framework gets as many
#   threads). Kourier's work is waiting on Slack, the agent and Google's
#   APIs, not computing, so one vCPU carries several requests.
# - min / max instances: warm instances kept, and the cap.
# - timeout_seconds: the longest request. turn_send is pushed by Pub/Sub,
#   which waits at most 600 s (the ack deadline) for an answer, so it stops
#   at 540 s; the Cloud Tasks targets may run 1800 s, the longest dispatch
#   deadline Cloud Tasks allows.
# - follows_streams: the function follows an agent's stream and hands it
#   over KOURIER_FOLLOW_BUDGET_SECONDS after it starts, follow_handover
#   seconds before its own timeout (or its queue's dispatch deadline).

locals {
  function_sizing = {
    chat_ingress  = { cpu = "1", memory = "512Mi", concurrency = 40, min_instances = 1, max_instances = 10, timeout_seconds = 60, follows_streams = false }
    turn_send     = { cpu = "1", memory = "1Gi", concurrency = 8, min_instances = 0, max_instances = 50, timeout_seconds = 540, follows_streams = true }
    stream_follow = { cpu = "1", memory = "1Gi", concurrency = 8, min_instances = 0, max_instances = 50, timeout_seconds = 1800, follows_streams = true }
    timeout       = { cpu = "1", memory = "1Gi", concurrency = 8, min_instances = 0, max_instances = 20, timeout_seconds = 1800, follows_streams = true }
    reconcile     = { cpu = "0.5", memory = "512Mi", concurrency = 1, min_instances = 0, max_instances = 1, timeout_seconds = 300, follows_streams = false }
  }

  follow_handover = 60

  # The table with var.functions applied.
  function_settings = {
    for entry_point, sizing in local.function_sizing : entry_point => merge(sizing, {
      for key, value in try(var.functions[entry_point], {}) : key => value if value != null
    })
  }

  # Each queue's tasks may run as long as the function they call (tasks.tf
  # says which that is), within Cloud Tasks' 1800 s.
  dispatch_deadline_seconds = {
    for queue, target in local.queue_target : queue => min(1800, local.function_settings[target].timeout_seconds)
  }
  queue_of_target = { for queue, target in local.queue_target : target => queue }

  # Seconds a function follows a stream before it hands it over.
  follow_budget_seconds = {
    for entry_point, settings in local.function_settings : entry_point => min(
      settings.timeout_seconds,
      try(local.dispatch_deadline_seconds[local.queue_of_target[entry_point]], settings.timeout_seconds),
    ) - local.follow_handover
    if settings.follows_streams
  }
}
