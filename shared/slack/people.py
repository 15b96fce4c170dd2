"""Who wrote a message: users.info, cached in Firestore for a day (an unknown user too)."""

from __future__ import annotations

from datetime import timedelta

from slack_sdk.errors import SlackApiError

from shared.core.model import Actor
from shared.core.untrusted import untrusted_block
from shared.ports import Chat
from shared.store import Store

_KEEP = timedelta(days=1)

THREAD_REPLY = "a Slack thread reply that did not mention Agent Kourier"
"""The source named by the untrusted-data block around such a reply."""


def actor_for(store: Store, chat: Chat, user_id: str) -> Actor:
    """The person's actor (name and email when Slack tells them).

    Slack's answer is cached, a "user_not_found" too (an actor with no name
    or email), so a person Slack does not know costs one users.info a day
    rather than one every turn; any other failure is asked again next time.
    """
    profile = store.cached_user(user_id)
    if profile is None:
        try:
            user = chat.users_info(user=user_id)["user"]
        except SlackApiError as error:
            if error.response.get("error") != "user_not_found":
                return Actor(id=user_id)
            user = {}
        details = user.get("profile", {})
        profile = {
            "name": details.get("real_name") or user.get("real_name") or user.get("name"),
            "email": details.get("email"),
        }
        store.cache_user(user_id, profile, _KEEP)
    return Actor(id=user_id, name=profile.get("name"), email=profile.get("email"))


def turn_text(actor: Actor, text: str, *, mentioned: bool) -> str:
    """The text of a turn a person wrote: the ``[Slack: Name (U123) <email>]`` line, then theirs.

    A reply that did not mention Agent Kourier follows the line inside an
    untrusted-data block (contract, What Agent Kourier sends).
    """
    who = actor.name or actor.id
    email = f" <{actor.email}>" if actor.email else ""
    body = text if mentioned else untrusted_block(THREAD_REPLY, text)
    return f"[Slack: {who} ({actor.id}){email}]\n{body}"
