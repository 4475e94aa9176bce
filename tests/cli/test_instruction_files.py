"""The project instructions (AGENTS.md, CLAUDE.md) are read only as far as the model is shown them: a huge file
costs no more than a small one."""

from __future__ import annotations

import os
import resource
import subprocess
from pathlib import Path

from chimera.core.loops.workspace_facts import INSTRUCTIONS_CAP
from tests.cli_runner import chimera_command
from tests.fake_anthropic import FakeAnthropic, message, text

_MEMORY = 3 << 30  # the run's address space: far less than the 6 GB file, far more than a run needs


def _bounded_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (_MEMORY, _MEMORY))


def test_a_six_gigabyte_agents_md_is_read_only_as_far_as_it_is_shown(
    api: FakeAnthropic, model_env: dict[str, str], project: Path
) -> None:
    """AGENTS.md starts with a rule and goes on for 6 GB (sparse): a run limited to 3 GB of memory works, and the
    model is shown the rule, cut at the cap."""
    with (project / "AGENTS.md").open("wb") as fh:
        fh.write(b"Always run the tests.\n")
        fh.truncate(6 << 30)
    api.script(message(text("Hello.")))
    proc = subprocess.run(
        [*chimera_command(), "run", "hello", "--workdir", str(project)],
        capture_output=True, text=True, timeout=120, env={**os.environ, **model_env}, stdin=subprocess.DEVNULL,
        preexec_fn=_bounded_memory,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    system = api.requests[0].body["system"]
    shown = system if isinstance(system, str) else "".join(block["text"] for block in system)
    assert "<AGENTS.md>\nAlways run the tests." in shown
    assert len(shown) < INSTRUCTIONS_CAP + 20_000


def test_an_instruction_file_that_links_out_of_the_workspace_is_not_shown(
    api: FakeAnthropic, model_env: dict[str, str], project: Path, tmp_path: Path
) -> None:
    """A cloned repository's AGENTS.md is a link to a file outside it (a key): the model never sees that file;
    a CLAUDE.md linking to a file inside the workspace still counts."""
    secret = tmp_path / "id_key"
    secret.write_text("PRIVATE KEY 1234\n")
    (project / "AGENTS.md").symlink_to(secret)
    (project / "docs").mkdir()
    (project / "docs" / "rules.md").write_text("Use tabs.\n")
    (project / "CLAUDE.md").symlink_to("docs/rules.md")
    api.script(message(text("Hello.")))
    proc = subprocess.run(
        [*chimera_command(), "run", "hello", "--workdir", str(project)],
        capture_output=True, text=True, timeout=120, env={**os.environ, **model_env}, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    sent = str(api.requests[0].body)
    assert "PRIVATE KEY" not in sent
    assert "<CLAUDE.md>\\nUse tabs." in sent
