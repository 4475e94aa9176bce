"""``chimera serve`` in a real browser: Debian's Chromium, driven by Playwright, opens the page, reads the
workbench from the websocket's frames (xterm.js draws to a canvas, so the frames are what there is to read),
types a task and reads the model's answer; the picture of the page is compared loosely with a reviewed one."""

from __future__ import annotations

from pathlib import Path

import pytest

from chimera.core.wording import shown_path
from tests.browser_helpers import FlowingText, chromium, difference, needs_chromium
from tests.fake_anthropic import FakeAnthropic, message, text
from tests.serve_helpers import WELCOME, serving

pytestmark = needs_chromium

PICTURE = Path(__file__).parent / "__screenshots__" / "serve_welcome.png"  # 1024x640, Roboto Mono (its own font)
ANSWER = "Forty-two, as always."


def test_a_task_typed_in_the_browser_is_answered(
    project: Path, api: FakeAnthropic, model_env: dict[str, str], tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """In Chromium the page is titled with the workspace and draws the welcome; a task typed into it reaches
    the model with the key serve was started with, and the answer is drawn; the page looks as reviewed."""
    api.script(message(text(ANSWER)))
    with serving(project) as served, chromium(tmp_path / "profile") as browser:
        page = browser.new_page()
        with page.expect_websocket() as connected:
            page.goto(served.address)
        frames = FlowingText(connected.value)
        frames.until(WELCOME)
        assert page.title() == shown_path(project)
        page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
        picture = page.screenshot()
        if request.config.getoption("--snapshot-update", default=False):  # then look at it before committing it
            PICTURE.write_bytes(picture)
        assert PICTURE.exists(), f"no reviewed picture: run this test with --snapshot-update and look at {PICTURE}"
        compared = difference(page, PICTURE.read_bytes(), picture)
        assert compared["sizes"][0] == compared["sizes"][1]
        assert compared["share"] < 0.02, f"the page differs from {PICTURE.name} in {compared['share']:.1%} of it"
        page.locator(".xterm-helper-textarea").focus()
        page.keyboard.type("What is the answer?")
        page.keyboard.press("Enter")
        frames.until(ANSWER)
    assert api.requests[0].headers.get("authorization") == "Bearer k"  # the key reached the tab, in no environment
    assert "What is the answer?" in str(api.requests[0].messages)
