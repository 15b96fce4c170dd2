"""The stand-in's ASGI application and its server."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx
import uvicorn
from starlette.applications import Starlette

from local.slack_standin import control, web_api
from local.slack_standin.core import Standin
from local.slack_standin.settings import StandinSettings


def build_app(settings: StandinSettings) -> Starlette:
    """The Web API, the control API and the response_url endpoint in one app."""

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with httpx.AsyncClient() as http:
            app.state.standin = Standin(settings, http)
            yield

    return Starlette(routes=[*web_api.routes, *control.routes], lifespan=lifespan)


def serve(settings: StandinSettings) -> None:
    """Serves on 127.0.0.1 until interrupted."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    uvicorn.run(build_app(settings), host="127.0.0.1", port=settings.port, log_level="warning")
