"""The sandbox's private temporary folders do not pile up: one left by a Chimera killed with SIGKILL is swept at
the next start, and nothing else is (a live owner's folder, a link, a file, another user's folder)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from chimera.core.sandbox import tempdirs
from chimera.core.sandbox.choice import choose_sandbox
from chimera.core.settings import Settings
from tests.sandbox_helpers import needs_landlock

_MAKES_ITS_TMPDIR = (
    "import sys, time\n"
    "from pathlib import Path\n"
    "from chimera.core.sandbox.policy import SandboxSettings\n"
    "sandbox = SandboxSettings().confine(Path(sys.argv[1]))\n"
    "print(sandbox.tmpdir, flush=True)\n"
    "time.sleep(300)\n"
)


def _owner(root: Path, ws: Path) -> tuple[subprocess.Popen[str], Path]:
    """A real process (in the system's temporary folder ``root``) that made its sandbox's TMPDIR, and that folder."""
    proc = subprocess.Popen(
        [sys.executable, "-c", _MAKES_ITS_TMPDIR, str(ws)],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "TMPDIR": str(root)},
    )
    assert proc.stdout is not None
    made = Path(proc.stdout.readline().strip())
    assert made.parent == root
    assert made.is_dir()
    return proc, made


@needs_landlock
def test_a_folder_left_by_sigkill_is_swept_at_the_next_start(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A TMPDIR whose Chimera was killed with SIGKILL goes when the next one starts; a running one's stays."""
    root = tmp_path / "tmp"
    root.mkdir()
    killed, left = _owner(root, tmp_path)
    (left / "build").mkdir()
    (left / "build/out.o").write_text("x")
    running, kept = _owner(root, tmp_path)
    try:
        killed.send_signal(signal.SIGKILL)
        killed.wait()
        assert left.is_dir()  # nothing of the killed process cleaned up
        monkeypatch.setattr(tempfile, "tempdir", str(root))  # the system's temporary folder, for this process
        choose_sandbox(None, False, Settings(), tmp_path / "home")
        assert not left.exists()
        assert kept.is_dir()
    finally:
        for proc in (killed, running):
            proc.kill()
            proc.wait()
            assert proc.stdout is not None
            proc.stdout.close()


def test_the_sweep_leaves_links_files_and_other_users_folders(tmp_path: Path) -> None:
    """Only this user's folders named for a dead process are removed: a link so named is not followed (its target
    and the link stay), a file so named stays, and so does a folder of another user."""
    root = tmp_path / "tmp"
    root.mkdir()
    target = tmp_path / "precious"
    target.mkdir()
    (target / "keep.txt").write_text("keep")
    dead = 2**22 + 7  # above the kernel's largest pid: no process has it
    (root / f"{tempdirs.PREFIX}{dead}-1-link").symlink_to(target)
    (root / f"{tempdirs.PREFIX}{dead}-1-file").write_text("x")
    left = {f"{tempdirs.PREFIX}{dead}-1-link", f"{tempdirs.PREFIX}{dead}-1-file"}
    if os.geteuid() == 0:  # only root can give a folder to another user
        theirs = root / f"{tempdirs.PREFIX}{dead}-1-theirs"
        theirs.mkdir()
        os.chown(theirs, 65534, 65534)
        left.add(theirs.name)
    stale = root / f"{tempdirs.PREFIX}{dead}-1-stale"
    (stale / "inner").mkdir(parents=True)
    (stale / "inner/out").symlink_to(target)  # a link inside is removed, never followed
    assert tempdirs.sweep(root) == [stale]
    assert {p.name for p in root.iterdir()} == left
    assert (target / "keep.txt").read_text() == "keep"
