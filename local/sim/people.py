"""People: who writes what, where and when, planned before the run; Slack's callbacks.

Theory of operation. The workload is drawn from the stream ``workload`` as a
plan before anything runs: threads in bound channels, each started by a
mention, with follow-ups in the thread (with or without a mention,
sometimes two people at once). At its time each post is written into the
simulated Slack and becomes Events API callbacks, signed as Slack signs
them with the virtual time: a mention arrives twice (``app_mention`` and
``message``, two event IDs), and a callback whose acknowledgement took
longer than 3 s is sent again with the same event ID, at once, after a
minute and after five, as Slack retries.

Some threads also get a click on the agent session's stop button, at a
random moment after their first post, by a random person (who may not be
allowed to stop the turn): if the session is processing then, Slack stops
the app's streams in the thread and sends ``agent_session_stopped``,
sometimes twice.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import random
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from local.sim.slack import BOT_USER, TEAM
from local.sim.world import SECOND, us

if TYPE_CHECKING:
    from local.sim.run import Simulation

SIGNING_SECRET = "sim-signing-secret"
PEOPLE = {
    "U0ALICE": {
        "id": "U0ALICE",
        "name": "alice",
        "real_name": "Alice Ames",
        "profile": {
            "email": "alice@example.com",
            "real_name": "Alice Ames",
            "display_name": "alice",
        },
    },
    "U0BOB": {
        "id": "U0BOB",
        "name": "bob",
        "real_name": "Bob Burns",
        "profile": {"email": "bob@example.com", "real_name": "Bob Burns", "display_name": "bob"},
    },
    "U0CAROL": {
        "id": "U0CAROL",
        "name": "carol",
        "real_name": "Carol Cho",
        "profile": {"real_name": "Carol Cho", "display_name": "carol"},
    },
}
APPROVERS = ("U0ALICE", "U0BOB")
"""The binding's approvers; U0CAROL may not decide."""
ACK_LIMIT_US = 3 * SECOND
SLACK_RETRIES_US = (0, 60 * SECOND, 300 * SECOND)


@dataclass(frozen=True)
class Post:
    """One message a person will write."""

    at_us: int
    thread: int
    channel: str
    user: str
    text: str
    mention: bool


class People:
    """The plan, and the posts as Slack recorded them."""

    def __init__(self, sim: Simulation, threads: int, channels: list[str]) -> None:
        self.sim = sim
        rng = random.Random(sim.world.stream("workload").random())
        self.plan: list[Post] = []
        for thread in range(threads):
            start = us(rng.uniform(0, 600))
            channel = rng.choice(channels)
            user = rng.choice(list(PEOPLE))
            self.plan.append(
                Post(start, thread, channel, user, f"question {thread} " + _words(rng), True)
            )
            at = start
            for _ in range(rng.choice((0, 0, 1, 1, 2, 3))):
                at += us(
                    rng.choice((rng.uniform(0.1, 5), rng.uniform(5, 120), rng.uniform(100, 900)))
                )
                mention = rng.random() < 0.6
                self.plan.append(
                    Post(
                        at,
                        thread,
                        channel,
                        rng.choice(list(PEOPLE)),
                        f"more {thread} " + _words(rng),
                        mention,
                    )
                )
        stops = random.Random(sim.world.stream("workload/stops").random())
        self.stop_plan = [
            StopPlan(
                post.at_us + us(stops.uniform(0.5, 90)), post.thread, stops.choice(list(PEOPLE))
            )
            for post in self.plan
            if post.text.startswith("question ") and stops.random() < 0.2
        ]
        self.stops: list[StopPressed] = []
        """Every click on a stop button that showed, in order."""
        self.thread_ts: dict[int, str] = {}
        self.written: list[tuple[Post, str]] = []
        """Each post with its Slack ts."""
        self.clicks: list[Click] = []
        """Every click people made on a prompt, in order."""

    def schedule(self) -> None:
        for post in sorted(self.plan, key=lambda p: (p.at_us, p.thread)):
            self.sim.world.call_at(post.at_us, partial(self._write, post))
        for stop in self.stop_plan:
            self.sim.world.call_at(stop.at_us, partial(self.press_stop, stop))

    def press_stop(self, stop: StopPlan) -> None:
        """A person presses the thread's stop button, if it shows; Slack tells the app."""
        sim = self.sim
        thread_ts = self.thread_ts.get(stop.thread)
        channel = next((p.channel for p in self.plan if p.thread == stop.thread), "")
        if thread_ts is None:
            return
        streams = sim.slack.press_stop(channel, thread_ts, stop.user)
        if streams is None:
            return
        turn = sim.slack.active_turn(channel, thread_ts)
        self.stops.append(StopPressed(sim.world.now_us, stop.user, channel, thread_ts, turn))
        sim.world.log("stop", channel, thread_ts, stop.user, turn)
        envelope = {
            "token": "sim",
            "team_id": TEAM,
            "api_app_id": "A0KOURIER",
            "type": "event_callback",
            "event_id": f"EvStop{thread_ts.replace('.', '')}{len(self.stops)}",
            "event_time": int(sim.slack_time(sim.world.now_us)),
            "event": {
                "type": "agent_session_stopped",
                "channel": channel,
                "user": stop.user,
                "thread_ts": thread_ts,
                "streaming_message_ts": streams,
                "event_ts": f"{sim.slack_time(sim.world.now_us):.6f}",
            },
        }
        rng = sim.world.stream("people/stop", thread_ts)
        sim.platform.later(us(rng.uniform(0.01, 0.3)), partial(self.deliver_event, envelope, 0))
        if rng.random() < 0.3:  # delivered twice (a retry whose first delivery got through)
            again = us(rng.uniform(0.05, 20))
            last = len(SLACK_RETRIES_US)
            sim.platform.later(again, partial(self.deliver_event, envelope, last))

    def last_post_us(self) -> int:
        return max(post.at_us for post in self.plan)

    def mentions(self) -> list[str]:
        """The turn IDs every mention must become."""
        return [f"{post.channel}-{ts}" for post, ts in self.written if post.mention]

    def _write(self, post: Post) -> None:
        sim = self.sim
        thread_ts = self.thread_ts.get(post.thread)
        text = f"<@{BOT_USER}> {post.text}" if post.mention else post.text
        message = sim.slack.user_says(post.channel, post.user, text, thread_ts)
        if thread_ts is None:
            self.thread_ts[post.thread] = message.ts
        self.written.append((post, message.ts))
        sim.world.log("post", post.channel, message.ts, post.user, post.mention)
        event: dict[str, Any] = {
            "type": "message",
            "user": post.user,
            "text": text,
            "ts": message.ts,
            "channel": post.channel,
            "team": TEAM,
            "channel_type": "channel",
            "event_ts": message.ts,
        }
        if thread_ts is not None:
            event["thread_ts"] = thread_ts
        kinds = ["app_mention", "message"] if post.mention else ["message"]
        if post.mention and sim.world.stream("workload/order", message.ts).random() < 0.5:
            kinds.reverse()
        for number, kind in enumerate(kinds):
            envelope = {
                "token": "sim",
                "team_id": TEAM,
                "api_app_id": "A0KOURIER",
                "type": "event_callback",
                "event_id": f"Ev{message.ts.replace('.', '')}{number}",
                "event_time": int(float(message.ts)),
                "event": {**event, "type": kind},
            }
            delay = us(sim.world.stream("slack/events").uniform(0.01, 0.3))
            sim.platform.later(delay, partial(self.deliver_event, envelope, 0))

    def prompt_posted(self, message: Any) -> None:
        """A prompt appeared: people click its buttons, or reply, later (or never)."""
        world = self.sim.world
        rng = world.stream("people/prompt", message.ts)
        buttons = [
            element["action_id"]
            for block in message.blocks
            if block.get("type") == "actions"
            for element in block.get("elements", [])
            if "action_id" in element
        ]
        if not buttons or rng.random() < 0.15:
            return  # nobody answers: the question times out
        deciding = [
            b
            for b in buttons
            if b.split(":")[2] in ("approve", "reject", "approve_all", "reject_all")
        ]
        at = world.now_us + us(rng.choice((rng.uniform(1, 30), rng.uniform(30, 400))))
        if not deciding:
            if any(b.split(":")[2] == "write" for b in buttons) and message.thread_ts:
                thread = next(
                    (t for t, ts in self.thread_ts.items() if ts == message.thread_ts), None
                )
                if thread is not None:
                    post = Post(
                        at,
                        thread,
                        message.channel,
                        rng.choice(list(PEOPLE)),
                        "answer " + _words(rng),
                        rng.random() < 0.3,
                    )
                    world.call_at(at, lambda: self._write(post))
            return
        clickers = [rng.choice(APPROVERS)]
        if rng.random() < 0.25:
            clickers.insert(0, "U0CAROL")  # someone who may not decide tries first
        if rng.random() < 0.1:
            clickers.append(rng.choice(APPROVERS))  # a second approver at nearly the same time
        for number, user in enumerate(clickers):
            action = rng.choice(deciding)
            when = at + number * us(rng.uniform(0.05, 2.0))
            world.call_at(when, partial(self.click, message, user, action))

    def click(self, message: Any, user: str, action_id: str) -> None:
        """One click, sent to chat_ingress as Slack's signed interactivity payload."""
        sim = self.sim
        self.clicks.append(Click(sim.world.now_us, user, message.channel, message.ts, action_id))
        sim.world.log("click", user, message.ts, action_id)
        payload = {
            "type": "block_actions",
            "user": {"id": user},
            "team": {"id": TEAM},
            "trigger_id": sim.slack.issue_trigger(user),
            "container": {
                "type": "message",
                "channel_id": message.channel,
                "message_ts": message.ts,
                "thread_ts": message.thread_ts,
            },
            "channel": {"id": message.channel},
            "message": {"ts": message.ts, "thread_ts": message.thread_ts},
            "actions": [{"action_id": action_id, "type": "button", "value": action_id}],
        }
        body = urlencode({"payload": json.dumps(payload)}).encode()
        started = sim.world.now_us

        def work(deps: Any) -> None:
            sim.shell.handle_interaction(deps, body, sign(body, sim.slack_time(started)))

        def deliver() -> None:
            sim.platform.invoke("chat_ingress", f"click-{message.ts}", work, lambda outcome: None)

        sim.platform.later(us(0.05), deliver)

    def deliver_event(self, envelope: dict[str, Any], retry: int) -> None:
        """One Events API callback, and Slack's retries: when it failed, or no answer came
        within 3 s (then while the first delivery still runs)."""
        sim = self.sim
        body = json.dumps(envelope).encode()
        started = sim.world.now_us
        label = str(envelope["event_id"])

        def work(deps: Any) -> None:
            reply = sim.shell.handle_event(deps, body, sign(body, sim.slack_time(started)))
            if reply.status != 200:
                raise RuntimeError(f"chat_ingress answered {reply.status}")

        answered = False

        def send_again() -> None:
            if retry < len(SLACK_RETRIES_US):
                delay = SLACK_RETRIES_US[retry]
                sim.platform.later(delay, lambda: self.deliver_event(envelope, retry + 1))

        def on_end(outcome: str) -> None:
            nonlocal answered
            answered = True
            if outcome != "ok" and sim.world.now_us - started <= ACK_LIMIT_US:
                send_again()

        def ack_limit() -> None:
            # Slack stops waiting after 3 s and sends the event again, while the
            # first delivery may still be running (Cloud Run does not stop it).
            if not answered:
                sim.world.log("slack.resend", label, retry + 1)
                send_again()

        sim.platform.invoke("chat_ingress", label, work, on_end)
        sim.world.call_later(ACK_LIMIT_US + 1, ack_limit)


@dataclass(frozen=True)
class StopPlan:
    """A click on a thread's stop button someone will make (if it shows then)."""

    at_us: int
    thread: int
    user: str


@dataclass(frozen=True)
class StopPressed:
    """A click on a thread's stop button, and the turn its session carried then."""

    at_us: int
    user: str
    channel: str
    thread_ts: str
    turn: str | None


@dataclass(frozen=True)
class Click:
    """A person pressed a button of a prompt."""

    at_us: int
    user: str
    channel: str
    message_ts: str
    action_id: str


def sign(body: bytes, now: float) -> dict[str, str]:
    """Slack's signature headers for ``body`` at ``now`` (epoch seconds)."""
    timestamp = str(int(now))
    base = f"v0:{timestamp}:".encode() + body
    digest = hmac.new(SIGNING_SECRET.encode(), base, hashlib.sha256).hexdigest()
    return {"X-Slack-Request-Timestamp": timestamp, "X-Slack-Signature": f"v0={digest}"}


def _words(rng: random.Random) -> str:
    return " ".join(
        rng.choice(("disk", "pods", "logs", "why", "now", "status", "db", "api"))
        for _ in range(rng.randint(1, 5))
    )
