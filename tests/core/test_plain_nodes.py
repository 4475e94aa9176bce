"""Opening a session adds a node record laid out as the store writes it without building the record's dict:
for any sequence of such records (repeated ids, missing parents, unknown kinds, times out of range) the
session read is the one the general path reads, with the same warnings."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from chimera.core.sessions.loading import load_entries
from chimera.core.sessions.records import apply_record, parse_record
from chimera.core.sessions.tree import SessionTree

IDS = st.sampled_from(["n1", "n2", "n3", "a.b", "x" * 128])
TIMES = st.sampled_from(["1796305280.25", "0", "-1", "1e3", "1e999", "32503680000", "1E-5", "7"])
KINDS = st.sampled_from(["user", "assistant", "tool_result", "compaction", "bogus"])
HEADER = json.dumps({"t": "meta", "session_id": "s1", "workdir": "/w", "model": "m", "created": 1.0}).encode()


def _line(node_id: str, parent: str | None, kind: str, ts: str) -> bytes:
    """A node record exactly as the store lays it out (its time spelled ``ts``)."""
    role = "assistant" if kind == "assistant" else "user"
    message = json.dumps({"role": role, "content": "hi"}, separators=(",", ":"))
    head = json.dumps({"t": "node", "id": node_id, "parent": parent, "kind": kind}, separators=(",", ":"))
    return f'{head[:-1]},"ts":{ts},"message":{message}}}'.encode()


def _general(lines: list[bytes]) -> tuple[SessionTree, list[str]]:
    """The session as the general path reads it: every record parsed into its dict, then applied."""
    meta: dict[str, Any] = {}
    tree = SessionTree()
    warnings = []
    for number, line in enumerate(lines, start=1):
        try:
            apply_record(parse_record(line), meta, tree)
        except (ValueError, KeyError, TypeError) as err:
            warnings.append(f"line {number} is damaged and was skipped ({str(err).strip(chr(39) + chr(34))})")
    return tree, warnings


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(IDS, st.none() | IDS, KINDS, TIMES), max_size=8))
def test_a_node_laid_out_as_written_reads_as_the_general_path_reads_it(
    tmp_path_factory: Any, records: list[tuple[str, str | None, str, str]]
) -> None:
    """Every node, its parent, kind and time, the leaf and every warning are the same either way."""
    lines = [HEADER, *(_line(*record) for record in records)]
    folder: Path = tmp_path_factory.mktemp("s")
    entries = folder / "entries.jsonl"
    entries.write_bytes(b"\n".join(lines) + b"\n")
    with entries.open("rb") as fh:
        _, tree, warnings = load_entries(fh.fileno(), folder, repair=False)
    expected, said = _general(lines)
    assert [(n.id, n.parent_id, n.kind, n.ts) for n in tree.nodes.values()] == [
        (n.id, n.parent_id, n.kind, n.ts) for n in expected.nodes.values()
    ]
    assert tree.leaf == expected.leaf
    assert warnings == said[:20]
