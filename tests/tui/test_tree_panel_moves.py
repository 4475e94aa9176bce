"""Moves from the tree panel: a switch previewed (turns and tokens left behind, files with +/- lines), taken
after a y, restoring the files (real git) and the conversation; u and /back return; b, c and l branch, name a
checkpoint and label; a name already taken asks before it moves; a switch asked while a run works offers to
interrupt it and never switches under it."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from textual.pilot import Pilot

from chimera.core.sessions.start import RunOptions
from chimera.tui.app import ChimeraApp, build_app
from chimera.tui.widgets.prompt_input import PromptInput
from chimera.tui.widgets.tree_panel import TreePanel
from tests.fake_anthropic import DEFAULT_MODEL as MODEL
from tests.fake_anthropic import FakeAnthropic, message, paused, text
from tests.switch_helpers import two_runs
from tests.tree_helpers import branched_session
from tests.tui_helpers import said, screen_text, send, toasts, until


async def _open(pilot: Pilot[int], app: ChimeraApp) -> TreePanel:
    await until(pilot, app.history_shown.is_set, "history shown")
    await pilot.press("ctrl+t")
    await until(pilot, app.session_tree.shown.is_set, "tree shown")
    app.session_tree.shown.clear()
    return app.query_one(TreePanel)


async def _select(pilot: Pilot[int], panel: TreePanel, node: str) -> None:
    """Put the cursor on ``node``'s line, from the top."""
    view = panel.view
    assert view.model is not None
    await pilot.press("home")
    for _ in range(len(view.shown)):
        if view.selected is None or view.selected.node == node:
            break
        await pilot.press("down")


@pytest.mark.usefixtures("model_env")
async def test_a_switch_from_the_panel_restores_files_and_back_returns(
    api: FakeAnthropic, model_env: dict[str, str], project: Path
) -> None:
    """On the first answer the preview says 1 turn is left behind and a.txt loses a line for another, b.txt
    goes; enter and y switch: the files are as they were and the conversation ends at that answer; u brings
    the files and the turn back."""
    session_id = two_runs(api, model_env, project)
    app = build_app(RunOptions(resume=session_id, model=MODEL))
    async with app.run_test(size=(120, 40)) as pilot:
        panel = await _open(pilot, app)
        tree = app.session.store.tree
        first_answer = next(n.id for n in tree.nodes.values() if "Wrote v1." in str(n.message))
        await _select(pilot, panel, first_answer)
        await until(pilot, lambda: "Leaves 1 turn and ~" in screen_text(app), "the turns left behind")
        shown = screen_text(app)
        assert "Files: 2 files change." in shown
        assert "rewrite a.txt  +1 -1" in shown
        assert "delete  b.txt  +0 -1" in shown
        await pilot.press("enter")
        await until(pilot, lambda: "Switch to" in screen_text(app), "the switch asked")
        assert (project / "a.txt").read_text() == "v2\n"  # nothing changes before the y
        app.history_shown.clear()
        await pilot.press("y")
        await until(pilot, app.history_shown.is_set, "history shown")
        await until(pilot, app.session_tree.shown.is_set, "tree shown")
        assert (project / "a.txt").read_text() == "v1\n"
        assert not (project / "b.txt").exists()
        assert said(app) == ["write v1"]
        assert "switched to" in screen_text(app)
        assert isinstance(app.focused, PromptInput)  # after the switch the next words are a task
        app.history_shown.clear()
        app.session_tree.shown.clear()
        await pilot.press("ctrl+t")  # back to the tree, still shown
        await until(pilot, lambda: app.focused is app.query_one(TreePanel), "the tree again")
        await pilot.press("u")
        await until(pilot, lambda: "Go back to" in screen_text(app), "going back asked, the files changing")
        assert "Back: lands at" in screen_text(app)  # its preview
        await pilot.press("y")
        await until(pilot, app.history_shown.is_set, "history shown")
        await until(pilot, lambda: (project / "b.txt").exists(), "the files back")
        assert (project / "a.txt").read_text() == "v2\n"
        assert said(app) == ["write v1", "make it v2"]
        assert not app.session_tree.moves


@pytest.mark.usefixtures("model_env")
async def test_branch_checkpoint_and_label_by_key(isolated_env: Path, project: Path) -> None:
    """b on "now add tests" makes it the way on (the conversation shows it, not the other branch); c names
    a checkpoint there; l labels another line; both names show in the tree."""
    ids = branched_session(isolated_env, project)
    app = build_app(RunOptions(resume="s1", model=MODEL))
    async with app.run_test(size=(120, 40)) as pilot:
        panel = await _open(pilot, app)
        await _select(pilot, panel, ids["a2"])
        app.session_tree.moved.clear()
        await pilot.press("b")
        await until(pilot, app.session_tree.moved.is_set, "moved")
        await until(pilot, app.session_tree.shown.is_set, "tree shown")
        app.session_tree.shown.clear()
        store = app.session.store
        assert store.tree.leaf == ids["a2"]
        assert said(app) == ["fix the bug", "now add tests"]
        assert isinstance(app.focused, PromptInput)  # the next words are the branch's first task
        await pilot.press("ctrl+t")
        await until(pilot, lambda: app.focused is panel, "the tree again")
        await pilot.press("c", *"mine", "enter")
        await until(pilot, lambda: store.tree.names.get("mine") == ids["a2"], "the checkpoint")
        await until(pilot, app.session_tree.shown.is_set, "tree shown")
        await _select(pilot, panel, ids["u1"])
        await pilot.press("l", *"the start", "enter")
        await until(pilot, lambda: store.tree.names.get("the start") == ids["u1"], "the label")
        await until(pilot, lambda: "[the start]" in screen_text(app) and "[mine]" in screen_text(app), "names shown")


@pytest.mark.usefixtures("model_env")
async def test_a_name_already_taken_asks_before_it_moves(isolated_env: Path, project: Path) -> None:
    """/checkpoint stable, when stable names another point: the panel asks; n keeps it, y moves it."""
    ids = branched_session(isolated_env, project)
    app = build_app(RunOptions(resume="s1", model=MODEL))
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, app.history_shown.is_set, "history shown")
        await send(pilot, "/checkpoint stable")
        await until(pilot, lambda: "'stable' already names" in screen_text(app), "the question")
        names = app.session.store.tree.names
        await pilot.press("n")
        assert names["stable"] == ids["a1"]
        await send(pilot, "/checkpoint stable")
        await until(pilot, lambda: "'stable' already names" in screen_text(app), "the question again")
        await pilot.press("y")
        await until(pilot, lambda: names.get("stable") == ids["a3"], "the name moved")


@pytest.mark.usefixtures("model_env")
async def test_commands_branch_label_and_back(isolated_env: Path, project: Path) -> None:
    """/branch NAME, /label NODE TEXT and /back, typed: the leaf moves there and back, the label shows."""
    ids = branched_session(isolated_env, project)
    app = build_app(RunOptions(resume="s1", model=MODEL))
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, app.history_shown.is_set, "history shown")
        tree = app.session.store.tree
        app.session_tree.moved.clear()
        await send(pilot, "/branch stable")
        await until(pilot, app.session_tree.moved.is_set, "moved")
        assert tree.leaf == ids["a1"]
        assert said(app) == ["fix the bug"]
        await send(pilot, f"/label {ids['u2']} tests first")
        await until(pilot, lambda: tree.names.get("tests first") == ids["u2"], "the label")
        app.session_tree.moved.clear()
        await send(pilot, "/back")
        await until(pilot, app.session_tree.moved.is_set, "moved")
        assert tree.leaf == ids["a3"]
        assert said(app) == ["fix the bug", "try another way"]
        await send(pilot, "/back")
        await until(pilot, lambda: "Nothing to go back to" in toasts(app), "nothing left to go back to")


@pytest.mark.usefixtures("model_env")
async def test_a_switch_asked_during_a_run_offers_to_interrupt_first(
    api: FakeAnthropic, isolated_env: Path, project: Path
) -> None:
    """While a reply streams, enter on a line asks to interrupt and switch: nothing moves under the run; y stops
    the run, then switches."""
    ids = branched_session(isolated_env, project)
    release, reached = threading.Event(), threading.Event()
    api.script(paused(message(text("Still working on it.")), release, reached))
    app = build_app(RunOptions(resume="s1", model=MODEL))
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            await until(pilot, app.history_shown.is_set, "history shown")
            await send(pilot, "go on")
            await until(pilot, reached.is_set, "the reply to stream")
            panel = await _open(pilot, app)
            await _select(pilot, panel, ids["a2"])
            await pilot.press("enter")
            await until(pilot, lambda: "A run is working: interrupt it" in screen_text(app), "the offer")
            assert app.running
            store = app.session.store
            leaf = store.tree.leaf
            assert leaf not in {ids["a2"], ids["u2"]}
            app.history_shown.clear()
            await pilot.press("y")
            await until(pilot, app.history_shown.is_set, "history shown")
            await until(pilot, lambda: store.tree.leaf == ids["a2"], "the switch once the run stopped")
            assert not app.running
            assert said(app) == ["fix the bug", "now add tests"]
    finally:
        release.set()


@pytest.mark.usefixtures("model_env")
async def test_the_switch_question_names_where_it_lands_and_a_switch_to_here_asks_nothing(
    isolated_env: Path, project: Path
) -> None:
    """enter on a message of yours lands just before it: the question names that point, as the preview does;
    enter on the point you are at asks nothing and says so."""
    ids = branched_session(isolated_env, project)
    app = build_app(RunOptions(resume="s1", model=MODEL))
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        panel = await _open(pilot, app)
        await _select(pilot, panel, ids["u2"])
        await pilot.press("enter")
        await until(pilot, lambda: f"Switch to {ids['a1']}?" in screen_text(app), "the question")
        assert f"Switch: lands at {ids['a1']}, just before this message" in screen_text(app)
        await pilot.press("n")
        await _select(pilot, panel, ids["a3"])  # where the session is
        await pilot.press("enter")
        await until(pilot, lambda: "You are here already" in toasts(app), "nothing to switch")
        assert panel.asking is None
