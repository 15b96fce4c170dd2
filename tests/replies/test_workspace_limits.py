"""Fifty answers at once in one workspace, with the stand-in enforcing Slack's published tiers.

Slack limits its Web API per method, per app, per workspace: every answer
streaming at once draws on one budget (``shared.slack.tiers``), and
``chat.startStream``/``chat.stopStream`` take about 20 calls a minute. The
stand-in answers any call over its method's limit with HTTP 429; Kourier
must never make one, lose no text, and show every answer whole.
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest
from google.cloud import firestore

from local.emulators import EmulatorEnv, exported
from local.replay_agent import REPLAY_CHANNELS, ReplayAgent
from local.slack_standin.client import SlackStandin
from local.slack_standin.models import Posted
from local.stack import Stack
from shared.slack.tiers import TIERS, WINDOW_SECONDS
from shared.slack.workspace_budget import BUDGETS
from tests.replies.support import bot_replies, joined_answer
from tests.replies.test_turns_at_once import FIRST_WORDS, REST, _answered_in_the_end, short_answer

AT_ONCE = 50
ENFORCED = {**TIERS, "chat.postMessage": 60}
"""Calls a minute the stand-in takes; chat.postMessage: Slack's "about one a second per
channel, bursts allowed" (every thread here is in one channel)."""
WAIT = 900.0
"""Generous: 50 answers need at least two minutes of stream starts, on a loaded machine."""

pytestmark = pytest.mark.emulators


@pytest.fixture
def tiers_enforced(
    stack_standin: SlackStandin, replay_stack: tuple[Stack, ReplayAgent]
) -> Iterator[SlackStandin]:
    """The stand-in enforcing the tiers; afterwards no limit, and the budget forgotten."""
    for method, limit in ENFORCED.items():
        stack_standin.set_rate_limit(method, limit, WINDOW_SECONDS)
    try:
        yield stack_standin
    finally:
        for method in ENFORCED:
            stack_standin.clear_rate_limit(method)
        env = EmulatorEnv(replay_stack[0].ports.emulators)
        with exported(env):
            budgets = firestore.Client(project=env.project).collection(BUDGETS)
        for document in budgets.list_documents():
            document.delete()


def test_fifty_answers_at_once_stay_within_slacks_tiers_and_each_shows_whole(
    replay: ReplayAgent, tiers_enforced: SlackStandin
) -> None:
    standin, channel = tiers_enforced, REPLAY_CHANNELS["1.0"]
    replay.play(short_answer())
    first_call = len(standin.calls())
    with ThreadPoolExecutor(16) as pool:
        posted: list[Posted] = list(
            pool.map(lambda n: standin.say(channel, f"Question {n} of fifty"), range(AT_ONCE))
        )
    for p in posted:
        for delivery in p.deliveries:
            _answered_in_the_end(standin, delivery)

    def answered() -> bool:
        for p in posted:
            replies = bot_replies(standin, p.ts, channel)
            if not replies or any(m.stream == "streaming" for m in replies):
                return False
        return True

    standin.wait_for(answered, timeout=WAIT, interval=2.0)
    for p in posted:
        assert joined_answer(bot_replies(standin, p.ts, channel)) == FIRST_WORDS + REST
    refused = [c.method for c in standin.calls()[first_call:] if c.status_code == 429]
    assert refused == [], "no call over its tier"
    streamed = [c for c in standin.calls()[first_call:] if c.method == "chat.startStream"]
    assert streamed, "answers stream while the budget allows"
