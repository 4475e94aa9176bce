"""`chimera --resume` with no id outside a terminal, or with no model: one line saying what to do, nothing made."""

from __future__ import annotations

from pathlib import Path

from tests.cli_runner import assert_one_line_error, run_chimera


def test_without_a_terminal_it_asks_for_the_id(isolated_env: Path, model_env: dict[str, str]) -> None:
    """No terminal to choose in: exit 2, one line pointing at the id and `chimera sessions`; no session made."""
    proc = run_chimera("--resume", env=model_env)
    assert_one_line_error(proc, "needs a terminal", "pass the session's id", "chimera sessions")
    assert not (isolated_env / "sessions").exists()


def test_without_a_model_it_says_so_first(isolated_env: Path) -> None:
    """No model configured (the demo cannot resume): exit 2 and the one line that says how to set one."""
    proc = run_chimera("--resume")
    assert_one_line_error(proc, "--resume needs a model", "ANTHROPIC_API_KEY")
    assert not (isolated_env / "sessions").exists()
