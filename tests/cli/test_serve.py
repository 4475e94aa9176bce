"""``chimera serve`` as a browser reaches it, through aiohttp's websocket client: the token, a workbench per tab
started with serve's options, and every workbench ended when serve stops, however it stops."""

from __future__ import annotations

import os
import select
import signal
from pathlib import Path

import aiohttp
import pytest

from tests.fake_anthropic import FakeAnthropic, message, tool_use
from tests.processes import Reaper
from tests.serve_helpers import WELCOME, alive, command_line, serving, tab

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc"), reason="the tests read the processes in /proc")

SLEEPER = "echo $((6*7))-ready; exec sleep 600"  # prints 42-ready (its arguments as shown do not), then waits


def _ended(pids: list[int], reaper: Reaper) -> None:
    """Wait for each of ``pids`` to end (an event, not a sleep: a pidfd), and reap the ones now ours."""
    for pid in pids:
        reaper.reap(pid)


@pytest.mark.parametrize("public", [False, True], ids=["loopback", "public"])
async def test_without_the_token_nothing_starts(project: Path, public: bool) -> None:
    """A page or a tab asked for without the token, or with a wrong one, is refused with 403 and starts no
    workbench, on loopback and with --public on every interface alike (which warns who can run commands)."""
    with serving(project, *(["--public", "--host", "0.0.0.0"] if public else [])) as served:
        base = f"http://127.0.0.1:{served.base.rpartition(':')[2]}"
        async with aiohttp.ClientSession() as client:
            for url in (f"{base}/", f"{base}/?token=", f"{base}/?token={served.token[:-1]}x"):
                async with client.get(url) as response:
                    assert response.status == 403
                    assert "token" in await response.text()
            for token in ("x", served.token[:-1], served.token + "x"):
                with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
                    await client.ws_connect(served.websocket(token).replace(served.base[4:], base[4:]))
                assert refused.value.status == 403
        assert served.below() == []
    assert ("anyone who can reach port" in served.said()) is public


async def test_the_page_holds_the_workspace_and_the_token_nothing_else(tmp_path: Path) -> None:
    """With the token, the page is titled with the workspace, drawn as text however it is named, and its
    terminal connects with the token; the token is printed once, in the address line, and nowhere else."""
    workspace = tmp_path / "<b>x<b> & 'y'"
    workspace.mkdir()
    with serving(workspace) as served:
        async with aiohttp.ClientSession() as client, client.get(served.address) as response:
            assert response.status == 200
            page = await response.text()
            assert response.headers["Cache-Control"] == "no-store"
    assert f"<title>{tmp_path}/&lt;b&gt;x&lt;b&gt; &amp; &#x27;y&#x27;</title>" in page
    assert f'data-session-websocket-url="ws://{served.base[len("http://") :]}/ws/{served.token}"' in page
    assert served.said().count(served.token) == 1
    assert served.out[0].startswith(f"chimera serve: open {served.base}/?token={served.token} ")


async def test_sigterm_ends_every_workbench_and_all_they_started(
    project: Path, api: FakeAnthropic, model_env: dict[str, str], reaper: Reaper
) -> None:
    """SIGTERM to serve with two tabs connected, one of them running a command, ends both workbenches, their
    keepers and the command before serve exits (143), and says which session to resume; each workbench had
    serve's options."""
    api.script(message(tool_use("t1", "bash", {"command": SLEEPER}), stop_reason="tool_use"))
    with serving(project, "--permission-mode", "bypass") as served:
        async with tab(served) as first, tab(served) as second:
            assert "mode bypass" in first.text()
            await first.type("wait a while\r")
            await first.until("42-ready")
            below = served.below()
            assert any(command_line(pid).startswith("sleep 600") for pid in below)
            assert not any(served.token in command_line(pid) for pid in below)
            assert served.stop(signal.SIGTERM) == 128 + signal.SIGTERM
            assert [pid for pid in below if alive(pid)] == []
            await first.closed()
            await second.closed()
        _ended(below, reaper)
    assert "stopped" in served.err[-1]
    assert any(": Resume this session: chimera --resume " in line for line in served.err)  # the one with a task
    assert api.requests[0].headers.get("authorization") == "Bearer k"  # the key reached the tab, through a pipe
    assert served.said().count(served.token) == 1


async def test_ctrl_c_ends_the_workbench_of_a_connected_tab(
    project: Path, model_env: dict[str, str], reaper: Reaper
) -> None:
    """ctrl+c (SIGINT) to serve while a tab is connected ends its workbench before serve exits (130)."""
    with serving(project) as served:
        async with tab(served):
            below = served.below()
            assert below
            assert served.stop(signal.SIGINT) == 128 + signal.SIGINT
            assert [pid for pid in below if alive(pid)] == []
        _ended(below, reaper)


async def test_a_tab_closed_ends_its_workbench_and_serve_goes_on(
    project: Path, model_env: dict[str, str], reaper: Reaper
) -> None:
    """A browser tab that closes ends its workbench; serve goes on and opens the next tab's."""
    with serving(project) as served:
        async with tab(served):
            below = served.below()
        _ended(below, reaper)
        async with tab(served) as again:
            assert WELCOME in again.text()
            assert not set(served.below()) & set(below)


async def test_serve_killed_leaves_no_workbench(project: Path, model_env: dict[str, str], reaper: Reaper) -> None:
    """serve killed outright (SIGKILL, nothing of it runs to clean up) still leaves no workbench running: each
    one's keeper is told by the kernel and ends it."""
    with serving(project) as served:
        async with tab(served):
            below = served.below()
            served.process.kill()
            served.process.wait()
            for pid in below:
                try:
                    fd = os.pidfd_open(pid)
                except ProcessLookupError:
                    continue
                try:
                    ended, _, _ = select.select([fd], [], [], 30)  # an event wait, not a sleep
                finally:
                    os.close(fd)
                assert ended, f"{command_line(pid)} still runs after serve was killed"
        _ended(below, reaper)


async def test_a_paste_with_colour_codes_arrives_whole_in_a_tab(project: Path, model_env: dict[str, str]) -> None:
    """A bracketed paste holding colour codes and newlines (a test's output), as xterm.js sends it, arrives in
    the tab's input whole and folded, as in a terminal: nothing is cut at its ESC and no line is sent by itself."""
    pasted = "look at this:\n\x1b[31mFAILED\x1b[0m test_x\nline three\n"
    with serving(project) as served:
        async with tab(served) as drawn:
            await drawn.type(f"\x1b[200~{pasted}\x1b[201~")  # the first thing the tab gets, before any key
            await drawn.until("look at this: [+2 lines]")
            assert "FAILED" not in drawn.text()  # never typed out as keys
