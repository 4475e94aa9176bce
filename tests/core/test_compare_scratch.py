"""A comparison's scratch folder is its own while it runs and gone after; a sweep removes the ones killed
comparisons left, and nothing else: not a running comparison's, not a link, a file or what a link points at."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from chimera.core.compare.scratch import PREFIX, scratch_space, sweep


def test_a_sweep_removes_only_what_killed_comparisons_left(tmp_path: Path) -> None:
    """A left folder is removed; the folder of a comparison running now, a link named like one (and what it
    points at) and a file named like one stay."""
    left = tmp_path / f"{PREFIX}left"
    (left / "1" / "files").mkdir(parents=True)
    (left / "1" / "files" / "a.txt").write_text("a\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "keep.txt").write_text("mine\n")
    (tmp_path / f"{PREFIX}link").symlink_to(elsewhere)
    (tmp_path / f"{PREFIX}file").write_text("not a folder\n")
    with scratch_space(tmp_path) as running:
        (running / "1").mkdir()
        assert sweep(tmp_path) == [left]
        assert (running / "1").is_dir()
    assert not running.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"{PREFIX}file", f"{PREFIX}link", "elsewhere"]
    assert (elsewhere / "keep.txt").read_text() == "mine\n"


def test_removing_a_scratch_folder_never_follows_a_link_out_of_it(tmp_path: Path) -> None:
    """A link in the copy to a folder outside is removed with the copy; the folder it points at keeps its files
    and its mode (the folders inside the copy are opened up to be removed, never a link's target)."""
    outside = tmp_path / "outside"
    outside.mkdir(mode=0o755)
    os.chmod(outside, 0o755)
    (outside / "keep.txt").write_text("mine\n")
    with scratch_space(tmp_path) as scratch:
        (scratch / "deep").mkdir()
        (scratch / "deep" / "out").symlink_to(outside)
    assert [p.name for p in tmp_path.iterdir()] == ["outside"]
    assert (outside / "keep.txt").read_text() == "mine\n"
    assert stat.S_IMODE(outside.stat().st_mode) == 0o755


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads and writes any folder: nothing to open up")
def test_a_scratch_folder_is_removed_though_a_command_locked_its_folders(tmp_path: Path) -> None:
    """Folders a command made unreadable and unwritable in the copy are removed with it."""
    with scratch_space(tmp_path) as scratch:
        (scratch / "deep" / "er").mkdir(parents=True)
        (scratch / "deep" / "er" / "f").write_text("x")
        os.chmod(scratch / "deep" / "er", 0)
        os.chmod(scratch / "deep", stat.S_IRUSR | stat.S_IXUSR)
    assert list(tmp_path.iterdir()) == []
