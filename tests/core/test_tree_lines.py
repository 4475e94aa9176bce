"""The tree's lines, built in the core: which nodes show, folding, filters and search, and a damaged tree
(a loop, a repeated id, a missing parent) laid out with one notice, never a hang."""

from __future__ import annotations

from pathlib import Path

from chimera.core.sessions.store import SessionStore
from chimera.core.sessions.tree import Node, SessionTree
from chimera.core.sessions.tree_lines import TreeLines
from tests.tree_helpers import branched_session, said


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
