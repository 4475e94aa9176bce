"""Debian's Chromium driven by Playwright, for ``chimera serve``: launched with a fresh profile and nothing that
reaches the network, the websocket frames a page receives read as text, and two pictures compared loosely.

The tests that need it are skipped, with the reason, where Playwright or ``/usr/bin/chromium`` is missing
(``apt-get install chromium``; never a browser download).
"""

from __future__ import annotations

import base64
import contextlib
import importlib.util
import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.serve_helpers import escapes_out

if TYPE_CHECKING:
    from playwright.sync_api import BrowserContext, Page, WebSocket

__all__ = ["CHROMIUM", "FlowingText", "chromium", "chromium_arguments", "difference", "needs_chromium"]

CHROMIUM = "/usr/bin/chromium"
_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--no-proxy-server",
]

needs_chromium = pytest.mark.skipif(
    importlib.util.find_spec("playwright") is None or not os.access(CHROMIUM, os.X_OK),
    reason="needs Playwright (the test extra) and Debian's Chromium at /usr/bin/chromium (apt-get install chromium)",
)


def chromium_arguments() -> list[str]:
    """Chromium's switches here: headless, no sandbox of its own (root), and nothing that reaches the network."""
    return list(_ARGS)


@contextlib.contextmanager
def chromium(profile: Path, width: int = 1024, height: int = 640) -> Iterator[BrowserContext]:
    """Chromium headless with the empty profile folder ``profile``, its pages ``width`` by ``height`` pixels."""
    from playwright.sync_api import sync_playwright

    profile.mkdir()
    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(profile),
            executable_path=CHROMIUM,
            headless=True,
            args=chromium_arguments(),
            viewport={"width": width, "height": height},
        )
        try:
            yield context
        finally:
            context.close()


class FlowingText:
    """The text the frames of ``socket`` (a page's websocket) have drawn, as they arrive."""

    def __init__(self, socket: WebSocket) -> None:
        self.socket = socket
        self.data = b""
        socket.on("framereceived", self._feed)

    def _feed(self, payload: bytes | str) -> None:
        if isinstance(payload, bytes):
            self.data += payload

    def text(self) -> str:
        return escapes_out(self.data)

    def until(self, words: str, timeout: float = 60) -> None:
        """Wait for frames (an event each) until ``words`` have been drawn."""
        if words not in self.text():
            self.socket.wait_for_event(
                "framereceived", predicate=lambda _: words in self.text(), timeout=timeout * 1000
            )


def difference(page: Page, first: bytes, second: bytes) -> dict[str, Any]:
    """How two PNG pictures differ, as ``page`` (a browser) decodes them: their sizes, and the share of pixels
    whose colour differs by more than a quarter in any channel (text moved or gone, not a shade of smoothing)."""
    script = """async ([a, b]) => {
        const load = async (data) => {
            const image = new Image();
            image.src = "data:image/png;base64," + data;
            await image.decode();
            const canvas = document.createElement("canvas");
            canvas.width = image.width;
            canvas.height = image.height;
            const context = canvas.getContext("2d");
            context.drawImage(image, 0, 0);
            return context.getImageData(0, 0, image.width, image.height);
        };
        const [x, y] = [await load(a), await load(b)];
        if (x.width !== y.width || x.height !== y.height) {
            return {sizes: [[x.width, x.height], [y.width, y.height]], share: 1};
        }
        let differing = 0;
        for (let i = 0; i < x.data.length; i += 4) {
            for (let c = 0; c < 3; c++) {
                if (Math.abs(x.data[i + c] - y.data[i + c]) > 64) { differing++; break; }
            }
        }
        return {sizes: [[x.width, x.height], [y.width, y.height]], share: differing / (x.width * x.height)};
    }"""
    result: dict[str, Any] = page.evaluate(
        script, [base64.b64encode(first).decode(), base64.b64encode(second).decode()]
    )
    return result
