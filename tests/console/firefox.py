"""Firefox, driven over WebDriver BiDi: the console checked in the other browser the issue names.

Theory of operation: Playwright drives Firefox only as its own patched
build (which these machines cannot download) or over WebDriver BiDi, and
Playwright's BiDi speaks commands Firefox ESR does not know yet
(``emulation.setMediaFeaturesOverride``). Debian's ``firefox-esr`` speaks
BiDi itself, so this module starts it headless with
``--remote-debugging-port`` and sends the few commands a person's actions
need: navigate, evaluate a script, and real pointer and key input on an
element the page's own script finds. Every JavaScript error the page logs
is kept, so a test can fail on it.
"""

from __future__ import annotations

import base64
import itertools
import json
import os
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from websockets.exceptions import InvalidHandshake
from websockets.sync.client import ClientConnection, connect

FIREFOX = os.environ.get("KOURIER_FIREFOX", "/usr/bin/firefox-esr")
"""Debian's Firefox ESR, which tests/console/install.sh installs."""


class BidiError(RuntimeError):
    """Firefox answered a command with an error, or a wait ran out."""


class FirefoxPage:
    """The one tab of a headless Firefox, and what a person does in it."""

    def __init__(self, socket: ClientConnection, wait_seconds: float) -> None:
        self._socket = socket
        self._ids = itertools.count(1)
        self._wait_seconds = wait_seconds
        self.errors: list[str] = []
        self._send("session.new", {"capabilities": {}})
        self._send("session.subscribe", {"events": ["log.entryAdded"]})
        self._context = self._send("browsingContext.getTree", {})["contexts"][0]["context"]

    def open(self, url: str) -> None:
        """Loads ``url`` and waits for its scripts to have run."""
        self._send(
            "browsingContext.navigate", {"context": self._context, "url": url, "wait": "complete"}
        )

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (JSON-serialisable values)."""
        answer = self._send(
            "script.evaluate",
            {
                "expression": f"JSON.stringify({expression})",
                "target": {"context": self._context},
                "awaitPromise": True,
            },
        )
        if answer["type"] == "exception":
            raise BidiError(f"{expression}: {answer['exceptionDetails']['text']}")
        value = answer["result"].get("value")
        return None if value is None else json.loads(value)

    def wait_for(self, expression: str, what: str) -> None:
        """Waits until ``expression`` is truthy in the page."""
        deadline = time.monotonic() + self._wait_seconds
        while not self.evaluate(f"Boolean({expression})"):
            if time.monotonic() > deadline:
                raise BidiError(f"waited {self._wait_seconds:.0f} s for {what}")
            time.sleep(0.2)

    def wait_for_text(self, selector: str, text: str) -> None:
        """Waits until the element ``selector`` finds shows ``text``."""
        found = f"document.querySelector({json.dumps(selector)})"
        self.wait_for(
            f"{found} && {found}.innerText.includes({json.dumps(text)})",
            f"{selector} to show {text!r}",
        )

    def click(self, finder: str) -> None:
        """Moves the pointer onto the element ``finder`` (a JavaScript expression) finds, and clicks."""
        self.wait_for(finder, f"something to click: {finder}")
        element = self._element(finder)
        pointer = [
            {
                "type": "pointerMove",
                "x": 0,
                "y": 0,
                "origin": {"type": "element", "element": element},
            },
            {"type": "pointerDown", "button": 0},
            {"type": "pointerUp", "button": 0},
        ]
        self._act({"type": "pointer", "id": "mouse", "actions": pointer})

    def type(self, finder: str, text: str) -> None:
        """Clicks into the field ``finder`` finds and types ``text`` on the keyboard."""
        self.click(finder)
        keys = [{"type": kind, "value": char} for char in text for kind in ("keyDown", "keyUp")]
        self._act({"type": "key", "id": "keyboard", "actions": keys})

    def screenshot(self, path: Path) -> None:
        """Saves what the tab shows."""
        shot = self._send("browsingContext.captureScreenshot", {"context": self._context})
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(shot["data"]))

    def _element(self, finder: str) -> dict[str, Any]:
        answer = self._send(
            "script.evaluate",
            {
                "expression": finder,
                "target": {"context": self._context},
                "awaitPromise": False,
                "serializationOptions": {"maxDomDepth": 0},
            },
        )
        return {"sharedId": answer["result"]["sharedId"]}

    def _act(self, source: dict[str, Any]) -> None:
        self._send("input.performActions", {"context": self._context, "actions": [source]})

    def _send(self, method: str, params: dict[str, Any]) -> Any:
        number = next(self._ids)
        self._socket.send(json.dumps({"id": number, "method": method, "params": params}))
        while True:
            message = json.loads(self._socket.recv(timeout=self._wait_seconds))
            if message.get("method") == "log.entryAdded":
                entry = message["params"]
                if entry.get("type") == "javascript" and entry.get("level") == "error":
                    self.errors.append(str(entry.get("text")))
            elif message.get("id") == number:
                if message.get("type") == "error":
                    raise BidiError(f"{method}: {message.get('error')}: {message.get('message')}")
                return message["result"]


@contextmanager
def firefox_page(port: int, wait_seconds: float) -> Iterator[FirefoxPage]:
    """A headless Firefox with a fresh profile, its BiDi port at ``port``; stopped after."""
    with tempfile.TemporaryDirectory(prefix="firefox-") as profile:
        command = [FIREFOX, "--headless", "--no-remote", "--profile", profile]
        command += [f"--remote-debugging-port={port}", "about:blank"]
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            with _bidi_socket(port, wait_seconds, process) as socket:
                yield FirefoxPage(socket, wait_seconds)
        finally:
            process.terminate()
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


@contextmanager
def _bidi_socket(
    port: int, wait_seconds: float, process: subprocess.Popen[bytes]
) -> Iterator[ClientConnection]:
    deadline = time.monotonic() + wait_seconds
    while True:
        try:
            socket = connect(f"ws://127.0.0.1:{port}/session", max_size=None, open_timeout=10)
            break
        except (OSError, InvalidHandshake):  # not listening yet, or not answering BiDi yet
            if process.poll() is not None or time.monotonic() > deadline:
                raise BidiError(f"Firefox did not open its BiDi port {port}") from None
            time.sleep(0.3)
    with socket:
        yield socket
