"""Sessions you can trust: resume, a torn tail set aside, one writer at a time, and kill -9 mid-run."""

from __future__ import annotations

import itertools
import json
import os
import re
import select
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from chimera.core.errors import ConfigError
from chimera.core.sessions import session_lock
from chimera.core.sessions.catalog import note, read_catalog
from chimera.core.sessions.listing import catalog_sessions
from chimera.core.sessions.log import SessionLog
from chimera.core.sessions.reading import model_context
from chimera.core.sessions.store import SessionStore
from tests.cli_runner import assert_one_line_error, run_chimera, run_here
from tests.fake_anthropic import DEFAULT_MODEL as MODEL
from tests.fake_anthropic import FakeAnthropic, message, stalled, text, tool_use
from tests.processes import Reaper
from tests.session_helpers import kill_when, start_run


def node_kinds(home: Path, session_id: str) -> list[str]:
    with SessionStore.open(home, session_id, writable=False) as store:
        return [node.kind for node in store.tree.path()]


def user_texts(request_messages: list[dict[str, object]]) -> list[str]:
    texts = []
    for m in request_messages:
        content = m["content"]
        if isinstance(content, str):
            texts.append(content)
        else:
            texts += [b["text"] for b in content if isinstance(b, dict) and b.get("type") == "text"]  # type: ignore[union-attr]
    return texts


def test_resume_continues_the_conversation(
    api: FakeAnthropic, model_env: dict[str, str], tmp_path: Path, isolated_env: Path
) -> None:
    """`chimera run --resume ID` sends the earlier exchange with the new task, and extends the same session."""
    api.script(message(text("Noted: 42.")), message(text("It was 42.")))
    first = run_chimera("run", "remember 42", "--json", "--workdir", str(tmp_path), env=model_env)
    assert first.returncode == 0, first.stderr
    session_id = json.loads(first.stdout.splitlines()[0])["session_id"]
    second = run_chimera("run", "which number?", "--json", "--resume", session_id, env=model_env)
    assert second.returncode == 0, second.stderr
    assert json.loads(second.stdout.splitlines()[0])["session_id"] == session_id
    sent = api.requests[1].messages
    assert [m["role"] for m in sent] == ["user", "assistant", "user"]
    assert user_texts(sent) == ["remember 42", "Noted: 42.", "which number?"]
    assert node_kinds(isolated_env, session_id) == ["user", "assistant", "user", "assistant"]


def test_resume_of_an_unknown_session_is_one_line(
    isolated_env: Path, api: FakeAnthropic, model_env: dict[str, str]
) -> None:
    """--resume with an id that does not exist gets one line pointing at `chimera sessions`, exit 2."""
    assert_one_line_error(run_here("run", "x", "--resume", "nope", env=model_env), "nope", "chimera sessions")


def _session_with_two_turns(home: Path, workdir: Path) -> SessionStore:
    store = SessionStore.create(home, "s1", workdir=workdir, model=MODEL)
    store.add("user", {"role": "user", "content": "hello"}, sync=True)
    store.add("assistant", {"role": "assistant", "content": [{"type": "text", "text": "hi"}]}, sync=True)
    return store


def test_a_torn_last_record_is_set_aside_on_open(isolated_env: Path, tmp_path: Path) -> None:
    """A record cut short by a crash is moved aside whole; the session opens with everything before it."""
    with _session_with_two_turns(isolated_env, tmp_path):
        pass
    entries = isolated_env / "sessions" / "s1" / "entries.jsonl"
    torn = b'{"t":"node","id":"zz","parent":null,"kind":"user","ts":1,"mess'
    with entries.open("ab") as fh:
        fh.write(torn)
    with SessionStore.open(isolated_env, "s1") as store:
        assert [n.kind for n in store.tree.path()] == ["user", "assistant"]
        assert store.warnings
        assert "set aside" in store.warnings[0]
        store.add("user", {"role": "user", "content": "again"}, sync=True)
    (aside,) = entries.parent.glob("torn-entries-*.jsonl")
    assert aside.read_bytes() == torn
    assert oct(aside.stat().st_mode & 0o777) == oct(0o600)
    lines = entries.read_bytes().splitlines()
    assert all(json.loads(line) for line in lines)  # every line whole again, the new record after the good ones
    assert json.loads(lines[-1])["message"]["content"] == "again"


def test_two_torn_records_set_aside_in_the_same_millisecond_are_both_kept(
    isolated_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two crashes whose torn records are set aside within one millisecond (the clock the same for both): the
    second piece goes beside the first under a name of its own; the session opens, nothing is lost."""
    from chimera.core.sessions import jsonl

    monkeypatch.setattr(jsonl.time, "time", lambda: 1_700_000_000.0)
    with _session_with_two_turns(isolated_env, tmp_path):
        pass
    entries = isolated_env / "sessions" / "s1" / "entries.jsonl"
    pieces = [b'{"t":"node","id":"y1","mess', b'{"t":"node","id":"y2","mess']
    for torn in pieces:
        with entries.open("ab") as fh:
            fh.write(torn)
        with SessionStore.open(isolated_env, "s1") as store:
            assert [n.kind for n in store.tree.path()] == ["user", "assistant"]
    kept = sorted(entries.parent.glob("torn-entries-*.jsonl"))
    assert sorted(p.read_bytes() for p in kept) == sorted(pieces)


def test_a_torn_event_line_is_set_aside_when_the_log_is_next_opened(isolated_env: Path) -> None:
    """events.jsonl cut mid-line (a 200 KB event) is cut back to whole lines, the piece kept beside it."""
    first = run_here("run", "fix it", "--json")
    session_id = json.loads(first.stdout.splitlines()[0])["session_id"]
    events = isolated_env / "sessions" / session_id / "events.jsonl"
    whole = events.read_bytes()
    torn = b'{"type":"tool_call_finished","output":"' + b"x" * 200_000
    with events.open("ab") as fh:
        fh.write(torn)
    log = SessionLog(events.parent)
    log.close()
    assert log.warning is not None
    assert "set aside" in log.warning
    assert events.read_bytes() == whole
    (aside,) = events.parent.glob("torn-events-*.jsonl")
    assert aside.read_bytes() == torn
    assert all(json.loads(line) for line in events.read_bytes().splitlines())


def test_records_laid_out_differently_still_open_whole(isolated_env: Path, tmp_path: Path) -> None:
    """Node records with keys in another order, a key after the message or a look-alike key all read back."""
    with SessionStore.create(isolated_env, "s1", workdir=tmp_path, model="m") as store:
        root = store.add("user", {"role": "user", "content": "as written"}, sync=True).id
    odd = [
        {
            "t": "node",
            "message": {"role": "assistant", "content": "message first"},
            "id": "b",
            "parent": root,
            "kind": "assistant",
            "ts": 2,
        },
        {
            "t": "node",
            "id": "c",
            "parent": "b",
            "kind": "user",
            "ts": 3,
            "message": {"role": "user", "content": "a key after"},
            "note": 1,
        },
        {
            "t": "node",
            "id": "d",
            "parent": "c",
            "kind": "assistant",
            "ts": 4,
            "x": ',"message":{',
            "message": {"role": "assistant", "content": "look-alike"},
        },
    ]
    with (isolated_env / "sessions" / "s1" / "entries.jsonl").open("a") as fh:
        for record in odd:
            fh.write(json.dumps(record, separators=(",", ":")) + "\n")
    with SessionStore.open(isolated_env, "s1", writable=False) as store:
        assert store.warnings == []
        contents = [m["content"] for m in model_context(store.tree).messages]
    assert contents == ["as written", "message first", "a key after", "look-alike"]


def test_a_damaged_middle_line_is_reported_and_the_file_left_alone(isolated_env: Path, tmp_path: Path) -> None:
    """A garbled line inside the log is skipped with a warning, and nothing in the file is rewritten."""
    with _session_with_two_turns(isolated_env, tmp_path):
        pass
    entries = isolated_env / "sessions" / "s1" / "entries.jsonl"
    lines = entries.read_bytes().splitlines(keepends=True)
    lines.insert(2, b"#@!garbage\n")
    entries.write_bytes(b"".join(lines))
    before = entries.read_bytes()
    with SessionStore.open(isolated_env, "s1", writable=False) as store:
        assert [n.kind for n in store.tree.path()] == ["user", "assistant"]
        assert "line 3 is damaged" in store.warnings[0]
    assert entries.read_bytes() == before


def test_a_second_writer_is_refused_with_the_holders_pid(isolated_env: Path, tmp_path: Path) -> None:
    """While one process has a session open, another gets a clear refusal naming that process."""
    with _session_with_two_turns(isolated_env, tmp_path):
        pass
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys; from pathlib import Path; from chimera.core.sessions.store import SessionStore\n"
            "s = SessionStore.open(Path(sys.argv[1]), 's1'); print('open', flush=True); sys.stdin.read()",
            str(isolated_env),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "open"
        with pytest.raises(ConfigError, match=rf"open in another Chimera \(pid {holder.pid}\)"):
            SessionStore.open(isolated_env, "s1")
        with SessionStore.open(isolated_env, "s1", writable=False) as reader:  # reading is always fine
            assert len(reader.tree) == 2
    finally:
        holder.communicate("")
    with SessionStore.open(isolated_env, "s1"):  # the lock went with the process
        pass


_HOLDER_THAT_ENDS = """
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDWR)
fcntl.flock(fd, fcntl.LOCK_EX)
os.ftruncate(fd, 0)
os.pwrite(fd, str(os.getpid()).encode(), 0)
if os.fork() == 0:  # keeps the lock, as a child forked to start a command does until it executes it
    sys.stdin.read()
    os._exit(0)
print("held", flush=True)
"""


def _holder_that_ends(lock: Path) -> subprocess.Popen[str]:
    """A process that takes ``lock`` and ends, leaving it held by its child until stdin closes."""
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLDER_THAT_ENDS, str(lock)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert holder.stdout is not None
    assert holder.stdout.readline().strip() == "held"
    holder.wait()  # the pid in the lock file has ended; its child holds the lock
    return holder


def _let_go(holder: subprocess.Popen[str]) -> None:
    """Close the child's stdin and wait until it has ended (its copy of stdout closes with it)."""
    assert holder.communicate("")[0] == ""


def test_a_lock_left_by_a_killed_chimera_to_its_child_is_waited_for(
    isolated_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SIGKILL while forking a command: the child holds the lock until it executes the command. The next
    Chimera waits for it instead of calling the dead process "another Chimera"."""
    with _session_with_two_turns(isolated_env, tmp_path) as store:
        lock = store.folder / "lock"
    holder = _holder_that_ends(lock)
    seen: list[str] = []
    ended = session_lock._ended

    def the_child_lets_go_once_seen(pid: str) -> bool:
        seen.append(pid)
        if len(seen) == 1:
            _let_go(holder)
        return ended(pid)

    monkeypatch.setattr(session_lock, "_ended", the_child_lets_go_once_seen)
    with SessionStore.open(isolated_env, "s1") as opened:
        assert len(opened.tree) == 2
    assert seen == [str(holder.pid)]


def test_a_lock_its_ended_holders_child_keeps_is_refused_naming_what_to_do(
    isolated_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The Chimera that took the lock has ended and a child of it keeps the lock: refused, naming the child
    (its pid and command) as what to end."""
    with _session_with_two_turns(isolated_env, tmp_path) as store:
        lock = store.folder / "lock"
    holder = _holder_that_ends(lock)
    monkeypatch.setattr(session_lock, "GRACE", 0.1)
    try:
        with pytest.raises(
            ConfigError,
            match=rf"\(pid {holder.pid}\) has ended: a process it started \(pid \d+ \({re.escape(sys.executable)} -c",
        ):
            SessionStore.open(isolated_env, "s1")
    finally:
        _let_go(holder)
    with SessionStore.open(isolated_env, "s1"):
        pass


def test_session_files_are_private(isolated_env: Path, tmp_path: Path) -> None:
    """The session folder, its log and its lock are readable by their owner only."""
    with _session_with_two_turns(isolated_env, tmp_path) as store:
        folder = store.folder
    assert folder.stat().st_mode & 0o777 == 0o700
    for name in ("entries.jsonl", "lock"):
        assert (folder / name).stat().st_mode & 0o777 == 0o600


# --- kill -9 ---------------------------------------------------------------------------------


def _killed_mid_batch(api: FakeAnthropic, model_env: dict[str, str], workdir: Path) -> str:
    """A run killed while its second call runs, its first (a write of a.txt) finished; the session id."""
    api.script(
        message(
            tool_use("t1", "write", {"path": "a.txt", "content": "one"}),
            tool_use("t2", "bash", {"command": "sleep 300"}),
            stop_reason="tool_use",
        ),
        message(text("Resumed fine.")),
    )
    seen = kill_when(start_run(model_env, workdir), lambda e: e["type"] == "tool_call_started" and e["call_id"] == "t2")
    return str(seen[0]["session_id"])


def test_kill_while_the_first_answer_streams_keeps_the_prompt(
    api: FakeAnthropic, model_env: dict[str, str], tmp_path: Path, isolated_env: Path
) -> None:
    """kill -9 while the model answers: the prompt was saved before the model spoke, and resume works."""
    api.script(stalled(text("I am thinking ab")), message(text("Back again.")))
    seen = kill_when(start_run(model_env, tmp_path), lambda e: e["type"] == "text_delta")
    session_id = str(seen[0]["session_id"])
    assert node_kinds(isolated_env, session_id) == ["user"]
    resumed = run_here("run", "continue", "--json", "--resume", session_id, env=model_env)
    assert resumed.returncode == 0, resumed.stderr
    assert user_texts(api.requests[-1].messages) == ["go", "continue"]  # the half answer is gone


def test_kill_during_a_tool_keeps_every_finished_result(
    api: FakeAnthropic, model_env: dict[str, str], tmp_path: Path, isolated_env: Path
) -> None:
    """kill -9 mid-batch: the call that finished keeps its result; the running one is answered as not run."""
    session_id = _killed_mid_batch(api, model_env, tmp_path)
    assert node_kinds(isolated_env, session_id) == ["user", "assistant"]
    resumed = run_here("run", "go on", "--json", "--resume", session_id, env=model_env)
    assert resumed.returncode == 0, resumed.stderr
    sent = api.requests[-1].messages
    closing = sent[-1]["content"]
    assert [b.get("tool_use_id") for b in closing[:2]] == ["t1", "t2"]
    assert closing[0]["content"] == "Created a.txt (1 line)."  # the finished call's own result
    assert closing[0]["is_error"] is False
    assert closing[1]["content"].startswith("Cancelled: this call did not finish")
    assert closing[-1] == {"type": "text", "text": "go on"}
    assert (tmp_path / "a.txt").read_text() == "one"


def test_a_file_made_after_a_crash_survives_switching_back(
    api: FakeAnthropic, model_env: dict[str, str], tmp_path: Path, isolated_env: Path
) -> None:
    """kill -9 mid-batch, then the person adds a file and resumes: a switch to the start never deletes it."""
    session_id = _killed_mid_batch(api, model_env, tmp_path)
    (tmp_path / "mine.txt").write_text("made while Chimera was down\n")
    resumed = run_here("run", "go on", "--json", "--resume", session_id, env=model_env)
    assert resumed.returncode == 0, resumed.stderr
    with SessionStore.open(isolated_env, session_id, writable=False) as store:
        first = next(n.id for n in store.tree.path() if n.kind == "user")  # lands before it all
    switched = run_here("switch", session_id, first, "--yes")
    assert switched.returncode == 0, switched.stderr
    assert (tmp_path / "mine.txt").read_text() == "made while Chimera was down\n"


def test_kill_during_a_tool_leaves_no_process_behind(
    api: FakeAnthropic, model_env: dict[str, str], tmp_path: Path, reaper: Reaper
) -> None:
    """kill -9 while bash runs: the shell and its background child die with Chimera, not later."""
    fifo = tmp_path / "started.fifo"
    os.mkfifo(fifo)
    api.script(
        message(tool_use("t1", "bash", {"command": f"sleep 300 & echo $! $$ > {fifo}; wait"}), stop_reason="tool_use"),
    )
    workdir = tmp_path / "ws"
    workdir.mkdir()
    # Both ends open on our side: nothing blocks, and the shell's write is an event we can wait for.
    fd = os.open(fifo, os.O_RDWR | os.O_NONBLOCK)
    proc = start_run(model_env, workdir)
    try:
        ready, _, _ = select.select([fd], [], [], 30)
        assert ready, "the bash call never started"
        child, shell = (int(x) for x in os.read(fd, 100).split())
    finally:
        os.close(fd)
        proc.send_signal(signal.SIGKILL)
        proc.communicate()
    reaper.assert_killed(shell)
    reaper.assert_killed(child)


def test_kill_between_turns_loses_nothing(
    api: FakeAnthropic, model_env: dict[str, str], tmp_path: Path, isolated_env: Path
) -> None:
    """kill -9 right after a turn's results: the log ends on a whole record with every result in it."""
    api.script(
        message(tool_use("t1", "glob", {"pattern": "*"}), stop_reason="tool_use"),
        stalled(),
    )
    seen = kill_when(start_run(model_env, tmp_path), lambda e: e["type"] == "turn_started" and e["turn"] == 2)
    session_id = str(seen[0]["session_id"])
    entries = isolated_env / "sessions" / session_id / "entries.jsonl"
    assert entries.read_bytes().endswith(b"\n")
    assert node_kinds(isolated_env, session_id) == ["user", "assistant", "tool_result"]


def test_sessions_and_tree_commands_describe_what_was_recorded(
    api: FakeAnthropic, model_env: dict[str, str], tmp_path: Path
) -> None:
    """`chimera sessions --json` lists the run; `chimera tree ID --json` gives its nodes and leaf."""
    api.script(
        message(tool_use("g1", "glob", {"pattern": "*"}), stop_reason="tool_use"),
        message(tool_use("g2", "glob", {"pattern": "*.py"}), stop_reason="tool_use"),
        message(text("Nothing here.")),
    )
    assert run_chimera("run", "look around", "--workdir", str(tmp_path), env=model_env).returncode == 0
    listing = run_chimera("sessions", "--json")
    assert listing.returncode == 0, listing.stderr
    (info,) = json.loads(listing.stdout)
    assert set(info) == {"id", "title", "workdir", "created", "updated", "entries", "turns", "leaf", "last_run"}
    assert info["title"] == "look around"
    assert info["entries"] == 6
    tree = run_chimera("tree", info["id"], "--json")
    assert tree.returncode == 0, tree.stderr
    document = json.loads(tree.stdout)
    assert document["session_id"] == info["id"]
    assert document["leaf"] == info["leaf"] == document["nodes"][-1]["id"]
    assert [n["kind"] for n in document["nodes"]] == ["user"] + ["assistant", "tool_result"] * 2 + ["assistant"]
    fields = {"id", "parent_id", "kind", "part", "summary", "label", "labels", "checkpoint", "restores", "left_out"}
    assert set(document["nodes"][0]) == fields
    assert all(n["parent_id"] == p["id"] for p, n in zip(document["nodes"], document["nodes"][1:], strict=False))
    human = run_chimera("tree", info["id"])
    assert f"◆ {info['leaf']}" in human.stdout


def test_export_writes_the_active_path_as_markdown(isolated_env: Path, tmp_path: Path) -> None:
    """`chimera export ID -o FILE` writes the task, the answers and the tool results, in order."""
    demo = run_chimera("run", "x", "--json")  # the demo's session: kept, though never listed
    assert demo.returncode == 0, demo.stderr
    info = {"id": json.loads(demo.stdout.splitlines()[0])["session_id"]}
    target = tmp_path / "session.md"
    proc = run_chimera("export", info["id"], "-o", str(target))
    assert proc.returncode == 0, proc.stderr
    document = target.read_text()
    assert document.startswith("# Find the failing test")
    order = [document.index(s) for s in ("## You", "**bash**", "FAILED (failures=1)", "**edit**", "All 3 tests pass")]
    assert order == sorted(order)
    assert "<system-reminder>" not in document
    # As the workbench shows it: the thinking folded, the edit's diff after its result.
    assert "<details><summary>thinking</summary>" in document
    diff = document.index("```diff")
    assert document.index("**edit**") < diff < document.index("All 3 tests pass")
    assert "+    return (ordered[mid - 1] + ordered[mid]) / 2" in document[diff:]
    assert run_chimera("export", info["id"]).stdout == document
    assert_one_line_error(run_chimera("export", "nope"), "nope")


@pytest.mark.parametrize("kill_at", [2, 5, 9, 13, 17, 21])
def test_kill_at_many_points_then_reopen_and_resume(
    api: FakeAnthropic, model_env: dict[str, str], tmp_path: Path, isolated_env: Path, kill_at: int
) -> None:
    """kill -9 after any event: only whole records, every completed message and finished result resumes."""
    api.script(
        message(text("Step one."), tool_use("t1", "write", {"path": "a.txt", "content": "a"}), stop_reason="tool_use"),
        message(text("Step two."), tool_use("t2", "bash", {"command": "echo b > b.txt"}), stop_reason="tool_use"),
        message(text("Step three."), tool_use("t3", "read", {"path": "a.txt"}), stop_reason="tool_use"),
        message(text("All done.")),
    )
    seen = kill_when(start_run(model_env, tmp_path), lambda e: e["seq"] == kill_at)
    session_id = str(seen[0]["session_id"])
    entries = isolated_env / "sessions" / session_id / "entries.jsonl"
    raw = entries.read_bytes()
    assert raw.endswith(b"\n")
    assert all(json.loads(line) for line in raw.splitlines())
    # A message is saved before it is announced, a tool result before its call is reported finished.
    completed = [e["message"]["content"][0]["text"] for e in seen if e["type"] == "message_completed"]
    finished = [e["call_id"] for e in seen if e["type"] == "tool_call_finished"]
    kinds = node_kinds(isolated_env, session_id)
    assert kinds[0] == "user"
    assert kinds.count("assistant") >= len(completed)
    api.script(message(text("Resumed.")))
    resumed = run_here("run", "finish", "--json", "--resume", session_id, env=model_env)
    assert resumed.returncode == 0, resumed.stderr
    sent = api.requests[-1].messages
    roles = [m["role"] for m in sent]
    assert all(a != b for a, b in itertools.pairwise(roles))  # a valid, alternating conversation
    answers = [b["text"] for m in sent if m["role"] == "assistant" for b in m["content"] if b["type"] == "text"]
    assert answers[: len(completed)] == completed
    results = {
        b["tool_use_id"]: b["content"]
        for m in sent
        if m["role"] == "user" and isinstance(m["content"], list)
        for b in m["content"]
        if b["type"] == "tool_result"
    }
    for call_id in finished:
        assert not results[call_id].startswith("Cancelled"), (call_id, results[call_id])


# Runs `chimera run` with the session file's writes watched: the write of the first tool_result
# node puts half its bytes on disk, then the process SIGKILLs itself, mid-record.
_DIE_MID_RECORD = """
import os, signal, sys, types
from chimera.core.sessions import jsonl
from chimera.tui.cli import main

def write(fd, data):
    if os.readlink(f"/proc/self/fd/{fd}").endswith("entries.jsonl") and b'"kind":"tool_result"' in data:
        os.write(fd, data[: len(data) // 2])
        os.kill(os.getpid(), signal.SIGKILL)
    return os.write(fd, data)

jsonl.os = types.SimpleNamespace(**{**vars(os), "write": write})
sys.exit(main(sys.argv[1:]))
"""


def test_kill_in_the_middle_of_writing_a_record_loses_no_finished_result(
    api: FakeAnthropic, model_env: dict[str, str], tmp_path: Path, isolated_env: Path
) -> None:
    """kill -9 with half a record on disk: it is set aside on resume; the finished result still reaches the model."""
    if not sys.platform.startswith("linux"):
        pytest.skip("finds the session file through /proc")
    api.script(
        message(tool_use("t1", "bash", {"command": "seq 1 3000"}), stop_reason="tool_use"),
        message(text("Resumed fine.")),
    )
    run = [sys.executable, "-c", _DIE_MID_RECORD, "run", "go", "--json", "--workdir", str(tmp_path)]
    proc = subprocess.run(
        [*run, "--permission-mode", "bypass"],
        capture_output=True,
        text=True,
        env={**os.environ, **model_env},
        timeout=60,
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    session_id = json.loads(proc.stdout.splitlines()[0])["session_id"]
    entries = isolated_env / "sessions" / session_id / "entries.jsonl"
    assert not entries.read_bytes().endswith(b"\n")  # the kill did land mid-record
    resumed = run_here("run", "go on", "--json", "--resume", session_id, env=model_env)
    assert resumed.returncode == 0, resumed.stderr
    assert "set aside" in resumed.stderr
    (torn,) = entries.parent.glob("torn-entries-*.jsonl")
    assert b'"kind":"tool_result"' in torn.read_bytes()
    closing = api.requests[-1].messages[-1]["content"]
    assert closing[0]["tool_use_id"] == "t1"
    assert closing[0]["content"].startswith("1\n2\n3\n")  # the real output, kept as the call finished
    assert closing[-1] == {"type": "text", "text": "go on"}
    assert all(json.loads(line) for line in entries.read_bytes().splitlines())


def test_resume_when_the_workspace_is_gone_is_one_line(
    api: FakeAnthropic, model_env: dict[str, str], tmp_path: Path
) -> None:
    """A session whose folder was deleted gets one line suggesting --workdir, and the session is untouched."""
    workdir = tmp_path / "gone"
    workdir.mkdir()
    api.script(message(text("Hi.")))
    first = run_here("run", "hello", "--json", "--workdir", str(workdir), env=model_env)
    session_id = json.loads(first.stdout.splitlines()[0])["session_id"]
    workdir.rmdir()
    assert_one_line_error(run_here("run", "again", "--resume", session_id, env=model_env), "--workdir")


def branched_session(home: Path, workdir: Path) -> str:
    """A session of three answers on two branches: the active one (its leaf's) holds two of them."""
    with SessionStore.create(home, "b1", workdir=workdir, model=MODEL) as store:
        say = {"role": "assistant", "content": [{"type": "text", "text": "done"}]}
        store.add("user", {"role": "user", "content": "first"}, sync=True)
        first = store.add("assistant", say, sync=True)
        store.add("user", {"role": "user", "content": "left behind"}, sync=True)
        store.add("assistant", say, sync=True)
        store.add("user", {"role": "user", "content": "taken instead"}, parent=first.id, sync=True)
        store.add("assistant", say, sync=True)
    return "b1"


def test_sessions_count_the_turns_of_the_active_branch(isolated_env: Path, tmp_path: Path) -> None:
    """Two answers on the branch the person is on, one on a branch left behind: `chimera sessions` (its JSON too)
    and the picker's catalog say 2 turns, as the person saw them."""
    session_id = branched_session(isolated_env, tmp_path)
    (info,) = json.loads(run_here("sessions", "--json").stdout)
    assert (info["id"], info["turns"], info["entries"]) == (session_id, 2, 6)
    assert " 2 turns  first" in run_here("sessions").stdout
    (entry,) = catalog_sessions(isolated_env)
    assert entry.turns == 2


def test_a_catalog_counting_every_branch_is_read_again(isolated_env: Path, tmp_path: Path) -> None:
    """A catalog line an older Chimera wrote (turns of every branch, at the session's size now) is not trusted:
    the session is read again once, and its line then says the active branch's turns."""
    session_id = branched_session(isolated_env, tmp_path)
    entries = isolated_env / "sessions" / session_id / "entries.jsonl"
    older = {"title": "first", "workdir": str(tmp_path), "updated": 1.0, "turns": 3, "size": entries.stat().st_size}
    note(isolated_env, session_id, {**older, "ending": None})
    assert [entry.turns for entry in catalog_sessions(isolated_env)] == [2]
    folded, _ = read_catalog(isolated_env)
    assert folded[session_id]["active_turns"] == 2
