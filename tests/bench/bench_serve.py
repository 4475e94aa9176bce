"""Benchmark: ``chimera serve`` from a page load to the workbench's first frame, in Debian's Chromium.

Run by hand: `python tests/bench/bench_serve.py [runs]` (needs Playwright and /usr/bin/chromium; 10 runs by
default). One `chimera serve` on 127.0.0.1 (a fresh workspace and CHIMERA_HOME, a model configured: a key and
`ANTHROPIC_BASE_URL` at a port nobody listens on, as `bench_first_frame.py` has it, so the welcome asks no
server anything). Each run opens the page in a new browser context (an empty cache, as a first visit) and
times, in the page's own clock from the start of its navigation: the page loaded (its load event: textual.js
and the font), the tab's websocket open (its workbench then starts), the first frame (the welcome's words in
the websocket's data, read by a wrapper of the page's WebSocket). The context then closes, and the next run
waits until that tab's workbench has ended. Prints the medians and their spread.

As ``bench_first_frame.py`` does, it first compiles this checkout's modules, as an installed Chimera's are.
"""

from __future__ import annotations

import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.browser_helpers import CHROMIUM, chromium_arguments
from tests.cli_runner import chimera_command

WATCH = r"""
(() => {
  const Native = window.WebSocket;
  const decoder = new TextDecoder();
  let drawn = "";
  window.__bench = {};
  window.WebSocket = function (...args) {
    const socket = new Native(...args);
    socket.addEventListener("open", () => { window.__bench.open = performance.now(); });
    socket.addEventListener("message", (event) => {
      if (typeof event.data === "string" || window.__bench.welcome !== undefined) return;
      drawn += decoder.decode(new Uint8Array(event.data), {stream: true});
      if (drawn.replace(/\x1b\[[0-9;?]*[ -\/]*[@-~]/g, "").includes("Welcome to Chimera")) {
        window.__bench.welcome = performance.now();
      }
    });
    return socket;
  };
  window.WebSocket.prototype = Native.prototype;
})();
"""


def _dead_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _compiled() -> None:
    root = Path(__file__).resolve().parents[2]
    folders = [str(root / part) for part in ("core", "tui", "themes")]
    subprocess.run([sys.executable, "-m", "compileall", "-q", *folders], check=True)


def _children(pid: int) -> list[str]:
    path = Path(f"/proc/{pid}/task/{pid}/children")
    return path.read_text().split() if path.exists() else []


def _until_no_workbench(pid: int, timeout: float = 30) -> None:
    """Poll until serve has no child left (the last run's tab ended): the next run gets the cores to itself."""
    deadline = time.monotonic() + timeout
    while _children(pid):
        if time.monotonic() > deadline:
            raise SystemExit("bench: a closed tab's workbench is still running")
        time.sleep(0.02)


def main() -> None:
    from playwright.sync_api import sync_playwright

    if not os.access(CHROMIUM, os.X_OK):
        raise SystemExit(f"bench: {CHROMIUM} is missing (apt-get install chromium)")
    _compiled()
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    figures: dict[str, list[float]] = {"page loaded": [], "websocket open": [], "first frame": [], "outside": []}
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp, "work")
        workdir.mkdir()
        env = {
            "PATH": os.environ.get("PATH", ""),
            "HOME": tmp,
            "LANG": "C.UTF-8",
            "CHIMERA_HOME": str(Path(tmp, "home")),
            "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{_dead_port()}",
            "ANTHROPIC_API_KEY": "sk-ant-bench-not-a-real-key-0000",
        }
        serve = subprocess.Popen(
            [*chimera_command(), "serve", "--port", "0"],
            cwd=workdir,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        try:
            assert serve.stdout is not None
            found = re.search(r"http://\S+", serve.stdout.readline())
            if found is None:
                raise SystemExit("bench: chimera serve printed no address")
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=CHROMIUM, args=chromium_arguments())
                for run in range(runs + 1):  # the first, unmeasured: the disk cache warm
                    context = browser.new_context(viewport={"width": 1280, "height": 800})
                    page = context.new_page()
                    page.add_init_script(WATCH)
                    began = time.perf_counter()
                    page.goto(found[0])
                    page.wait_for_function("window.__bench.welcome !== undefined", timeout=60_000, polling=5)
                    outside = time.perf_counter() - began
                    seen = page.evaluate(
                        "() => [performance.getEntriesByType('navigation')[0].loadEventEnd, "
                        "window.__bench.open, window.__bench.welcome]"
                    )
                    context.close()
                    _until_no_workbench(serve.pid)
                    if run:
                        for name, value in zip(figures, [*seen, outside * 1000], strict=True):
                            figures[name].append(value / 1000)
                browser.close()
        finally:
            serve.terminate()
            serve.wait(30)
    print(f"chimera serve, from a page load (a new browser context: empty cache) to its first frame, {runs} runs:")
    for name, values in figures.items():
        label = "the same, timed from Python" if name == "outside" else name
        spread = f"{min(values):.2f}-{max(values):.2f} s"
        print(f"  {label:28} median {statistics.median(values):5.2f} s  ({spread})")


if __name__ == "__main__":
    main()
