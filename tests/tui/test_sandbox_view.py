"""The sandbox in the workbench: where the machine cannot hold it, one notice at start says so; where it holds,
a command's refusal reads in the timeline as the model reads it."""

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
from tests.tui_helpers import screen_text, send, toasts, until


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
    """In bypass mode a command writing outside the workspace is refused, and its unfolded result says the
    sandbox refused it; no notice about the sandbox is shown."""
    monkeypatch.delenv("CHIMERA_SANDBOX_WRITABLE", raising=False)
    target = tmp_path / "outside.txt"
    api.script(
        message(tool_use("t1", "bash", {"command": f"echo x > {target}"}), stop_reason="tool_use"),
        message(text("Refused, as it should be.")),
    )
    app = build_app(RunOptions(workdir=project, model=MODEL, permission_mode="bypass"))
    async with app.run_test(size=(160, 40)) as pilot:
        await send(pilot, "escape")
        await until(pilot, lambda: "Refused, as it should be." in screen_text(app), "the answer")
        await until(pilot, lambda: "[the sandbox refused writing" in screen_text(app), "the refusal")
        assert "not sandboxed" not in toasts(app)
    assert not target.exists()
