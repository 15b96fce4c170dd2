"""Callbacks the stand-in sends: shaped and signed as Slack's, checked with slack_sdk."""

from __future__ import annotations

import json
import time

import httpx
import pytest
from slack_sdk import WebClient
from slack_sdk.signature import SignatureVerifier

from local.slack_standin import SlackStandin, StandinError
from tests.slack_standin.support import (
    APPROVAL_BLOCKS,
    CHANNEL,
    MODAL,
    SIGNING_SECRET,
    Answer,
    Received,
    Receiver,
    free_port,
)

verifier = SignatureVerifier(SIGNING_SECRET)


def test_a_mention_arrives_as_a_signed_app_mention(
    standin: SlackStandin, receiver: Receiver
) -> None:
    posted = standin.say(CHANNEL, "how are the pods?")
    assert posted.statuses == [200]
    [request] = receiver.requests
    assert request.path == "/slack/events"
    assert verifier.is_valid_request(request.body, request.headers)
    assert not SignatureVerifier("some-other-secret").is_valid_request(
        request.body, request.headers
    )
    envelope = request.json()
    assert envelope["type"] == "event_callback"
    assert envelope["event_id"] == posted.event_ids[0]
    assert (envelope["team_id"], envelope["api_app_id"]) == ("T0KOURIER", "A0KOURIER")
    assert envelope["authorizations"][0]["user_id"] == "U0KOURIER"
    assert abs(envelope["event_time"] - time.time()) < 600
    event = envelope["event"]
    assert event["type"] == "app_mention"
    assert (event["user"], event["channel"], event["ts"], event["event_ts"]) == (
        "U0ALICE",
        CHANNEL,
        posted.ts,
        posted.ts,
    )
    assert event["text"] == "<@U0KOURIER> how are the pods?"
    assert "thread_ts" not in event
    [stored] = standin.history(CHANNEL)
    assert (stored.ts, stored.user, stored.text) == (posted.ts, "U0ALICE", event["text"])


def test_a_thread_reply_without_mention_is_a_message_event(
    standin: SlackStandin, receiver: Receiver
) -> None:
    parent = standin.say(CHANNEL, "start")
    reply = standin.say(
        CHANNEL, "and the nodes?", user="U0BOB", thread_ts=parent.ts, as_mention=False
    )
    event = receiver.requests[-1].json()["event"]
    assert event["type"] == "message" and event["channel_type"] == "channel"
    assert (event["text"], event["user"], event["ts"]) == ("and the nodes?", "U0BOB", reply.ts)
    assert (event["thread_ts"], event["parent_user_id"]) == (parent.ts, "U0ALICE")
    assert [m.ts for m in standin.thread(CHANNEL, parent.ts)] == [parent.ts, reply.ts]


def test_one_mention_can_arrive_as_two_events(standin: SlackStandin, receiver: Receiver) -> None:
    posted = standin.say(CHANNEL, "hello", both_events=True)
    assert len(set(posted.event_ids)) == 2 and posted.statuses == [200, 200]
    events = {request.json()["event_id"]: request.json()["event"] for request in receiver.requests}
    assert {events[event_id]["type"] for event_id in posted.event_ids} == {"app_mention", "message"}
    assert {event["ts"] for event in events.values()} == {posted.ts}
    assert len(standin.history(CHANNEL)) == 1


def test_a_retry_repeats_the_event_with_retry_headers(
    standin: SlackStandin, receiver: Receiver
) -> None:
    posted = standin.say(CHANNEL, "hello")
    first = standin.resend(posted.event_ids[0])
    second = standin.resend(posted.event_ids[0], reason="http_error")
    assert (first.retry_num, second.retry_num, second.status) == (1, 2, 200)
    original, retry1, retry2 = receiver.requests
    assert original.json() == retry1.json() == retry2.json()
    assert "X-Slack-Retry-Num" not in original.headers
    assert (retry1.headers["X-Slack-Retry-Num"], retry1.headers["X-Slack-Retry-Reason"]) == (
        "1",
        "http_timeout",
    )
    assert (retry2.headers["X-Slack-Retry-Num"], retry2.headers["X-Slack-Retry-Reason"]) == (
        "2",
        "http_error",
    )
    assert all(verifier.is_valid_request(r.body, r.headers) for r in receiver.requests)
    with pytest.raises(StandinError, match="404"):
        standin.resend("Ev0NEVERSENT")


def test_bad_signatures_fail_verification(standin: SlackStandin, receiver: Receiver) -> None:
    standin.say(CHANNEL, "forged", signature="wrong_secret")
    standin.say(CHANNEL, "replayed", signature="stale_timestamp")
    forged, stale = receiver.requests
    assert not verifier.is_valid_request(forged.body, forged.headers)
    assert not verifier.is_valid_request(stale.body, stale.headers)
    # The stale one is signed correctly; only its age makes it invalid.
    timestamp = stale.headers["X-Slack-Request-Timestamp"]
    assert (
        verifier.generate_signature(timestamp=timestamp, body=stale.body)
        == stale.headers["X-Slack-Signature"]
    )
    assert time.time() - int(timestamp) > 300


def test_the_apps_answers_are_reported(standin: SlackStandin, receiver: Receiver) -> None:
    receiver.respond = lambda request: (401, b'{"error": "bad signature"}')
    assert standin.say(CHANNEL, "hello").statuses == [401]

    def slow(request: Received) -> Answer:
        time.sleep(1.5)
        return 200, b""

    receiver.respond = slow
    standin.configure(ack_timeout_seconds=0.3)
    [late] = standin.say(CHANNEL, "hello").deliveries
    assert (late.status, late.error) == (None, "http_timeout")
    standin.configure(events_url=f"http://127.0.0.1:{free_port()}/slack/events")
    [refused] = standin.say(CHANNEL, "hello").deliveries
    assert refused.status is None and refused.error is not None
    assert refused.error.startswith("connection_failed")


def test_url_verification_wants_the_challenge_back(
    standin: SlackStandin, receiver: Receiver
) -> None:
    receiver.respond = lambda request: (
        200,
        json.dumps({"challenge": request.json()["challenge"]}).encode(),
    )
    verification = standin.verify_url()
    assert verification.echoed and verification.delivery.status == 200
    body = receiver.requests[0].json()
    assert (body["type"], body["challenge"]) == ("url_verification", verification.challenge)
    assert verifier.is_valid_request(receiver.requests[0].body, receiver.requests[0].headers)
    receiver.respond = lambda request: (200, b"")
    assert not standin.verify_url().echoed


def test_a_click_sends_block_actions(
    slack: WebClient, standin: SlackStandin, receiver: Receiver
) -> None:
    question = standin.say(CHANNEL, "delete the pod")
    posted = slack.chat_postMessage(
        channel=CHANNEL, thread_ts=question.ts, text="Approve?", blocks=APPROVAL_BLOCKS
    )
    receiver.clear()
    interaction = standin.click(CHANNEL, posted["ts"], "approve", user="U0BOB")
    assert interaction.delivery.status == 200
    [request] = receiver.requests
    assert request.path == "/slack/interactivity"
    assert request.headers["Content-Type"] == "application/x-www-form-urlencoded"
    assert verifier.is_valid_request(request.body, request.headers)
    payload = request.payload()
    assert payload["type"] == "block_actions"
    assert (payload["user"]["id"], payload["user"]["username"]) == ("U0BOB", "bob")
    [action] = payload["actions"]
    assert (action["action_id"], action["block_id"], action["value"], action["type"]) == (
        "approve",
        "approval",
        "q1",
        "button",
    )
    assert payload["container"] == {
        "type": "message",
        "message_ts": posted["ts"],
        "channel_id": CHANNEL,
        "is_ephemeral": False,
        "thread_ts": question.ts,
    }
    assert payload["channel"]["id"] == CHANNEL and payload["message"]["ts"] == posted["ts"]
    assert (payload["trigger_id"], payload["response_url"]) == (
        interaction.trigger_id,
        interaction.response_url,
    )
    with pytest.raises(StandinError, match="404"):
        standin.click(CHANNEL, posted["ts"], "no_such_button")


def test_the_response_url_replaces_or_answers(slack: WebClient, standin: SlackStandin) -> None:
    posted = slack.chat_postMessage(channel=CHANNEL, text="Approve?", blocks=APPROVAL_BLOCKS)
    interaction = standin.click(CHANNEL, posted["ts"], "approve")
    answer = httpx.post(
        interaction.response_url, json={"response_type": "ephemeral", "text": "Noted."}
    )
    assert answer.status_code == 200
    [ephemeral] = standin.ephemerals(channel=CHANNEL, user="U0ALICE")
    assert ephemeral.text == "Noted."
    httpx.post(
        interaction.response_url, json={"replace_original": True, "text": "Approved by Alice"}
    )
    [message] = standin.history(CHANNEL)
    assert (message.text, message.blocks, message.rendered) == (
        "Approved by Alice",
        [],
        "Approved by Alice",
    )
    assert httpx.post(f"{standin.base_url}/actions/unknown", json={"text": "x"}).status_code == 404


def test_a_select_sends_the_chosen_option(
    slack: WebClient, standin: SlackStandin, receiver: Receiver
) -> None:
    menu = {
        "type": "section",
        "block_id": "pick",
        "text": {"type": "mrkdwn", "text": "Which cluster?"},
        "accessory": MODAL["blocks"][1]["element"],
    }
    posted = slack.chat_postMessage(channel=CHANNEL, text="Which cluster?", blocks=[menu])
    receiver.clear()
    standin.click(CHANNEL, posted["ts"], "scope_choice", value="always")
    action = receiver.requests[0].payload()["actions"][0]
    assert action["selected_option"]["value"] == "always" and action["block_id"] == "pick"
    with pytest.raises(StandinError, match="400"):
        standin.click(CHANNEL, posted["ts"], "scope_choice", value="sometimes")


def test_a_modal_round_trip(slack: WebClient, standin: SlackStandin, receiver: Receiver) -> None:
    """Click, the app opens a modal with the trigger, the person submits it twice."""
    posted = slack.chat_postMessage(channel=CHANNEL, text="Approve?", blocks=APPROVAL_BLOCKS)

    def app(request: Received) -> Answer:
        payload = request.payload()
        if payload["type"] == "block_actions":
            slack.views_open(trigger_id=payload["trigger_id"], view=MODAL)
            return 200, b""
        reason = payload["view"]["state"]["values"]["reason"]["reason_text"]["value"]
        if len(reason) < 5:
            return 200, json.dumps(
                {"response_action": "errors", "errors": {"reason": "Say more."}}
            ).encode()
        return 200, b""

    receiver.respond = app
    standin.click(CHANNEL, posted["ts"], "deny")
    [view] = standin.views()
    assert (view.open, view.user, view.view["callback_id"]) == (True, "U0ALICE", "deny_reason")
    with pytest.raises(StandinError, match="400"):
        standin.submit(view.id, {"scope_choice": "once"})  # the reason is required
    refused = standin.submit(view.id, {"reason_text": "no"})
    assert (refused.response_action, refused.errors, refused.view_open) == (
        "errors",
        {"reason": "Say more."},
        True,
    )
    accepted = standin.submit(view.id, {"reason_text": "too risky", "scope_choice": "once"})
    assert (accepted.delivery.status, accepted.view_open) == (200, False)
    submission = receiver.requests[-1]
    assert verifier.is_valid_request(submission.body, submission.headers)
    payload = submission.payload()
    assert payload["type"] == "view_submission" and payload["user"]["id"] == "U0ALICE"
    assert payload["view"]["id"] == view.id and payload["view"]["private_metadata"] == "q1"
    values = payload["view"]["state"]["values"]
    assert values["scope"]["scope_choice"]["selected_option"]["value"] == "once"
    assert not standin.views()[0].open


def test_a_thread_that_does_not_exist_cannot_be_replied_to(standin: SlackStandin) -> None:
    with pytest.raises(StandinError, match="404"):
        standin.say(CHANNEL, "hello?", thread_ts="1700000000.000001")
    with pytest.raises(StandinError, match="404"):
        standin.say(CHANNEL, "who am I?", user="U0NOBODY")


def test_an_update_answer_replaces_the_modal(
    slack: WebClient, standin: SlackStandin, receiver: Receiver
) -> None:
    posted = slack.chat_postMessage(channel=CHANNEL, text="Approve?", blocks=APPROVAL_BLOCKS)
    trigger_id = standin.click(CHANNEL, posted["ts"], "deny").trigger_id
    view_id = slack.views_open(trigger_id=trigger_id, view=MODAL)["view"]["id"]
    thanks = {
        "type": "modal",
        "title": {"type": "plain_text", "text": "Thanks"},
        "blocks": [{"type": "section", "text": {"type": "mrkdwn", "text": "Denied."}}],
    }
    answer = {"response_action": "update", "view": thanks}
    receiver.respond = lambda request: (200, json.dumps(answer).encode())
    submitted = standin.submit(view_id, {"reason_text": "too risky"})
    assert (submitted.response_action, submitted.view_open) == ("update", True)
    [view] = standin.views()
    assert (view.id, view.view["title"]["text"]) == (view_id, "Thanks")


def test_a_modal_closed_unsubmitted_tells_the_app_nothing(
    slack: WebClient, standin: SlackStandin, receiver: Receiver
) -> None:
    root = slack.chat_postMessage(channel=CHANNEL, text="thread")["ts"]
    posted = slack.chat_postMessage(
        channel=CHANNEL, thread_ts=root, text="Approve?", blocks=APPROVAL_BLOCKS
    )
    trigger_id = standin.click(CHANNEL, posted["ts"], "deny").trigger_id
    view_id = slack.views_open(trigger_id=trigger_id, view=MODAL)["view"]["id"]
    assert (standin.calls("views.open")[0].channel, standin.calls("views.open")[0].thread_ts) == (
        CHANNEL,
        root,
    ), "the modal's call names the thread of the click"
    receiver.clear()

    closed = standin.close_view(view_id)

    assert not closed.open and not standin.views()[0].open
    assert receiver.requests == []
    noisy = slack.views_open(
        trigger_id=standin.click(CHANNEL, posted["ts"], "deny").trigger_id,
        view={**MODAL, "notify_on_close": True},
    )["view"]["id"]
    with pytest.raises(StandinError, match="400"):
        standin.close_view(noisy)
