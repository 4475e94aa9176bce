"""Provides ``export_markdown``: a session's active path as a Markdown document.

The person's messages, the model's answers, and each tool call with its
result (long results folded into ``<details>``), in the order they happened,
as the workbench shows them: thinking folded into ``<details>``, an edit's diff
(from the session's event log) after its result. What the session holds
is untrusted: every character that could steer a terminal (ESC, C1, bidi
overrides; see ``terminal_safe``) is written as a visible escape, so the
document is safe to print, page or ``cat``.
"""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

from chimera.core.errors import SessionError
from chimera.core.loops.context import content_blocks, is_continue_prompt, is_reminder
from chimera.core.sessions.history import LoggedCalls, logged_calls
from chimera.core.sessions.store import SessionStore
from chimera.core.sessions.tree import Node
from chimera.core.terminal_text import terminal_safe

__all__ = ["export_markdown"]

_FOLD_AFTER = 12  # result lines shown before the rest is folded


def export_markdown(store: SessionStore) -> str:
    """The active path of ``store`` as Markdown, with nothing in it that could steer a terminal."""
    created = dt.datetime.fromtimestamp(float(store.meta.get("created", 0))).strftime("%Y-%m-%d %H:%M")
    out = [
        f"# {store.title}",
        "",
        f"- session: `{store.id}`",
        f"- workspace: `{store.workdir}`",
        f"- model: `{store.meta.get('model', '?')}`",
        f"- started: {created}",
        "",
    ]
    calls: dict[str, dict[str, Any]] = {}
    logged = logged_calls(store)
    for node in store.tree.path():
        try:
            out += _node(node, calls, logged)
        except SessionError as err:  # one damaged message: say so where it was, keep the rest
            out += [f"*({err})*", ""]
    return terminal_safe("\n".join(out).rstrip()) + "\n"


def _diff(event: dict[str, Any]) -> str | None:
    """The diff a logged call's event holds (an edit's), if any."""
    data = event.get("data")
    diff = data.get("diff") if isinstance(data, dict) else None
    return diff if isinstance(diff, str) and diff else None


def _node(node: Node, calls: dict[str, dict[str, Any]], logged: LoggedCalls) -> list[str]:
    blocks = content_blocks(node.message.get("content"))
    if node.kind == "user":
        if is_continue_prompt(node.message):
            return []
        text = "\n\n".join(b["text"] for b in blocks if b.get("type") == "text" and not is_reminder(b))
        return ["## You", "", text, ""] if text else []
    if node.kind == "compaction":
        return ["## Summary of earlier turns", "", _texts(blocks), ""]
    if node.kind == "assistant":
        lines = ["## Chimera", ""]
        for block in blocks:
            if block.get("type") == "text" and block.get("text", "").strip():
                lines += [block["text"], ""]
            elif block.get("type") == "thinking" and str(block.get("thinking", "")).strip():
                lines += ["<details><summary>thinking</summary>", "", str(block["thinking"]), "", "</details>", ""]
            elif block.get("type") == "tool_use":
                calls[block["id"]] = {**block, "node": node.id}
                args = block.get("input")
                lines += [f"**{block['name']}** `{_argument(args if isinstance(args, dict) else {})}`", ""]
        return lines
    lines = []
    for block in blocks:  # tool results
        if block.get("type") != "tool_result":
            continue
        call = calls.get(block.get("tool_use_id", ""), {})
        lines += _result(str(call.get("name", "tool")), _texts(block.get("content")), bool(block.get("is_error")))
        diff = _diff(logged.find(call.get("node"), str(block.get("tool_use_id", ""))))
        if diff is not None and not block.get("is_error"):
            fence = "````" if "```" in diff else "```"
            lines += [f"{fence}diff", *diff.rstrip("\n").splitlines(), fence, ""]
    return lines


def _result(name: str, text: str, is_error: bool) -> list[str]:
    body = text.rstrip("\n").splitlines() or ["(no output)"]
    title = f"{name} {'failed' if is_error else 'output'}"
    fence = "````" if any(line.startswith("```") for line in body) else "```"
    if len(body) <= _FOLD_AFTER:
        return [f"{title}:", "", fence, *body, fence, ""]
    return [f"<details><summary>{title} ({len(body)} lines)</summary>", "", fence, *body, fence, "", "</details>", ""]


def _texts(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(b.get("text", "") for b in content or [] if b.get("type") == "text")


def _argument(args: dict[str, Any]) -> str:
    for key in ("command", "path", "pattern"):
        if key in args:
            return str(args[key]).replace("`", "'").replace("\n", " ")
    return json.dumps(args, ensure_ascii=False)[:120]
