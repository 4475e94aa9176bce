"""The tree's lines, built in the core: which nodes show, folding, filters and search, a damaged tree
(a loop, a repeated id, a missing parent) laid out with one notice, never a hang, and branches nested deep
drawn in lines of bounded width at a cost that grows with the lines, not their depth."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

from chimera.core.sessions.store import SessionStore
from chimera.core.sessions.tree import Node, SessionTree
from chimera.core.sessions.tree_lines import LEVEL_STEP, SHOWN_LEVELS, TreeLines
from tests.tree_helpers import branched_session, nested_session, said


def _lines(tmp_path: Path) -> tuple[TreeLines, dict[str, str]]:
    ids = branched_session(tmp_path / "home", tmp_path)
    store = SessionStore.open(tmp_path / "home", "s1", writable=False)
    return TreeLines(store.tree), ids


def test_folding_a_branch_point_hides_its_branches(tmp_path: Path) -> None:
    """Folding the answer the branches grow from leaves it and the lines above; unfolding brings them back."""
    lines, ids = _lines(tmp_path)
    point = lines.index_of(ids["a1"])
    assert point is not None
    assert len(lines.visible()) == 6
    assert [lines.lines[i].node for i in lines.visible({point})] == [ids["u1"], ids["a1"]]


def test_filters_and_search(tmp_path: Path) -> None:
    """The person's turns, the named nodes, and the lines holding some words (any case)."""
    lines, ids = _lines(tmp_path)
    nodes = lambda shown: [lines.lines[i].node for i in shown]  # noqa: E731
    assert nodes(lines.visible(view="turns")) == [ids["u1"], ids["u3"], ids["u2"]]
    assert nodes(lines.visible(view="named")) == [ids["a1"]]
    assert nodes(lines.visible(query="ANOTHER")) == [ids["u3"]]
    assert nodes(lines.visible(query="stable")) == [ids["a1"]]


def test_a_damaged_tree_is_laid_out_with_one_notice(tmp_path: Path) -> None:
    """A loop, a repeated child and a missing parent: the reachable lines show, one notice counts the rest."""
    tree = SessionTree()
    tree.add(Node("u1", None, "user", 1.0, said("start")))
    tree.add(Node("x1", "x2", "user", 1.0, said("in a loop")))
    tree.add(Node("x2", "x1", "user", 1.0, said("in a loop too")))
    tree.add(Node("o1", "gone", "user", 1.0, said("orphan")))
    tree.children["u1"] = ["u1", "u1"]  # a node its own child, twice
    lines = TreeLines(tree, clock=lambda: 2.0)
    assert [line.node for line in lines.lines] == ["u1"]
    assert lines.notice is not None
    assert lines.notice.startswith("3 of the session's 4 messages")


def _connectors(depth: int, last: bool) -> str:
    """What a line ``depth`` levels in draws before its mark, in the nested session (every outer level a bar)."""
    left_out = 0 if depth <= SHOWN_LEVELS else ((depth - SHOWN_LEVELS - 1) // LEVEL_STEP + 1) * LEVEL_STEP
    count = f"«{left_out}» " if left_out else ""
    return count + "│  " * (depth - left_out - 1) + ("└─ " if last else "├─ ")


def _nested(tmp_path: Path, levels: int) -> TreeLines:
    nested_session(tmp_path / "home", tmp_path, levels=levels, session_id=f"deep{levels}")
    with SessionStore.open(tmp_path / "home", f"deep{levels}", writable=False) as store:
        return TreeLines(store.tree)


def test_branches_nested_deep_draw_their_innermost_levels_after_a_count(tmp_path: Path) -> None:
    """Branches nested 60 deep: one line a prompt, the active branch first at every level; a line deeper than
    16 levels draws the innermost ones after «N» (the outer levels left out, in steps of 8), so no line is wider
    than 16 levels and the count, and the lines between two steps stay aligned."""
    lines = _nested(tmp_path, 60)
    assert len(lines) == 119
    tasks, first_asks = lines.lines[:60], lines.lines[60:]
    assert [lines.text(line) for line in tasks] == [f"task {n}" for n in range(60)]
    assert [lines.text(line) for line in first_asks] == [f"first ask {n}" for n in range(59, 0, -1)]
    assert tasks[0].prefix == ""
    assert [line.prefix for line in tasks[1:]] == [_connectors(n, last=False) for n in range(1, 60)]
    assert [line.prefix for line in first_asks] == [_connectors(n, last=True) for n in range(59, 0, -1)]
    assert tasks[16].prefix == "│  " * 15 + "├─ "
    assert tasks[17].prefix == "«8» " + "│  " * 8 + "├─ "
    assert tasks[59].prefix == "«48» " + "│  " * 10 + "├─ "
    assert max(len(line.prefix) for line in lines.lines) <= len("«48» ") + 3 * SHOWN_LEVELS
    assert tasks[59].leaf


def test_laying_out_twice_the_depth_takes_twice_the_memory_not_four_times(tmp_path: Path) -> None:
    """The work of laying out nested branches grows with the lines: 600 levels take about twice the memory
    of 300 at their peak (connectors copied at every level, as they were, took 3.5 times)."""
    _nested(tmp_path, 50)  # whatever is made once (caches, compiled patterns) made before measuring
    peaks = []
    for levels in (300, 600):
        nested_session(tmp_path / "home", tmp_path, levels=levels, session_id=f"deep{levels}")
        with SessionStore.open(tmp_path / "home", f"deep{levels}", writable=False) as store:
            tracemalloc.start()
            try:
                TreeLines(store.tree)
                peaks.append(tracemalloc.get_traced_memory()[1])
            finally:
                tracemalloc.stop()
    assert peaks[1] < 2.5 * peaks[0], peaks
