"""The simulator's Slack answers and keeps messages as Slack does (and as the stand-in does)."""

from __future__ import annotations

from local.sim.slack import SimSlack
from local.sim.world import World

CHANNEL = "C0SIM"
BUTTONS = [{"type": "actions", "elements": [{"type": "button", "action_id": "approve"}]}]


def test_update_with_text_and_no_blocks_shows_the_text_in_place_of_the_blocks() -> None:
    # Slack's chat.update: "If the text argument is provided and blocks are not
    # provided, the blocks will be removed"; markdown_text goes with no blocks.
    slack = SimSlack(World(1), [CHANNEL], {})
    posted = slack.post_message(CHANNEL, "Approve?", BUTTONS, None, None)
    slack.update(CHANNEL, posted.ts, None, None, "**Approved** by Alice")
    assert (posted.text, posted.blocks) == ("**Approved** by Alice", [])
    slack.update(CHANNEL, posted.ts, "Denied", BUTTONS, None)
    slack.update(CHANNEL, posted.ts, "Denied by Bob", None, None)
    assert (posted.text, posted.blocks) == ("Denied by Bob", [])
    slack.update(CHANNEL, posted.ts, None, BUTTONS, None)
    assert (posted.text, len(posted.blocks)) == ("Denied by Bob", 1), "blocks alone keep the text"
