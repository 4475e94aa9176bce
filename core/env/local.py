"""Provides ``LocalEnvironment``: a workspace folder on this machine.

Use it as a context manager: entering checks the folder and makes a private
place for saved tool output; leaving removes that place unless the caller
chose it.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from types import TracebackType

from chimera.core.errors import ConfigError
from chimera.core.tools.paths import real_path

__all__ = ["LocalEnvironment"]


class LocalEnvironment:
    """A workspace on the local disk.

    Args:
        workdir: the workspace folder; it must exist.
        spill_dir: where full tool outputs are saved; a private temporary folder when None.
        temp_root: where the sandbox makes its commands' private temporary folder (None: the system's).
    """

    def __init__(self, workdir: str | Path, *, spill_dir: Path | None = None, temp_root: Path | None = None) -> None:
        path = Path(workdir).expanduser()
        if not path.exists():
            raise ConfigError(f"the workdir {path} does not exist: create it, or pass --workdir an existing folder")
        if not path.is_dir():
            raise ConfigError(f"the workdir {path} is not a folder: pass --workdir a folder")
        self.workdir = real_path(path)
        self.temp_root = temp_root
        self._own_spill = spill_dir is None
        self._spill_dir = spill_dir

    @property
    def spill_dir(self) -> Path:
        if self._spill_dir is None:
            self._spill_dir = Path(tempfile.mkdtemp(prefix="chimera-output-"))
        return self._spill_dir

    def __enter__(self) -> LocalEnvironment:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        if self._own_spill and self._spill_dir is not None:
            shutil.rmtree(self._spill_dir, ignore_errors=True)
            self._spill_dir = None

    def __repr__(self) -> str:
        return f"LocalEnvironment({str(self.workdir)!r})"
