"""A tab's process as ``chimera serve`` reads it, with a small program in the workbench's place that speaks the
web driver's packets: the screen's data passed on, a request to open a page passed on only for a web address,
its lines outside the screen said (the app's start marker not), and the key handed over through a pipe,
never in its environment."""

from __future__ import annotations

import sys
from pathlib import Path

from chimera.tui.serve.tabs import Launch, OpenUrl, Tab

# Writes as Textual's web driver does, then what chimera writes after its app has closed.
SPEAKER = r"""
import json, os, sys
def packet(kind, payload):
    sys.stdout.buffer.write(kind + len(payload).to_bytes(4, "big") + payload)
fd = os.environ.get("CHIMERA_CREDENTIALS_FD")
held = os.read(int(fd), 1000).decode() if fd else ""
sys.stdout.buffer.write(b"__GANGLION__\n")
packet(b"D", json.dumps([held, "ANTHROPIC_API_KEY" in os.environ]).encode())
packet(b"M", json.dumps({"type": "open_url", "url": "javascript:alert(document.cookie)", "new_tab": True}).encode())
packet(b"M", json.dumps({"type": "open_url", "url": "https://example.org/", "new_tab": False}).encode())
packet(b"M", json.dumps({"type": "exit"}).encode())
sys.stdout.buffer.write(b"__GANGLION__\n")
packet(b"D", b"the next session")
sys.stdout.buffer.write(b"Resume this session: chimera --resume 1a2b\n")
sys.stderr.write("a warning\n")
"""


async def test_a_tab_passes_on_its_screen_and_hands_over_the_key(tmp_path: Path, model_env: dict[str, str]) -> None:
    """The program's screen data and its web page request reach the browser, a javascript: one does not; its
    other lines are said, marked with its pid; it got the key through the pipe, none in its environment."""
    said: list[str] = []
    tab = await Tab.start(Launch((sys.executable, "-c", SPEAKER), tmp_path), 80, 24, said.append)
    got = [item async for item in tab.output()]
    await tab.end()
    assert got == [
        b'["{\\"ANTHROPIC_API_KEY\\": \\"k\\"}", false]',
        OpenUrl("https://example.org/", new_tab=False),
        b"the next session",
    ]
    assert sorted(said) == [
        f"workbench {tab.pid}: Resume this session: chimera --resume 1a2b",
        f"workbench {tab.pid}: a warning",
    ]
