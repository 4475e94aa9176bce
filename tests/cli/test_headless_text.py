"""``chimera run`` without ``--json`` writes the answer readably: one blank line between messages, never
glued together and never more, and results of calls that ran together name their call.

The real ``chimera`` against the loopback Messages API, its output to a pipe and to a terminal.
"""

from __future__ import annotations

import os
import pty
import re
import subprocess
from pathlib import Path

from tests.cli_runner import chimera_command, run_chimera, run_here
from tests.fake_anthropic import FakeAnthropic, Reply, message, text, tool_use

PLAN = "The plan:\n\n- [ ] Write `out.txt`\n"


def plan_script() -> list[Reply]:
    """A plan whose step answer and check answer follow each other with no call between."""
    return [
        message(text(PLAN)),
        message(tool_use("w1", "write", {"path": "out.txt", "content": "x\n"}), stop_reason="tool_use"),
        message(text("Step done.")),
        message(text("DONE")),
    ]


def test_messages_with_no_call_between_are_never_glued(
    api: FakeAnthropic, model_env: dict[str, str], project: Path
) -> None:
    """A step's answer and its check's answer: two paragraphs ("Step done." blank line "DONE"), not "Step done.DONE"."""
    api.script(*plan_script())
    proc = run_chimera(
        "run", "write out.txt", "--workdir", str(project), "--loop", "plan", "--approve-plan",
        "--permission-mode", "bypass", env=model_env,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == f"{PLAN.strip()}\n\nStep done.\n\nDONE\n"


def test_one_blank_line_between_messages_whatever_they_end_or_begin_with(
    api: FakeAnthropic, model_env: dict[str, str], project: Path
) -> None:
    """Messages that end or begin with line breaks, a call between them or not: exactly one blank line apart."""
    (project / "a.txt").write_text("a\n")
    api.script(
        message(text("\n\nLooking first.\n\n\n"), tool_use("r1", "read", {"path": "a.txt"}), stop_reason="tool_use"),
        message(tool_use("r2", "read", {"path": "a.txt"}), stop_reason="tool_use"),  # no words at all
        message(text("  \n\n"), tool_use("r3", "read", {"path": "a.txt"}), stop_reason="tool_use"),  # only blanks
        message(text("\nIt says a.\n\n")),
    )
    proc = run_chimera("run", "read a", "--workdir", str(project), "--permission-mode", "bypass", env=model_env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "Looking first.\n\nIt says a.\n"


def test_results_of_calls_that_ran_together_name_their_call(
    api: FakeAnthropic, model_env: dict[str, str], project: Path
) -> None:
    """Two reads in one message run together: each result line names its file; a lone call's result needs no name."""
    (project / "a.txt").write_text("a\n")
    (project / "b.txt").write_text("b1\nb2\n")
    api.script(
        message(
            text("Reading both."),
            tool_use("r1", "read", {"path": "a.txt"}),
            tool_use("r2", "read", {"path": "b.txt"}),
            stop_reason="tool_use",
        ),
        message(tool_use("g1", "glob", {"pattern": "*.txt"}), stop_reason="tool_use"),
        message(text("Read them.")),
    )
    proc = run_chimera("run", "read both", "--workdir", str(project), "--permission-mode", "bypass", env=model_env)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stderr.splitlines()
    results = [line for line in lines if line.startswith("  ✓")]
    assert len(results) == 3, proc.stderr
    assert sorted(results[:2]) == [
        "  ✓ read a.txt: " + results_tail(results, "a.txt"),
        "  ✓ read b.txt: " + results_tail(results, "b.txt"),
    ]
    assert re.fullmatch(r"  ✓ \d+ lines? in \d+\.\d+s", results[2]), results[2]  # right under its own call
    assert lines[lines.index(results[2]) - 1] == "● glob *.txt"


def results_tail(results: list[str], name: str) -> str:
    (line,) = [r for r in results if r.startswith(f"  ✓ read {name}: ")]
    tail = line.split(": ", 1)[1]
    assert re.fullmatch(r"\d+ lines? in \d+\.\d+s", tail), line
    return tail


def test_on_a_terminal_the_streamed_answer_keeps_one_blank_line_between_messages(
    api: FakeAnthropic, model_env: dict[str, str], project: Path
) -> None:
    """Streamed to a terminal: the same paragraphs, none glued, none spread over blank lines."""
    api.script(*plan_script())
    leader, follower = pty.openpty()
    command = [
        *chimera_command(), "run", "write out.txt", "--workdir", str(project), "--loop", "plan",
        "--approve-plan", "--permission-mode", "bypass",
    ]  # fmt: skip
    with subprocess.Popen(
        command, stdout=follower, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, env={**os.environ, **model_env}
    ) as proc:
        os.close(follower)
        shown = b""
        while True:
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # the terminal closed: the command has ended
                break
            if not chunk:
                break
            shown += chunk
        assert proc.wait(timeout=30) == 0
    os.close(leader)
    assert shown.decode().replace("\r\n", "\n") == f"{PLAN.strip()}\n\nStep done.\n\nDONE\n"


def test_a_plain_run_ends_naming_its_session(api: FakeAnthropic, model_env: dict[str, str], project: Path) -> None:
    """Plain `chimera run`: its last line on stderr names the session it kept and how to continue it (the
    session's real id: `chimera tree` reads it); the answer on stdout is untouched."""
    api.script(message(text("Hello.")))
    proc = run_chimera("run", "say hello", "--workdir", str(project), env=model_env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "Hello.\n"
    last = proc.stderr.splitlines()[-1]
    match = re.fullmatch(r"chimera: session (\w+): continue it with chimera --resume \1 .*chimera replay \1", last)
    assert match is not None, last
    tree = run_here("tree", match.group(1), env=model_env)
    assert tree.returncode == 0, tree.stderr
    assert "say hello" in tree.stdout


def test_a_failed_plain_run_names_its_session_too(api: FakeAnthropic, model_env: dict[str, str], project: Path) -> None:
    """A run stopped at its turn limit keeps its session, and says which after saying why it stopped; --json
    says nothing more (every event carries the id)."""
    api.script(
        message(tool_use("g1", "glob", {"pattern": "*"}), stop_reason="tool_use"),
        message(tool_use("g2", "glob", {"pattern": "*.py"}), stop_reason="tool_use"),
    )
    proc = run_here("run", "look", "--workdir", str(project), "--max-turns", "1", env=model_env)
    assert proc.returncode == 1
    said = proc.stderr.splitlines()
    assert "--max-turns" in said[-2]
    assert said[-1].startswith("chimera: session ")
    api.script(message(text("Hi.")))
    quiet = run_here("run", "hi", "--json", "--workdir", str(project), env=model_env)
    assert "chimera: session" not in quiet.stderr


def test_a_refused_call_says_it_did_not_run_and_why(
    api: FakeAnthropic, model_env: dict[str, str], project: Path
) -> None:
    """A call a --deny rule refuses, one nobody can answer headless, one plan mode refuses: each result line says
    refused, not run, and why (the rule, the flag to pass, plan mode), never a count of lines and a time."""
    api.script(
        message(
            tool_use("b1", "bash", {"command": "rm -rf build"}),
            tool_use("b2", "bash", {"command": "touch made"}),
            stop_reason="tool_use",
        ),
        message(text("Could not.")),
    )
    proc = run_here("run", "clean", "--workdir", str(project), "--deny", "bash(rm *)", env=model_env)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stderr.splitlines()
    assert lines[:4] == [
        "● bash rm -rf build",
        "  ⊘ refused, not run: bash is denied by the rule bash(rm *)",
        "● bash touch made",
        "  ⊘ refused, not run: bash needs approval and nobody can answer in a headless run: pass "
        "--permission-mode bypass, or --allow 'bash(touch *)'",
    ]
    assert not (project / "made").exists()
    api.script(
        message(tool_use("w1", "write", {"path": "out.txt", "content": "x"}), stop_reason="tool_use"),
        message(text(PLAN)),
    )
    planned = run_here("run", "write it", "--workdir", str(project), "--loop", "plan", env=model_env)
    assert "  ⊘ refused, not run: not permitted while planning: write can change things" in planned.stderr
    assert not re.search(r"lines? in \d", proc.stderr + planned.stderr)


def test_a_result_line_counts_the_lines_read_and_says_when_output_was_cut(
    api: FakeAnthropic, model_env: dict[str, str], project: Path
) -> None:
    """A read of a three-line file says 3 lines (it said 4: a final newline counted one more); a command that
    printed 5,000 lines, cut for the model to its head and tail, says so."""
    (project / "three.txt").write_text("a\nb\nc\n")
    api.script(
        message(tool_use("r1", "read", {"path": "three.txt"}), stop_reason="tool_use"),
        message(tool_use("b1", "bash", {"command": "seq 5000"}), stop_reason="tool_use"),
        message(text("Read and counted.")),
    )
    proc = run_here("run", "count", "--workdir", str(project), "--permission-mode", "bypass", env=model_env)
    assert proc.returncode == 0, proc.stderr
    results = [line for line in proc.stderr.splitlines() if line.startswith("  ✓")]
    assert re.fullmatch(r"  ✓ 3 lines in \d+\.\d+s", results[0]), results
    assert re.fullmatch(r"  ✓ 5,000 lines, cut in \d+\.\d+s", results[1]), results
