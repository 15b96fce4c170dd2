"""A person uses the console in Chromium: writes to the demo agent, watches, approves, answers.

Every step goes through the page, as a new user would go: nothing is typed
in a terminal, and what is asserted is what the page shows.
"""

from __future__ import annotations

import json
import re

from playwright.sync_api import expect
from slack_sdk import WebClient

from local.cli import banner
from local.slack_standin import TEAM_ID
from local.stack import DEFAULT_BOT_TOKEN, DEMO_CHANNEL, Stack
from shared.core import notices
from tests.console.conftest import Console
from tests.console.firefox import FirefoxPage

BOB = "U0BOB"
"""In the workspace, and no approver of the demo binding."""
ALICE = "U0ALICE"
"""The demo binding's approver."""
SCRATCH = "C0SCRATCH"
"""A channel Kourier is not bound to: what the bot shows there is the test's doing."""

_WATCH_FIRST_ANSWER = """() => {
  window.seen = [];
  const record = () => {
    const answer = document.querySelector('.thread-pane article.from-bot');
    if (!answer) return;
    window.seen.push({
      streaming: Boolean(answer.querySelector('.tag.streaming')),
      length: answer.querySelector('.message-body').innerText.length,
    });
  };
  new MutationObserver(record).observe(document.body, {subtree: true, childList: true});
}"""


def test_up_prints_the_console_and_the_page_shows_the_workspace(
    stack: Stack, console: Console
) -> None:
    assert f"Console                {stack.console_url}" in banner(stack)
    people = console.page.get_by_label("Acting as").locator("option")
    expect(people).to_have_text(["Alice Liddell (approver)", "Bob Builder"])
    expect(console.page.get_by_text("U0ALICE, approves tool calls in demo")).to_be_visible()
    console.act_as(BOB)
    expect(console.page.get_by_text("U0BOB, approves no tool calls")).to_be_visible()
    expect(console.page).to_have_url(re.compile(r"#as=U0BOB&channel=C0123456789$"))


def test_a_message_streams_its_answer_live_and_its_tool_step_turns_complete(
    console: Console,
) -> None:
    console.page.evaluate(_WATCH_FIRST_ANSWER)
    console.write("please count these words")

    answer = console.answers().first
    step = answer.locator(".task", has_text="count_words")
    expect(step).to_contain_text("complete")
    expect(answer).to_contain_text("please count these words")
    expect(answer.locator(".tag.streaming")).to_have_count(0)
    expect(answer).not_to_contain_text("(stopped")
    final = len(answer.locator(".message-body").inner_text())
    seen = console.page.evaluate("window.seen")
    growing = [s["length"] for s in seen if s["streaming"] and 0 < s["length"] < final]
    assert growing, f"the answer never showed part-way while it streamed: {seen[-5:]}"
    step.get_by_role("button").click()
    expect(step.locator(".task-output")).to_be_visible()


def test_a_non_approver_is_refused_where_only_they_see_it_then_an_approver_approves(
    console: Console,
) -> None:
    console.write("approve")
    approve = console.thread.get_by_role("button", name=notices.APPROVE, exact=True)
    expect(approve).to_be_visible()
    expect(console.thread).to_contain_text("Restart the checkout service?")

    console.act_as(BOB)
    approve.click()
    refusal = console.thread.locator("article.ephemeral")
    expect(refusal).to_contain_text(notices.NOT_AN_APPROVER)
    expect(refusal).to_contain_text("Only visible to you")
    expect(approve).to_be_visible()
    console.screenshot("approval_refused_to_bob")

    console.act_as(ALICE)
    expect(console.thread.get_by_text(notices.NOT_AN_APPROVER)).to_have_count(0)
    approve.click()
    expect(console.thread).to_contain_text(notices.APPROVED_BY.format(who="@Alice"))
    expect(approve).to_have_count(0)
    expect(console.thread).to_contain_text("restart_service: approved, so it ran.")


def test_a_question_with_several_answers_is_ticked_and_submitted(console: Console) -> None:
    console.write("checkboxes")
    expect(console.thread).to_contain_text("Which signals should I collect?")
    console.thread.get_by_label("logs").check()
    console.thread.get_by_label("traces").check()
    console.thread.get_by_role("button", name=notices.SUBMIT).click()

    expect(console.thread).to_contain_text(notices.ANSWERED_BY.format(who="@Alice"))
    expect(console.thread).to_contain_text("So I collect logs and traces.")
    expect(console.thread.get_by_role("button", name=notices.SUBMIT)).to_have_count(0)


def test_a_free_text_question_is_answered_in_a_modal(console: Console) -> None:
    console.write("freetext")
    console.thread.get_by_role("button", name=notices.WRITE_ANSWER, exact=True).click()
    modal = console.page.get_by_role("dialog", name=notices.ANSWER_FORM_TITLE)
    expect(modal).to_contain_text("What should the incident be called?")

    modal.get_by_role("button", name=notices.ANSWER_FORM_SEND).click()
    expect(modal).to_contain_text(notices.ANSWER_BLANK)
    modal.get_by_label(notices.ANSWER_FORM_LABEL).fill("Checkout is slow")
    modal.get_by_role("button", name=notices.ANSWER_FORM_SEND).click()

    expect(modal).to_have_count(0)
    expect(console.thread).to_contain_text("So the incident is called “Checkout is slow”.")
    expect(console.thread).to_contain_text(notices.ANSWERED_BY.format(who="@Alice"))


def test_a_reload_mid_stream_shows_the_same_thread_still_streaming_then_finished(
    console: Console,
) -> None:
    console.write("long 12")
    answer = console.answers().first
    expect(answer.locator(".task.in_progress", has_text="count_words")).to_be_visible()
    expect(answer.locator(".tag.streaming")).to_be_visible()

    console.page.reload()

    answer = console.answers().first
    expect(answer).to_contain_text("long 12")
    expect(answer.locator(".tag.streaming")).to_be_visible()
    expect(answer.locator(".task", has_text="count_words")).to_contain_text("complete")
    expect(answer).to_contain_text("That is all for this turn.")
    expect(answer.locator(".tag.streaming")).to_have_count(0)


def test_underneath_a_thread_show_its_slack_calls_a_429_its_turn_and_the_agents_requests(
    console: Console,
) -> None:
    console.standin.fail("chat.postMessage", "ratelimited", status=429)
    console.write("approve")
    expect(console.thread.get_by_role("button", name=notices.APPROVE, exact=True)).to_be_visible()

    calls = console.underneath
    expect(calls.locator("summary", has_text="chat.postMessage")).to_have_count(2)
    expect(calls.locator("summary", has_text="chat.postMessage").first).to_contain_text(
        "429 ratelimited"
    )
    prompt_post = calls.locator("details", has_text="chat.postMessage").last
    prompt_post.locator("summary").click()
    expect(prompt_post).to_contain_text('"text": "Restart the checkout service?"')

    calls.get_by_role("tab", name="Turns").click()
    expect(calls.locator(".turn-status")).to_have_text(["paused"])
    console.thread.get_by_role("button", name=notices.APPROVE, exact=True).click()
    expect(calls.locator(".turn-status")).to_have_text(["done"])

    calls.get_by_role("tab", name="Agent").click()
    sends = calls.locator("details", has_text="SendStreamingMessage")
    expect(sends).to_have_count(2)
    expect(sends.first.locator("summary")).to_contain_text("approve")
    sends.last.locator("summary").click()
    expect(sends.last).to_contain_text("tool_approval_response")


def test_a_plain_text_question_is_answered_by_a_reply_in_the_thread_without_a_mention(
    console: Console,
) -> None:
    console.write("riddle")
    expect(console.thread).to_contain_text(notices.REPLY_TO_ANSWER)
    composer = console.thread.get_by_role("textbox", name="Reply in the thread")
    console.thread.get_by_label("mention @kourier").uncheck()
    composer.fill("a piano")
    console.thread.get_by_role("button", name="Reply").click()

    expect(console.thread.locator("article", has_text="a piano").first).not_to_contain_text(
        "@kourier"
    )
    expect(console.thread).to_contain_text("answered “a piano” in plain text. That is right!")


def test_what_slack_shows_of_the_web_api_shows_the_same_here(
    console: Console, stack: Stack
) -> None:
    """mrkdwn, an edited message, the status line, a plan of steps and feedback buttons."""
    slack = WebClient(base_url=stack.slack_api_url, token=DEFAULT_BOT_TOKEN)
    root = console.standin.say(SCRATCH, "show me", user=BOB, as_mention=False).ts
    console.page.goto(f"{stack.console_url}#as={ALICE}&channel={SCRATCH}&thread={root}")
    expect(console.page.get_by_role("button", name=f"# {SCRATCH}")).to_be_visible()
    slack.assistant_threads_setStatus(channel_id=SCRATCH, thread_ts=root, status="is working…")
    expect(console.page.get_by_role("status").filter(has_text="Agent Kourier")).to_have_text(
        re.compile("Agent Kourier is working…")
    )
    posted = slack.chat_postMessage(
        channel=SCRATCH,
        thread_ts=root,
        text="*bold* _slanted_ ~gone~ `code` <https://example.com|a link> for <@U0BOB> &lt;3"
        " <javascript:alert(1)|no link>",
    )["ts"]
    message = console.thread.locator(f'article[data-ts="{posted}"]')
    expect(message.locator("b")).to_have_text("bold")
    expect(message.locator("i")).to_have_text("slanted")
    expect(message.locator("s")).to_have_text("gone")
    expect(message.get_by_role("link", name="a link")).to_have_attribute(
        "href", "https://example.com"
    )
    expect(message).to_contain_text("for @Bob <3 no link")
    expect(message.get_by_role("link")).to_have_count(1)
    expect(console.page.get_by_role("status").filter(has_text="Agent Kourier")).to_have_count(0)
    slack.chat_update(channel=SCRATCH, ts=posted, text="second thoughts")
    expect(message).to_contain_text("second thoughts")
    expect(message).to_contain_text("(edited)")

    stream = slack.chat_startStream(
        channel=SCRATCH,
        thread_ts=root,
        recipient_user_id=BOB,
        recipient_team_id=TEAM_ID,
        task_display_mode="plan",
        chunks=[
            {"type": "plan_update", "title": "Look into checkout"},
            {"type": "task_update", "id": "a", "title": "Read the logs", "status": "complete"},
            {"type": "task_update", "id": "b", "title": "Query metrics", "status": "in_progress"},
        ],
    )["ts"]
    plan = console.thread.locator(f'article[data-ts="{stream}"] .plan')
    expect(plan).to_contain_text("Look into checkout")
    expect(plan).to_contain_text("1 of 2 complete")
    feedback = {
        "type": "context_actions",
        "elements": [
            {
                "type": "feedback_buttons",
                "action_id": "feedback",
                "positive_button": {"text": {"type": "plain_text", "text": "👍"}, "value": "up"},
                "negative_button": {"text": {"type": "plain_text", "text": "👎"}, "value": "down"},
            }
        ],
    }
    slack.chat_stopStream(channel=SCRATCH, ts=stream, blocks=[feedback])
    answer = console.thread.locator(f'article[data-ts="{stream}"]')
    expect(answer.locator(".task.error", has_text="Query metrics")).to_contain_text(
        "Something went wrong"
    )
    expect(answer.get_by_role("button", name="👍")).to_be_visible()
    expect(answer.get_by_role("button", name="👎")).to_be_visible()


def test_the_agent_session_shows_its_status_and_stop_button_and_feedback_shows_who_clicked(
    console: Console, stack: Stack
) -> None:
    """Slack's agent session of a thread (issue 16): status, title, Stop; feedback buttons."""
    slack = WebClient(base_url=stack.slack_api_url, token=DEFAULT_BOT_TOKEN)
    root = console.standin.say(SCRATCH, "look into checkout", user=BOB, as_mention=False).ts
    console.page.goto(f"{stack.console_url}#as={ALICE}&channel={SCRATCH}&thread={root}")
    stream = slack.chat_startStream(
        channel=SCRATCH,
        thread_ts=root,
        recipient_user_id=BOB,
        recipient_team_id=TEAM_ID,
        markdown_text="Reading the logs",
    )["ts"]
    slack.api_call(
        "agents.sessions.rename",
        json={"channel_id": SCRATCH, "thread_ts": root, "title": "Checkout errors"},
    )
    header = console.thread.locator(".session")
    expect(header).to_contain_text("Checkout errors")
    expect(header.locator(".session-status")).to_have_text("processing")

    header.get_by_role("button", name="Stop").click()
    answer = console.thread.locator(f'article[data-ts="{stream}"]')
    expect(answer).to_contain_text("(stopped by Alice Liddell)")
    expect(answer.locator(".tag.streaming")).to_have_count(0)
    stopped = console.standin.thread(SCRATCH, root)[-1]
    assert (stopped.stream, stopped.stopped_by) == ("stopped", ALICE)

    slack.api_call(
        "agents.sessions.setStatus",
        json={"channel_id": SCRATCH, "thread_ts": root, "status": "active"},
    )
    expect(header.locator(".session-status")).to_have_text("active")
    expect(header.get_by_role("button", name="Stop")).to_have_count(0)

    rated = slack.chat_postMessage(
        channel=SCRATCH,
        thread_ts=root,
        text="Checkout fails on expired cards.",
        blocks=[
            {
                "type": "section",
                "text": {"type": "mrkdwn", "text": "Checkout fails on expired cards."},
            },
            {
                "type": "context_actions",
                "elements": [
                    {
                        "type": "feedback_buttons",
                        "action_id": "feedback",
                        "positive_button": {
                            "text": {"type": "plain_text", "text": "👍"},
                            "value": "up",
                        },
                        "negative_button": {
                            "text": {"type": "plain_text", "text": "👎"},
                            "value": "down",
                        },
                    }
                ],
            },
        ],
    )["ts"]
    rating = console.thread.locator(f'article[data-ts="{rated}"]')
    rating.get_by_role("button", name="👎").click()
    expect(rating.get_by_role("button", name="👎")).to_have_attribute("aria-pressed", "true")
    expect(rating.get_by_role("button", name="👍")).to_have_attribute("aria-pressed", "false")
    clicks = [c for c in console.standin.feedback() if c.message_ts == rated]
    assert [(c.user, c.positive, c.value) for c in clicks] == [(ALICE, False, "down")]
    console.act_as(BOB)
    expect(rating.get_by_role("button", name="👎")).to_have_attribute("aria-pressed", "false")


def test_in_firefox_a_new_user_writes_approves_a_tool_and_answers_a_question(
    stack: Stack, firefox: FirefoxPage
) -> None:
    """The issue's walk-through in the other browser: real pointer and keyboard input."""
    enter = "\ue007"
    button = "[...document.querySelectorAll('{where} button')].find((b) => b.innerText.trim() === {name})"
    firefox.open(f"{stack.console_url}#as={ALICE}&channel={DEMO_CHANNEL}")
    firefox.wait_for_text("#connection", "live")

    firefox.type("document.querySelector('#channel-composer textarea')", "approve" + enter)
    firefox.wait_for_text(".thread-pane", "Restart the checkout service?")
    firefox.click(button.format(where=".thread-pane", name=json.dumps(notices.APPROVE)))
    firefox.wait_for_text(".thread-pane", notices.APPROVED_BY.format(who="@Alice"))
    firefox.wait_for_text(".thread-pane", "restart_service: approved, so it ran.")

    firefox.type("document.querySelector('#channel-composer textarea')", "freetext" + enter)
    firefox.wait_for_text(".thread-pane", "What should the incident be called?")
    firefox.click(button.format(where=".thread-pane", name=json.dumps(notices.WRITE_ANSWER)))
    firefox.wait_for_text("#modal", notices.ANSWER_FORM_TITLE)
    firefox.type("document.querySelector('#modal input, #modal textarea')", "Checkout is slow")
    firefox.click(button.format(where="#modal", name=json.dumps(notices.ANSWER_FORM_SEND)))
    firefox.wait_for_text(".thread-pane", "So the incident is called “Checkout is slow”.")
    firefox.wait_for_text(".thread-pane", notices.ANSWERED_BY.format(who="@Alice"))
    firefox.wait_for("document.querySelector('#modal').hidden", "the modal to close")
