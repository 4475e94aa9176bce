"""Provides the offline demo: a recorded session replayed on a fresh copy of a sample project.

With no model configured, front ends play this instead of failing: the model's
turns come from the recording, and the tools run for real on a copy of a tiny
project with a failing test, in a temporary folder (never in the person's own
workspace): ``demo_workspaces(home)``, ``CHIMERA_HOME/demo``. The session a demo
records is kept (``chimera tree`` and ``chimera replay`` work on it offline), but
it is no session of the person's: ``demo_sessions`` tells it by its workspace,
and the session lists leave it out.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from importlib import resources
from pathlib import Path

from chimera.core.providers.replay import Recording, ReplayProvider

__all__ = [
    "DEMO_NOTICE",
    "demo_provider",
    "demo_recording",
    "demo_sessions",
    "demo_workspaces",
    "prepare_demo_workspace",
]

DEMO_NOTICE = (
    "Demo mode: no model is configured, so Chimera is replaying a recorded session; "
    "the tools run for real on a copy of a sample project. To use a model, set ANTHROPIC_API_KEY, "
    "or point ANTHROPIC_BASE_URL at a local server that speaks the Messages API "
    "(Ollama, llama.cpp, vLLM, LiteLLM)."
)


def _demo_folder() -> Path:
    return Path(str(resources.files("chimera.core") / "demo_data"))


def demo_recording() -> Recording:
    """The bundled recording: the task and the model's turns."""
    return Recording.load(_demo_folder() / "session.json")


def demo_provider(*, pace: float = 0.0) -> ReplayProvider:
    """A provider that replays the demo; ``pace`` seconds between streamed pieces."""
    return ReplayProvider.from_recording(demo_recording(), pace=pace)


def demo_workspaces(home: Path) -> Path:
    """Where the demo's copies of the sample project are made, in Chimera's home ``home``."""
    return home / "demo"


def demo_sessions(home: Path) -> Callable[[str], bool]:
    """A test of a session's workspace (its recorded path): whether it is one of the demo's copies in ``home``,
    so the session is a demo's (one recorded before sessions were told apart so included), never listed among
    the person's."""
    folder = demo_workspaces(home)
    prefixes = {str(folder) + os.sep}
    with contextlib.suppress(OSError, RuntimeError):  # a home behind a link: the copies' path through it too
        prefixes.add(os.path.realpath(folder) + os.sep)
    spelled = tuple(prefixes)
    return lambda workdir: workdir.startswith(spelled)


_KEEP_SECONDS = 24 * 3600  # older demo copies are removed when a new one is made


def prepare_demo_workspace(parent: Path | None = None) -> Path:
    """Copy the sample project into a new temporary folder and return it.

    Copies older than a day under ``parent`` are removed first, so repeated demos
    do not pile up.
    """
    if parent is not None:
        parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        _remove_stale_copies(parent)
    target = Path(tempfile.mkdtemp(prefix="chimera-demo-", dir=parent))
    shutil.copytree(
        _demo_folder() / "project", target, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__")
    )
    return target


def _remove_stale_copies(parent: Path) -> None:
    cutoff = time.time() - _KEEP_SECONDS
    for old in parent.glob("chimera-demo-*"):
        with contextlib.suppress(OSError):
            if old.is_dir() and old.stat().st_mtime < cutoff:
                shutil.rmtree(old, ignore_errors=True)
