"""`chimera compare` runs variants of a task from one point of a session, side by side, each recorded as a
branch; `chimera switch` brings a variant's files; `chimera diff` shows what differs between two points."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
from pathlib import Path

import pytest

from chimera.core.sessions.store import SessionStore
from tests.cli_runner import assert_one_line_error, chimera_command, run_chimera, run_here
from tests.compare_helpers import named_session, writes
from tests.fake_anthropic import FakeAnthropic, Reply, by_model, message, text, tool_use
from tests.helpers_loop import PidFifo
from tests.processes import Reaper
from tests.switch_helpers import folder_digest


def test_compare_json_records_branches_and_a_switch_brings_a_variants_files(
    api: FakeAnthropic, model_env: dict[str, str], project: Path, isolated_env: Path
) -> None:
    """Two models re-run "make it v2" from before-v2: every event is a line naming its variant, then the rows;
    the workspace is untouched until `chimera switch ID compare-1-model-a` brings that variant's files."""
    session_id = named_session(api, model_env, project, isolated_env)
    before = folder_digest(project)
    api.responder = by_model(
        {
            "model-a": writes("a.txt", "A\n", "A done.", "model-a"),
            "model-b": writes("c.txt", "sea\n", "B done.", "model-b"),
        }
    )
    proc = run_chimera(
        "compare", session_id, "--from", "before-v2", "--try", "model=model-a", "--try", "model=model-b",
        "--verify", "test -f a.txt", "--json", env=model_env,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    events, finished = lines[:-1], lines[-1]
    assert {e["variant"] for e in events} == {"model-a", "model-b"}
    for label in ("model-a", "model-b"):
        kinds = [e["type"] for e in events if e["variant"] == label]
        assert kinds[0] == "run_started"
        assert kinds[-1] == "run_finished"
    assert finished["type"] == "compare_finished"
    rows = {row["label"]: row for row in finished["rows"]}
    assert [(r["outcome"], r["turns"], r["tool_calls"], r["failed_calls"]) for r in rows.values()] == [
        ("completed", 2, 1, 0),
        ("completed", 2, 1, 0),
    ]
    assert rows["model-a"]["files"] == [{"path": "a.txt", "added": 1, "removed": 1}]
    assert rows["model-b"]["files"] == [{"path": "c.txt", "added": 1, "removed": 0}]
    assert (rows["model-a"]["verified"], rows["model-b"]["verified"]) == (True, True)
    assert set(rows["model-a"]) >= {"node", "input_tokens", "output_tokens", "cost_usd", "seconds"}
    assert folder_digest(project) == before
    with SessionStore.open(isolated_env, session_id, writable=False) as store:
        assert store.tree.names["compare-1-model-a"] == rows["model-a"]["node"]
        assert store.tree.names["compare-1-model-b"] == rows["model-b"]["node"]

    switched = run_chimera("switch", session_id, "compare-1-model-a", "--yes")
    assert switched.returncode == 0, switched.stderr
    assert (project / "a.txt").read_text() == "A\n"
    assert not (project / "b.txt").exists()  # run 2's file: not in that branch
    assert not (project / "c.txt").exists()  # the other variant's


def test_compare_prints_a_table_without_json(
    api: FakeAnthropic, model_env: dict[str, str], project: Path, isolated_env: Path
) -> None:
    """Without --json the rows are a table, one line a variant, with the checkpoint that ends its branch."""
    session_id = named_session(api, model_env, project, isolated_env)
    api.responder = by_model({"m1": writes("a.txt", "A\n", "done", "m1")})
    proc = run_here(
        "compare", session_id, "--from", "before-v2", "--try", "model=m1,label=first", env=model_env
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    head, row = proc.stdout.splitlines()[:2]
    assert head.split()[:3] == ["variant", "outcome", "turns"]
    assert row.split()[:3] == ["first", "completed", "2"]
    assert "first: compare-1-first" in proc.stdout
    assert "chimera: first finished after 2 turns" in proc.stderr.splitlines()


def test_diff_shows_what_differs_between_two_points(
    api: FakeAnthropic, model_env: dict[str, str], project: Path, isolated_env: Path, tmp_path: Path
) -> None:
    """`chimera diff ID A B` prints the unified diff of the files pinned at two points; the workspace untouched."""
    session_id = named_session(api, model_env, project, isolated_env)
    before = folder_digest(project)
    leaf = str(json.loads(run_here("tree", session_id, "--json").stdout)["leaf"])
    proc = run_chimera("diff", session_id, "before-v2", leaf)  # the real command: its patch goes to a pipe
    assert proc.returncode == 0, proc.stderr
    assert "-v1" in proc.stdout.splitlines()
    assert "+v2" in proc.stdout.splitlines()
    assert "+++ b/b.txt" in proc.stdout
    assert folder_digest(project) == before
    copy = tmp_path / "copy"  # piped, it is a patch that takes A's files to B's
    copy.mkdir()
    (copy / "a.txt").write_text("v1\n")
    subprocess.run(["git", "apply", "-"], input=proc.stdout, text=True, cwd=copy, check=True)
    assert folder_digest(copy) == folder_digest(project)


@pytest.mark.parametrize(
    ("spec", "needle"),
    [
        ("colour=red", "'colour' is unknown"),
        ("loop=spiral", "loop='spiral' is unknown"),
        ("max-turns=0", "max-turns='0' is not a whole number"),
        ("candidates=many", "candidates='many' is not a whole number"),
        ("model", "is not key=value"),
        ("loop=plan,loop=tot", "loop is given twice"),
        ("label=has space", "cannot name a variant"),
    ],
)
def test_a_bad_spec_is_one_line_and_runs_nothing(spec: str, needle: str, api: FakeAnthropic) -> None:
    """A spec with an unknown key or a bad value: exit 2, one line naming it and the fix; nothing is sent."""
    proc = run_here("compare", "nosuch", "--from", "x", "--try", spec)
    assert_one_line_error(proc, needle, "--try")
    assert api.requests == []


def test_two_variants_with_one_label_are_refused() -> None:
    """Two --try with the same label: exit 2, one line saying to give each its own."""
    proc = run_here("compare", "nosuch", "--from", "x", "--try", "model=a,label=x", "--try", "model=b,label=x")
    assert_one_line_error(proc, "two variants are labelled 'x'", "label of its own")


def test_compare_refuses_a_session_open_elsewhere(
    api: FakeAnthropic, model_env: dict[str, str], project: Path, isolated_env: Path
) -> None:
    """While another Chimera holds the session, compare is refused with the usual words; nothing is recorded."""
    session_id = named_session(api, model_env, project, isolated_env)
    with SessionStore.open(isolated_env, session_id):
        proc = run_here("compare", session_id, "--from", "before-v2", "--try", "model=m1", env=model_env)
    assert_one_line_error(proc, "is open in another Chimera", "close it there first")
    with SessionStore.open(isolated_env, session_id, writable=False) as store:
        assert not any(name.startswith("compare-") for name in store.tree.names)


def test_points_without_files_are_refused(isolated_env: Path, project: Path) -> None:
    """A point with no files pinned: compare and diff exit 2 with one line naming it, nothing changes."""
    store = SessionStore.create(isolated_env, "s1", workdir=project, model="m")
    node = store.add("user", {"role": "user", "content": "hello"}, sync=True)
    store.close()
    diff = run_here("diff", "s1", node.id, node.id)
    assert_one_line_error(diff, "no files pinned", node.id)
    compare = run_here("compare", "s1", "--from", node.id, "--try", "model=m1", env={"ANTHROPIC_API_KEY": "k"})
    assert_one_line_error(compare, "no files pinned", node.id)


def test_ctrl_c_stops_every_variant_and_leaves_nothing_behind(
    api: FakeAnthropic, model_env: dict[str, str], project: Path, isolated_env: Path, tmp_path: Path, reaper: Reaper
) -> None:
    """Ctrl-C while a variant's command sleeps: the command is killed, the rows still come (that variant
    stopped), exit 1, no scratch copy is left and the workspace is untouched."""
    session_id = named_session(api, model_env, project, isolated_env)
    before = folder_digest(project)
    fifo = PidFifo(tmp_path / "pid.fifo")
    sleepy = message(tool_use("t1", "bash", {"command": fifo.command(30)}), stop_reason="tool_use", model="sleepy")
    api.responder = by_model({"sleepy": [sleepy], "quick": writes("a.txt", "A\n", "done", "quick")})
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    args = ["compare", session_id, "--from", "before-v2", "--try", "model=sleepy", "--try", "model=quick", "--json"]
    proc = subprocess.Popen(
        [*chimera_command(), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        env={**os.environ, **model_env, "TMPDIR": str(scratch)},
    )
    try:
        pid = fifo.pid(timeout=60)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        fifo.close()
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 1, err
    rows = {row["label"]: row for row in json.loads(out.splitlines()[-1])["rows"]}
    assert rows["sleepy"]["outcome"] == "stopped"
    reaper.assert_killed(pid)
    assert list(scratch.iterdir()) == []
    assert folder_digest(project) == before
    assert "Traceback" not in err


def test_scratch_copies_are_never_made_inside_the_workspace(
    api: FakeAnthropic, model_env: dict[str, str], project: Path, isolated_env: Path
) -> None:
    """TMPDIR inside the workspace: compare is refused in one line naming it (exit 2); nothing runs or changes."""
    session_id = named_session(api, model_env, project, isolated_env)
    inside = project / "tmp"
    inside.mkdir()
    before = folder_digest(project)
    sent = len(api.requests)
    proc = run_here(
        "compare", session_id, "--from", "before-v2", "--try", "model=m1", env={**model_env, "TMPDIR": str(inside)}
    )
    assert_one_line_error(proc, "inside the workspace", "set TMPDIR")
    assert folder_digest(project) == before
    assert len(api.requests) == sent


def edits_only_session(api: FakeAnthropic, model_env: dict[str, str], project: Path) -> tuple[str, str]:
    """A session whose run went in accept-edits (a command is asked): its id and its task's node."""
    api.script(*writes("a.txt", "v1\n", "Wrote v1.", "claude-sonnet-4-6"))
    first = run_here(
        "run", "write v1", "--workdir", str(project), "--permission-mode", "accept-edits", "--json", env=model_env
    )
    assert first.returncode == 0, first.stderr
    session_id = str(json.loads(first.stdout.splitlines()[0])["session_id"])
    tree = json.loads(run_here("tree", session_id, "--json").stdout)
    return session_id, next(str(n["id"]) for n in tree["nodes"] if n["kind"] == "user")


def touches(model: str) -> list[Reply]:
    return [
        message(tool_use("t", "bash", {"command": "touch c.txt"}), stop_reason="tool_use", model=model),
        message(text("done"), model=model),
    ]


def test_a_refused_calls_words_are_options_compare_takes(
    api: FakeAnthropic, model_env: dict[str, str], project: Path, isolated_env: Path
) -> None:
    """A variant's command asked in the session's accept-edits mode is refused, naming the options that let it
    run; each named option, given to `chimera compare`, lets the command run in the variant's copy."""
    session_id, ref = edits_only_session(api, model_env, project)
    compare = ("compare", session_id, "--from", ref, "--task", "touch c", "--try", "model=m", "--json")
    api.responder = by_model({"m": touches("m")})
    proc = run_here(*compare, env=model_env)
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    [row] = lines[-1]["rows"]
    assert (row["failed_calls"], row["files"]) == (1, [])
    [refusal] = [e["reason"] for e in lines if e["type"] == "permission_decided"]
    assert "nobody can answer in a headless run: pass " in refusal
    ways = refusal.split(": pass ", 1)[1].split(", or ")
    assert len(ways) == 2  # a mode, and a rule
    for way in ways:
        api.responder = by_model({"m": touches("m")})
        proc = run_here(*compare, *shlex.split(way), env=model_env)
        assert proc.returncode == 0, (way, proc.stderr)
        [row] = json.loads(proc.stdout.splitlines()[-1])["rows"]
        assert (row["failed_calls"], row["files"]) == (0, [{"path": "c.txt", "added": 0, "removed": 0}]), way
    assert not (project / "c.txt").exists()


@pytest.mark.parametrize(
    ("option", "needle"),
    [("--allow", "--allow: the permission rule 'frob(' is not understood"), ("--deny", "--deny: the permission rule")],
)
def test_a_bad_permission_rule_is_one_line_before_anything_opens(option: str, needle: str, api: FakeAnthropic) -> None:
    """A rule compare cannot read is one line naming its option (exit 2), before the session is even looked for."""
    proc = run_here("compare", "nosuch", "--from", "x", "--try", "model=m", option, "frob(")
    assert_one_line_error(proc, needle)
    assert api.requests == []


@pytest.mark.parametrize("verify", ["", "   ", "\t\n", "\u200b"])
def test_a_blank_verify_is_one_line_and_runs_nothing(
    verify: str, api: FakeAnthropic, model_env: dict[str, str], project: Path, isolated_env: Path
) -> None:
    """--verify with no command in it (empty, spaces, a zero-width space) would pass every variant: exit 2, one
    line saying so, nothing sent or recorded."""
    session_id = named_session(api, model_env, project, isolated_env)
    sent = len(api.requests)
    proc = run_here(
        "compare", session_id, "--from", "before-v2", "--try", "model=m1", "--verify", verify, env=model_env
    )  # fmt: skip
    assert_one_line_error(proc, "--verify", "is empty", "leave --verify out")
    assert len(api.requests) == sent
    with SessionStore.open(isolated_env, session_id, writable=False) as store:
        assert not any(name.startswith("compare-") for name in store.tree.names)
