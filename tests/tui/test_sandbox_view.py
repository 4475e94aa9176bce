"""The sandbox in the workbench: where the machine cannot hold it, one notice at start says so; where it holds,
the status line says commands are sandboxed, a command's refusal reads in the timeline as the model reads it,
and the person is asked whether to run it again outside the sandbox: ``y`` runs it once, unconfined; ``n``
keeps the refusal; ``always`` is never offered."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from chimera.core.sandbox.probe import FORCE_OFF, support
from chimera.core.sessions.start import RunOptions
from chimera.tui.app import build_app
from tests.fake_anthropic import DEFAULT_MODEL as MODEL
from tests.fake_anthropic import FakeAnthropic, message, text, tool_use
from tests.sandbox_helpers import needs_landlock
from tests.tui_helpers import asked, screen_text, send, toasts, until


@pytest.fixture
def probed_afresh() -> Iterator[None]:
    """The machine's sandbox is looked up again in this test, and again after it."""
    support.cache_clear()
    yield
    support.cache_clear()


@pytest.mark.usefixtures("model_env", "probed_afresh")
async def test_the_workbench_says_once_when_commands_are_not_sandboxed(
    api: FakeAnthropic, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With Landlock unavailable (forced off), the workbench opens with one notice: commands run under the
    rules alone."""
    monkeypatch.setenv(FORCE_OFF, "1")
    app = build_app(RunOptions(workdir=project, model=MODEL))
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: "commands are not sandboxed" in toasts(app), "the notice")
        assert toasts(app).count("commands are not sandboxed") == 1
        assert f"Landlock is switched off by {FORCE_OFF}" in toasts(app)


@needs_landlock
@pytest.mark.usefixtures("model_env")
async def test_a_refusal_reads_in_the_timeline(
    api: FakeAnthropic, project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In bypass mode a command writing outside the workspace is refused: its line says so, and its unfolded
    result what the sandbox refused; no notice about the sandbox is shown."""
    monkeypatch.delenv("CHIMERA_SANDBOX_WRITABLE", raising=False)
    target = tmp_path / "outside.txt"
    api.script(
        message(tool_use("t1", "bash", {"command": f"echo x > {target}"}), stop_reason="tool_use"),
        message(text("Refused, as it should be.")),
    )
    app = build_app(RunOptions(workdir=project, model=MODEL, permission_mode="bypass"))
    async with app.run_test(size=(160, 40)) as pilot:
        await until(pilot, lambda: app.state.status.sandbox == "sandboxed", "the status line's word")
        await send(pilot, "escape")
        await asked(pilot, app)
        await pilot.press("n")
        await until(pilot, lambda: "Refused, as it should be." in screen_text(app), "the answer")
        await until(pilot, lambda: "[the sandbox refused writing" in screen_text(app), "the refusal")
        assert "refused by the sandbox" in next(line for line in screen_text(app).splitlines() if "✗ bash" in line)
        assert "not sandboxed" not in toasts(app)
    assert not target.exists()


@needs_landlock
@pytest.mark.usefixtures("model_env")
async def test_a_refused_command_runs_outside_the_sandbox_once_when_the_person_says_y(
    api: FakeAnthropic, project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The question names what the sandbox refused and offers no "always" (``a`` does nothing); ``y`` runs the
    command again, unconfined: the file is written, the model reads that it ran outside the sandbox. The next
    refusal is asked about again."""
    monkeypatch.delenv("CHIMERA_SANDBOX_WRITABLE", raising=False)
    target = tmp_path / "outside.txt"
    again = tmp_path / "again.txt"
    api.script(
        message(tool_use("t1", "bash", {"command": f"echo x > {target}"}), stop_reason="tool_use"),
        message(tool_use("t2", "bash", {"command": f"echo y > {again}"}), stop_reason="tool_use"),
        message(text("Both done.")),
    )
    app = build_app(RunOptions(workdir=project, model=MODEL, permission_mode="bypass"))
    async with app.run_test(size=(160, 40)) as pilot:
        await send(pilot, "write outside")
        screen = await asked(pilot, app)
        assert "Run bash again outside the sandbox?" in screen
        assert "The sandbox refused writing" in screen
        assert "a always" not in screen
        await pilot.press("a")  # never offered: nothing happens
        await pilot.pause()
        assert app.state.questions.first is not None
        await pilot.press("y")
        await until(pilot, target.exists, "the command run outside the sandbox")
        await asked(pilot, app)  # the next refusal: asked again, nothing kept
        await pilot.press("n")
        await until(pilot, lambda: "Both done." in screen_text(app), "the answer")
        lines = [line for line in screen_text(app).splitlines() if " bash " in line]
        assert "ran outside the sandbox" in lines[0]  # each call's line says where it ran
        assert "refused by the sandbox" in lines[1]
    assert target.read_text() == "x\n"
    assert not again.exists()
    first_result = str(api.requests[1].messages[-1])
    assert "run again outside the sandbox, as the person allowed once" in first_result


@pytest.mark.usefixtures("model_env", "probed_afresh")
async def test_mode_says_whether_commands_are_sandboxed(
    api: FakeAnthropic, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``/mode`` says what the sandbox holds (or that there is none, and why), beside the permission mode; the
    status line says it in a word."""
    app = build_app(RunOptions(workdir=project, model=MODEL, sandbox="off"))
    async with app.run_test(size=(120, 40)) as pilot:
        await send(pilot, "/mode")
        await until(pilot, lambda: "Commands are not sandboxed (--sandbox off)" in screen_text(app), "/mode's words")
        assert app.state.status.sandbox == "not sandboxed"
        assert "Permission mode ask." in screen_text(app)
    if not support().available:
        return
    app = build_app(RunOptions(workdir=project, model=MODEL))
    async with app.run_test(size=(120, 40)) as pilot:
        await send(pilot, "/mode")
        await until(pilot, lambda: "Commands run sandboxed (" in screen_text(app), "/mode's words")
        assert "they have no network" in screen_text(app).replace("\n", " ")
        assert app.state.status.sandbox == "sandboxed"
