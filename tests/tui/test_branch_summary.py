"""Leaving a branch from the tree panel can summarize it: ``s`` at a switch's question switches and asks the
model for a summary of the branch left behind, which shows in the conversation and as a node of the tree;
with ``[tree] summarize_left = true`` a ``y`` does so and ``s`` switches without one."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Static

from chimera.core.sessions.start import RunOptions
from chimera.tui.app import ChimeraApp, build_app
from chimera.tui.widgets.tree_panel import TreePanel
from tests.fake_anthropic import DEFAULT_MODEL as MODEL
from tests.fake_anthropic import FakeAnthropic, message, paused, text
from tests.tree_helpers import branched_session
from tests.tui_helpers import screen_text, toasts, until


def _asked(app: ChimeraApp) -> str:
    """The question the tree panel asks, as it shows it."""
    return str(app.query_one("#tree-ask", Static).render())


SUMMARY = "Tried another way: rewrote the fix, the person went back to adding tests."


async def _ask_switch(pilot: Pilot[int], app: ChimeraApp, node: str) -> None:
    """Open the tree, put the cursor on ``node`` and press enter: the switch's question shows."""
    await until(pilot, app.history_shown.is_set, "history shown")
    await pilot.press("ctrl+t")
    await until(pilot, app.session_tree.shown.is_set, "tree shown")
    await _select(pilot, app, node)
    await pilot.press("enter")
    await until(pilot, lambda: "Switch to" in screen_text(app), "the switch asked")


async def _select(pilot: Pilot[int], app: ChimeraApp, node: str) -> None:
    """Put the tree panel's cursor on ``node``'s line, from the top."""
    panel = app.query_one(TreePanel)
    await until(pilot, lambda: app.focused is panel, "the focus on the tree")
    await pilot.press("home")
    for _ in range(len(panel.view.shown)):
        if panel.view.selected is None or panel.view.selected.node == node:
            break
        await pilot.press("down")


@pytest.mark.usefixtures("model_env")
async def test_s_switches_and_carries_a_summary_of_the_branch_left(
    api: FakeAnthropic, isolated_env: Path, project: Path
) -> None:
    """s on the question to switch to "Added tests.": the leaf moves there, the model is asked about the
    branch left ("try another way"), and its summary shows in the conversation and in the tree under the
    answer switched to."""
    ids = branched_session(isolated_env, project)
    api.script(message(text(SUMMARY)))
    app = build_app(RunOptions(resume="s1", model=MODEL))
    async with app.run_test(size=(120, 40)) as pilot:
        await _ask_switch(pilot, app, ids["a2"])
        assert _asked(app) == f"Switch to {ids['a2']}? y/n · s switch and summarize the branch left"
        assert not api.requests  # nothing is asked before the answer
        await pilot.press("s")
        tree = app.session.store.tree
        await until(pilot, lambda: tree.leaf not in (ids["a3"], ids["a2"]), "the summary recorded")
        assert tree.nodes[tree.leaf or ""].parent_id == ids["a2"]
        assert "try another way" in str(api.requests[-1].messages)
        await until(pilot, lambda: "[branch left] Tried another way" in screen_text(app), "the note in the tree")
        assert "⑂ the branch left behind, summarized" in screen_text(app)


@pytest.mark.usefixtures("model_env")
async def test_with_the_setting_y_summarizes_and_s_does_not(
    api: FakeAnthropic, isolated_env: Path, project: Path
) -> None:
    """With ``summarize_left = true``: s switches and asks the model nothing; back again, y switches and
    carries the summary."""
    (isolated_env / "config.toml").write_text("[tree]\nsummarize_left = true\n")
    ids = branched_session(isolated_env, project)
    api.script(message(text(SUMMARY)))
    app = build_app(RunOptions(resume="s1", model=MODEL))
    async with app.run_test(size=(120, 40)) as pilot:
        await _ask_switch(pilot, app, ids["a2"])
        assert _asked(app) == f"Switch to {ids['a2']}, summarizing the branch left? y/n · s switch without a summary"
        tree = app.session.store.tree
        app.session_tree.shown.clear()
        await pilot.press("s")
        await until(pilot, lambda: tree.leaf == ids["a2"], "switched")
        await until(pilot, app.session_tree.shown.is_set, "tree shown")
        assert not api.requests
        app.session_tree.shown.clear()
        await pilot.press("ctrl+t", "u")  # back to the tree (the switch left the focus in the input), then back
        await until(pilot, lambda: "Go back to" in screen_text(app), "going back asked")
        await pilot.press("y")
        await until(pilot, lambda: tree.leaf == ids["a3"], "back")
        await until(pilot, app.session_tree.shown.is_set, "tree shown")
        await pilot.press("ctrl+t")  # going back left the focus in the input: to the tree again
        await _select(pilot, app, ids["a2"])
        await pilot.press("enter")
        await until(pilot, lambda: "Switch to" in screen_text(app), "the switch asked again")
        await pilot.press("y")
        await until(pilot, lambda: "[branch left] Tried another way" in screen_text(app), "the note in the tree")
        assert len(api.requests) == 1
        assert tree.nodes[tree.leaf or ""].parent_id == ids["a2"]


@pytest.mark.usefixtures("model_env")
async def test_stopping_the_summary_keeps_the_switch_and_adds_nothing(
    api: FakeAnthropic, isolated_env: Path, project: Path
) -> None:
    """Interrupted while the model writes the summary (escape leaves the panel, escape again stops it): the
    switch stands, no note is added, and the status line is not left spinning."""
    ids = branched_session(isolated_env, project)
    release, reached = threading.Event(), threading.Event()
    api.script(paused(message(text(SUMMARY)), release, reached))
    app = build_app(RunOptions(resume="s1", model=MODEL))
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            await _ask_switch(pilot, app, ids["a2"])
            await pilot.press("s")
            await until(pilot, reached.is_set, "the summary streaming")
            assert "summarizing" in screen_text(app)
            await pilot.press("escape", "escape")
            await until(pilot, lambda: "Summary stopped: the move stands" in toasts(app), "stopped")
            await until(pilot, lambda: not app.running, "idle")
            tree = app.session.store.tree
            assert tree.leaf == ids["a2"]
            assert len(tree) == 8
            assert "summarizing" not in screen_text(app)
    finally:
        release.set()


@pytest.mark.usefixtures("model_env")
async def test_with_the_setting_b_summarizes_the_branch_it_leaves(
    api: FakeAnthropic, isolated_env: Path, project: Path
) -> None:
    """With ``summarize_left = true``, b on "Added tests." branches from there and carries the summary of the
    branch left ("try another way") as a note under it."""
    (isolated_env / "config.toml").write_text("[tree]\nsummarize_left = true\n")
    ids = branched_session(isolated_env, project)
    api.script(message(text(SUMMARY)))
    app = build_app(RunOptions(resume="s1", model=MODEL))
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, app.history_shown.is_set, "history shown")
        await pilot.press("ctrl+t")
        await until(pilot, app.session_tree.shown.is_set, "tree shown")
        await _select(pilot, app, ids["a2"])
        await pilot.press("b")
        tree = app.session.store.tree
        await until(pilot, lambda: tree.leaf not in (ids["a3"], ids["a2"]), "the summary recorded")
        assert tree.nodes[tree.leaf or ""].parent_id == ids["a2"]
        assert "try another way" in str(api.requests[-1].messages)
