"""ADK agents driven by a scripted model, for the peer servers in tests.

Theory of operation: the peers must run offline with no API key, so the
LlmAgent's model is ``ScriptedModel``, a BaseLlm that reads the request
instead of calling a service. When the conversation ends with the user's
text it calls the agent's one tool with that text; when it ends with the
tool's result it answers in text that quotes the result. ADK itself runs the
tool between the two model calls, so the A2A stream carries ADK's own tool
call and result parts. With ``require_confirmation`` on the tool, ADK pauses
for approval (input-required) before running it, as a real agent would.

This module runs inside the peer venvs (.venvs/adk with google-adk 2.x,
.venvs/kagent with google-adk 1.x), never in the project venv.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator
from typing import Any

from google.adk.agents import LlmAgent
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.tools.function_tool import FunctionTool
from google.genai import types

CONFIRMATION_CALL = "adk_request_confirmation"


def count_words(text: str) -> dict[str, Any]:
    """Counts the words of a text.

    Args:
        text: The text to count.

    Returns:
        The number of words, under "words".
    """
    return {"words": len(text.split())}


def publish_note(text: str) -> dict[str, Any]:
    """Publishes a note for everyone to read (needs a person's approval).

    Args:
        text: The note.

    Returns:
        Whether the note was published, and its length.
    """
    return {"published": True, "characters": len(text)}


def _function_response(content: types.Content) -> types.FunctionResponse | None:
    """The tool result in ``content``, if it holds one (confirmations aside)."""
    for part in content.parts or []:
        response = part.function_response
        if response is not None and response.name != CONFIRMATION_CALL:
            return response
    return None


def _last_user_text(contents: list[types.Content]) -> str:
    """The text of the last user content that has any."""
    for content in reversed(contents):
        texts = [part.text for part in content.parts or [] if part.text]
        if content.role == "user" and texts:
            return "\n".join(texts)
    return ""


class ScriptedModel(BaseLlm):
    """A model that calls ``tool_name`` once with the user's text, then answers."""

    model: str = "scripted"
    tool_name: str

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        """Yields one complete response: a tool call, or text after the result."""
        contents = llm_request.contents or []
        result = _function_response(contents[-1]) if contents else None
        if result is None:
            call = types.FunctionCall(name=self.tool_name, args={"text": _last_user_text(contents)})
            parts = [types.Part(function_call=call)]
        else:
            answer = json.dumps(result.response, sort_keys=True)
            parts = [types.Part(text=f"The {result.name} tool answered {answer}. Done.")]
        yield LlmResponse(content=types.Content(role="model", parts=parts), turn_complete=True)


def build_agent(confirm: bool) -> LlmAgent:
    """The scripted agent: count_words, or publish_note behind an approval.

    Args:
        confirm: Whether the tool needs a person's approval before it runs.

    Returns:
        An LlmAgent with one tool and the scripted model.
    """
    tool = (
        FunctionTool(publish_note, require_confirmation=True)
        if confirm
        else FunctionTool(count_words)
    )
    return LlmAgent(
        name="scripted_agent",
        description="Calls one tool with what you wrote, then tells you what it answered.",
        instruction="Call the tool with the user's text, then report its answer.",
        model=ScriptedModel(tool_name=tool.name),
        tools=[tool],
    )
