"""Session files crafted to break Chimera: each is refused or read as damage in one line, and the rest keeps working.

What a record holds is checked whole before any of it counts; text that is not
Unicode (lone surrogates) comes out as U+FFFD; numbers that are not finite, or
times no calendar holds, are damage; a last record that is whole but lacks its
newline is kept, and the next one starts on a line of its own.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chimera.core.events import TurnStarted
from chimera.core.sessions.log import SessionLog
from chimera.core.sessions.reading import read_node, summary
from chimera.core.sessions.store import SessionStore
from chimera.core.strict_json import clean_text
from tests.cli_runner import chimera
from tests.fake_anthropic import DEFAULT_MODEL as MODEL
from tests.fake_anthropic import FakeAnthropic, message, text
from tests.session_helpers import SNAP, node, record, sound_start


def entries(home: Path, session_id: str) -> Path:
    return home / "sessions" / session_id / "entries.jsonl"


def append(home: Path, session_id: str, data: bytes) -> None:
    with entries(home, session_id).open("ab") as fh:
        fh.write(data)


def test_a_record_that_fails_its_checks_half_way_changes_nothing(
    tmp_path: Path, isolated_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A snapshot record whose node and id are sound but whose later fields are not pins nothing."""
    sound_start(isolated_env, "s1", tmp_path)
    append(
        isolated_env,
        "s1",
        record(t="snap", id="a1", commit=SNAP, found=True, wrote=["not", "a", "map"])
        + record(t="snap", id="u1", commit=SNAP, wrote={"a.txt": SNAP}, made="a.txt"),
    )
    code, out, err = chimera(capsys, "tree", "s1", "--json")
    assert code == 0
    assert len(err) == 2
    assert all("damaged" in line for line in err)
    document = json.loads(out)
    assert [n["checkpoint"] for n in document["nodes"]] == [None, None]
    with SessionStore.open(isolated_env, "s1", writable=False) as store:
        assert store.tree.snapshots == {}
        assert store.tree.found == set()
        assert store.tree.wrote == {}
        assert store.tree.made == {}


NOT_FINITE = [
    pytest.param(b"NaN", id="NaN"),
    pytest.param(b"Infinity", id="Infinity"),
    pytest.param(b"-Infinity", id="-Infinity"),
    pytest.param(b"1e400", id="1e400"),
    pytest.param(b"1" + b"0" * 400, id="an integer past any float"),
    pytest.param(b"1e300", id="a time past any calendar"),
    pytest.param(b"-5", id="a time before 1970"),
]


@pytest.mark.parametrize("number", NOT_FINITE)
@pytest.mark.usefixtures("model_env")
def test_a_number_that_is_not_a_time_is_damage_and_every_other_session_lists(
    number: bytes, api: FakeAnthropic, tmp_path: Path, isolated_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """NaN, infinities and times no calendar holds, in a node's time, a later meta record or the header."""
    sound_start(isolated_env, "good", tmp_path)
    sound_start(isolated_env, "nodes", tmp_path)
    append(
        isolated_env,
        "nodes",
        b'{"t":"node","id":"n1","parent":"a1","kind":"user","ts":'
        + number
        + b',"message":{"role":"user","content":"x"}}\n'
        + b'{"t":"node","message":{"role":"user","content":"y"},"id":"n2","parent":"a1","kind":"user","ts":'
        + number
        + b"}\n"
        + b'{"t":"meta","created":'
        + number
        + b"}\n"
        + b'{"t":"leaf","id":"u1","ts":'
        + number
        + b"}\n",
    )
    header = isolated_env / "sessions" / "header"
    header.mkdir(mode=0o700)
    (header / "entries.jsonl").write_bytes(
        b'{"t":"meta","session_id":"header","workdir":"/tmp","model":"m","created":' + number + b"}\n"
    )

    code, out, err = chimera(capsys, "sessions", "--json")
    assert code == 0
    listed = json.loads(out)  # strict JSON: no NaN or Infinity in it
    assert sorted(info["id"] for info in listed) == ["good", "nodes"]
    assert all(isinstance(info["created"], float) for info in listed)
    assert len(err) == 1
    assert "header" in err[0]
    code, out, err = chimera(capsys, "sessions")
    assert code == 0
    assert "good" in out

    code, out, err = chimera(capsys, "tree", "nodes", "--json")
    assert code == 0
    assert [n["id"] for n in json.loads(out)["nodes"]] == ["u1", "a1"]
    assert json.loads(out)["leaf"] == "a1"
    assert len(err) == 4
    assert all("damaged" in line for line in err)

    code, out, err = chimera(capsys, "export", "nodes")
    assert code == 0
    assert "hello" in out

    api.script(message(text("Resumed.")))
    code, out, err = chimera(capsys, "run", "go on", "--resume", "nodes")
    assert code == 0, err
    assert "Resumed." in out


LONE = [
    pytest.param("\\ud800", id="a high surrogate"),
    pytest.param("\\udfff", id="a low surrogate"),
    pytest.param("\\udc80\\ud800", id="a pair the wrong way round"),
]


@pytest.mark.parametrize("escape", LONE)
@pytest.mark.usefixtures("model_env")
def test_lone_surrogates_anywhere_in_a_session_come_out_as_replacement_characters(
    escape: str, api: FakeAnthropic, tmp_path: Path, isolated_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """In the title, a message read lazily or whole, a label, the model and the workdir: every command works."""
    s = escape.encode()
    r = clean_text(json.loads(f'"{escape}"'))  # each lone surrogate as U+FFFD
    with SessionStore.create(isolated_env, "s1", workdir=tmp_path, model=MODEL):
        pass
    append(
        isolated_env,
        "s1",
        b'{"t":"meta","model":"m' + s + b'","workdir":"/tmp/w' + s + b'"}\n'
        b'{"t":"node","id":"u1","parent":null,"kind":"user","ts":1.0,"message":{"role":"user","content":"he'
        + s
        + b'llo"}}\n'
        b'{"t":"node","message":{"role":"assistant","content":[{"type":"text","text":"h'
        + s
        + b'i"},{"type":"tool_use","id":"t'
        + s
        + b'","name":"gl'
        + s
        + b'ob","input":{"pattern":"'
        + s
        + b'"}}]},"id":"a1","parent":"u1","kind":"assistant","ts":1.0}\n'
        b'{"t":"node","id":"r1","parent":"a1","kind":"tool_result","ts":1.0,"message":{"role":"user","content":'
        b'[{"type":"tool_result","tool_use_id":"t' + s + b'","content":"out' + s + b'"}]}}\n'
        b'{"t":"node","id":"a2","parent":"r1","kind":"assistant","ts":1.0,"message":{"role":"assistant","content":'
        b'[{"type":"text","text":"done"}]}}\n'
        b'{"t":"label","id":"a1","label":"na' + s + b'me"}\n',
    )
    code, out, err = chimera(capsys, "sessions")
    assert (code, err) == (0, [])
    assert f"he{r}llo" in out
    code, out, err = chimera(capsys, "sessions", "--json")
    assert code == 0
    assert json.loads(out)[0]["title"] == f"he{r}llo"
    code, out, err = chimera(capsys, "tree", "s1")
    assert (code, err) == (0, [])
    assert f"na{r}me" in out
    assert f"h{r}i" in out
    code, out, err = chimera(capsys, "tree", "s1", "--json")
    assert code == 0
    assert "\ufffd" in out
    code, out, err = chimera(capsys, "export", "s1")
    assert (code, err) == (0, [])
    assert f"out{r}" in out
    assert f"m{r}" in out
    code, out, err = chimera(capsys, "replay", "s1")
    assert code == 0, err
    out.encode()  # valid UTF-8 all the way
    out_file = tmp_path / "export.md"
    code, _, err = chimera(capsys, "export", "s1", "-o", str(out_file))
    assert (code, err) == (0, [])
    assert f"he{r}llo" in out_file.read_text(encoding="utf-8")


@pytest.mark.usefixtures("model_env")
def test_a_whole_last_record_without_its_newline_is_kept_and_the_next_starts_a_line(
    api: FakeAnthropic, tmp_path: Path, isolated_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The file just ends after a sound record: read-only commands see it, a resume keeps it and appends after it."""
    sound_start(isolated_env, "s1", tmp_path)
    append(isolated_env, "s1", node("u2", "a1", "user", "again").rstrip(b"\n"))

    code, out, err = chimera(capsys, "tree", "s1", "--json")
    assert (code, err) == (0, [])
    assert json.loads(out)["leaf"] == "u2"

    api.script(message(text("Resumed.")))
    code, out, err = chimera(capsys, "run", "go on", "--resume", "s1")
    assert code == 0, err
    assert not any("cut short" in line for line in err), err
    (request,) = api.requests
    assert [m["role"] for m in request.messages] == ["user", "assistant", "user"]
    assert "again" in json.dumps(request.messages[-1])
    assert not list((isolated_env / "sessions" / "s1").glob("torn-*"))

    code, out, err = chimera(capsys, "tree", "s1", "--json")
    assert (code, err) == (0, [])
    kinds = [n["kind"] for n in json.loads(out)["nodes"]]
    assert kinds == ["user", "assistant", "user", "user", "assistant"]
    assert entries(isolated_env, "s1").read_bytes().endswith(b"\n")


def test_a_torn_last_record_is_still_set_aside(
    tmp_path: Path, isolated_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A last line that does not parse (cut short mid-write) is set aside on resume, never kept or glued."""
    sound_start(isolated_env, "s1", tmp_path)
    append(isolated_env, "s1", node("u2", "a1", "user", "again")[:-10])
    code, out, err = chimera(capsys, "tree", "s1", "--json")
    assert code == 0
    assert json.loads(out)["leaf"] == "a1"
    assert len(err) == 1
    assert "cut short" in err[0]
    with SessionStore.open(isolated_env, "s1") as store:
        assert any("set aside" in w for w in store.warnings)
        store.add("user", {"role": "user", "content": "next"}, sync=True)
    with SessionStore.open(isolated_env, "s1", writable=False) as store:
        assert store.warnings == []
        assert [summary(read_node(n)) for n in store.tree.path()] == ["hello", "hi", "next"]


TORN_TAILS = [
    pytest.param(b'{"t":"node","id":"' + b"h" * 3_000_000, id="a huge line cut short"),
    pytest.param(b"[" * 200_000, id="nesting too deep to parse"),
    pytest.param(b'{"t":"meta","created":1' + b"0" * 5000 + b"}", id="a number too long to parse"),
    pytest.param(b'{"t":"label","id":"a1","label":"\xff"}', id="bytes that are not UTF-8"),
]


@pytest.mark.parametrize("tail", TORN_TAILS)
@pytest.mark.usefixtures("model_env")
def test_a_last_line_that_does_not_parse_is_one_line_and_set_aside_on_resume(
    tail: bytes, api: FakeAnthropic, tmp_path: Path, isolated_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """However hard the last line is to parse, tree reports it once; a resume sets it aside and appends after it."""
    sound_start(isolated_env, "s1", tmp_path)
    append(isolated_env, "s1", tail)
    code, out, err = chimera(capsys, "tree", "s1", "--json")
    assert code == 0
    assert json.loads(out)["leaf"] == "a1"
    (line,) = err
    assert "cut short" in line
    api.script(message(text("Resumed.")))
    code, out, err = chimera(capsys, "run", "go on", "--resume", "s1")
    assert code == 0, err
    assert "Resumed." in out
    (aside,) = (isolated_env / "sessions" / "s1").glob("torn-entries-*.jsonl")
    assert aside.read_bytes() == tail
    code, out, err = chimera(capsys, "tree", "s1", "--json")
    assert (code, err) == (0, [])
    assert len(json.loads(out)["nodes"]) == 4


def test_the_event_log_keeps_a_whole_last_event_and_sets_a_torn_one_aside(tmp_path: Path) -> None:
    """events.jsonl: a last event lacking only its newline is kept, the next starts a line; a torn one moves aside."""
    folder = tmp_path / "session"
    folder.mkdir()
    events = folder / "events.jsonl"
    events.write_bytes(b'{"type":"turn_started"}\n{"type":"run_finished"}')
    log = SessionLog(folder)
    assert log.warning is None
    log(TurnStarted(session_id="s", run_id="r", turn=1))
    log.close()
    whole = events.read_bytes()
    assert [json.loads(line)["type"] for line in whole.splitlines()] == ["turn_started", "run_finished", "turn_started"]
    with events.open("ab") as fh:
        fh.write(b'{"type":"tur')
    log = SessionLog(folder)
    assert log.warning is not None
    assert "set aside" in log.warning
    log.close()
    assert events.read_bytes() == whole
    assert [p.read_bytes() for p in folder.glob("torn-events-*.jsonl")] == [b'{"type":"tur']
