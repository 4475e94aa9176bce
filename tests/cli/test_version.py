"""`chimera --version`: the installed version in one line, exit 0, without the workbench or a key."""

from __future__ import annotations

from importlib.metadata import version
from pathlib import Path

from tests.cli_runner import run_chimera


def test_version_prints_the_installed_version_and_exits_0(isolated_env: Path) -> None:
    """`chimera --version` prints `chimera X.Y.Z` (the installed package's version) and nothing else."""
    proc = run_chimera("--version")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == f"chimera {version('chimera-workbench')}\n"
    assert proc.stderr == ""
    assert not (isolated_env / "sessions").exists()  # no workbench, no session


def test_version_answers_with_a_key_set_and_no_terminal(isolated_env: Path) -> None:
    """With an API key in the environment (the launcher restarts itself without it) the answer is the same."""
    proc = run_chimera(
        "--version", env={"ANTHROPIC_API_KEY": "sk-ant-test", "ANTHROPIC_BASE_URL": "http://127.0.0.1:9"}
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("chimera ")
    assert proc.stdout.count("\n") == 1
