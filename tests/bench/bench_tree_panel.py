"""Benchmark: the session tree panel over a 10,000-entry session with 50 branches.

Run by hand: `python tests/bench/bench_tree_panel.py`. The session is written through the store as Chimera
records it (turns of a prompt, a call, its result and an answer; 50 turns asked again beside the first).
The panel runs headless under Textual's Pilot at 120×40 in an app of its own. Prints, medians over ROUNDS:

- laying the tree out (``TreeLines``: which nodes show, their connectors; done off the event loop);
- the panel's own work for its first paint: the lines shown worked out and the lines on screen drawn
  (``TreePanel.show_model`` and ``TreeView.render_line``): target one frame, 16 ms;
- a move of the cursor, and a fold of a branch point: the panel's own work, each (target 16 ms);
- reading what every line says, for search (off the event loop, once the tree is drawn);
- a key typed in the search (the first, and the next, which looks only among what the first kept): 16 ms.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from textual.app import App, ComposeResult

from chimera.core.sessions.store import SessionStore
from chimera.core.sessions.tree_lines import TreeLines
from chimera.tui.widgets.tree_panel import TreePanel
from chimera.tui.widgets.tree_view import TreeView
from tests.bench.bench_picker import Timed
from tests.tree_helpers import wide_session

ENTRIES = 10_000
BRANCHES = 50
ROUNDS = 9
SIZE = (120, 40)


class PanelApp(App[None]):
    """The tree panel alone, its host's moves doing nothing."""

    def __init__(self, model: TreeLines) -> None:
        super().__init__()
        self.model = model

    def compose(self) -> ComposeResult:
        yield TreePanel(id="tree")

    def tree_selected(self, node: str) -> None:
        pass


async def _round(model: TreeLines, own: list[Timed]) -> dict[str, float]:
    app = PanelApp(model)
    async with app.run_test(size=SIZE) as pilot:
        panel = app.query_one(TreePanel)
        panel.add_class("-shown")
        panel.focus()
        await pilot.pause()

        async def spent(action: Any) -> float:
            await pilot.pause()
            for timed in own:
                timed.reset()
            action()
            await pilot.pause()
            return sum(t.spent for t in own)

        first = await spent(lambda: panel.show_model(model))
        move = await spent(lambda: panel.action_move(-1))
        view = panel.view
        point = next(i for i, index in enumerate(view.shown) if model.tree.is_branch_point(model.lines[index].node))
        view.go_to(point)
        fold = await spent(panel.action_fold)
        panel.action_fold()
        search_first = await spent(lambda: view.search("n"))
        search_next = await spent(lambda: view.search("nu"))
    return {"first": first, "move": move, "fold": fold, "search_first": search_first, "search_next": search_next}


def main() -> None:
    with tempfile.TemporaryDirectory() as home, tempfile.TemporaryDirectory() as work:
        os.environ["CHIMERA_HOME"] = home
        wide_session(Path(home), Path(work), entries=ENTRIES, branches=BRANCHES)
        with SessionStore.open(Path(home), "big", writable=False) as store:
            tree = store.tree
            layouts = []
            for _ in range(ROUNDS):
                start = time.perf_counter()
                model = TreeLines(tree)
                layouts.append(time.perf_counter() - start)
            own = [Timed(TreePanel, "show_model"), Timed(TreePanel, "action_move"), Timed(TreePanel, "action_fold")]
            own += [Timed(TreeView, "search"), Timed(TreeView, "render_line")]
            runs, reads = [], []
            for _ in range(ROUNDS):
                model = TreeLines(tree)
                start = time.perf_counter()
                model.read_words()  # as the app does, off the event loop, once the tree is drawn
                reads.append(time.perf_counter() - start)
                runs.append(asyncio.run(_round(model, own)))
            branches = sum(1 for children in tree.children.values() if len(children) > 1)

    def ms(values: list[float]) -> str:
        return f"{statistics.median(values) * 1000:.1f} ms"

    print(f"{len(tree):,} entries, {branches} branch points, {len(model):,} lines")
    print(f"laying the tree out (off the event loop): {ms(layouts)}")
    print(f"reading every line's words for search (off the event loop, after the first paint): {ms(reads)}")
    print(f"the panel's own work to its first paint: {ms([r['first'] for r in runs])} (target 16)")
    print(f"a move of the cursor: {ms([r['move'] for r in runs])} (target 16)")
    print(f"a fold of a branch point: {ms([r['fold'] for r in runs])} (target 16)")
    print(f"the first key typed in the search: {ms([r['search_first'] for r in runs])} (target 16)")
    print(f"the next key typed: {ms([r['search_next'] for r in runs])} (target 16)")


if __name__ == "__main__":
    main()
