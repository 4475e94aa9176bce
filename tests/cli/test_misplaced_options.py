"""An option of another command given to the workbench (`chimera --max-turns 5`) is one line naming the command
that takes it and the command line to type; a task where a command goes points at `chimera run`."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli_runner import assert_one_line_error, run_chimera, run_here

RUN_ONLY = [
    (["--max-turns", "5"], "`chimera run --max-turns 5 TASK`"),
    (["--max-tokens", "1000"], "`chimera run --max-tokens 1000 TASK`"),
    (["--max-cost", "0.5"], "`chimera run --max-cost 0.5 TASK`"),
    (["--max-time", "60"], "`chimera run --max-time 60 TASK`"),
    (["--reflect-every", "2"], "`chimera run --reflect-every 2 TASK`"),
    (["--candidates", "4"], "`chimera run --candidates 4 TASK`"),
    (["--control", "-"], "`chimera run --control - TASK`"),
    (["--approve-plan"], "`chimera run --approve-plan TASK`"),
    (["--max-turns=5"], "`chimera run --max-turns=5 TASK`"),
    (["--max-turn", "5"], "`chimera run --max-turns 5 TASK`"),  # the beginning of it, as argparse takes it
    (["--max-turns"], "`chimera run --max-turns N TASK`"),
    (["--max-turns", "5", "run", "go"], "`chimera run --max-turns 5 TASK`"),  # before the command
    (["--model", "m", "--max-turns", "5"], "`chimera run --max-turns 5 TASK`"),
]


@pytest.mark.parametrize(("argv", "typed"), RUN_ONLY, ids=[" ".join(a) for a, _ in RUN_ONLY])
def test_a_run_option_given_to_the_workbench_names_chimera_run(isolated_env: Path, argv: list[str], typed: str) -> None:
    """`chimera --max-turns 5` and its kin: one line, exit 2, saying `chimera run` takes it (and `chimera acp`, for the
    options that choose how runs go) and how to type it."""
    proc = run_here(*argv)
    assert_one_line_error(proc, "is an option of `chimera run`", "not of the workbench")
    assert proc.stderr.strip().endswith(typed), proc.stderr
    assert "invalid choice" not in proc.stderr
    assert not (isolated_env / "sessions").exists()  # nothing opened


def test_an_option_several_commands_take_names_them_all(isolated_env: Path) -> None:
    """`chimera --json`: the commands that take it, and one of them as an example."""
    proc = run_here("--json")
    assert_one_line_error(proc)
    line = proc.stderr.strip()
    assert line.startswith("chimera: --json is an option of `chimera run`, `chimera sessions`, `chimera tree`")
    assert line.endswith("not of the workbench: such as `chimera run --json TASK`")


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["--yes"], "--yes is an option of `chimera switch`, not of the workbench: `chimera switch --yes ID NODE`"),
        (["--rerun-tools"], "`chimera replay --rerun-tools ID`"),
        (["--from", "v1"], "`chimera compare --from v1 ID --try SPEC`"),
        (["--max", "5"], "`chimera run` takes --max-turns, --max-tokens, --max-cost and --max-time"),
        (["--maxturns", "5"], "did you mean `chimera run --max-turns 5 TASK`?"),
        (["--modle", "m"], "--modle is not an option of chimera: did you mean --model?"),
        (["--frobnicate"], "the workbench takes --workdir, --model, --loop, --permission-mode, --resume"),
        (["sesions"], "sesions is not a command: did you mean `chimera sessions`?"),
        (["fix the test"], "to run it as a task without the workbench, `chimera run 'fix the test'`"),
    ],
)
def test_other_words_the_workbench_does_not_take_say_what_does(isolated_env: Path, argv: list[str], said: str) -> None:
    """Another command's option, a beginning, a misspelling, an unknown option, a task: one line saying what to type."""
    proc = run_here(*argv)
    assert_one_line_error(proc, said)


def test_a_misplaced_option_of_the_real_command(isolated_env: Path) -> None:
    """The real `chimera --max-turns 5`: one line on stderr, exit 2, nothing on stdout."""
    proc = run_chimera("--max-turns", "5")
    assert_one_line_error(proc, "`chimera run --max-turns 5 TASK`")
    assert proc.stdout == ""


def test_the_workbench_own_errors_are_left_as_they_were(isolated_env: Path) -> None:
    """A bad value of the workbench's own option keeps argparse's words about it."""
    proc = run_here("--loop", "nope")
    assert_one_line_error(proc, "argument --loop: invalid choice: 'nope'")
