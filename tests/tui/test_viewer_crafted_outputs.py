"""The output viewer (`o` on a cut call) never dies of what a record names: a saved file that shrinks while it is
shown, a link loop, a name no file can have."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

from textual.pilot import Pilot

from chimera.core.sessions.start import RunOptions
from chimera.tui.app import ChimeraApp, build_app
from chimera.tui.widgets.transcript_view import TranscriptView
from tests.cli_runner import run_chimera
from tests.fake_anthropic import DEFAULT_MODEL, FakeAnthropic, message, text, tool_use

SHRINKING = textwrap.dedent(
    """
    import asyncio, os, sys
    from pathlib import Path
    from textual.app import App, ComposeResult
    from chimera.tui.widgets.saved_output_view import SavedOutputView

    path = Path(sys.argv[1])

    class Viewer(App[None]):
        def compose(self) -> ComposeResult:
            yield SavedOutputView(path)

    async def main() -> None:
        app = Viewer()
        async with app.run_test(size=(60, 10)) as pilot:
            view = app.query_one(SavedOutputView)
            while not view.indexed:
                await pilot.pause(0.01)
            with path.open("r+b") as fh:  # the file is saved again, shorter, while it is shown
                fh.truncate(0)
            view.scroll_end(animate=False, immediate=True)
            await pilot.pause()
            print("shown:", repr(view.line(view.line_count - 1)))
            print("drawn:", app.screen._compositor.render_strips()[-1].text.strip() == "")

    asyncio.run(main())
    """
)


def test_a_saved_output_that_shrinks_while_shown_does_not_kill_the_viewer(tmp_path: Path) -> None:
    """A real process shows a 200,000-line output, the file is cut to nothing, the end is shown: no SIGBUS,
    the lines that are gone show empty."""
    saved = tmp_path / "toolu_1.txt"
    saved.write_text("".join(f"line {n}\n" for n in range(200_000)))
    proc = subprocess.run([sys.executable, "-c", SHRINKING, str(saved)], capture_output=True, text=True, timeout=120)
    assert proc.returncode != -signal.SIGBUS, "the viewer died of SIGBUS"
    assert proc.returncode == 0, proc.stderr
    assert "shown: ''" in proc.stdout


def _cut_call_session(api: FakeAnthropic, env: dict[str, str], project: Path) -> tuple[str, Path]:
    """A session with one bash call whose output was cut and saved; its id and the saved file."""
    api.script(
        message(tool_use("toolu_1", "bash", {"command": "seq 1 500"}), stop_reason="tool_use"),
        message(text("Counted.")),
    )
    proc = run_chimera(
        "run", "count", "--json", "--workdir", str(project), "--permission-mode", "bypass",
        env={**env, "CHIMERA_MAX_TOOL_OUTPUT": "200"},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    events = [json.loads(line) for line in proc.stdout.splitlines()]
    done = next(e for e in events if e["type"] == "tool_call_finished")
    return events[0]["session_id"], Path(done["data"]["full_output"])


async def _open_output(pilot: Pilot[int], app: ChimeraApp) -> str:
    """`o` on the resumed session's call; the notices the workbench shows for it."""
    await app.history_shown.wait()  # the call is on screen once the session's history is
    view = app.query_one(TranscriptView)
    view.focus()
    view.cursor = next(i for i, e in enumerate(app.transcript.entries) if e.kind == "tool")
    await pilot.press("o")
    await pilot.pause()
    return "\n".join(n.message for n in app._notifications)


async def test_o_on_a_saved_output_that_is_a_link_loop_says_so(
    api: FakeAnthropic, model_env: dict[str, str], project: Path
) -> None:
    """The saved file was replaced by a link that leads to itself: `o` says it is not opened; the workbench lives."""
    session_id, saved = _cut_call_session(api, model_env, project)
    saved.unlink()
    saved.symlink_to(saved.name + ".2")
    saved.with_name(saved.name + ".2").symlink_to(saved.name)
    app = build_app(RunOptions(resume=session_id, model=DEFAULT_MODEL))
    async with app.run_test(size=(100, 30)) as pilot:
        said = await _open_output(pilot, app)
        assert f"Not opened: {saved}" in said
        assert app.is_running
    assert app.return_code in (None, 0)


async def test_o_on_a_crafted_name_no_file_can_have_says_so(
    api: FakeAnthropic, model_env: dict[str, str], project: Path, isolated_env: Path
) -> None:
    """A crafted log names a saved file with a NUL in its name: `o` says it is not opened; the workbench lives."""
    session_id, saved = _cut_call_session(api, model_env, project)
    events = next((isolated_env / "sessions").glob(f"{session_id}*/events.jsonl"))
    crafted = events.read_text().replace(json.dumps(str(saved)), json.dumps(str(saved) + "\x00x"))
    assert crafted != events.read_text()
    events.write_text(crafted)
    app = build_app(RunOptions(resume=session_id, model=DEFAULT_MODEL))
    async with app.run_test(size=(100, 30)) as pilot:
        said = await _open_output(pilot, app)
        assert "Not opened:" in said
        assert app.is_running
    assert app.return_code in (None, 0)
