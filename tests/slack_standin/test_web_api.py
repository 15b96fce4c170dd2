"""The Web API as slack_sdk's real WebClient sees it: answers and errors like Slack's."""

from __future__ import annotations

import json
import time
from collections.abc import Callable

import pytest
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.builtin_handlers import RateLimitErrorRetryHandler

from local.slack_standin import TEAM_ID, SlackStandin, StandinError, User
from tests.slack_standin.support import APPROVAL_BLOCKS, BOT_TOKEN, CHANNEL


def slack_error(call: Callable[[], object]) -> SlackApiError:
    """The error slack_sdk raises for a call Slack answers with ok false."""
    with pytest.raises(SlackApiError) as raised:
        call()
    return raised.value


def test_auth_test_names_the_bot(slack: WebClient) -> None:
    answer = slack.auth_test()
    assert answer["ok"] is True
    assert (answer["user_id"], answer["bot_id"], answer["team_id"]) == (
        "U0KOURIER",
        "B0KOURIER",
        "T0KOURIER",
    )


def test_a_wrong_or_missing_token_is_refused(standin: SlackStandin) -> None:
    wrong = WebClient(base_url=standin.api_url, token="xoxb-not-the-token")
    assert slack_error(wrong.auth_test).response["error"] == "invalid_auth"
    error = slack_error(lambda: wrong.chat_postMessage(channel=CHANNEL, text="hi"))
    assert error.response["error"] == "invalid_auth"
    anonymous = WebClient(base_url=standin.api_url)
    assert slack_error(anonymous.auth_test).response["error"] == "not_authed"
    assert standin.history(CHANNEL) == []


def test_an_unknown_method_is_unknown(slack: WebClient) -> None:
    assert (
        slack_error(lambda: slack.api_call("chat.teleport")).response["error"] == "unknown_method"
    )


def test_api_test_answers_without_a_token(standin: SlackStandin) -> None:
    anonymous = WebClient(base_url=standin.api_url)
    assert anonymous.api_test(foo="bar")["args"] == {"foo": "bar"}


def test_a_reply_in_a_thread_is_kept_as_the_bots(slack: WebClient, standin: SlackStandin) -> None:
    question = standin.say(CHANNEL, "may I delete the pod?")
    answer = slack.chat_postMessage(
        channel=CHANNEL, thread_ts=question.ts, text="Approve?", blocks=APPROVAL_BLOCKS
    )
    assert answer["ok"] is True and answer["channel"] == CHANNEL
    assert answer["message"]["bot_id"] == "B0KOURIER"
    thread = standin.thread(CHANNEL, question.ts)
    assert [m.ts for m in thread] == [question.ts, answer["ts"]]
    reply = thread[1]
    assert (reply.user, reply.bot_id, reply.thread_ts) == ("U0KOURIER", "B0KOURIER", question.ts)
    assert reply.action_ids() == ["approve", "deny"]
    assert "[Approve] [Deny]" in reply.rendered
    assert not thread[0].is_bot and thread[0].text == "<@U0KOURIER> may I delete the pod?"


def test_form_encoded_calls_are_understood(slack: WebClient, standin: SlackStandin) -> None:
    answer = slack.api_call(
        "chat.postMessage",
        data={"channel": CHANNEL, "text": "fallback", "blocks": json.dumps(APPROVAL_BLOCKS)},
    )
    assert standin.history(CHANNEL)[0].action_ids() == ["approve", "deny"]
    assert answer["ts"] == standin.history(CHANNEL)[0].ts


def test_posting_to_an_unknown_channel_fails(slack: WebClient) -> None:
    error = slack_error(lambda: slack.chat_postMessage(channel="C0NOWHERE", text="hello"))
    assert error.response["error"] == "channel_not_found"


def test_text_over_forty_thousand_characters_is_too_long(
    slack: WebClient, standin: SlackStandin
) -> None:
    error = slack_error(lambda: slack.chat_postMessage(channel=CHANNEL, text="x" * 40_001))
    assert error.response["error"] == "msg_too_long"
    assert slack.chat_postMessage(channel=CHANNEL, text="x" * 40_000)["ok"] is True
    assert len(standin.history(CHANNEL)) == 1


def test_conversations_replies_pages_a_thread_with_its_metadata_as_slack_does(
    slack: WebClient, standin: SlackStandin
) -> None:
    """conversations.replies: the parent first, then replies oldest first, in cursor pages.

    As Slack's reference has it: ``ts`` must be an existing message; ``oldest``
    keeps the messages after it; ``response_metadata.next_cursor`` is empty on
    the last page; message metadata (``event_type``, ``event_payload``, as
    chat.postMessage took it) shows only with ``include_all_metadata``.
    """
    parent = standin.say(CHANNEL, "check X")
    asked = standin.thread(CHANNEL, parent.ts)[0].text
    marked = {"event_type": "kourier_notice", "event_payload": {"turn": "t1", "notice": "done"}}
    first = slack.chat_postMessage(channel=CHANNEL, thread_ts=parent.ts, text="one")
    slack.chat_postMessage(channel=CHANNEL, thread_ts=parent.ts, text="two", metadata=marked)
    slack.chat_postMessage(channel=CHANNEL, thread_ts=parent.ts, text="three")
    standin.say(CHANNEL, "elsewhere")

    page = slack.conversations_replies(
        channel=CHANNEL, ts=parent.ts, include_all_metadata=True, limit=2
    )
    assert [m["text"] for m in page["messages"]] == [asked, "one", "two"]
    assert page["messages"][2]["metadata"] == marked
    assert page["has_more"] is True
    cursor = page["response_metadata"]["next_cursor"]
    rest = slack.conversations_replies(
        channel=CHANNEL, ts=parent.ts, include_all_metadata=True, limit=2, cursor=cursor
    )
    assert [m["text"] for m in rest["messages"]] == [asked, "three"]
    assert rest["has_more"] is False and rest["response_metadata"]["next_cursor"] == ""

    plain = slack.conversations_replies(channel=CHANNEL, ts=parent.ts)
    assert [m["text"] for m in plain["messages"]] == [asked, "one", "two", "three"]
    assert all("metadata" not in m for m in plain["messages"])
    after = slack.conversations_replies(channel=CHANNEL, ts=parent.ts, oldest=first["ts"])
    assert [m["text"] for m in after["messages"]] == [asked, "two", "three"]

    missing = slack_error(lambda: slack.conversations_replies(channel=CHANNEL, ts="1.000001"))
    assert missing.response["error"] == "thread_not_found"
    unknown = slack_error(lambda: slack.conversations_replies(channel="C0NOPE", ts=parent.ts))
    assert unknown.response["error"] == "channel_not_found"
    bad = slack_error(
        lambda: slack.conversations_replies(channel=CHANNEL, ts=parent.ts, cursor="%%%")
    )
    assert bad.response["error"] == "invalid_cursor"


def test_update_replaces_what_it_is_given(slack: WebClient, standin: SlackStandin) -> None:
    posted = slack.chat_postMessage(channel=CHANNEL, text="Approve?", blocks=APPROVAL_BLOCKS)
    updated = slack.chat_update(
        channel=CHANNEL, ts=posted["ts"], text="Approved by Alice", blocks=[]
    )
    assert updated["text"] == "Approved by Alice"
    message = standin.history(CHANNEL)[0]
    assert (message.text, message.blocks, message.edited) == ("Approved by Alice", [], True)
    with pytest.warns(UserWarning, match="text"):
        slack.chat_update(channel=CHANNEL, ts=posted["ts"], blocks=APPROVAL_BLOCKS[:1])
    message = standin.history(CHANNEL)[0]
    assert message.text == "Approved by Alice" and len(message.blocks) == 1


def test_update_with_text_and_no_blocks_shows_the_text_in_place_of_the_blocks(
    slack: WebClient, standin: SlackStandin
) -> None:
    # Slack's chat.update: "If the text argument is provided and blocks are not
    # provided, the blocks will be removed"; markdown_text goes with no blocks.
    posted = slack.chat_postMessage(channel=CHANNEL, text="Approve?", blocks=APPROVAL_BLOCKS)
    slack.chat_update(channel=CHANNEL, ts=posted["ts"], markdown_text="**Approved** by Alice")
    message = standin.history(CHANNEL)[0]
    assert (message.text, message.blocks) == ("**Approved** by Alice", [])
    slack.chat_update(channel=CHANNEL, ts=posted["ts"], text="Denied", blocks=APPROVAL_BLOCKS)
    slack.chat_update(channel=CHANNEL, ts=posted["ts"], text="Denied by Bob")
    message = standin.history(CHANNEL)[0]
    assert (message.text, message.blocks) == ("Denied by Bob", [])


def test_update_refuses_other_peoples_messages(slack: WebClient, standin: SlackStandin) -> None:
    posted = standin.say(CHANNEL, "mine")
    error = slack_error(lambda: slack.chat_update(channel=CHANNEL, ts=posted.ts, text="yours"))
    assert error.response["error"] == "cant_update_message"
    error = slack_error(lambda: slack.chat_update(channel=CHANNEL, ts="1.000001", text="x"))
    assert error.response["error"] == "message_not_found"


def test_an_ephemeral_is_kept_for_its_user_only(slack: WebClient, standin: SlackStandin) -> None:
    question = standin.say(CHANNEL, "hi")
    answer = slack.chat_postEphemeral(
        channel=CHANNEL, user="U0BOB", thread_ts=question.ts, text="Only Alice may approve."
    )
    assert answer["ok"] is True and answer["message_ts"]
    [ephemeral] = standin.ephemerals(channel=CHANNEL, user="U0BOB")
    assert (ephemeral.text, ephemeral.thread_ts, ephemeral.ts) == (
        "Only Alice may approve.",
        question.ts,
        answer["message_ts"],
    )
    assert standin.ephemerals(user="U0ALICE") == []
    assert len(standin.thread(CHANNEL, question.ts)) == 1


def test_the_sdk_stream_helper_builds_one_reply(slack: WebClient, standin: SlackStandin) -> None:
    question = standin.say(CHANNEL, "tell me a story")
    stream = slack.chat_stream(
        channel=CHANNEL,
        thread_ts=question.ts,
        recipient_user_id="U0ALICE",
        recipient_team_id="T0KOURIER",
        buffer_size=8,
    )
    for word in ["Once ", "upon ", "a ", "time", "."]:
        stream.append(markdown_text=word)
    stop = stream.stop()
    assert stop["message"]["text"] == "Once upon a time."
    reply = standin.thread(CHANNEL, question.ts)[1]
    assert (reply.text, reply.stream, reply.bot_id) == ("Once upon a time.", "stopped", "B0KOURIER")
    methods = [call.method for call in standin.calls() if call.method.endswith("Stream")]
    assert methods[0] == "chat.startStream" and methods[-1] == "chat.stopStream"


def test_task_cards_keep_their_place_and_last_state(
    slack: WebClient, standin: SlackStandin
) -> None:
    question = standin.say(CHANNEL, "how many pods?")
    started = slack.chat_startStream(
        channel=CHANNEL,
        thread_ts=question.ts,
        recipient_user_id="U0ALICE",
        recipient_team_id="T0KOURIER",
        markdown_text="Let me look. ",
        task_display_mode="timeline",
    )
    ts = started["ts"]
    call = {"type": "task_update", "id": "call-1", "title": "kubectl get pods"}
    slack.chat_appendStream(
        channel=CHANNEL, ts=ts, chunks=[{**call, "status": "in_progress", "details": "ns default"}]
    )
    slack.chat_appendStream(channel=CHANNEL, ts=ts, markdown_text="There are ")
    slack.chat_appendStream(
        channel=CHANNEL, ts=ts, chunks=[{**call, "status": "complete", "output": "3 pods"}]
    )
    slack.chat_appendStream(
        channel=CHANNEL,
        ts=ts,
        chunks=[{"type": "task_update", "id": "call-2", "title": "describe", "status": "pending"}],
    )
    slack.chat_stopStream(channel=CHANNEL, ts=ts, markdown_text="3 pods.")
    reply = standin.thread(CHANNEL, question.ts)[1]
    assert reply.text == "Let me look. There are 3 pods."
    first = reply.task("call-1")
    assert first is not None
    assert (first.status, first.details, first.output, first.left_unfinished) == (
        "complete",
        "ns default",
        "3 pods",
        False,
    )
    second = reply.task("call-2")
    assert second is not None and second.left_unfinished
    assert [(item.kind, item.text or item.task_id) for item in reply.timeline] == [
        ("text", "Let me look. "),
        ("task", "call-1"),
        ("text", "There are "),
        ("task", "call-2"),
        ("text", "3 pods."),
    ]
    assert "[x] kubectl get pods - ns default -> 3 pods" in reply.rendered


def test_streaming_in_a_channel_needs_a_recipient(slack: WebClient, standin: SlackStandin) -> None:
    question = standin.say(CHANNEL, "hi")
    error = slack_error(lambda: slack.chat_startStream(channel=CHANNEL, thread_ts=question.ts))
    assert error.response["error"] == "missing_recipient_user_id"


def test_a_stopped_stream_takes_no_more(slack: WebClient, standin: SlackStandin) -> None:
    question = standin.say(CHANNEL, "hi")
    ts = slack.chat_startStream(
        channel=CHANNEL,
        thread_ts=question.ts,
        recipient_user_id="U0ALICE",
        recipient_team_id="T0KOURIER",
    )["ts"]
    slack.chat_stopStream(channel=CHANNEL, ts=ts, markdown_text="done")
    error = slack_error(
        lambda: slack.chat_appendStream(channel=CHANNEL, ts=ts, markdown_text="more")
    )
    assert error.response["error"] == "message_not_in_streaming_state"
    error = slack_error(lambda: slack.chat_stopStream(channel=CHANNEL, ts=ts))
    assert error.response["error"] == "message_not_in_streaming_state"
    assert standin.thread(CHANNEL, question.ts)[1].text == "done"


def test_a_stream_past_its_lifetime_expires(slack: WebClient, standin: SlackStandin) -> None:
    with pytest.raises(StandinError, match="400"):
        standin.configure(stream_lifetime=0.5)
    standin.configure(stream_lifetime_seconds=0.5)
    question = standin.say(CHANNEL, "hi")
    ts = slack.chat_startStream(
        channel=CHANNEL,
        thread_ts=question.ts,
        recipient_user_id="U0ALICE",
        recipient_team_id="T0KOURIER",
        markdown_text="Working",
    )["ts"]
    time.sleep(1.0)
    error = slack_error(
        lambda: slack.chat_appendStream(channel=CHANNEL, ts=ts, markdown_text="...")
    )
    assert error.response["error"] == "message_not_in_streaming_state"
    assert standin.thread(CHANNEL, question.ts)[1].stream == "expired"
    # The message can still be finished in place, as the SDK suggests.
    slack.chat_update(channel=CHANNEL, ts=ts, text="Working... done")
    assert standin.thread(CHANNEL, question.ts)[1].text == "Working... done"


def test_a_stopped_stream_updated_with_blocks_shows_them_and_its_text_only_as_fallback(
    slack: WebClient, standin: SlackStandin
) -> None:
    question = standin.say(CHANNEL, "how many pods?")
    ts = slack.chat_startStream(
        channel=CHANNEL,
        thread_ts=question.ts,
        recipient_user_id="U0ALICE",
        recipient_team_id="T0KOURIER",
        markdown_text="Counting. ",
        task_display_mode="timeline",
    )["ts"]
    call = {"type": "task_update", "id": "call-1", "title": "kubectl get pods"}
    slack.chat_appendStream(channel=CHANNEL, ts=ts, chunks=[{**call, "status": "complete"}])
    slack.chat_stopStream(channel=CHANNEL, ts=ts, markdown_text="3 pods.")
    blocks = [
        {"type": "markdown", "text": "There are 3 pods."},
        {
            "type": "actions",
            "elements": [
                {"type": "button", "action_id": "up", "text": {"type": "plain_text", "text": "Up"}}
            ],
        },
    ]
    slack.chat_update(channel=CHANNEL, ts=ts, text="There are 3 pods.", blocks=blocks)
    reply = standin.thread(CHANNEL, question.ts)[1]
    assert [item.kind for item in reply.timeline] == ["task"]
    assert reply.rendered.count("There are 3 pods.") == 1
    assert "Counting." not in reply.rendered
    assert reply.text == "There are 3 pods."


def test_a_live_stream_cannot_be_updated(slack: WebClient, standin: SlackStandin) -> None:
    question = standin.say(CHANNEL, "hi")
    ts = slack.chat_startStream(
        channel=CHANNEL,
        thread_ts=question.ts,
        recipient_user_id="U0ALICE",
        recipient_team_id="T0KOURIER",
    )["ts"]
    error = slack_error(lambda: slack.chat_update(channel=CHANNEL, ts=ts, text="x"))
    assert error.response["error"] == "streaming_state_conflict"


def test_a_streamed_message_over_the_cap_is_too_long(
    slack: WebClient, standin: SlackStandin
) -> None:
    standin.configure(stream_max_chars=100)
    question = standin.say(CHANNEL, "hi")
    ts = slack.chat_startStream(
        channel=CHANNEL,
        thread_ts=question.ts,
        recipient_user_id="U0ALICE",
        recipient_team_id="T0KOURIER",
        markdown_text="a" * 60,
    )["ts"]
    error = slack_error(
        lambda: slack.chat_appendStream(channel=CHANNEL, ts=ts, markdown_text="b" * 41)
    )
    assert error.response["error"] == "msg_too_long"
    slack.chat_appendStream(channel=CHANNEL, ts=ts, markdown_text="c" * 40)
    reply = standin.thread(CHANNEL, question.ts)[1]
    assert (reply.text, reply.stream) == ("a" * 60 + "c" * 40, "streaming")


def test_thread_status_shows_until_the_bot_replies(slack: WebClient, standin: SlackStandin) -> None:
    question = standin.say(CHANNEL, "hi")
    slack.assistant_threads_setStatus(
        channel_id=CHANNEL,
        thread_ts=question.ts,
        status="is thinking...",
        loading_messages=["Reading"],
    )
    status = standin.thread_status(CHANNEL, question.ts)
    assert status is not None and (status.status, status.loading_messages) == (
        "is thinking...",
        ["Reading"],
    )
    slack.chat_postMessage(channel=CHANNEL, thread_ts=question.ts, text="Hello!")
    assert standin.thread_status(CHANNEL, question.ts) is None
    error = slack_error(
        lambda: slack.assistant_threads_setStatus(
            channel_id=CHANNEL, thread_ts="1.000001", status="x"
        )
    )
    assert error.response["error"] == "invalid_thread_ts"


def test_users_info_tells_name_and_email(slack: WebClient, standin: SlackStandin) -> None:
    alice = slack.users_info(user="U0ALICE")["user"]
    assert (alice["real_name"], alice["profile"]["email"], alice["is_bot"]) == (
        "Alice Liddell",
        "alice@example.com",
        False,
    )
    assert (
        slack_error(lambda: slack.users_info(user="U0CAROL")).response["error"] == "user_not_found"
    )
    standin.put_user(
        User(
            id="U0CAROL", real_name="Carol Danvers", display_name="carol", email="carol@example.com"
        )
    )
    assert slack.users_info(user="U0CAROL")["user"]["profile"]["display_name"] == "carol"


def test_views_open_needs_a_fresh_trigger(slack: WebClient, standin: SlackStandin) -> None:
    modal = {
        "type": "modal",
        "title": {"type": "plain_text", "text": "Answer"},
        "blocks": [
            {
                "type": "input",
                "label": {"type": "plain_text", "text": "Why?"},
                "element": {"type": "plain_text_input", "action_id": "why"},
            }
        ],
    }
    error = slack_error(lambda: slack.views_open(trigger_id="12345.98765.abcd", view=modal))
    assert error.response["error"] == "invalid_trigger_id"
    posted = slack.chat_postMessage(channel=CHANNEL, text="Approve?", blocks=APPROVAL_BLOCKS)
    trigger_id = standin.click(CHANNEL, posted["ts"], "deny").trigger_id
    opened = slack.views_open(trigger_id=trigger_id, view=modal)["view"]
    assert opened["id"].startswith("V") and opened["title"]["text"] == "Answer"
    [view] = standin.views()
    assert (view.id, view.user, view.open) == (opened["id"], "U0ALICE", True)
    error = slack_error(lambda: slack.views_open(trigger_id=trigger_id, view=modal))
    assert error.response["error"] == "exchanged_trigger_id"
    standin.configure(trigger_lifetime_seconds=0.2)
    late = standin.click(CHANNEL, posted["ts"], "deny").trigger_id
    time.sleep(0.6)
    assert (
        slack_error(lambda: slack.views_open(trigger_id=late, view=modal)).response["error"]
        == "expired_trigger_id"
    )


def test_over_the_rate_limit_is_429_with_retry_after(
    slack: WebClient, standin: SlackStandin
) -> None:
    standin.set_rate_limit("chat.postMessage", limit=1, window_seconds=30)
    slack.chat_postMessage(channel=CHANNEL, text="one")
    error = slack_error(lambda: slack.chat_postMessage(channel=CHANNEL, text="two"))
    assert error.response.status_code == 429
    assert error.response["error"] == "ratelimited"
    assert 1 <= int(error.response.headers["Retry-After"]) <= 30
    assert slack.auth_test()["ok"] is True
    standin.clear_rate_limit("chat.postMessage")
    slack.chat_postMessage(channel=CHANNEL, text="three")
    assert [m.text for m in standin.history(CHANNEL)] == ["one", "three"]


def test_a_scripted_failure_answers_the_next_calls_of_a_method_then_it_works(
    slack: WebClient, standin: SlackStandin
) -> None:
    standin.fail("chat.postMessage", error="service_unavailable", status=503, times=2)
    for _ in range(2):
        error = slack_error(lambda: slack.chat_postMessage(channel=CHANNEL, text="lost"))
        assert error.response.status_code == 503
        assert error.response["error"] == "service_unavailable"
    assert slack.auth_test()["ok"] is True
    slack.chat_postMessage(channel=CHANNEL, text="kept")
    standin.fail("chat.postMessage", times=5)
    standin.clear_failures("chat.postMessage")
    slack.chat_postMessage(channel=CHANNEL, text="kept too")
    assert [m.text for m in standin.history(CHANNEL)] == ["kept", "kept too"]


def test_the_sdk_retry_handler_waits_out_the_limit(standin: SlackStandin) -> None:
    patient = WebClient(
        base_url=standin.api_url,
        token=BOT_TOKEN,
        retry_handlers=[RateLimitErrorRetryHandler(max_retry_count=2)],
    )
    standin.set_rate_limit("auth.test", limit=1, window_seconds=1)
    assert patient.auth_test()["ok"] and patient.auth_test()["ok"]
    assert [call.status_code for call in standin.calls("auth.test")] == [200, 429, 200]


def test_each_call_names_its_thread_and_keeps_its_answer(
    slack: WebClient, standin: SlackStandin
) -> None:
    root = slack.chat_postMessage(channel=CHANNEL, text="root")["ts"]
    stream = slack.chat_startStream(
        channel=CHANNEL,
        thread_ts=root,
        recipient_user_id="U0ALICE",
        recipient_team_id=TEAM_ID,
        markdown_text="hi",
    )["ts"]
    slack.chat_appendStream(channel=CHANNEL, ts=stream, markdown_text=" there")
    slack.users_info(user="U0ALICE")

    calls = standin.calls()
    assert [(c.method, c.channel, c.thread_ts) for c in calls] == [
        ("chat.postMessage", CHANNEL, root),
        ("chat.startStream", CHANNEL, root),
        ("chat.appendStream", CHANNEL, root),
        ("users.info", None, None),
    ]
    assert calls[0].answer["ts"] == root
    assert calls[-1].answer["user"]["id"] == "U0ALICE"
