"""The session tree in the workbench: the panel drawn from a recorded session with branches and names (and a
TreeOfThought turn's candidates), by /tree, its key and the palette; folding, filters and search; a crafted
session's damage told once."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Input

from chimera.core.sessions.start import RunOptions
from chimera.tui.app import build_app
from chimera.tui.widgets.tree_panel import TreePanel
from tests.fake_anthropic import DEFAULT_MODEL as MODEL
from tests.fake_anthropic import FakeAnthropic, message, text
from tests.session_helpers import node, sound_start
from tests.tree_helpers import branched_session
from tests.tui_helpers import in_palette, screen_text, send, toasts, until


def _lines_shown(app: object) -> list[str]:
    view = app.query_one(TreePanel).view  # type: ignore[attr-defined]
    return [view.model.lines[i].node for i in view.shown]


@pytest.mark.usefixtures("model_env")
async def test_the_panel_draws_branches_names_and_the_leaf(isolated_env: Path, project: Path) -> None:
    """/tree shows the turns as branches beside the conversation at 120 columns: the active branch first, the
    leaf's line under the cursor, the name in brackets, the tool call folded into its turn."""
    ids = branched_session(isolated_env, project)
    app = build_app(RunOptions(resume="s1", model=MODEL))
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, app.history_shown.is_set, "history shown")
        await send(pilot, "/tree")
        await until(pilot, app.session_tree.shown.is_set, "tree shown")
        await pilot.pause()
        text = screen_text(app)
        assert "▾ • chimera  Fixed it.  [stable]" in text  # the branch point folds
        assert "  ├─ • you      try another way" in text
        assert "  │  ◆ chimera  Done differently." in text
        assert "  └─ ○ you      now add tests" in text
        assert _lines_shown(app) == [ids[k] for k in ("u1", "a1", "u3", "a3", "u2", "a2")]
        panel = app.query_one(TreePanel)
        assert panel.view.selected is not None
        assert panel.view.selected.node == ids["a3"]
        conversation = app.query_one("#conversation")
        assert conversation.region.width > 0
        assert panel.region.x > conversation.region.x  # beside it, at the right


@pytest.mark.usefixtures("model_env")
async def test_ctrl_t_and_the_palette_toggle_the_panel_over_the_conversation_when_narrow(
    isolated_env: Path, project: Path
) -> None:
    """At 80 columns the panel takes the conversation's place; ctrl+t hides it, the palette shows it again."""
    branched_session(isolated_env, project)
    app = build_app(RunOptions(resume="s1", model=MODEL))
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, app.history_shown.is_set, "history shown")
        await pilot.press("ctrl+t")
        await until(pilot, app.session_tree.shown.is_set, "tree shown")
        panel = app.query_one(TreePanel)
        await until(pilot, lambda: panel.region.width == 80, "the panel across the screen")
        assert "try another way" in screen_text(app)
        await pilot.press("ctrl+t")
        await until(pilot, lambda: not panel.display or panel.region.width == 0, "the panel hidden")
        await in_palette(pilot, app, "session tree", "Session tree")
        await until(pilot, lambda: panel.region.width == 80, "the panel again")


@pytest.mark.usefixtures("model_env")
async def test_fold_filters_and_search(isolated_env: Path, project: Path) -> None:
    """space folds the branch point under the cursor; f shows your turns, then named points; / keeps the
    lines holding what is typed, escape brings them all back."""
    ids = branched_session(isolated_env, project)
    app = build_app(RunOptions(resume="s1", model=MODEL))
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, app.history_shown.is_set, "history shown")
        await send(pilot, "/tree")
        await until(pilot, app.session_tree.shown.is_set, "tree shown")
        await pilot.press("home", "down", "space")
        assert _lines_shown(app) == [ids["u1"], ids["a1"]]
        await pilot.press("space", "f")
        assert _lines_shown(app) == [ids["u1"], ids["u3"], ids["u2"]]
        await pilot.press("f")
        assert _lines_shown(app) == [ids["a1"]]
        await pilot.press("f", "slash", *"TESTS")
        await until(pilot, lambda: _lines_shown(app) == [ids["u2"], ids["a2"]], "the lines holding 'tests'")
        await pilot.press("escape")
        assert len(_lines_shown(app)) == 6


@pytest.mark.usefixtures("model_env")
async def test_a_crafted_session_opens_the_panel_with_one_notice(isolated_env: Path, project: Path) -> None:
    """Records in a loop, a repeated id and a missing parent: the workbench opens with one notice, and the
    tree panel draws what is sound, never hanging."""
    sound_start(isolated_env, "s1", project)
    with (isolated_env / "sessions" / "s1" / "entries.jsonl").open("ab") as fh:
        fh.write(node("x1", "x2", "user", "in a loop"))
        fh.write(node("x2", "x1", "user", "in a loop too"))
        fh.write(node("u1", "a1", "user", "the same id again"))
        fh.write(node("o1", "gone", "user", "an orphan"))
    app = build_app(RunOptions(resume="s1", model=MODEL))
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, app.history_shown.is_set, "the history")
        await send(pilot, "/tree")
        await until(pilot, app.session_tree.shown.is_set, "the tree")
        assert _lines_shown(app) == ["u1", "a1"]
        assert len(app._notifications) == 1
        assert "and 3 more problems" in toasts(app)


@pytest.mark.usefixtures("model_env")
async def test_switch_branch_and_label_complete_names_and_node_ids(isolated_env: Path, project: Path) -> None:
    """Typing /switch st offers /switch stable first; a node id's beginning completes to the id; /label's
    point completes by tab, leaving room for its text, and the label lands on that point."""
    ids = branched_session(isolated_env, project)
    app = build_app(RunOptions(resume="s1", model=MODEL))
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, app.history_shown.is_set, "the history")
        assert [c.text for c in app.commands.complete("/switch st")][:1] == ["/switch stable"]
        assert f"/branch {ids['u2']}" in [c.text for c in app.commands.complete(f"/branch {ids['u2'][:6]}")]
        await pilot.click("#prompt")
        await pilot.press(*f"/label {ids['u2'][:6]}", "tab")
        await until(pilot, lambda: app.query_one("#prompt", Input).value == f"/label {ids['u2']} ", "completed")
        await pilot.press(*"tests next", "enter")
        await until(pilot, lambda: app.session.store.tree.names.get("tests next") == ids["u2"], "labelled")


@pytest.mark.usefixtures("model_env")
async def test_the_candidates_of_a_tree_of_thought_turn_show_as_branches(api: FakeAnthropic, project: Path) -> None:
    """A TreeOfThought turn of three candidates, the second scored best: the tree shows the three as branches
    of the task, the one taken first and on the active path (the leaf), the two not taken beside it. (The three
    are asked for at once, so which words the second got is the server's order: the test reads it back.)"""
    answers = ["Use a dict.", "Use a set, it is faster.", "Use a list."]
    api.script(*(message(text(answer)) for answer in answers), message(text("1: 4\n2: 9\n3: 2")))
    app = build_app(RunOptions(workdir=project, model=MODEL, loop="tot", candidates=3, permission_mode="bypass"))
    async with app.run_test(size=(120, 40)) as pilot:
        await send(pilot, "how do I dedupe?")
        await until(pilot, lambda: not app.running and app.session.store.tree.leaf is not None, "the run done")
        tree = app.session.store.tree
        taken = next(a for a in answers if a in str(tree.nodes[tree.leaf or ""].message))
        await send(pilot, "/tree")
        await until(pilot, lambda: f"├─ ◆ chimera  {taken}" in screen_text(app), "the candidates in the tree")
        lines = [line for line in screen_text(app).splitlines() if "chimera  Use a" in line]
        assert "▾ • you      how do I dedupe?" in screen_text(app)
        said = [line.split("chimera  ")[1].split("  ")[0] for line in lines]
        assert said[0] == taken  # the branch taken first
        assert sorted(said) == sorted(answers)
        assert ["◆" in line for line in lines] == [True, False, False]  # the leaf, then the two not taken
        assert "└─ ○ chimera" in lines[-1]
