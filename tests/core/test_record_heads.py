"""Opening a session reads a node record's head by a pattern and its message later: what that gives is what
decoding the whole record gives, for any record the store writes and any spelling someone crafts."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from chimera.core.errors import SessionError
from chimera.core.sessions.records import parse_record
from chimera.core.sessions.tree import Node, message_problem
from chimera.core.strict_json import loads_clean

IDS = st.text(st.sampled_from('ab09_.:-éZ\\"\u2028 '), max_size=6) | st.sampled_from(["x" * 128, "y" * 129])
TIMES = (
    st.floats(allow_nan=True, allow_infinity=True)
    | st.integers(-(10**40), 10**40)
    | st.sampled_from([0, 1796305280.3342, 1e308, -0.0, "1", None])
)
MESSAGES = st.fixed_dictionaries(
    {"role": st.sampled_from(["user", "assistant"]), "content": st.text(max_size=8) | st.just([])}
)
EXTRAS = st.dictionaries(st.sampled_from(["keep", "queued", "aside", "other"]), st.text(max_size=3), max_size=2)


def _line(record: dict[str, Any], spacing: bool) -> bytes:
    separators = (", ", ": ") if spacing else (",", ":")
    return json.dumps(record, ensure_ascii=False, separators=separators).encode("utf-8", "surrogatepass")


@given(
    IDS,
    st.none() | IDS,
    st.sampled_from(["user", "assistant", "tool_result", "compaction", "Üser", "x" * 40]),
    TIMES,
    EXTRAS,
    MESSAGES,
    st.booleans(),
    st.sampled_from(["", " ", "\t", ',"after":1', "x"]),
)
@example("n1", None, "user", 1796305280, {}, {"role": "user", "content": "hi"}, False, "")
@example("n1", "n0", "user", 1e308, {"queued": "q1"}, {"role": "user", "content": "hi"}, False, "")
def test_a_record_read_by_its_head_holds_what_the_whole_record_holds(
    node_id: str,
    parent: str | None,
    kind: str,
    ts: Any,
    extras: dict[str, str],
    message: dict[str, Any],
    spacing: bool,
    tail: str,
) -> None:
    """The head's fields equal the decoded record's (a time as the same number), and the node's message,
    decoded later, is the record's message (a key after it too); a record that does not decode whole is a
    damaged message."""
    record = {"t": "node", "id": node_id, "parent": parent, "kind": kind, "ts": ts, **extras, "message": message}
    line = _line(record, spacing)
    if tail:
        line = line[:-1] + tail.encode() + b"}" if tail.startswith(",") else line + tail.encode()
    try:
        whole = loads_clean(line)
    except ValueError:
        whole = None
    try:
        read = parse_record(line)
    except ValueError:
        assert whole is None, "a record that decodes whole was refused"
        return
    if "raw" not in read:
        assert read == whole
        return
    node = Node(read["id"], read["parent"], read["kind"], 0.0, raw=read.pop("raw"), at=read.pop("at"))
    if whole is None or message_problem(node.kind, whole["message"]) is not None:
        with pytest.raises(SessionError):  # read by its head, the record is damage once its message is wanted
            _ = node.message
    else:
        assert node.message == whole["message"]
    if whole is None:
        return
    assert whole.keys() - read.keys() <= {"message", "after"}  # what follows the message is not the head's
    for key, value in read.items():
        same = value == whole[key] and type(value) is type(whole[key])
        assert same or (key == "ts" and float(whole[key]) == value)
