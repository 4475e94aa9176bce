"""Property tests of the session store: any sequence of appends, kills and damaged lines opens to a sound tree.

A Hypothesis state machine drives a real ``SessionStore`` in a temporary folder:
messages added under the leaf or under any earlier node, partial results,
snapshots, leaf moves and labels; a *kill* cuts the file at any byte and reopens
it; *damage* overwrites a line in the middle with garbage and reopens it. The
machine keeps the file's lines as written; after every reopen the file holds
exactly the whole lines written before the cut, and the tree holds every entry
whose line survived (and whose ancestors' lines did), nothing else, with no loop.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from chimera.core.sessions.jsonl import is_json_object
from chimera.core.sessions.store import SessionStore
from chimera.core.sessions.tree import SessionTree

TEXT = st.text(max_size=30)
COMMIT = st.text(alphabet="0123456789abcdef", min_size=40, max_size=40)
KINDS = st.sampled_from(["user", "assistant", "tool_result"])
GARBAGE = st.binary(max_size=40).map(lambda b: b"#" + b.replace(b"\n", b" "))  # never JSON, never two lines


@dataclass
class Expected:
    """What a tree folded from the surviving lines must hold."""

    nodes: dict[str, tuple[str | None, str, dict[str, Any]]]
    leaf: str | None
    names: dict[str, str]
    snapshots: dict[str, str]
    partials: dict[str, list[dict[str, Any]]]


def expected(lines: list[bytes]) -> Expected:
    """The session the surviving lines describe: a record counts when the node(s) it names survive."""
    out = Expected({}, None, {}, {}, {})
    answered: set[str] = set()
    for line in lines[1:]:
        if line.startswith(b"#"):
            continue
        record = json.loads(line)
        kind = record["t"]
        if kind == "node" and (record["parent"] is None or record["parent"] in out.nodes):
            out.nodes[record["id"]] = (record["parent"], record["kind"], record["message"])
            out.leaf = record["id"]
            if record["kind"] == "tool_result" and record["parent"] is not None:
                answered.add(record["parent"])
                out.partials.pop(record["parent"], None)
        elif kind == "leaf" and (record["id"] is None or record["id"] in out.nodes):
            out.leaf = record["id"]
        elif kind == "label" and record["id"] in out.nodes:  # a name is on one node: it moves here
            out.names.pop(record["label"], None)
            out.names[record["label"]] = record["id"]
        elif kind == "snap" and record["id"] in out.nodes:
            out.snapshots[record["id"]] = record["commit"]
        elif kind == "partial" and record["parent"] in out.nodes and record["parent"] not in answered:
            out.partials.setdefault(record["parent"], []).append(record["result"])
    return out


def assert_sound(tree: SessionTree) -> None:
    """Every node hangs from a root by a finite chain, once in its parent's children; the leaf exists."""
    assert tree.leaf is None or tree.leaf in tree.nodes
    for node_id, node in tree.nodes.items():
        chain = tree.path(node_id)
        assert chain[0].parent_id is None
        assert chain[-1].id == node_id
        assert len({n.id for n in chain}) == len(chain)
        assert tree.children[node.parent_id].count(node_id) == 1
    assert sum(len(c) for c in tree.children.values()) == len(tree.nodes)


class SessionFile(RuleBasedStateMachine):
    """One session file, written through the store, cut and damaged from outside."""

    def __init__(self) -> None:
        super().__init__()
        self.home = Path(tempfile.mkdtemp(prefix="chimera-prop-"))
        self.store = SessionStore.create(self.home, "s1", workdir=self.home, model="m")
        self.entries = self.store.folder / "entries.jsonl"
        self.lines = self.entries.read_bytes().splitlines(keepends=True)  # the file as written and cut, line by line
        self.calls = 0

    def teardown(self) -> None:
        self.store.close()
        shutil.rmtree(self.home, ignore_errors=True)

    # --- writing through the store ------------------------------------------------------

    def _wrote(self) -> None:
        data = self.entries.read_bytes()
        written = sum(map(len, self.lines))
        self.lines.append(data[written:])
        assert data[written:].endswith(b"\n")
        assert data[written:].count(b"\n") == 1

    def _pick(self, index: int) -> str:
        ids = list(self.store.tree.nodes)
        return ids[index % len(ids)]

    @rule(kind=KINDS, words=TEXT, under=st.none() | st.integers(min_value=0), root=st.booleans())
    def add(self, kind: str, words: str, under: int | None, root: bool) -> None:
        if kind == "assistant":
            self.calls += 1
            call = {"type": "tool_use", "id": f"t{self.calls}", "name": "glob", "input": {"pattern": words}}
            message: dict[str, Any] = {"role": "assistant", "content": [{"type": "text", "text": words}, call]}
        else:
            message = {"role": "user", "content": words}
        if root or not self.store.tree.nodes:
            self.store.add(kind, message, parent=None)
        elif under is None:
            self.store.add(kind, message)
        else:
            self.store.add(kind, message, parent=self._pick(under))
        self._wrote()

    @precondition(lambda self: self.store.tree.leaf is not None)
    @rule(words=TEXT)
    def partial(self, words: str) -> None:
        leaf = self.store.tree.leaf
        assert leaf is not None
        block = {"type": "tool_result", "tool_use_id": f"t{self.calls}", "content": words, "is_error": False}
        self.store.record_result(leaf, block)
        self._wrote()

    @precondition(lambda self: bool(self.store.tree.nodes))
    @rule(index=st.integers(min_value=0), commit=COMMIT)
    def snap(self, index: int, commit: str) -> None:
        self.store.pin(self._pick(index), commit)
        self._wrote()

    @precondition(lambda self: bool(self.store.tree.nodes))
    @rule(index=st.none() | st.integers(min_value=0))
    def move_leaf(self, index: int | None) -> None:
        self.store.move_leaf(None if index is None else self._pick(index))
        self._wrote()

    @precondition(lambda self: bool(self.store.tree.nodes))
    @rule(index=st.integers(min_value=0), label=TEXT)
    def label(self, index: int, label: str) -> None:
        self.store.label(self._pick(index), label)
        self._wrote()

    # --- harm from outside ----------------------------------------------------------------

    @rule(where=st.floats(min_value=0, max_value=1))
    def kill(self, where: float) -> None:
        """The process dies mid-write: the file ends at any byte after its header."""
        self.store.close()
        size = sum(map(len, self.lines))
        header = len(self.lines[0])
        cut = header + int((size - header) * where)
        with self.entries.open("r+b") as fh:
            fh.truncate(cut)
        kept, total = [], 0
        for line in self.lines:
            if total + len(line) > cut:
                break
            kept.append(line)
            total += len(line)
        torn = b"".join(self.lines)[total:cut]
        whole = torn and torn + b"\n" == self.lines[len(kept)] and is_json_object(torn)
        if whole:  # only its newline was lost: the record is whole, and kept
            kept.append(self.lines[len(kept)])
            torn = b""
        self.lines = kept
        self._reopen(torn)

    @precondition(lambda self: len(self.lines) > 1)
    @rule(index=st.integers(min_value=1), garbage=GARBAGE)
    def damage(self, index: int, garbage: bytes) -> None:
        """A line in the middle is overwritten with garbage (a bad disk, a careless edit)."""
        self.store.close()
        self.lines[1 + index % (len(self.lines) - 1)] = garbage + b"\n"
        self.entries.write_bytes(b"".join(self.lines))
        self._reopen(b"")

    def _reopen(self, torn: bytes) -> None:
        before = {p.name for p in self.entries.parent.glob("torn-*")}
        self.store = SessionStore.open(self.home, "s1")
        aside = [p for p in self.entries.parent.glob("torn-*") if p.name not in before]
        assert [p.read_bytes() for p in aside] == ([torn] if torn else [])
        assert self.entries.read_bytes() == b"".join(self.lines)
        damaged = sum(line.startswith(b"#") for line in self.lines)
        assert len(self.store.warnings) >= min(damaged, 1) + bool(torn)
        self._check(self.store.tree)

    # --- what must hold -------------------------------------------------------------------

    def _check(self, tree: SessionTree) -> None:
        assert_sound(tree)
        want = expected(self.lines)
        got = {n.id: (n.parent_id, n.kind, n.message) for n in tree.nodes.values()}
        assert got == want.nodes
        assert tree.leaf == want.leaf
        assert tree.names == want.names
        assert tree.snapshots == want.snapshots
        assert tree.partials == want.partials

    @invariant()
    def the_tree_in_memory_is_sound(self) -> None:
        assert_sound(self.store.tree)

    @invariant()
    def a_reader_sees_what_the_writer_holds(self) -> None:
        with SessionStore.open(self.home, "s1", writable=False) as reader:
            self._check(reader.tree)


SessionFile.TestCase.settings = settings(max_examples=40, stateful_step_count=25)
test_any_appends_kills_and_damage_open_to_a_sound_tree_with_every_completed_entry = SessionFile.TestCase
test_any_appends_kills_and_damage_open_to_a_sound_tree_with_every_completed_entry.__doc__ = (
    "Whatever is appended, cut or damaged, reopening gives a loop-free tree with every surviving entry."
)
