"""`chimera tree` draws the session as branches: connectors, the active branch first, tool calls folded into
their turn, root branches as branches, branches nested deep in lines no wider for it, each line cut (never
wrapped) at the terminal's width."""

from __future__ import annotations

from pathlib import Path

import pytest

from chimera.core.sessions.store import SessionStore
from tests.cli_runner import assert_one_line_error, chimera, run_chimera
from tests.tree_helpers import MODEL, answered, branched_session, nested_session, said


def test_branches_show_as_branches_with_the_active_one_first(
    isolated_env: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two turns asked from the same answer are two branches under it, the active one first and the leaf
    marked; a message that only calls tools and its results fold into the turn."""
    monkeypatch.delenv("COLUMNS", raising=False)
    ids = branched_session(isolated_env, tmp_path)
    code, out, err = chimera(capsys, "tree", "s1")
    assert (code, err) == (0, [])
    lines = out.splitlines()[1:]
    assert len(lines) == 6
    assert lines[0].startswith(f"• {ids['u1']}  you ")
    assert lines[0].endswith("fix the bug")
    assert lines[1].startswith(f"• {ids['a1']}  chimera ")
    assert lines[1].endswith("Fixed it.  [stable]")
    assert lines[2].startswith(f"├─ • {ids['u3']}  you ")
    assert lines[2].endswith("try another way")
    assert lines[3].startswith(f"│  ◆ {ids['a3']}  chimera ")
    assert lines[4].startswith(f"└─ ○ {ids['u2']}  you ")
    assert lines[4].endswith("now add tests")
    assert lines[5].startswith(f"   ○ {ids['a2']}  chimera ")
    assert ids["c1"] not in out
    assert ids["r1"] not in out


def test_root_branches_are_drawn_as_branches(
    isolated_env: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two tasks each started from the very beginning are two branches, not one conversation going on."""
    monkeypatch.delenv("COLUMNS", raising=False)
    with SessionStore.create(isolated_env, "s1", workdir=tmp_path, model=MODEL) as store:
        first = store.add("user", said("first start"), sync=True).id
        store.add("assistant", answered("One."), sync=True)
        second = store.add("user", said("second start"), parent=None, sync=True).id
    _code, out, _ = chimera(capsys, "tree", "s1")
    lines = out.splitlines()[1:]
    assert lines[0].startswith(f"├─ ◆ {second}  you ")
    assert lines[1].startswith(f"└─ ○ {first}  you ")
    assert lines[2].startswith("   ○ ")


def test_lines_are_cut_at_the_terminal_width_never_wrapped(
    isolated_env: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """At 40 columns every line is at most 40 wide and one line a node: what does not fit ends in an ellipsis."""
    monkeypatch.setenv("COLUMNS", "40")
    with SessionStore.create(isolated_env, "s1", workdir=tmp_path, model=MODEL) as store:
        store.add("user", said("a long task " * 20), sync=True)
        store.add("assistant", answered("A long answer " * 20), sync=True)
    code, out, _ = chimera(capsys, "tree", "s1")
    lines = out.splitlines()
    assert code == 0
    assert len(lines) == 3
    assert all(len(line) <= 40 for line in lines)
    assert lines[1].endswith("…")
    assert lines[2].endswith("…")


def test_branches_nested_deep_print_lines_no_wider_for_their_depth(
    isolated_env: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Branches nested 60 deep: a line a prompt, none of them cut, and no connectors wider than 16 levels and
    the count of the levels left out: the leaf, 59 deep, draws 10 levels after «48»."""
    monkeypatch.delenv("COLUMNS", raising=False)
    nested_session(isolated_env, tmp_path, levels=60)
    code, out, err = chimera(capsys, "tree", "deep")
    assert (code, err) == (0, [])
    lines = out.splitlines()[1:]
    assert len(lines) == 2 * 60 - 1
    assert lines[59].startswith("«48» " + "│  " * 10 + "├─ ◆ ")
    assert lines[59].endswith("task 59")
    connectors = [line[: min(line.find(mark) for mark in "•◆○" if mark in line)] for line in lines]
    assert max(len(drawn) for drawn in connectors) <= len("«48» ") + 3 * 16


@pytest.mark.parametrize("command", [("switch", "s1", "stable", "--yes"), ("checkpoint", "s1", "mine")])
def test_a_switch_or_checkpoint_while_the_workbench_has_the_session_says_what_works(
    isolated_env: Path, tmp_path: Path, command: tuple[str, ...]
) -> None:
    """With the session open elsewhere (as the workbench holds it), `chimera switch`/`checkpoint` refuse in one
    line that names the workbench's own commands, which work without closing it."""
    branched_session(isolated_env, tmp_path)
    with SessionStore.open(isolated_env, "s1"):
        proc = run_chimera(*command)
    assert_one_line_error(proc, "open in another Chimera", "/switch", "/checkpoint")
