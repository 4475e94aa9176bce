"""The timeline shows the strategy's own work: reflections, TreeOfThought's candidates and the one taken,
reminders and checkpoints, each an entry that folds (real runs against the loopback Messages API)."""

from __future__ import annotations

from pathlib import Path

import pytest

from chimera.core.events import (
    CandidateChosen,
    CandidateProposed,
    CheckpointCreated,
    ReminderInjected,
    RunStarted,
    ToolCallStarted,
    ToolOutputDelta,
)
from chimera.core.sessions.start import RunOptions
from chimera.tui.app import build_app
from chimera.tui.state import Transcript
from chimera.tui.transcript_render import render_entry
from tests.fake_anthropic import DEFAULT_MODEL as MODEL
from tests.fake_anthropic import FakeAnthropic, message, text, tool_use
from tests.tui_helpers import Harness, entries, screen_text, send, until


def reads(*names: str) -> object:
    return message(*(tool_use(f"r{n}", "read", {"path": n}) for n in names), stop_reason="tool_use")


@pytest.mark.usefixtures("model_env")
async def test_a_reflexion_run_shows_its_reflection_folded(api: FakeAnthropic, project: Path) -> None:
    """Reflexion's reflection is an entry of its own, folded to one line, and opens to the words asked."""
    (project / "a.txt").write_text("a holds a\n")
    api.script(reads("a.txt"), message(text("Reflected: fine.")), message(text("Done.")))
    options = RunOptions(workdir=project, model=MODEL, loop="reflexion", reflect_every=1, permission_mode="bypass")
    app = build_app(options)
    async with app.run_test(size=(120, 40)) as pilot:
        await send(pilot, "read a")
        await app.run_shown.wait()
        await pilot.pause()
        (reflection,) = entries(app, "reflection")
        assert reflection.folded
        assert "↺ reflection" in screen_text(app)
        assert "Reflect" not in str(render_entry(reflection))  # folded: the head line only
        app.transcript.toggle(app.transcript.entries.index(reflection))
        assert not reflection.folded


@pytest.mark.usefixtures("model_env")
async def test_a_tree_of_thought_run_shows_each_candidate_and_the_one_taken(api: FakeAnthropic, project: Path) -> None:
    """Each candidate is an entry with its score; the one taken is marked with why, the others say not taken."""
    api.script(
        message(text("I could guess.")),
        message(text("It is blue, clearly.")),
        message(text("Not sure.")),
        message(text("1: 4\n2: 9\n3: 2")),
    )
    app = build_app(RunOptions(workdir=project, model=MODEL, loop="tot", candidates=3))
    async with app.run_test(size=(120, 40)) as pilot:
        await send(pilot, "what colour")
        await app.run_shown.wait()
        await pilot.pause()
        candidates = entries(app, "candidate")
        assert [c.folded for c in candidates] == [True, True, True]
        assert [c.data["score"] for c in candidates] == [4, 9, 2]
        assert [c.data["chosen"] for c in candidates] == [False, True, False]
        shown = screen_text(app)
        assert "candidate 2 of 3 · score 9 · ✓ taken: the evaluation scored it highest (9 of 10)" in shown
        assert "candidate 1 of 3 · score 4 · not taken · " in shown  # the samples come back in any order
        assert sorted(c.text for c in candidates) == ["I could guess.", "It is blue, clearly.", "Not sure."]
        app.transcript.fold_all(False)
        await until(pilot, lambda: candidates[1].text in screen_text(app).split("✓ taken")[1], "the candidates open")


def test_a_reminder_and_a_checkpoint_after_a_change_are_entries_that_fold() -> None:
    """A reminder is a folded entry; a pin that changed files is a checkpoint, the task's own pin is not."""
    transcript = Transcript()
    transcript.apply(RunStarted(task="edit it", model=MODEL, loop="react"))
    transcript.apply(CheckpointCreated(snapshot="a" * 40))  # the task's pin: where the run starts
    transcript.apply(ReminderInjected(text="Keep the tests green.\nRun them."))
    transcript.apply(CheckpointCreated(snapshot="a" * 40))  # nothing changed
    transcript.apply(CheckpointCreated(snapshot="b" * 40))
    transcript.apply(CheckpointCreated(label="before-refactor", snapshot="b" * 40))
    kinds = [(e.kind, e.folded) for e in transcript.entries]
    assert kinds == [("user", False), ("reminder", True), ("checkpoint", True), ("checkpoint", True)]
    reminder, pinned, named = transcript.entries[1:]
    assert str(render_entry(reminder)) == "▸ ⚑ reminder · Keep the tests green."
    assert str(render_entry(pinned)) == "▸ ◆ checkpoint · files pinned at bbbbbbbbbbbb"
    assert "before-refactor" in str(render_entry(named))
    transcript.toggle(1)
    assert "Run them." in str(render_entry(reminder).renderables[1])  # type: ignore[attr-defined]


async def test_a_folded_line_cut_at_the_width_ends_with_an_ellipsis() -> None:
    """At 80 columns a folded reminder, a checkpoint with a long name and a candidate each take one line, cut
    with an ellipsis (a reminder wrapped onto a second line that stopped mid-word); a running call's latest
    output, cut to fit its line, ends with one too."""
    words = {"role": "assistant", "content": [{"type": "text", "text": "Read every module first, then " * 4}]}
    transcript = Transcript()
    transcript.apply_all(
        [
            RunStarted(task="tidy up", model=MODEL, loop="tot"),
            ReminderInjected(
                text="The tests in tests/test_stats.py failed twice in a row: read the failing assertion "
                "before you edit stats.py again, and run them after every change."
            ),
            CheckpointCreated(snapshot="a" * 40),  # the task's pin
            CheckpointCreated(
                label="before-the-refactor-of-the-statistics-module-and-all-its-helpers", snapshot="b" * 40
            ),
            CandidateProposed(index=0, message=words, stop_reason="end_turn"),
            CandidateChosen(
                index=0, scores=[9], reason="it reads the code first, and the evaluation scored it 9 of 10"
            ),
            ToolCallStarted(call_id="c", name="bash", args={"command": "make"}),
            ToolOutputDelta(call_id="c", text="compiling " + "src/module.c " * 20 + "\n"),
        ]
    )
    app = Harness(transcript)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        lines = [line.rstrip() for line in screen_text(app).splitlines()]
        for head in ("⚑ reminder · The tests", "◆ checkpoint before-the-refactor", "candidate 1 of 1 · score 9"):
            (line,) = [line for line in lines if head in line]
            assert line.endswith("…"), line
            following = lines[lines.index(line) + 1]
            assert not following.strip(), f"{head!r} went on: {following!r}"  # one line, then the next entry
        assert "run them after" not in screen_text(app)
        call = entries(app, "tool")[0]
        assert str(render_entry(call)).endswith("src/module.c src/module.c src/…")  # 80 characters of it
