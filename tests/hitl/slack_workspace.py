"""The Slack stand-in's workspace, in process: it checks blocks as Slack does and builds real callbacks."""

from __future__ import annotations

import json
from typing import Any

from slack_sdk.models.blocks import Block
from slack_sdk.models.views import View

from local.slack_standin import callbacks
from local.slack_standin.models import Tunables, User, render_message
from local.slack_standin.workspace import Workspace
from shared.slack.prompts import BLOCK_OVERHEAD, TEXT_BUDGET, Prompt

CHANNEL = "C0KOURIER"
PEOPLE = [
    User(id="U0ADA", real_name="Ada Lovelace"),
    User(id="U0BOB", real_name="Bob"),
    User(id="U0EVE", real_name="Eve"),
]


class Slack:
    """One channel with Ada, Bob and Eve; prompts are posted, clicked and read back."""

    def __init__(self) -> None:
        self.workspace = Workspace([CHANNEL], PEOPLE, Tunables(trigger_lifetime_seconds=3600))
        self.ts = ""

    def post(self, prompt: Prompt) -> str:
        """chat.postMessage; returns what a reader sees."""
        check_blocks(prompt.blocks)
        message = self.workspace.post_message(
            channel=CHANNEL,
            text=prompt.text,
            markdown_text=None,
            blocks=prompt.blocks,
            thread_ts=None,
            metadata=None,
        )
        self.ts = message.ts
        return render_message(message)

    def update(self, prompt: Prompt) -> str:
        """chat.update of the posted prompt; returns what a reader sees."""
        check_blocks(prompt.blocks)
        message = self.workspace.update_message(
            channel=CHANNEL,
            ts=self.ts,
            text=prompt.text,
            markdown_text=None,
            blocks=prompt.blocks,
            metadata=None,
        )
        return render_message(message)

    def click(
        self, action_id: str, user: str = "U0ADA", values: list[str] | None = None
    ) -> dict[str, Any]:
        """The block_actions payload of ``user`` acting on an element of the posted prompt."""
        target = self.workspace.find_action(
            channel=CHANNEL, message_ts=self.ts, action_id=action_id, block_id=None
        )
        action = callbacks.action(target.element, target.block_id, None, values)
        trigger_id = self.workspace.issue_trigger(user)
        return callbacks.block_actions(
            target=target,
            user=self.workspace.user(user),
            trigger_id=trigger_id,
            response_url="http://127.0.0.1:25000/response",
            action=action,
        )

    def submit_modal(
        self, view: dict[str, Any], values: dict[str, str], user: str = "U0ADA"
    ) -> dict[str, Any]:
        """views.open with a fresh trigger, then the view_submission payload of ``values``."""
        check_blocks(view["blocks"], limit=100)
        View(**view).validate_json()
        opened = self.workspace.open_view(trigger_id=self.workspace.issue_trigger(user), view=view)
        return callbacks.view_submission(
            view=opened,
            user=self.workspace.user(user),
            trigger_id=self.workspace.issue_trigger(user),
            values=values,
        )


def check_blocks(blocks: list[dict[str, Any]], limit: int = 50) -> None:
    """Every block valid by slack_sdk's models of Block Kit, within Slack's limits it does not check."""
    assert len(blocks) <= limit
    assert text_size(blocks) + BLOCK_OVERHEAD * len(blocks) <= TEXT_BUDGET
    for block in blocks:
        Block.parse(block).validate_json()  # type: ignore[union-attr]
        if block["type"] == "actions":
            assert len(block["elements"]) <= 25
        if block["type"] == "context":
            assert len(block["elements"]) <= 10
        for element in [block.get("accessory"), *block.get("elements", [])]:
            if isinstance(element, dict) and element.get("type") == "checkboxes":
                assert len(element["options"]) <= 10


def text_size(value: Any) -> int:
    """Characters of text in blocks, in UTF-16 units (Slack's msg_blocks_too_long counts these)."""
    if isinstance(value, dict):
        own = (
            len(value["text"].encode("utf-16-le")) // 2 if isinstance(value.get("text"), str) else 0
        )
        return own + sum(
            text_size(item)
            for key, item in value.items()
            if key != "text" or not isinstance(item, str)
        )
    if isinstance(value, list):
        return sum(text_size(item) for item in value)
    return 0


def action_ids(blocks: list[dict[str, Any]]) -> dict[str, str]:
    """Each button's label to its action_id (labels of one prompt's buttons may repeat: the last wins)."""
    found = {}
    for block in blocks:
        for element in [block.get("accessory"), *block.get("elements", [])]:
            if isinstance(element, dict) and element.get("type") == "button":
                found[element["text"]["text"]] = element["action_id"]
    return found


def buttons(blocks: list[dict[str, Any]]) -> list[str]:
    """The labels of every button, in order."""
    return [
        element["text"]["text"]
        for block in blocks
        for element in [block.get("accessory"), *block.get("elements", [])]
        if isinstance(element, dict) and element.get("type") == "button"
    ]


def dumped(blocks: list[dict[str, Any]]) -> str:
    """The blocks as the JSON sent to Slack."""
    return json.dumps(blocks, ensure_ascii=False)
