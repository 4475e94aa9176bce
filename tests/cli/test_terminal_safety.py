"""What Chimera shows a person never steers their terminal: control sequences from a model, a tool or a
crafted session reach the screen as visible escapes (``\\x1b``), in every command and in the workbench;
JSON output keeps them exactly, escaped by JSON itself."""

from __future__ import annotations

import json
import os
import pty
import re
import subprocess
from pathlib import Path

import pytest

from chimera.core.sessions.start import RunOptions
from chimera.core.sessions.store import SessionStore
from chimera.core.terminal_text import terminal_safe
from chimera.tui.app import build_app
from chimera.tui.widgets.transcript_view import TranscriptView
from tests.cli_runner import chimera_command, run_here
from tests.fake_anthropic import DEFAULT_MODEL as MODEL
from tests.fake_anthropic import FakeAnthropic, message, status, text, thinking, tool_use
from tests.tui_helpers import asked, entries, screen_text

TITLE = "\x1b]0;pwned\x07"  # OSC 0: retitles the terminal
CLIPBOARD = "\x1b]52;c;cm0gLXJmIH4=\x07"  # OSC 52: writes the clipboard
CLEAR = "\x1b[2J\x1b[H"  # CSI: clears the screen
C1 = "\x9b31m"  # a one-byte CSI
BIDI = "\u202etxt.exe"  # right-to-left override: reads "exe.txt"
NASTY = f"A{TITLE}B{CLIPBOARD}C{CLEAR}D{C1}E{BIDI}F\rG\bH"

# Everything that may not reach a terminal raw: C0 but tab and newline, DEL, C1, bidi controls.
_RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def assert_inert(shown: str) -> None:
    """``shown`` holds no character that steers a terminal, and the escapes of NASTY's sequences are visible."""
    found = _RAW.search(shown)
    assert found is None, f"raw {found.group()!r} at {found.start()} in {shown!r}"


def run_chimera(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``chimera`` with its output read exactly as written: no newline translation hides a carriage return."""
    proc = subprocess.run(
        [*chimera_command(), *args],
        capture_output=True,
        timeout=60,
        env={**os.environ, **(env or {})},
        stdin=subprocess.DEVNULL,
    )
    return subprocess.CompletedProcess(proc.args, proc.returncode, proc.stdout.decode(), proc.stderr.decode())


def on_a_terminal(*args: str, env: dict[str, str]) -> tuple[int, str, bytes]:
    """``chimera ARGS`` to its end with its stdout a terminal (a pty): the exit code, what the terminal was sent
    (its own line ends, CR LF, read back as LF) and stderr."""
    leader, follower = pty.openpty()
    try:
        proc = subprocess.Popen(
            [*chimera_command(), *args],
            stdout=follower,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            env={**os.environ, **env},
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
    return proc.returncode, shown.decode().replace("\r\n", "\n"), err


def nasty_run(api: FakeAnthropic) -> None:
    """A model whose thinking, text, tool name, tool arguments and tool output all carry control sequences."""
    api.script(
        message(
            thinking(f"thinking {NASTY}", "sig"),
            text(f"Looking {NASTY}"),
            tool_use("t1", "bash", {"command": f"printf '{NASTY}' ; echo '{TITLE}'"}),
            tool_use("t2", f"nope{TITLE}", {"path": NASTY}),
            tool_use("t3", "write", {"path": f"evil{TITLE}.txt", "content": NASTY}),
            stop_reason="tool_use",
        ),
        message(text(f"Answer {NASTY} end")),
    )


# --- the one function ------------------------------------------------------------------------


def test_terminal_safe_shows_every_steering_character_and_keeps_lines() -> None:
    """ESC, OSC, C1, BEL, backspace, a lone CR and bidi overrides read as escapes; lines and tabs stay."""
    assert terminal_safe("plain\ttext\nhere é 😀") == "plain\ttext\nhere é 😀"
    assert terminal_safe(TITLE) == "\\x1b]0;pwned\\x07"
    assert terminal_safe(C1 + BIDI) == "\\x9b31m\\u202etxt.exe"
    assert terminal_safe("over\rwrite\bx\x7f") == "over\\rwrite\\x08x\\x7f"
    assert terminal_safe("crlf\r\nline\r") == "crlf\nline"  # a line's own end: nothing to show
    assert terminal_safe("a\nb\tc\r\n", one_line=True) == "a\\nb\\tc\\r\\n"
    assert_inert(terminal_safe(NASTY))
    assert_inert(terminal_safe(NASTY + "\n\t", one_line=True).replace("\\", ""))


# --- chimera run -----------------------------------------------------------------------------


def test_a_plain_run_to_a_pipe_shows_control_sequences_as_escapes(
    api: FakeAnthropic, model_env: dict[str, str], tmp_path: Path
) -> None:
    """The answer on stdout and the tool lines and errors on stderr carry every sequence as a visible escape."""
    nasty_run(api)
    proc = run_chimera("run", "go", "--workdir", str(tmp_path), "--permission-mode", "bypass", env=model_env)
    assert proc.returncode == 0, proc.stderr
    assert_inert(proc.stdout)
    assert_inert(proc.stderr)
    assert "Answer A\\x1b]0;pwned\\x07B\\x1b]52;c;" in proc.stdout
    assert "\\u202etxt.exe" in proc.stdout
    assert "● nope\\x1b]0;pwned\\x07" in proc.stderr
    assert "● write evil\\x1b]0;pwned\\x07.txt" in proc.stderr
    assert (tmp_path / f"evil{TITLE}.txt").read_bytes() == NASTY.encode()  # what the tools do is unchanged


def test_a_plain_run_to_a_terminal_shows_control_sequences_as_escapes(
    api: FakeAnthropic, model_env: dict[str, str], tmp_path: Path
) -> None:
    """Streamed to a terminal (a pty), the answer's sequences arrive as visible escapes, piece by piece."""
    api.script(message(text(f"Streamed {NASTY} end\r\nnext", pieces=40)))
    code, screen, err = on_a_terminal("run", "x", "--workdir", str(tmp_path), env=model_env)
    assert code == 0, err
    assert_inert(screen)
    assert screen == terminal_safe(f"Streamed {NASTY} end\nnext") + "\n"


def test_json_output_keeps_the_exact_text_escaped_by_json(
    api: FakeAnthropic, model_env: dict[str, str], tmp_path: Path
) -> None:
    """--json carries the model's text and the tool's output exactly, every control character JSON-escaped."""
    nasty_run(api)
    proc = run_chimera("run", "go", "--json", "--workdir", str(tmp_path), "--permission-mode", "bypass", env=model_env)
    assert proc.returncode == 0, proc.stderr
    assert_inert(proc.stdout)
    events = [json.loads(line) for line in proc.stdout.splitlines()]
    assert events[-1]["answer"] == f"Answer {NASTY} end"
    started = {e["call_id"]: e for e in events if e["type"] == "tool_call_started"}
    assert started["t2"]["name"] == f"nope{TITLE}"
    assert started["t1"]["args"]["command"] == f"printf '{NASTY}' ; echo '{TITLE}'"
    output = next(e["output"] for e in events if e["type"] == "tool_call_finished" and e["call_id"] == "t1")
    assert TITLE in output


def test_a_server_error_and_a_bad_flag_are_shown_as_escapes(
    api: FakeAnthropic, model_env: dict[str, str], tmp_path: Path
) -> None:
    """The server's words in a failed run's line, and a path given on the command line, steer nothing."""
    api.script(status(400, "invalid_request_error", f"bad {NASTY}"))
    failed = run_chimera("run", "x", "--workdir", str(tmp_path), env=model_env)
    assert failed.returncode == 1
    assert_inert(failed.stderr)
    assert "bad A\\x1b]0;pwned\\x07B" in failed.stderr
    missing = run_chimera("run", "x", "--workdir", str(tmp_path / f"gone{TITLE}"))
    assert missing.returncode == 2
    assert_inert(missing.stderr)
    assert "gone\\x1b]0;pwned\\x07" in missing.stderr
    assert len(missing.stderr.strip().splitlines()) == 1


# --- session commands on a crafted session ---------------------------------------------------


def crafted_session(home: Path, tmp_path: Path) -> str:
    """A session file whose title, answers, tool calls, results and label all carry control sequences."""
    workdir = tmp_path / f"ws{TITLE}"
    workdir.mkdir()
    with SessionStore.create(home, "s1", workdir=workdir, model=f"m{CLEAR}") as store:
        store.add("user", {"role": "user", "content": f"Title {NASTY}\nsecond line"}, sync=True)
        call = {"type": "tool_use", "id": "c1", "name": f"bash{CLEAR}", "input": {"command": f"echo {NASTY}"}}
        store.add(
            "assistant", {"role": "assistant", "content": [{"type": "text", "text": f"Say {NASTY}"}, call]}, sync=True
        )
        result = {"type": "tool_result", "tool_use_id": "c1", "content": f"out {NASTY}", "is_error": False}
        node = store.add("tool_result", {"role": "user", "content": [result]}, sync=True)
        store.label(node.id, f"cp{TITLE}")
        store.add("assistant", {"role": "assistant", "content": [{"type": "text", "text": f"Done {NASTY}"}]}, sync=True)
    return "s1"


@pytest.mark.parametrize(
    "command",
    [["sessions"], ["tree", "s1"], ["export", "s1"], ["replay", "s1"]],
    ids=["sessions", "tree", "export", "replay"],
)
def test_session_commands_show_a_crafted_session_as_escapes(
    isolated_env: Path, tmp_path: Path, command: list[str]
) -> None:
    """`chimera sessions`, `tree`, `export` and `replay` print a crafted session's sequences as visible escapes."""
    crafted_session(isolated_env, tmp_path)
    proc = run_chimera(*command)
    assert proc.returncode == 0, proc.stderr
    assert_inert(proc.stdout)
    assert_inert(proc.stderr)
    assert "Title A\\x1b]0;pwned\\x07B" in proc.stdout or "Done A\\x1b]0;pwned\\x07B" in proc.stdout


def test_tree_and_sessions_keep_each_entry_on_its_line(isolated_env: Path, tmp_path: Path) -> None:
    """A label or workspace name cannot add lines of its own: one line a node, two a session."""
    crafted_session(isolated_env, tmp_path)
    tree = run_chimera("tree", "s1").stdout.splitlines()
    assert len(tree) == 1 + 4
    assert tree[3].endswith("[cp\\x1b]0;pwned\\x07]")
    sessions = run_chimera("sessions").stdout.splitlines()
    assert len(sessions) == 2
    assert sessions[1].strip().endswith("ws\\x1b]0;pwned\\x07")


def test_session_commands_in_json_keep_the_exact_text(isolated_env: Path, tmp_path: Path) -> None:
    """In JSON the crafted text comes back exactly, every steering character escaped by JSON itself."""
    crafted_session(isolated_env, tmp_path)
    sessions = run_chimera("sessions", "--json")
    tree = run_chimera("tree", "s1", "--json")
    replay = run_chimera("replay", "s1", "--json")
    for proc in (sessions, tree, replay):
        assert proc.returncode == 0, proc.stderr
        assert_inert(proc.stdout)
    [listed] = json.loads(sessions.stdout)
    assert listed["workdir"] == str(tmp_path / f"ws{TITLE}")
    assert listed["title"].startswith(f"Title A{TITLE}B{CLIPBOARD}C{CLEAR}D{C1}E{BIDI}F")
    assert [n["label"] for n in json.loads(tree.stdout)["nodes"]] == [None, None, f"cp{TITLE}", None]
    events = [json.loads(line) for line in replay.stdout.splitlines()]
    assert events[0]["task"] == f"Title {NASTY}\nsecond line"
    assert events[-1]["answer"] == f"Done {NASTY}"


def test_a_switch_preview_shows_a_crafted_file_name_as_escapes(
    api: FakeAnthropic, model_env: dict[str, str], tmp_path: Path
) -> None:
    """The paths a switch lists to rewrite or delete show their control sequences as escapes, one a line."""
    workdir = tmp_path / "ws"
    workdir.mkdir()
    api.script(
        message(tool_use("w1", "write", {"path": f"evil{TITLE}\n.txt", "content": "x"}), stop_reason="tool_use"),
        message(text("Wrote it.")),
    )
    run = run_chimera("run", "go", "--json", "--workdir", str(workdir), "--permission-mode", "bypass", env=model_env)
    assert run.returncode == 0, run.stderr
    session_id = json.loads(run.stdout.splitlines()[0])["session_id"]
    first = json.loads(run_chimera("tree", session_id, "--json").stdout)["nodes"][0]["id"]
    proc = run_chimera("switch", session_id, first, "--yes")
    assert proc.returncode == 0, proc.stderr
    assert_inert(proc.stdout)
    assert "  delete  evil\\x1b]0;pwned\\x07\\n.txt" in proc.stdout
    assert not (workdir / f"evil{TITLE}\n.txt").exists()


@pytest.mark.parametrize(("brk", "shown"), [("\r", "\\r"), ("\x0b", "\\x0b"), ("\u2028", "\\u2028"), ("\x00", "\\x00")])
def test_a_diff_on_a_terminal_shows_a_command_behind_a_line_break_as_one_added_line(
    api: FakeAnthropic, model_env: dict[str, str], project: Path, isolated_env: Path, brk: str, shown: str
) -> None:
    """`chimera diff` to a terminal: a line added as `echo safe\\rrm -rf x` (or behind \\x0b, U+2028 or a NUL,
    which makes git call the file binary) is one `+` line with the break shown escaped; `rm -rf x` is on no line
    of its own, where it would read as context."""
    api.script(
        message(tool_use("w1", "write", {"path": "run.sh", "content": "echo hi\n"}), stop_reason="tool_use"),
        message(text("Wrote it.")),
        message(
            tool_use("w2", "write", {"path": "run.sh", "content": f"echo hi\necho safe{brk}rm -rf x\n"}),
            stop_reason="tool_use",
        ),
        message(text("Added a line.")),
    )
    bypass = ("--permission-mode", "bypass", "--json")
    first = run_here("run", "write it", "--workdir", str(project), *bypass, env=model_env)
    assert first.returncode == 0, first.stderr
    session_id = str(json.loads(first.stdout.splitlines()[0])["session_id"])
    second = run_here("run", "add a line", "--resume", session_id, *bypass, env=model_env)
    assert second.returncode == 0, second.stderr
    tree = json.loads(run_here("tree", session_id, "--json").stdout)
    before = next(str(n["id"]) for n in tree["nodes"] if n["summary"] == "Wrote it.")
    code, out, err = on_a_terminal("diff", session_id, before, str(tree["leaf"]), env={})
    assert code == 0, err
    assert_inert(out)
    lines = out.splitlines()
    assert lines[-2:] == [" echo hi", f"+echo safe{shown}rm -rf x"]
    assert [line for line in lines if "rm -rf x" in line] == [f"+echo safe{shown}rm -rf x"]


# --- the workbench ---------------------------------------------------------------------------


@pytest.mark.usefixtures("model_env")
async def test_the_workbench_never_draws_a_control_sequence(api: FakeAnthropic, tmp_path: Path) -> None:
    """Text, thinking, a tool's name, arguments and output, the permission prompt: all drawn as escapes."""
    nasty_run(api)
    app = build_app(RunOptions(workdir=tmp_path, model=MODEL, permission_mode="bypass"))
    async with app.run_test(size=(160, 60)) as pilot:
        await pilot.click("#prompt")
        await pilot.press(*"go", "enter")
        await app.run_shown.wait()
        await pilot.pause()
        shown = screen_text(app)
        assert_inert(shown)
        assert "Answer A\\x1b]0;pwned\\x07B" in shown
        assert "nope\\x1b]0;pwned\\x07" in shown
        names = [call.name for call in entries(app, "tool")]
        assert f"nope{TITLE}" in names  # what the transcript holds is the event's, exactly


@pytest.mark.usefixtures("model_env")
async def test_a_resumed_crafted_session_is_drawn_as_escapes(isolated_env: Path, tmp_path: Path) -> None:
    """Resuming a crafted session draws its history, workspace and model name with visible escapes."""
    crafted_session(isolated_env, tmp_path)
    app = build_app(RunOptions(resume="s1", model=f"m{CLEAR}"))
    async with app.run_test(size=(160, 60)) as pilot:
        await app.history_shown.wait()
        app.transcript.fold_all(False)  # every call open, its output drawn
        app.query_one(TranscriptView).refresh_entries()
        await pilot.pause()
        shown = screen_text(app)
        assert_inert(shown)
        assert "Title A\\x1b]0;pwned\\x07B" in shown
        assert "out A\\x1b]0;pwned\\x07B" in shown


@pytest.mark.usefixtures("model_env")
async def test_the_permission_prompt_shows_a_command_that_hides_text_as_escapes(
    api: FakeAnthropic, tmp_path: Path
) -> None:
    """A command asked about shows its carriage return and bidi override as escapes: nothing of it is hidden."""
    hidden = f"rm -rf ~/important{CLEAR}\recho harmless \u202ecod.sh"
    api.script(message(tool_use("t1", "bash", {"command": hidden}), stop_reason="tool_use"), message(text("No.")))
    app = build_app(RunOptions(workdir=tmp_path, model=MODEL))
    async with app.run_test(size=(160, 40)) as pilot:
        await pilot.click("#prompt")
        await pilot.press(*"go", "enter")
        shown = await asked(pilot, app)
        assert_inert(shown)
        assert "rm -rf ~/important\\x1b[2J\\x1b[H\\recho harmless \\u202ecod.sh" in shown
        await pilot.press("n")
        await app.run_shown.wait()
