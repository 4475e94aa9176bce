"""Crafted and damaged session files: each damaged record is one line, and every command keeps working.

A table of sessions, each with one kind of damage appended to a sound start, goes
through ``tree``, ``tree --json``, ``export``, ``replay`` and ``run --resume`` (in
process, against the loopback Messages API); a home holding sound sessions beside
unreadable ones goes through ``sessions``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.cli_runner import chimera
from tests.fake_anthropic import FakeAnthropic, message, text
from tests.session_helpers import SNAP, node, record, sound_start


def kept(node_id: str, parent: str, *, keep: str) -> bytes:
    """A compaction node whose summary stands for what came before ``keep``."""
    summary = {"role": "user", "content": [{"type": "text", "text": "earlier work, summarized"}]}
    return record(t="node", id=node_id, parent=parent, kind="compaction", ts=1.0, keep=keep, message=summary)


def message_first(node_id: str, parent: str, content: object) -> bytes:
    """A node record with its message before the other keys (read whole, not lazily)."""
    return record(t="node", message={"role": "user", "content": content}, id=node_id, parent=parent, kind="user", ts=1)


@dataclass(frozen=True)
class Case:
    """Damage appended after the sound start, how many lines it is reported in, and where the leaf lands."""

    name: str
    damage: bytes
    reported: int
    leaf: str
    message_damaged: bool = False


TOOL_CALL = [{"type": "tool_use", "id": "t1", "name": "glob", "input": {"pattern": "*"}}]
RESULT = {"type": "tool_result", "tool_use_id": "t1", "content": "x"}

CASES = [
    Case(
        "ids forming a cycle",
        node("x1", "a1", "user", "one")
        + node("x2", "x1", "assistant", "two", "assistant")
        # The same id again, now under its own child: a loop, were it taken.
        + node("x1", "x2", "user", "three")
        + record(t="leaf", id="x1", ts=2),
        1,
        "x1",
    ),
    Case("a node that is its own parent", node("y1", "y1", "user", "loop"), 1, "a1"),
    Case(
        "a partial result missing its fields",
        node("u2", "a1", "user", "list")
        + node("c1", "u2", "assistant", TOOL_CALL, "assistant")
        # A partial with an empty result, one with none at all, one whose result is a list.
        + record(t="partial", parent="c1", result={})
        + record(t="partial", parent="c1")
        + record(t="partial", parent="c1", result=[["tool_use_id", "t1"]]),
        3,
        "c1",
    ),
    Case("a leaf naming a missing node", record(t="leaf", id="ghost", ts=2), 1, "a1"),
    Case(
        "a snapshot, a partial and a label naming a missing node",
        record(t="snap", id="ghost", commit=SNAP)
        + record(t="partial", parent="ghost", result=RESULT)
        + record(t="label", id="ghost", label="there"),
        3,
        "a1",
    ),
    Case("JSON lines that are not objects", b'[1, 2]\n"text"\n42\nnull\n{}\n', 5, "a1"),
    Case("a huge line", b'{"t":"node","id":"' + b"h" * 3_000_000 + b"\n", 1, "a1"),
    Case("bytes that are not UTF-8", b'{"t":"label","id":"a1","label":"\xff\xfe"}\n', 1, "a1"),
    Case("JSON nested too deeply", b"[" * 200_000 + b"\n", 1, "a1"),
    Case(
        "fields of the wrong type",
        node(5, "a1", "user", "id not text")
        + node(["u1"], "a1", "user", "id a list")
        + node("w1", {"id": "a1"}, "user", "parent an object")
        + record(t="node", id="w2", parent="a1", kind="user", ts="soon", message={"role": "user", "content": "x"})
        + message_first("w3", "a1", [1, 2])
        + record(t="meta", workdir=5)
        + record(t="meta", workdir="relative/path")
        + record(t="meta", created="yesterday")
        + record(t="meta", permissions={"mode": "yolo", "allow": [], "deny": []})
        + record(t="label", id="a1", label=["x"])
        + record(t="snap", id="a1", commit="--output=/tmp/x")
        + record(t="leaf", id=["a1"], ts=2),
        12,
        "a1",
    ),
    Case("many damaged lines", b"#garbage\n" * 25, 21, "a1"),
    Case(
        "queued words of the wrong shape",
        record(t="queued", id="q1", kind="shout", text="x")
        + record(t="queued", id="q2", kind="steer")
        + record(t="queued", id=7, kind="follow_up", text="x")
        + record(t="unqueued", id=["q"])
        + record(t="queued", id="q4", kind="follow_up", text=" \n\t ")  # nothing to run
        + record(t="queued", id="q5", kind="steer", text="")
        + record(
            t="node",
            id="n9",
            parent="a1",
            kind="assistant",
            ts=1.0,
            queued="q1",
            message={"role": "assistant", "content": "x"},
        ),
        7,
        "a1",
    ),
    Case(
        "compactions that keep from where no tail can start",
        node("u2", "a1", "user", "list")
        + node("c1", "u2", "assistant", TOOL_CALL, "assistant")
        + node("r1", "c1", "tool_result", [RESULT])
        + node("s1", "a1", "user", "a side branch")
        + kept("k1", "r1", keep="r1")  # tool results, apart from their call
        + kept("k2", "r1", keep="ghost")  # no such node
        + kept("k3", "r1", keep="s1")  # on another branch
        + record(
            t="node", id="k4", parent="r1", kind="user", ts=1.0, keep="u1", message={"role": "user", "content": "x"}
        )
        + kept("k5", "r1", keep="c1")  # sound: the call and its result stay together
        + record(t="leaf", id="s1", ts=2),
        4,
        "s1",
    ),
    Case(
        "a message of the wrong shape, read when needed",
        node("m1", "a1", "user", [7]) + node("m2", "m1", "assistant", [{"type": "text"}], "assistant"),
        0,
        "m2",
        message_damaged=True,
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
@pytest.mark.usefixtures("model_env")
def test_a_damaged_session_reports_each_damage_once_and_keeps_working(
    case: Case, api: FakeAnthropic, tmp_path: Path, isolated_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """tree, tree --json, export, replay and --resume all work on what is sound, one line per damaged record."""
    sound_start(isolated_env, "s1", tmp_path)
    with (isolated_env / "sessions" / "s1" / "entries.jsonl").open("ab") as fh:
        fh.write(case.damage)

    code, out, err = chimera(capsys, "tree", "s1")
    assert code == 0
    assert len(err) == case.reported, err
    assert all(line.startswith("chimera: session s1: ") for line in err)
    assert all("damaged" in line for line in err)
    assert "hello" in out
    assert f"◆ {case.leaf}" in out

    code, out, err = chimera(capsys, "tree", "s1", "--json")
    document = json.loads(out)
    assert (code, document["leaf"], len(err)) == (0, case.leaf, case.reported)
    ids = [n["id"] for n in document["nodes"]]
    assert ids[:2] == ["u1", "a1"]
    assert len(ids) == len(set(ids))
    assert all(n["parent_id"] is None or n["parent_id"] in ids for n in document["nodes"])

    code, out, err = chimera(capsys, "export", "s1")
    assert code == 0
    assert out.index("hello") < out.index("hi")
    assert ("is damaged" in out) == case.message_damaged

    code, out, err = chimera(capsys, "replay", "s1")
    if case.message_damaged:
        assert code == 1
        assert len(err) == 1
        assert "message m1 is damaged" in err[0]
    else:
        assert code == 0, err
        assert err[-1].startswith("chimera: replay completed")
        assert "hi" in out

    api.script(message(text("Resumed.")))
    code, out, err = chimera(capsys, "run", "go on", "--resume", "s1")
    if case.message_damaged:
        assert code == 1
        assert len(err) == 1
        assert err[0].startswith("chimera: the record of message m")
        assert err[0].endswith("is damaged (a text block has no text): switch to a point before it")
        assert api.requests == []
    else:
        assert code == 0, err
        assert "Resumed." in out
        (request,) = api.requests
        assert request.messages[0]["content"] == "hello"
        assert request.messages[-1]["role"] == "user"


def unreadable_sessions(sessions: Path) -> dict[str, Callable[[Path], None]]:
    """Ways a session folder can be unreadable, by the session's name."""

    def no_header(folder: Path) -> None:
        (folder / "entries.jsonl").write_bytes(b"#garbage\n" + node("u1", None, "user", "hello"))

    def wrong_header(folder: Path) -> None:
        (folder / "entries.jsonl").write_bytes(record(t="meta", session_id="bad", workdir=7, created=1))

    def entries_a_folder(folder: Path) -> None:
        (folder / "entries.jsonl").mkdir()

    def entries_a_loop(folder: Path) -> None:
        (folder / "entries.jsonl").symlink_to(folder / "entries.jsonl")

    def no_entries(folder: Path) -> None:
        (folder / "notes.txt").write_text("not a session\n")

    def locked_out(folder: Path) -> None:
        (folder / "entries.jsonl").write_bytes(record(t="meta", session_id="locked", workdir="/tmp", created=1))
        folder.chmod(0)

    ways = {
        "no-header": no_header,
        "wrong-header": wrong_header,
        "entries-folder": entries_a_folder,
        "entries-loop": entries_a_loop,
        "no-entries": no_entries,
    }
    if os.geteuid() != 0:  # root reads through mode 000
        ways["locked"] = locked_out
    return ways


def test_sessions_lists_the_readable_and_names_each_unreadable_in_one_line(
    tmp_path: Path, isolated_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`chimera sessions` lists every readable session, one stderr line per unreadable one, and exits 0."""
    sound_start(isolated_env, "good", tmp_path)
    sound_start(isolated_env, "damaged", tmp_path)
    with (isolated_env / "sessions" / "damaged" / "entries.jsonl").open("ab") as fh:
        fh.write(b"[[[\n")
    sessions = isolated_env / "sessions"
    ways = unreadable_sessions(sessions)
    for name, spoil in ways.items():
        (sessions / name).mkdir(mode=0o700)
        spoil(sessions / name)
    (sessions / "stray.txt").write_text("a file where a session folder should be\n")
    try:
        code, out, err = chimera(capsys, "sessions", "--json")
        assert code == 0
        assert sorted(info["id"] for info in json.loads(out)) == ["damaged", "good"]
        assert len(err) == len(ways) + 1, err
        for name in [*ways, "stray.txt"]:
            assert sum(name in line for line in err) == 1, (name, err)
        code, out, _ = chimera(capsys, "sessions")
        assert code == 0
        assert "good" in out
        assert "damaged" in out
        for name in ways:
            code, _, err = chimera(capsys, "tree", name)
            assert code == 2
            assert len(err) == 1
            assert name in err[0] or "entries.jsonl" in err[0]
    finally:
        if "locked" in ways:
            (sessions / "locked").chmod(0o700)
