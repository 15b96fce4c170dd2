"""What a function's log lines say of a call to an agent: never a credential.

Cloud Logging keeps every line a function writes to stdout. httpx logs each
request's URL at INFO, and an agent's error message, which a failed call's
detail quotes, may echo a credential (a token it refused, a URL with one).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.a2a.agents import ScriptedAgent, error

REPO = Path(__file__).resolve().parents[2]
ECHOED = (
    "invalid credentials Bearer abcdefghijklmnop for "
    "https://kourier:s3cretpw@agent.example.com/x?api_key=AKEY1234567"
)
FUNCTION = """
import sys
from shared.a2a.errors import AgentError
from shared.logs import configure_logging
from tests.a2a.conftest import backend_for, binding_for
import httpx
from shared.a2a.client import AgentClient
from shared.a2a.discovery import CardCache
from shared.a2a.transport import HttpLink
from shared.settings import Settings
from shared.system import SystemClock, SystemIds

configure_logging("demo-kourier")
settings = Settings()
client = AgentClient(
    backend_for(sys.argv[1]),
    binding_for(),
    link=HttpLink(httpx.Client()),
    cards=CardCache(),
    clock=SystemClock(),
    ids=SystemIds(),
    max_response_bytes=settings.max_agent_response_bytes,
    call_seconds=settings.agent_call_seconds,
)
try:
    client.get_task("t1")
except AgentError:
    pass
"""


def test_a_function_logs_neither_request_urls_nor_a_credential_an_agent_echoes(
    agent: ScriptedAgent,
) -> None:
    agent.script = lambda exchange: exchange.json(error(-32600, ECHOED))

    ran = subprocess.run(
        [sys.executable, "-c", FUNCTION, agent.url],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )

    lines = ran.stdout.splitlines()
    assert not [line for line in lines if "HTTP Request" in line], "httpx logs no URL"
    [failed] = [json.loads(line) for line in lines if '"agent_call_failed"' in line]
    assert failed["severity"] == "WARNING" and "invalid credentials" in failed["detail"]
    for secret in ("abcdefghijklmnop", "s3cretpw", "kourier:", "AKEY1234567"):
        assert secret not in ran.stdout
