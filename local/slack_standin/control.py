"""The control API (``/_standin/...``), through which tests and people act as
Slack users and read what the app did, and the response_url endpoint
(``/actions/<token>``) that Slack gives the app with every click.

Control errors are plain HTTP: 404 for something that does not exist, 400
for a request that cannot be carried out, each with ``{"error": reason}``.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from pydantic import BaseModel
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from local.slack_standin.core import Standin
from local.slack_standin.models import (
    ClickRequest,
    RateLimit,
    ResendRequest,
    SayRequest,
    ScriptedFailure,
    SignedRequest,
    StopRequest,
    SubmitRequest,
    User,
)
from local.slack_standin.workspace import SlackError

Model = TypeVar("Model", bound=BaseModel)
Endpoint = Callable[[Request], Awaitable[JSONResponse]]


def _answer(value: BaseModel | list[Any] | None) -> JSONResponse:
    if isinstance(value, BaseModel):
        return JSONResponse(value.model_dump(mode="json"))
    if isinstance(value, list):
        return JSONResponse([item.model_dump(mode="json") for item in value])
    return JSONResponse(None)


async def _body(request: Request, model: type[Model]) -> Model:
    raw = await request.body()
    return model.model_validate_json(raw or b"{}")


def _guarded(endpoint: Endpoint) -> Endpoint:
    """Turns lookups that fail into 404 and impossible requests into 400."""

    async def guarded(request: Request) -> JSONResponse:
        try:
            return await endpoint(request)
        except LookupError as error:
            return JSONResponse({"error": str(error)}, status_code=404)
        except ValueError as error:
            return JSONResponse({"error": str(error)}, status_code=400)
        except SlackError as error:
            return JSONResponse({"error": error.code}, status_code=400)

    return guarded


def _standin(request: Request) -> Standin:
    standin: Standin = request.app.state.standin
    return standin


async def health(request: Request) -> JSONResponse:
    """Ready to serve."""
    return JSONResponse({"ok": True})


async def say(request: Request) -> JSONResponse:
    """A person writes a message (see ``Standin.say``)."""
    return _answer(await _standin(request).say(await _body(request, SayRequest)))


async def resend(request: Request) -> JSONResponse:
    """Slack retries an event."""
    body = await _body(request, ResendRequest)
    return _answer(await _standin(request).resend(request.path_params["event_id"], body))


async def verify_url(request: Request) -> JSONResponse:
    """Slack checks the events URL with a challenge."""
    return _answer(await _standin(request).verify_url(await _body(request, SignedRequest)))


async def click(request: Request) -> JSONResponse:
    """A person acts on a button or menu of a message."""
    return _answer(await _standin(request).click(await _body(request, ClickRequest)))


async def views(request: Request) -> JSONResponse:
    """Every modal opened, open or not."""
    return _answer(list(_standin(request).workspace.views.values()))


async def submit(request: Request) -> JSONResponse:
    """A person submits a modal."""
    body = await _body(request, SubmitRequest)
    return _answer(await _standin(request).submit(request.path_params["view_id"], body))


async def close_view(request: Request) -> JSONResponse:
    """A person closes a modal without submitting it.

    Slack tells the app (``view_closed``) only when the view asked with
    ``notify_on_close``; the stand-in sends nothing, so it refuses to close
    such a view rather than pretend.
    """
    view = _standin(request).workspace.views.get(request.path_params["view_id"])
    if view is None:
        raise LookupError(f"no view {request.path_params['view_id']}")
    if view.view.get("notify_on_close"):
        raise ValueError("the view asks for view_closed, which the stand-in does not send")
    _standin(request).workspace.close_view(view.id)
    return _answer(view)


async def history(request: Request) -> JSONResponse:
    """A channel's top-level messages."""
    return _answer(_standin(request).workspace.history(request.path_params["channel"]))


async def thread(request: Request) -> JSONResponse:
    """A thread's messages, as a reader sees them."""
    params = request.path_params
    return _answer(_standin(request).workspace.thread(params["channel"], params["ts"]))


async def thread_status(request: Request) -> JSONResponse:
    """A thread's status line, or null."""
    params = request.path_params
    return _answer(_standin(request).workspace.status(params["channel"], params["ts"]))


async def agent_session(request: Request) -> JSONResponse:
    """A thread's agent session (status, title, stop button, status changes), or null."""
    params = request.path_params
    return _answer(_standin(request).workspace.agent_session(params["channel"], params["ts"]))


async def press_stop(request: Request) -> JSONResponse:
    """A person presses the stop button of a thread's agent session."""
    params = request.path_params
    body = await _body(request, StopRequest)
    return _answer(await _standin(request).press_stop(params["channel"], params["ts"], body))


async def feedback(request: Request) -> JSONResponse:
    """Every click on a feedback button, oldest first."""
    return _answer(list(_standin(request).workspace.feedback))


async def ephemerals(request: Request) -> JSONResponse:
    """Ephemeral messages, optionally of one channel and one user."""
    channel = request.query_params.get("channel")
    user = request.query_params.get("user")
    return _answer(
        [
            ephemeral
            for ephemeral in _standin(request).workspace.ephemerals
            if channel in (None, ephemeral.channel) and user in (None, ephemeral.user)
        ]
    )


async def calls(request: Request) -> JSONResponse:
    """The Web API calls the app made, optionally of one method."""
    method = request.query_params.get("method")
    return _answer([call for call in _standin(request).calls if method in (None, call.method)])


async def rate_limit(request: Request) -> JSONResponse:
    """PUT sets a method's rate limit; DELETE lifts it."""
    limiter = _standin(request).limiter
    method = request.path_params["method"]
    if request.method == "DELETE":
        limiter.set(method, None)
        return JSONResponse(None)
    limit = await _body(request, RateLimit)
    limiter.set(method, limit)
    return _answer(limit)


async def failures(request: Request) -> JSONResponse:
    """PUT scripts failures of a method's next calls; DELETE lifts them."""
    scripted = _standin(request).failures
    method = request.path_params["method"]
    if request.method == "DELETE":
        scripted.set(method, None)
        return JSONResponse(None)
    failure = await _body(request, ScriptedFailure)
    scripted.set(method, failure)
    return _answer(failure)


async def config(request: Request) -> JSONResponse:
    """GET reads the run-time settings; PATCH changes some of them."""
    standin = _standin(request)
    if request.method == "PATCH":
        changes = json.loads(await request.body() or b"{}")
        if not isinstance(changes, dict):
            raise ValueError("send an object of settings to change")
        return _answer(standin.configure(changes))
    return _answer(standin.tunables)


async def put_user(request: Request) -> JSONResponse:
    """Adds or replaces a person."""
    user = await _body(request, User)
    if user.id != request.path_params["user_id"]:
        raise ValueError("the user's id differs from the one in the path")
    _standin(request).workspace.put_user(user)
    return _answer(user)


async def reset(request: Request) -> JSONResponse:
    """Forgets everything since start: messages, views, events, calls, limits, settings."""
    _standin(request).reset()
    return JSONResponse(None)


async def respond(request: Request) -> JSONResponse:
    """A post by the app to the response_url of a click."""
    try:
        body = json.loads(await request.body() or b"{}")
        _standin(request).workspace.respond(request.path_params["token"], body)
    except LookupError:
        return JSONResponse({"ok": False, "error": "expired_url"}, status_code=404)
    except SlackError as error:
        return JSONResponse({"ok": False, "error": error.code}, status_code=400)
    except ValueError:
        return JSONResponse({"ok": False, "error": "invalid_payload"}, status_code=400)
    return JSONResponse({"ok": True})


PREFIX = "/_standin"
routes = [
    Route(f"{PREFIX}/health", health),
    Route(f"{PREFIX}/messages", _guarded(say), methods=["POST"]),
    Route(f"{PREFIX}/events/{{event_id}}/resend", _guarded(resend), methods=["POST"]),
    Route(f"{PREFIX}/url_verification", _guarded(verify_url), methods=["POST"]),
    Route(f"{PREFIX}/actions", _guarded(click), methods=["POST"]),
    Route(f"{PREFIX}/views", views),
    Route(f"{PREFIX}/views/{{view_id}}/submit", _guarded(submit), methods=["POST"]),
    Route(f"{PREFIX}/views/{{view_id}}/close", _guarded(close_view), methods=["POST"]),
    Route(f"{PREFIX}/channels/{{channel}}/messages", history),
    Route(f"{PREFIX}/channels/{{channel}}/threads/{{ts}}", thread),
    Route(f"{PREFIX}/channels/{{channel}}/threads/{{ts}}/status", thread_status),
    Route(f"{PREFIX}/channels/{{channel}}/threads/{{ts}}/session", agent_session),
    Route(
        f"{PREFIX}/channels/{{channel}}/threads/{{ts}}/stop", _guarded(press_stop), methods=["POST"]
    ),
    Route(f"{PREFIX}/feedback", feedback),
    Route(f"{PREFIX}/ephemerals", ephemerals),
    Route(f"{PREFIX}/calls", calls),
    Route(f"{PREFIX}/rate_limits/{{method}}", _guarded(rate_limit), methods=["PUT", "DELETE"]),
    Route(f"{PREFIX}/failures/{{method}}", _guarded(failures), methods=["PUT", "DELETE"]),
    Route(f"{PREFIX}/config", _guarded(config), methods=["GET", "PATCH"]),
    Route(f"{PREFIX}/users/{{user_id}}", _guarded(put_user), methods=["PUT"]),
    Route(f"{PREFIX}/reset", reset, methods=["POST"]),
    Route("/actions/{token}", respond, methods=["POST"]),
]
