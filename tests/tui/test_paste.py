"""A multi-line paste into the input is kept whole: shown folded to its first line and a count, sent whole."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from textual import events
from textual.pilot import Pilot

from chimera.core.sessions.start import RunOptions
from chimera.tui.app import build_app
from chimera.tui.widgets.prompt_input import PromptInput
from chimera.tui.widgets.welcome import Welcome
from tests.fake_anthropic import DEFAULT_MODEL as MODEL
from tests.fake_anthropic import FakeAnthropic, message, text
from tests.tui_helpers import said, screen_text, until

Snap = Callable[..., bool]
PASTED = "Fix the failing test in stats.py:\n" + "".join(f"line {n} of the traceback\n" for n in range(1, 13))


@pytest.mark.usefixtures("model_env")
async def test_a_multi_line_paste_is_shown_folded_and_sent_whole(api: FakeAnthropic, project: Path) -> None:
    """Thirteen lines pasted: the input shows the first and '+12 lines'; enter sends all thirteen to the model."""
    api.script(message(text("On it.")))
    app = build_app(RunOptions(workdir=project, model=MODEL))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        prompt = app.query_one(PromptInput)
        prompt.post_message(events.Paste(PASTED))
        await until(pilot, lambda: "[+12 lines]" in prompt.value, "the paste folded in the input")
        assert prompt.value == "Fix the failing test in stats.py: [+12 lines]"
        assert "line 12 of the traceback" not in screen_text(app)
        await pilot.press("enter")
        await app.run_shown.wait()
        sent = api.requests[0].messages[0]["content"]
        sent_text = sent if isinstance(sent, str) else "".join(b.get("text", "") for b in sent)
        assert sent_text == PASTED.rstrip("\n")
        assert said(app) == [PASTED.rstrip("\n")]
        assert prompt.value == ""


@pytest.mark.usefixtures("model_env")
async def test_a_one_line_paste_is_typed_in(api: FakeAnthropic, project: Path) -> None:
    """One line pasted goes into the input as typed, with words around it kept."""
    app = build_app(RunOptions(workdir=project, model=MODEL))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        prompt = app.query_one(PromptInput)
        prompt.value = "see "
        prompt.cursor_position = 4
        prompt.post_message(events.Paste("stats.py\n"))
        await until(pilot, lambda: prompt.value == "see stats.py", "the line typed in")


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.usefixtures("model_env")
def test_a_folded_paste(snap_compare: Snap, project: Path, size: tuple[int, int]) -> None:
    """The input holding a folded paste of thirteen lines."""
    app = build_app(RunOptions(workdir=project, model=MODEL))

    async def pasted(pilot: Pilot[int]) -> None:
        await pilot.pause()
        app.query_one(Welcome).workspace = "~/project"  # the same in every picture
        app.show_status(workspace="~/project")
        prompt = app.query_one(PromptInput)
        prompt.post_message(events.Paste(PASTED))
        await until(pilot, lambda: "[+12 lines]" in screen_text(app), "the folded paste")
        await pilot.pause()

    assert snap_compare(app, terminal_size=size, run_before=pasted)
