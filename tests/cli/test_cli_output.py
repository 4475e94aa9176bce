"""What `chimera` prints: plain answers without voided attempts, characters its output cannot carry,
and a reader that goes away (`| head -1`), for every command that prints."""

from __future__ import annotations

import json
import os
import pty
import shlex
import subprocess
from pathlib import Path

import pytest

from chimera.core.sessions.store import SessionStore
from tests.cli_runner import chimera_command, run_chimera
from tests.fake_anthropic import DEFAULT_MODEL as MODEL
from tests.fake_anthropic import Block, FakeAnthropic, message, stream_error, text

EMOJI = "\U0001f600"


def split_emoji(before: str, after: str) -> Block:
    """A text block whose emoji arrives as two escaped UTF-16 halves, one in each of two deltas."""
    high, low = "\ud83d", "\ude00"  # EMOJI in UTF-16
    deltas = [{"type": "text_delta", "text": before + high}, {"type": "text_delta", "text": low + after}]
    return Block("text", {"type": "text", "text": ""}, deltas)


# --- plain answers ---------------------------------------------------------------------------


def test_plain_output_to_a_pipe_holds_only_the_attempt_that_succeeded(
    api: FakeAnthropic, model_env: dict[str, str], tmp_path: Path
) -> None:
    """A stream that fails after PARTIAL-ANSWER- and is retried leaves only "final answer" on stdout."""
    api.script(stream_error(text("PARTIAL-ANSWER-")), message(text("final answer")))
    proc = run_chimera("run", "x", "--workdir", str(tmp_path), env=model_env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "final answer\n"
    assert "retry 1 (stream_error)" in proc.stderr


def test_plain_output_to_a_terminal_marks_a_voided_attempt(
    api: FakeAnthropic, model_env: dict[str, str], tmp_path: Path
) -> None:
    """On a terminal the partial text streams, then the retry line says it is discarded, then the answer follows."""
    api.script(stream_error(text("PARTIAL-ANSWER-")), message(text("final answer")))
    leader, follower = pty.openpty()
    try:
        proc = subprocess.Popen(
            [*chimera_command(), "run", "x", "--workdir", str(tmp_path)],
            stdout=follower,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            env={**os.environ, **model_env},
        )
        os.close(follower)
        follower = -1
        shown = b""
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not chunk:
                break
            shown += chunk
        _, err = proc.communicate(timeout=30)
    finally:
        os.close(leader)
        if follower >= 0:
            os.close(follower)
    assert proc.returncode == 0, err
    assert shown.decode().replace("\r\n", "\n") == "PARTIAL-ANSWER-\nfinal answer\n"
    assert "retry 1 (stream_error) in 1.0s: the text above is discarded" in err.decode()


def test_an_emoji_split_across_two_deltas_prints_whole(
    api: FakeAnthropic, model_env: dict[str, str], tmp_path: Path
) -> None:
    """An emoji streamed as two escaped halves prints as the emoji; the run completes with exit 0."""
    api.script(message(split_emoji("Done ", "!")))
    proc = run_chimera("run", "x", "--workdir", str(tmp_path), env=model_env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == f"Done {EMOJI}!\n"


@pytest.mark.parametrize("json_lines", [False, True], ids=["plain", "json"])
def test_an_output_that_cannot_carry_a_character_is_not_a_closed_reader(
    api: FakeAnthropic, model_env: dict[str, str], tmp_path: Path, json_lines: bool
) -> None:
    """With an ASCII-only stdout an emoji answer is replaced (plain) or escaped (JSON), and the run still succeeds."""
    api.script(message(split_emoji("Done ", "!")))
    flags = ["--json"] if json_lines else []
    proc = run_chimera("run", "x", *flags, "--workdir", str(tmp_path), env={**model_env, "PYTHONIOENCODING": "ascii"})
    assert proc.returncode == 0, proc.stderr
    if json_lines:
        events = [json.loads(line) for line in proc.stdout.splitlines()]
        assert events[-1]["answer"] == f"Done {EMOJI}!"
    else:
        assert proc.stdout == "Done ?!\n"


# --- a reader that goes away ------------------------------------------------------------------


def recorded_session(home: Path, workdir: Path, answer: str = "Hello there.") -> str:
    """A finished session with one exchange, as a run leaves it."""
    with SessionStore.create(home, "s1", workdir=workdir, model=MODEL) as store:
        store.add("user", {"role": "user", "content": "say hello"}, sync=True)
        store.add("assistant", {"role": "assistant", "content": [{"type": "text", "text": answer}]}, sync=True)
    return "s1"


def buffered_env(**extra: str) -> dict[str, str]:
    """The environment with stdout buffered, as a person's shell has it (PYTHONUNBUFFERED unset)."""
    return {**{k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}, **extra}


def run_with_closed_stdout(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run chimera with stdout a pipe whose reading end is already closed: its first write meets EPIPE."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        return subprocess.run(
            [*chimera_command(), *args],
            stdout=write_end,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            text=True,
            timeout=60,
            env=buffered_env(**(env or {})),
        )
    finally:
        os.close(write_end)


def assert_ended_quietly(proc: subprocess.CompletedProcess[str]) -> None:
    """Exit 141 (as a command killed by SIGPIPE), and nothing on stderr: no "Broken pipe", no traceback."""
    assert (proc.returncode, proc.stderr) == (141, "")


@pytest.mark.parametrize(
    "command",
    [
        ["sessions"],
        ["sessions", "--json"],
        ["tree", "s1"],
        ["tree", "s1", "--json"],
        ["export", "s1"],
        ["replay", "s1"],
        ["--help"],
    ],
    ids=["sessions", "sessions-json", "tree", "tree-json", "export", "replay", "help"],
)
def test_a_command_whose_reader_is_gone_ends_quietly(isolated_env: Path, tmp_path: Path, command: list[str]) -> None:
    """A command writing to a closed pipe exits 141 with nothing on stderr: no "Broken pipe", no traceback."""
    recorded_session(isolated_env, tmp_path)
    assert_ended_quietly(run_with_closed_stdout(*command))


@pytest.mark.parametrize("json_lines", [False, True], ids=["plain", "json"])
def test_a_run_whose_reader_is_gone_ends_quietly(
    api: FakeAnthropic, model_env: dict[str, str], tmp_path: Path, json_lines: bool
) -> None:
    """`chimera run` writing to a closed pipe stops the run and exits 141, with no line about the pipe."""
    api.fallback = message(text("An answer nobody reads."))
    flags = ["--json"] if json_lines else []
    proc = run_with_closed_stdout("run", "x", *flags, "--workdir", str(tmp_path), env=model_env)
    assert_ended_quietly(proc)


def test_head_reading_one_line_of_a_long_export_ends_it_quietly(isolated_env: Path, tmp_path: Path) -> None:
    """`chimera export ID | head -1` of an export far bigger than a pipe holds: one line shown, chimera exits 141."""
    recorded_session(isolated_env, tmp_path, answer="a long line of the answer\n" * 40_000)
    script = f'{shlex.join(chimera_command())} export s1 | head -1; echo "chimera=${{PIPESTATUS[0]}}" >&2'
    # Buffered stdout: unbuffered, CPython drops the rest of a partial write unsaid, and the exit is 0.
    proc = subprocess.run(
        ["bash", "-c", script], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL, env=buffered_env()
    )
    assert proc.stdout.count("\n") == 1
    assert proc.stderr == "chimera=141\n"


def test_counts_of_one_read_in_the_singular(isolated_env: Path, tmp_path: Path) -> None:
    """A session of one answer lists as "1 turn", and a tree of one message says "1 node"."""
    with SessionStore.create(isolated_env, "s1", workdir=tmp_path, model=MODEL) as store:
        store.add("user", {"role": "user", "content": "hello"}, sync=True)
    tree = run_chimera("tree", "s1")
    with SessionStore.open(isolated_env, "s1") as store:
        store.add("assistant", {"role": "assistant", "content": [{"type": "text", "text": "hi"}]}, sync=True)
    sessions = run_chimera("sessions")
    assert " 1 turn " in sessions.stdout, sessions.stdout
    assert "(1 node;" in tree.stdout, tree.stdout
    assert "1 turns" not in sessions.stdout
    assert "1 nodes" not in tree.stdout
