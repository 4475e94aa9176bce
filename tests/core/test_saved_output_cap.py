"""One call's saved full output stops at 256 MB on disk, whatever characters the command prints."""

from __future__ import annotations

import os
from pathlib import Path

from chimera.core.tools.base import ToolContext
from chimera.core.tools.bash import Bash
from chimera.core.tools.output import SAVE_CAP


async def test_the_saved_output_cap_counts_bytes_not_characters(tmp_path: Path) -> None:
    """300 MB of four-byte characters: the file stops at 256 MB (not at 256 million characters, 1 GiB), on a
    whole character, and the model is told only the first part is saved."""
    (tmp_path / "ws").mkdir()
    line = "\U0001f600" * 24  # 97 bytes a line with its newline
    command = f"yes {line} | head -c 300000000"
    result = await Bash().run({"command": command}, ToolContext(tmp_path / "ws", tmp_path / "spill"))
    saved = Path(result.data["full_output"])
    size = saved.stat().st_size
    assert SAVE_CAP - 4 < size <= SAVE_CAP, f"{size:,} bytes saved"
    fd = os.open(saved, os.O_RDONLY)
    try:
        os.pread(fd, 97 * 2, size - 97 * 2).decode("utf-8")  # it ends on a whole character
    finally:
        os.close(fd)
    assert f"the first 256 MB of the output are in {saved}" in result.output
