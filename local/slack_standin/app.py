"""The stand-in's ASGI application and its server."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from contextlib import asynccontextmanager
from typing import Any

import httpx
import uvicorn
from starlette.applications import Starlette
from starlette.middleware import Middleware

from local import console
from local.slack_standin import control, web_api
from local.slack_standin.core import Standin
from local.slack_standin.settings import StandinSettings

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
SHUTDOWN_GRACE_SECONDS = 2
"""How long a stop waits for open connections (a console's event stream never ends by itself)."""


class ChangeNotifier:
    """Counts a change of state after every request that is not a read (``Standin.changes``)."""

    def __init__(self, app: Callable[[Scope, Receive, Send], Awaitable[None]]) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await self.app(scope, receive, send)
        finally:
            if scope["type"] == "http" and scope["method"] not in ("GET", "HEAD"):
                standin: Standin = scope["app"].state.standin
                standin.changes.bump()


def build_app(settings: StandinSettings) -> Starlette:
    """The Web API, the control API, the response_url endpoint and the console in one app."""

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        # A fresh connection per callback, as a client that keeps none alive: a kept one
        # can be closed by the app's server just as the next event reuses it, and the
        # event would be lost to a race no test means to play.
        async with httpx.AsyncClient(limits=httpx.Limits(max_keepalive_connections=0)) as http:
            app.state.standin = Standin(settings, http)
            app.state.console = console.Console(app.state.standin)
            app.state.console.start(http)
            try:
                yield
            finally:
                await app.state.console.stop()

    return Starlette(
        routes=[*web_api.routes, *control.routes, *console.routes],
        middleware=[Middleware(ChangeNotifier)],
        lifespan=lifespan,
    )


def serve(settings: StandinSettings) -> None:
    """Serves on 127.0.0.1 until interrupted."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    uvicorn.run(
        build_app(settings),
        host="127.0.0.1",
        port=settings.port,
        log_level="warning",
        timeout_graceful_shutdown=SHUTDOWN_GRACE_SECONDS,
    )
