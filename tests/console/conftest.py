"""The console in a real browser: Chromium, driven by Playwright, on the local stack as ``up`` runs it.

One stack serves the module (its own ports, 28300-28311 and the emulators
at 28380-28390: below the kernel's ephemeral range, 32768 and up, so no
client's own end of a connection can hold one), with the demo agent and its approver (U0ALICE) and
non-approver (U0BOB). Each test opens the console page in a fresh browser
context, acts in it as a person would, and asserts what the page shows.
Its last screen is saved under ``artifacts/console/`` (or
``$KOURIER_ARTIFACTS_DIR/console/``), named after the test; a script error
in the page fails the test.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Locator, Page, expect, sync_playwright

from local.emulators import EmulatorPorts
from local.slack_standin.client import SlackStandin
from local.stack import DEMO_CHANNEL, REPO, Stack, StackPorts, running_stack
from tests.console.firefox import FirefoxPage, firefox_page

PORTS = StackPorts(
    chat_ingress=28300,
    turn_send=28301,
    stream_follow=28302,
    reconcile=28303,
    timeout=28304,
    slack=28310,
    agent=28311,
    emulators=EmulatorPorts().shifted(20000),
)
CHROMIUM = os.environ.get("KOURIER_CHROMIUM", "/usr/bin/chromium")
"""Debian's Chromium, which tests/console/install.sh installs."""
CHROMIUM_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
WAIT_MS = 180_000
"""How long a test waits for what it expects to show: generous, for a loaded machine."""
FIREFOX_BIDI_PORT = 28420
"""Where Firefox takes WebDriver BiDi commands (below the ephemeral range, as the stack's ports)."""
ARTIFACTS = Path(os.environ.get("KOURIER_ARTIFACTS_DIR", REPO / "artifacts")) / "console"

expect.set_options(timeout=WAIT_MS)


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("KOURIER_", "SLACK_"))}
    with running_stack(PORTS, tmp_path_factory.mktemp("console"), environ=environ) as running:
        yield running


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        yield launched
        launched.close()


@dataclass
class Console:
    """The console page, and what a person does in it."""

    page: Page
    standin: SlackStandin

    @property
    def channel(self) -> Locator:
        """The channel pane."""
        return self.page.get_by_role("region", name="Channel")

    @property
    def thread(self) -> Locator:
        """The open thread's pane."""
        return self.page.get_by_role("region", name="Thread")

    @property
    def underneath(self) -> Locator:
        """The panel of what lies under the open thread."""
        return self.page.get_by_role("complementary", name="Underneath")

    def act_as(self, user: str) -> None:
        """Picks whom the page acts as."""
        self.page.get_by_label("Acting as").select_option(user)

    def write(self, text: str) -> None:
        """Writes in the channel, mentioning Kourier, and waits for its thread to open."""
        box = self.channel.get_by_role("textbox", name="Message the channel")
        box.fill(text)
        box.press("Enter")
        expect(self.thread.locator("article").first).to_contain_text(text)

    def answers(self) -> Locator:
        """Kourier's messages in the open thread."""
        return self.thread.locator("article.from-bot")

    def screenshot(self, name: str) -> None:
        """Saves what the page shows now as an artifact."""
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        self.page.screenshot(path=ARTIFACTS / f"{name}.png")


@pytest.fixture
def console(browser: Browser, stack: Stack, request: pytest.FixtureRequest) -> Iterator[Console]:
    assert stack.console_url is not None
    context = browser.new_context(viewport={"width": 1600, "height": 900})
    page = context.new_page()
    page.set_default_timeout(WAIT_MS)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(f"{stack.console_url}#as=U0ALICE&channel={DEMO_CHANNEL}")
    expect(page.get_by_role("status").filter(has_text="live")).to_be_visible()
    with SlackStandin(stack.console_url) as standin:
        opened = Console(page, standin)
        yield opened
        opened.screenshot(request.node.name)
    context.close()
    assert not errors, f"the page's scripts failed: {errors}"


@pytest.fixture
def firefox(stack: Stack, request: pytest.FixtureRequest) -> Iterator[FirefoxPage]:
    with firefox_page(FIREFOX_BIDI_PORT, WAIT_MS / 1000) as page:
        yield page
        page.screenshot(ARTIFACTS / f"{request.node.name}.png")
    assert not page.errors, f"the page's scripts failed in Firefox: {page.errors}"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if Path(str(item.fspath)).parent == Path(__file__).parent:
            item.add_marker(pytest.mark.emulators)
