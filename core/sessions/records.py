"""Provides reading a session's records back: each parsed, cleaned and checked whole before it counts.

``parse_record`` decodes one line of ``entries.jsonl`` (see ``store`` for
the records); ``apply_record`` folds it into the session's meta and tree. Every
field is checked before anything changes, so a record that fails a check half
way changes nothing: it is damage, skipped with one warning. Times must be
finite numbers a calendar holds (a NaN or an infinity reads as null, so it is
not one); text is cleaned of lone surrogates (see
:func:`~chimera.core.strict_json.loads_clean`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from chimera.core.errors import ConfigError
from chimera.core.permissions.policy import MODES
from chimera.core.permissions.rule import Rule
from chimera.core.sessions.tree import (
    LEFT_OUT_REASONS,
    MESSAGE_KINDS,
    QUEUE_KINDS,
    Node,
    PendingSwitch,
    Queued,
    SavedFiles,
    SessionTree,
    message_problem,
)
from chimera.core.strict_json import finite_number, loads_clean

__all__ = ["ID", "add_node", "add_plain_node", "apply_record", "check_record", "parse_record"]

ID = re.compile(r"[\w.:-]{1,128}", re.ASCII)  # session and node ids
_COMMIT = re.compile(r"[0-9a-f]{7,64}")
LAST_TIME = 32503680000.0  # 3000-01-01: a later (or a negative) time is no time Chimera wrote

_NODE_HEAD = b'{"t":"node",'
_MESSAGE_KEY = b',"message":{'
_HEAD_MAX = 400  # bytes: a node record's id, parent, kind and time come well within this
_HEAD_KEYS = frozenset({"t", "id", "parent", "kind", "ts"})
# A compaction's kept tail; the queued words a message delivers; a message recorded beside the leaf.
_NODE_EXTRAS = frozenset({"keep", "queued", "aside"})
# The head of a node record exactly as the store writes it, with nothing in it to unescape or clean: read by
# this pattern at a tenth of a JSON decode's cost. Any other spelling is decoded (and checked) as JSON.
_PLAIN_HEAD = re.compile(
    rb'\{"t":"node","id":"([\w.:-]{1,128})","parent":(?:null|"([\w.:-]{1,128})"),"kind":"(\w{1,32})",'
    rb'"ts":(-?(?:0|[1-9][0-9]{0,30})(?:\.[0-9]{1,30})?(?:[eE][+-]?[0-9]{1,3})?),"message":\{'
)


def parse_record(line: bytes) -> dict[str, Any]:
    """One record. A node record laid out as the store writes it (its message last) is read only up
    to its message, and keeps the line as ``raw`` and where its message starts as ``at``, for the
    message to be decoded when it is needed; any other line is decoded whole."""
    if (plain := _PLAIN_HEAD.match(line)) is not None:
        node_id, parent, kind, ts = plain.groups()
        return {
            "t": "node",
            "id": node_id.decode(),
            "parent": parent and parent.decode(),
            "kind": kind.decode(),
            "ts": float(ts),
            "raw": line,
            "at": plain.end() - 1,
        }
    if line.startswith(_NODE_HEAD):
        cut = line.find(_MESSAGE_KEY, 0, _HEAD_MAX)
        if cut > 0:
            try:
                head = loads_clean(line[:cut] + b"}")
            except ValueError:
                head = None
            if isinstance(head, dict) and _HEAD_KEYS <= head.keys() <= _HEAD_KEYS | _NODE_EXTRAS:
                head["raw"], head["at"] = line, cut + len(_MESSAGE_KEY) - 1
                return head
    parsed = loads_clean(line)
    if not isinstance(parsed, dict):
        raise ValueError(f"a JSON {type(parsed).__name__}, not a record")
    parsed.pop("raw", None)  # only a record read up to its message carries its line
    return parsed


def add_plain_node(line: bytes, meta: dict[str, Any], tree: SessionTree) -> bool:
    """Add the node of ``line`` when it is laid out as the store writes it (the most of any session), with the
    checks :func:`apply_record` makes and none of its record's dict; False, adding nothing, for any other line
    (read it with :func:`parse_record` and :func:`apply_record`). ValueError, adding nothing, for a node that
    fails a check, in the words :func:`apply_record` would use."""
    plain = _PLAIN_HEAD.match(line)
    if plain is None:
        return False
    raw_id, raw_parent, raw_kind, raw_ts = plain.groups()
    node_id, kind, ts = raw_id.decode(), raw_kind.decode(), float(raw_ts)
    parent = None if raw_parent is None else raw_parent.decode()
    if node_id in tree.nodes:
        raise ValueError(f"it repeats the id of node {node_id}")
    if parent is not None and parent not in tree.nodes:
        raise ValueError(f"its parent names node {parent[:40]!r}, which the session does not hold")
    if kind not in MESSAGE_KINDS:
        raise ValueError("its kind is not a message kind")
    if not 0 <= ts < LAST_TIME:
        raise ValueError("its time is not a time")
    add_node(Node(node_id, parent, kind, ts, raw=line, at=plain.end() - 1), meta, tree)
    return True


def _text(record: dict[str, Any], key: str) -> str:
    value = record.get(key)
    if not isinstance(value, str):
        raise ValueError(f"its {key} is not text")
    return value


def _time(record: dict[str, Any], key: str, what: str) -> float:
    value = finite_number(record.get(key))
    if value is None or not 0 <= value < LAST_TIME:
        raise ValueError(f"its {what} is not a time")
    return value


def _node_ref(record: dict[str, Any], key: str, tree: SessionTree) -> str:
    """The node ``record[key]`` names, which the session must hold."""
    value = record.get(key)
    if not isinstance(value, str):
        raise ValueError(f"its {key} is not a node id")
    if value not in tree:
        raise ValueError(f"its {key} names node {value[:40]!r}, which the session does not hold")
    return value


def _optional_ref(record: dict[str, Any], key: str, tree: SessionTree) -> str | None:
    """Like :func:`_node_ref`, with None (no node: before the first message) allowed."""
    return None if record.get(key) is None else _node_ref(record, key, tree)


def _commit(record: dict[str, Any], key: str) -> str:
    value = record.get(key)
    if not isinstance(value, str) or not _COMMIT.fullmatch(value):
        raise ValueError(f"its {key} is not a snapshot id")
    return value


def add_node(node: Node, meta: dict[str, Any], tree: SessionTree, *, aside: bool = False) -> None:
    tree.add(node, aside=aside)
    if node.kind == "user" and "permissions" in meta:
        tree.permissions[node.id] = meta["permissions"]


Change = Callable[[], None]


def apply_record(record: dict[str, Any], meta: dict[str, Any], tree: SessionTree) -> None:
    """Fold one record into the session; raise ValueError/KeyError/TypeError, changing nothing, when it is malformed."""
    kind = record.get("t")
    if not isinstance(kind, str):
        raise ValueError("it has no record type")
    check = _CHECKS.get(kind)
    if check is not None:
        check(record, meta, tree)()  # every field checked first; only then does anything change


def check_record(record: dict[str, Any], meta: dict[str, Any], tree: SessionTree) -> None:
    """Raise as :func:`apply_record` would for a malformed record, changing nothing either way (a record checked
    before it is written)."""
    kind = record.get("t")
    check = _CHECKS.get(kind) if isinstance(kind, str) else None
    if check is None:
        raise ValueError("it has no known record type")
    check(record, meta, tree)


def _node(record: dict[str, Any], meta: dict[str, Any], tree: SessionTree) -> Change:
    node_id = _text(record, "id")
    if not ID.fullmatch(node_id):
        raise ValueError("its id is not a node id")
    if node_id in tree:
        raise ValueError(f"it repeats the id of node {node_id}")
    parent = _optional_ref(record, "parent", tree)
    node_kind = record.get("kind")
    if not isinstance(node_kind, str) or node_kind not in MESSAGE_KINDS:
        raise ValueError("its kind is not a message kind")
    ts = _time(record, "ts", "time")
    kept = _kept(record, node_kind, parent, tree)
    queued = record.get("queued")
    if queued is not None and (node_kind != "user" or not isinstance(queued, str)):
        raise ValueError("only a user message delivers queued words, named by their id")
    aside = record.get("aside", False)
    if aside is not True and aside is not False:
        raise ValueError("its aside is not true or false")
    raw = record.get("raw")
    if raw is not None:
        node = Node(node_id, parent, node_kind, ts, raw=raw, at=record["at"])
    else:
        message = record.get("message")
        problem = message_problem(node_kind, message)
        if problem is not None:
            raise ValueError(problem)
        assert isinstance(message, dict)
        node = Node(node_id, parent, node_kind, ts, message)

    def change() -> None:
        add_node(node, meta, tree, aside=aside)
        if kept is not None:
            tree.kept[node_id] = kept
        if queued is not None:
            tree.queued.pop(queued, None)

    return change


def _kept(record: dict[str, Any], kind: str, parent: str | None, tree: SessionTree) -> str | None:
    """Where a compaction node's kept tail starts: a node on its branch that is not tool results."""
    if record.get("keep") is None:
        return None
    if kind != "compaction":
        raise ValueError("only a compaction keeps part of the conversation")
    kept = _node_ref(record, "keep", tree)
    if tree.nodes[kept].kind == "tool_result":
        raise ValueError("its kept part starts at tool results, apart from their calls")
    if parent is None or all(node.id != kept for node in tree.ancestors(parent)):
        raise ValueError(f"it keeps from node {kept}, which is not on its branch")
    return kept


def _leaf(record: dict[str, Any], meta: dict[str, Any], tree: SessionTree) -> Change:
    target = _optional_ref(record, "id", tree)
    if "ts" in record:
        _time(record, "ts", "time")
    undo: tuple[str | None, str] | None = None
    if record.get("undo") and "from" in record:
        undo = (_optional_ref(record, "from", tree), _commit(record, "undo"))

    def change() -> None:
        if undo is not None:
            tree.undo[undo[0]] = undo[1]
        tree.leaf = target
        tree.pending_switch = None

    return change


def _switching(record: dict[str, Any], meta: dict[str, Any], tree: SessionTree) -> Change:
    from_node = _optional_ref(record, "from", tree)
    to_node = _optional_ref(record, "to", tree)
    undo = _commit(record, "undo")
    target = None if record.get("target") is None else _commit(record, "target")

    def change() -> None:
        tree.pending_switch = PendingSwitch(from_node, to_node, undo, target)
        tree.undo[from_node] = undo

    return change


def _label(record: dict[str, Any], meta: dict[str, Any], tree: SessionTree) -> Change:
    node_id = _node_ref(record, "id", tree)
    label = _text(record, "label")
    return lambda: tree.set_label(node_id, label)


def _snap(record: dict[str, Any], meta: dict[str, Any], tree: SessionTree) -> Change:
    node_id = _node_ref(record, "id", tree)
    commit = _commit(record, "commit")
    found = bool(record.get("found"))
    wrote = record.get("wrote")
    if wrote is not None and (
        not isinstance(wrote, dict)
        or not all(isinstance(blob, str) and _COMMIT.fullmatch(blob) for blob in wrote.values())
    ):
        raise ValueError("its written paths do not map to contents")
    made = record.get("made")
    if made is not None and (not isinstance(made, list) or not all(isinstance(path, str) for path in made)):
        raise ValueError("its created paths are not a list of paths")
    folders = record.get("folders")
    if folders is not None and (not isinstance(folders, list) or not all(isinstance(f, str) for f in folders)):
        raise ValueError("its created folders are not a list of paths")

    def change() -> None:
        tree.snapshots[node_id] = commit
        if found:
            tree.found.add(node_id)
        if wrote is not None:
            tree.wrote[node_id] = dict(wrote)
        if made is not None:
            tree.made[node_id] = frozenset(made)
        if folders is not None:
            tree.folders[node_id] = frozenset(folders)

    return change


def _saved(record: dict[str, Any], meta: dict[str, Any], tree: SessionTree) -> Change:
    name = _text(record, "name")
    if not name.strip() or any(ch < " " or ch == "\x7f" for ch in name):
        raise ValueError("its name is not a name")
    commit = _commit(record, "commit")
    node = _optional_ref(record, "node", tree)
    return lambda: tree.saved.__setitem__(name, SavedFiles(commit, node))


def _partial(record: dict[str, Any], meta: dict[str, Any], tree: SessionTree) -> Change:
    parent = _node_ref(record, "parent", tree)
    result = record.get("result")
    if message_problem("tool_result", {"role": "user", "content": [result]}) is not None:
        raise ValueError("its result is not a tool result")
    assert isinstance(result, dict)
    if result["type"] != "tool_result":
        raise ValueError("its result is not a tool result")

    def change() -> None:
        if not any(tree.nodes[c].kind == "tool_result" for c in tree.children.get(parent, [])):
            tree.partials.setdefault(parent, []).append(dict(result))

    return change


def _meta(record: dict[str, Any], meta: dict[str, Any], tree: SessionTree) -> Change:
    """ValueError unless every field a meta record carries has its type; the first must name the session."""
    first = not meta
    if (first or "session_id" in record) and _text(record, "session_id") != meta.get(
        "session_id", record["session_id"]
    ):
        raise ValueError("it names another session")
    if (first or "workdir" in record) and not Path(_text(record, "workdir")).is_absolute():
        raise ValueError("its workdir is not an absolute path")
    if "model" in record:
        _text(record, "model")
    if "created" in record:
        _time(record, "created", "created time")
    if "permissions" in record:
        permissions = record["permissions"]
        if not isinstance(permissions, dict) or permissions.get("mode") not in MODES:
            raise ValueError("its permissions have no known mode")
        for key in ("allow", "deny"):
            rules = permissions.get(key)
            if not isinstance(rules, list) or not all(isinstance(r, str) for r in rules):
                raise ValueError(f"its permissions' {key} is not a list of rules")
            for rule in rules:
                try:
                    Rule.parse(rule)
                except ConfigError as err:
                    raise ValueError(str(err)) from None
    return lambda: meta.update(record)


def _queued(record: dict[str, Any], meta: dict[str, Any], tree: SessionTree) -> Change:
    queue_id = _text(record, "id")
    kind = record.get("kind")
    if kind not in QUEUE_KINDS:
        raise ValueError(f"its kind is not one of {', '.join(QUEUE_KINDS)}")
    text = _text(record, "text")
    if not text.strip():
        raise ValueError("its text is empty: there is nothing to deliver")
    vouch = record.get("vouch")
    queued = Queued(str(kind), text, vouch if isinstance(vouch, str) else None)
    return lambda: tree.queued.__setitem__(queue_id, queued)


def _unqueued(record: dict[str, Any], meta: dict[str, Any], tree: SessionTree) -> Change:
    queue_id = _text(record, "id")

    def change() -> None:
        tree.queued.pop(queue_id, None)

    return change


def _left_out(record: dict[str, Any], meta: dict[str, Any], tree: SessionTree) -> Change:
    """User messages left out of the model's context, and why: only the person's or the loop's words, never
    tool results (their calls would go unanswered), an answer or a compaction."""
    ids = record.get("ids")
    if not isinstance(ids, list) or not ids:
        raise ValueError("its ids are not a list of node ids")
    nodes = [_node_ref({"id": node_id}, "id", tree) for node_id in ids]
    if any(tree.nodes[node_id].kind != "user" for node_id in nodes):
        raise ValueError("only user messages are left out of the conversation, never results, answers or summaries")
    why = record.get("why")
    if why not in LEFT_OUT_REASONS:
        raise ValueError(f"its why is not one of {', '.join(LEFT_OUT_REASONS)}")
    return lambda: tree.left_out.update(dict.fromkeys(nodes, str(why)))


_CHECKS: dict[str, Callable[[dict[str, Any], dict[str, Any], SessionTree], Change]] = {
    "node": _node,
    "leaf": _leaf,
    "switching": _switching,
    "label": _label,
    "snap": _snap,
    "partial": _partial,
    "saved": _saved,
    "meta": _meta,
    "queued": _queued,
    "unqueued": _unqueued,
    "left_out": _left_out,
}
