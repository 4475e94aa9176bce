"""The cases where a switch could lose work, and the session stays trustworthy anyway."""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from chimera.core.errors import SessionError
from chimera.core.sessions import store as session_store
from chimera.core.sessions.store import SessionStore
from tests.cli_runner import assert_one_line_error, chimera_command, run_here
from tests.fake_anthropic import FakeAnthropic, message, stalled, text, tool_use
from tests.session_helpers import kill_when, start_run
from tests.switch_helpers import answer_node, two_runs


def test_a_file_the_person_made_between_runs_survives_a_switch_back(
    api: FakeAnthropic, model_env: dict[str, str], git_project: Path, isolated_env: Path
) -> None:
    """A file made before run 2 (so run 2's snapshots saw it) is kept when switching back past it."""
    api.script(
        message(tool_use("w1", "write", {"path": "a.txt", "content": "v1\n"}), stop_reason="tool_use"),
        message(text("Wrote v1.")),
        message(tool_use("w2", "write", {"path": "b.txt", "content": "agent\n"}), stop_reason="tool_use"),
        message(text("Wrote b.")),
    )
    bypass = ("--permission-mode", "bypass", "--json")
    first = run_here("run", "one", "--workdir", str(git_project), *bypass, env=model_env)
    session_id = json.loads(first.stdout.splitlines()[0])["session_id"]
    (git_project / "mine.txt").write_text("mine\n")
    assert run_here("run", "two", "--resume", session_id, *bypass, env=model_env).returncode == 0
    proc = run_here("switch", session_id, answer_node(isolated_env, session_id, "Wrote v1."), "--yes")
    assert proc.returncode == 0, proc.stderr
    assert (git_project / "mine.txt").read_text() == "mine\n"
    assert not (git_project / "b.txt").exists()  # the agent's own file goes


def test_a_file_the_person_recreated_where_the_agent_once_made_one_survives(
    api: FakeAnthropic, model_env: dict[str, str], git_project: Path, isolated_env: Path
) -> None:
    """The agent made and removed b.txt; the person's own b.txt, written later, outlives a switch to before it all."""
    api.script(
        message(tool_use("w1", "write", {"path": "b.txt", "content": "agent\n"}), stop_reason="tool_use"),
        message(tool_use("r1", "bash", {"command": "rm b.txt"}), stop_reason="tool_use"),
        message(text("Made and removed b.")),
    )
    bypass = ("--permission-mode", "bypass", "--json")
    first = run_here("run", "one", "--workdir", str(git_project), *bypass, env=model_env)
    assert first.returncode == 0, first.stderr
    session_id = json.loads(first.stdout.splitlines()[0])["session_id"]
    nodes = json.loads(run_here("tree", session_id, "--json").stdout)["nodes"]
    prompt = next(n["id"] for n in nodes if n["kind"] == "user")
    (git_project / "b.txt").write_text("the person's own\n")
    proc = run_here("switch", session_id, prompt, "--yes")
    assert proc.returncode == 0, proc.stderr
    assert "keep    b.txt" in proc.stdout
    assert (git_project / "b.txt").read_text() == "the person's own\n"


def test_switching_does_not_change_what_other_nodes_restore(
    api: FakeAnthropic, model_env: dict[str, str], git_project: Path, isolated_env: Path
) -> None:
    """Hand edits made after a switch come back only at the node left; other nodes keep their recorded files."""
    session_id = two_runs(api, model_env, git_project)
    nodes = json.loads(run_here("tree", session_id, "--json").stdout)["nodes"]
    write_v1 = next(n["id"] for n in nodes if n["kind"] == "assistant" and n["summary"] == "[write]")
    leaf = nodes[-1]["id"]
    assert run_here("switch", session_id, write_v1, "--yes").returncode == 0  # lands after the write
    assert (git_project / "a.txt").read_text() == "v1\n"
    (git_project / "a.txt").write_text("hand edit\n")
    assert run_here("switch", session_id, leaf, "--yes").returncode == 0
    assert (git_project / "a.txt").read_text() == "v2\n"
    assert run_here("switch", session_id, write_v1, "--yes").returncode == 0
    assert (git_project / "a.txt").read_text() == "hand edit\n"  # the files as the person left that point
    first_answer = answer_node(isolated_env, session_id, "Wrote v1.")
    assert run_here("switch", session_id, first_answer, "--yes").returncode == 0
    assert (git_project / "a.txt").read_text() == "v1\n"  # a neighbour's recorded files did not drift


def test_switching_to_a_message_lands_just_before_it(
    api: FakeAnthropic, model_env: dict[str, str], git_project: Path, isolated_env: Path
) -> None:
    """Switching to the person's second message restores the files it was sent with; a new task replaces it."""
    session_id = two_runs(api, model_env, git_project)
    nodes = json.loads(run_here("tree", session_id, "--json").stdout)["nodes"]
    second_prompt = next(n["id"] for n in nodes if n["summary"] == "make it v2")
    proc = run_here("switch", session_id, second_prompt, "--yes")
    assert proc.returncode == 0, proc.stderr
    assert "just before this message" in proc.stdout
    assert (git_project / "a.txt").read_text() == "v1\n"
    api.script(message(text("Different plan.")))
    run = run_here("run", "make it v3 instead", "--resume", session_id, "--json", env=model_env)
    assert run.returncode == 0, run.stderr
    contents = [m["content"] for m in api.requests[-1].messages if m["role"] == "user"]
    assert contents[-1] == "make it v3 instead"
    assert "make it v2" not in json.dumps(contents)


def test_resume_in_another_folder_only_when_the_first_is_gone(
    api: FakeAnthropic, model_env: dict[str, str], git_project: Path, tmp_path: Path, isolated_env: Path
) -> None:
    """--resume --workdir is refused while the session's folder exists, and followed (recorded) once it moved."""
    session_id = two_runs(api, model_env, git_project)
    elsewhere = tmp_path / "moved"
    assert_one_line_error(
        run_here("run", "x", "--resume", session_id, "--workdir", str(tmp_path), env=model_env),
        "still exists",
    )
    git_project.rename(elsewhere)
    api.script(message(text("Found it.")))
    moved = run_here("run", "x", "--resume", session_id, "--workdir", str(elsewhere), env=model_env)
    assert moved.returncode == 0, moved.stderr
    (info,) = json.loads(run_here("sessions", "--json").stdout)
    assert info["workdir"] == str(elsewhere.resolve())


def test_a_failed_write_leaves_no_glued_record(
    isolated_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A disk-full write is cut back: the error names the cause, and every record before and after is whole."""
    store = SessionStore.create(isolated_env, "s", workdir=tmp_path, model="m")
    store.add("user", {"role": "user", "content": "first"}, sync=True)
    real_write = os.write

    def half_then_full(fd: int, data: bytes) -> int:
        real_write(fd, data[: len(data) // 2])
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(session_store.os, "write", half_then_full)
    with pytest.raises(SessionError, match="No space left on device"):
        store.add("assistant", {"role": "assistant", "content": [{"type": "text", "text": "lost"}]})
    monkeypatch.setattr(session_store.os, "write", real_write)
    store.add("user", {"role": "user", "content": "after"}, sync=True)
    store.close()
    with SessionStore.open(isolated_env, "s", writable=False) as again:
        assert again.warnings == []
        assert [n.message["content"] for n in again.tree.path()] == ["first", "after"]


def test_a_switch_cut_short_blocks_resume_until_undone(
    api: FakeAnthropic, model_env: dict[str, str], git_project: Path, isolated_env: Path
) -> None:
    """A switch that died half way is detected: resume names the command that undoes it, and that command does."""
    session_id = two_runs(api, model_env, git_project)
    target = answer_node(isolated_env, session_id, "Wrote v1.")
    with SessionStore.open(isolated_env, session_id) as store:
        leaf = store.tree.leaf
        aim = store.tree.snapshot_for(target)
        assert aim is not None
        store.begin_switch(target, store.checkpoints().snapshot(), aim)
    (git_project / "a.txt").write_text("v1\n")  # the switch got this far...
    (git_project / "b.txt").unlink()  # ...and the process died here
    proc = run_here("run", "x", "--resume", session_id, env=model_env)
    assert_one_line_error(proc, "middle of a switch", f"chimera switch {session_id} {leaf} --yes", "undoes the switch")
    undone = run_here("switch", session_id, str(leaf), "--yes")
    assert undone.returncode == 0, undone.stderr
    assert "Undone" in undone.stdout
    assert (git_project / "a.txt").read_text() == "v2\n"  # as before the switch, which was not finished
    assert (git_project / "b.txt").read_text() == "new\n"
    api.script(message(text("Back on track.")))
    assert run_here("run", "x", "--resume", session_id, env=model_env).returncode == 0


def test_no_switch_while_another_run_works_in_the_folder(
    api: FakeAnthropic, model_env: dict[str, str], git_project: Path, isolated_env: Path
) -> None:
    """A switch that would rewrite files is refused while any session's run works in the same folder."""
    session_id = two_runs(api, model_env, git_project)
    api.script(stalled())
    other = subprocess.Popen(
        [*chimera_command(), "run", "wait", "--json", "--workdir", str(git_project)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env={**os.environ, **model_env},
    )
    try:
        assert other.stdout is not None
        for line in other.stdout:  # wait until the other run is talking to the model
            if json.loads(line)["type"] == "turn_started":
                break
        proc = run_here("switch", session_id, answer_node(isolated_env, session_id, "Wrote v1."), "--yes")
        assert_one_line_error(proc, f"another process is working in {git_project} (pid {other.pid} (")
        assert (git_project / "a.txt").read_text() == "v2\n"
    finally:
        other.kill()
        other.communicate()


def test_events_carry_the_node_they_belong_to(
    api: FakeAnthropic, model_env: dict[str, str], tmp_path: Path, isolated_env: Path
) -> None:
    """message_completed is stamped with its own assistant node, a reminder with the results it rides in."""
    api.script(
        message(tool_use("w", "write", {"path": "a.txt", "content": "x"}), stop_reason="tool_use"),
        message(text("Done.")),
    )
    proc = run_here("run", "x", "--json", "--workdir", str(tmp_path), "--permission-mode", "bypass", env=model_env)
    events = [json.loads(line) for line in proc.stdout.splitlines()]
    session_id = events[0]["session_id"]
    with SessionStore.open(isolated_env, session_id, writable=False) as store:
        nodes = store.tree.nodes
        for event in events:
            if event["type"] == "message_completed":
                assert nodes[event["node_id"]].message == event["message"]
            if event["type"] == "reminder_injected":
                assert nodes[event["node_id"]].kind == "tool_result"
                assert event["text"] in json.dumps(nodes[event["node_id"]].message)


def test_replay_plays_a_session_that_was_killed_while_answering(
    api: FakeAnthropic, model_env: dict[str, str], tmp_path: Path, isolated_env: Path
) -> None:
    """Two prompts in a row (a run killed mid-answer, then resumed) replay as the one turn they were."""
    api.script(stalled(text("half")), message(text("Whole answer.")))
    seen = kill_when(start_run(model_env, tmp_path), lambda e: e["type"] == "text_delta")
    session_id = str(seen[0]["session_id"])
    assert run_here("run", "again", "--resume", session_id, env=model_env).returncode == 0
    replay = run_here("replay", session_id, "--json")
    assert replay.returncode == 0, replay.stderr
    assert json.loads(replay.stdout.splitlines()[-1])["answer"] == "Whole answer."


def test_damaged_records_are_reported_not_fatal(isolated_env: Path, tmp_path: Path) -> None:
    """A record with a broken message is skipped with a warning by tree and export; sessions lists the rest."""
    with SessionStore.create(isolated_env, "good", workdir=tmp_path, model="m") as store:
        store.add("user", {"role": "user", "content": "fine"}, sync=True)
    with SessionStore.create(isolated_env, "bad", workdir=tmp_path, model="m") as store:
        store.add("user", {"role": "user", "content": "fine too"}, sync=True)
    entries = isolated_env / "sessions" / "bad" / "entries.jsonl"
    with entries.open("a") as fh:
        broken = {"t": "node", "id": "x", "parent": None, "kind": "user", "ts": 1, "message": "oops"}
        fh.write(json.dumps(broken) + "\n")
    listing = run_here("sessions", "--json")
    assert listing.returncode == 0, listing.stderr
    assert sorted(s["id"] for s in json.loads(listing.stdout)) == ["bad", "good"]
    tree = run_here("tree", "bad")
    assert tree.returncode == 0, tree.stderr
    assert "line 3 is damaged" in tree.stderr
    export = run_here("export", "bad")
    assert export.returncode == 0
    assert "fine too" in export.stdout


def test_a_message_damaged_inside_its_record_is_one_line_when_it_is_needed(
    api: FakeAnthropic, model_env: dict[str, str], isolated_env: Path, tmp_path: Path
) -> None:
    """A record whose message bytes were garbled: the tree marks it, a resume through it says so in one line."""
    with SessionStore.create(isolated_env, "s", workdir=tmp_path, model="m") as store:
        first = store.add("user", {"role": "user", "content": "fine"}, sync=True)
        store.add("assistant", {"role": "assistant", "content": [{"type": "text", "text": "garble me"}]}, sync=True)
    entries = isolated_env / "sessions" / "s" / "entries.jsonl"
    entries.write_bytes(entries.read_bytes().replace(b'"text":"garble me"', b'"text":garble me"'))
    tree = run_here("tree", "s", "--json")
    assert tree.returncode == 0, tree.stderr
    summaries = [n["summary"] for n in json.loads(tree.stdout)["nodes"]]
    assert summaries == ["fine", "[damaged record]"]
    resumed = run_here("run", "go on", "--resume", "s", env=model_env)
    assert resumed.returncode == 1
    (line,) = resumed.stderr.strip().splitlines()
    assert "is damaged" in line
    assert "switch to a point before it" in line
    assert api.requests == []  # nothing garbled was sent
    assert run_here("switch", "s", first.id, "--yes").returncode == 0


def test_a_switch_names_the_changes_no_snapshot_saw_and_keeps_them_for_the_way_back(
    api: FakeAnthropic, model_env: dict[str, str], git_project: Path, isolated_env: Path
) -> None:
    """Hand edits since the last snapshot are listed before the switch, and switching back brings them back."""
    session_id = two_runs(api, model_env, git_project)
    leaf = json.loads(run_here("tree", session_id, "--json").stdout)["leaf"]
    (git_project / "a.txt").write_text("unsaved hand edit\n")
    (git_project / "notes.txt").write_text("new, never snapshotted\n")
    proc = run_here("switch", session_id, answer_node(isolated_env, session_id, "Wrote v1."), "--yes")
    assert proc.returncode == 0, proc.stderr
    assert "Changed since the last snapshot (kept in the pre-switch snapshot): a.txt, notes.txt" in proc.stdout
    assert (git_project / "a.txt").read_text() == "v1\n"
    assert (git_project / "notes.txt").read_text() == "new, never snapshotted\n"  # never the agent's: kept
    assert run_here("switch", session_id, leaf, "--yes").returncode == 0
    assert (git_project / "a.txt").read_text() == "unsaved hand edit\n"


def test_checkpoint_reports_damage_and_a_workspace_that_is_gone(
    api: FakeAnthropic, model_env: dict[str, str], git_project: Path, isolated_env: Path
) -> None:
    """`chimera checkpoint` says when it set a torn record aside, and when it could not pin files that are gone."""
    session_id = two_runs(api, model_env, git_project)
    entries = isolated_env / "sessions" / session_id / "entries.jsonl"
    with entries.open("ab") as fh:
        fh.write(b'{"t":"label","id":"cut sho')
    shutil.rmtree(git_project)
    proc = run_here("checkpoint", session_id, "after-the-move")
    assert proc.returncode == 0, proc.stderr
    assert "set aside" in proc.stderr
    assert "is gone, so it keeps the files last pinned there (snapshot " in proc.stdout
    document = json.loads(run_here("tree", session_id, "--json").stdout)
    (leaf,) = [n for n in document["nodes"] if n["id"] == document["leaf"]]
    assert leaf["label"] == "after-the-move"


def test_a_file_that_appeared_while_a_command_ran_is_kept_and_the_preview_says_why(
    api: FakeAnthropic, model_env: dict[str, str], tmp_path: Path, isolated_env: Path
) -> None:
    """Files made while the agent's bash ran (by the person, or by the command) are kept; write's own file goes."""
    workdir = tmp_path / "w"
    workdir.mkdir()
    fifo = tmp_path / "go.fifo"
    os.mkfifo(fifo)
    api.script(
        message(
            tool_use("w1", "write", {"path": "by_write.txt", "content": "the agent's\n"}),
            tool_use("b1", "bash", {"command": f"read line < {fifo}; echo built > by_bash.txt"}),
            stop_reason="tool_use",
        ),
        message(text("Built.")),
    )
    fd = os.open(fifo, os.O_RDWR | os.O_NONBLOCK)  # both ends ours: the command's read waits for our line
    run = subprocess.Popen(
        [*chimera_command(), "run", "build", "--json", "--workdir", str(workdir), "--permission-mode", "bypass"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        env={**os.environ, **model_env},
    )
    try:
        assert run.stdout is not None
        events = []
        for line in run.stdout:  # wait until the command is running
            events.append(json.loads(line))
            if events[-1]["type"] == "tool_call_started" and events[-1]["call_id"] == "b1":
                break
        (workdir / "notes.txt").write_text("the person's, made while the command ran\n")
        os.write(fd, b"go\n")
        _, err = run.communicate(timeout=60)
    finally:
        os.close(fd)
        if run.poll() is None:
            run.kill()
            run.communicate()
    assert run.returncode == 0, err
    session_id = str(events[0]["session_id"])
    with SessionStore.open(isolated_env, session_id, writable=False) as store:
        prompt = store.tree.path()[0].id
    proc = run_here("switch", session_id, prompt, "--yes")
    assert proc.returncode == 0, proc.stderr
    assert "delete  by_write.txt  (the agent's tools made it)" in proc.stdout
    assert "keep    by_bash.txt  (appeared while a command ran: may be yours, kept)" in proc.stdout
    assert "keep    notes.txt  (appeared while a command ran: may be yours, kept)" in proc.stdout
    assert not (workdir / "by_write.txt").exists()
    assert (workdir / "notes.txt").read_text() == "the person's, made while the command ran\n"
    assert (workdir / "by_bash.txt").read_text() == "built\n"


def test_a_session_recorded_before_tools_noted_their_files_keeps_every_file(
    api: FakeAnthropic, model_env: dict[str, str], git_project: Path, isolated_env: Path
) -> None:
    """A session whose pins do not say what write made (an older Chimera's) deletes nothing on a switch back."""
    session_id = two_runs(api, model_env, git_project)
    entries = isolated_env / "sessions" / session_id / "entries.jsonl"
    records = [json.loads(line) for line in entries.read_text().splitlines()]
    assert any("made" in r for r in records if r["t"] == "snap")  # this Chimera notes them...
    older = [{k: v for k, v in r.items() if k not in ("wrote", "made")} for r in records]  # ...an older one did not
    entries.write_text("".join(json.dumps(r) + "\n" for r in older))
    prompt = json.loads(run_here("tree", session_id, "--json").stdout)["nodes"][0]["id"]
    proc = run_here("switch", session_id, prompt, "--yes")
    assert proc.returncode == 0, proc.stderr
    assert "delete" not in proc.stdout
    assert (git_project / "a.txt").read_text() == "v2\n"
    assert (git_project / "b.txt").read_text() == "new\n"
