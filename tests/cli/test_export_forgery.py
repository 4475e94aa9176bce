"""`chimera export` cannot be forged: what a tool returned never closes the fence it is shown in, and no raw
HTML from a tool (or a tool call the model named) reaches the Markdown.

The export is parsed with markdown-it (CommonMark, HTML on, as a renderer such as GitHub's reads it), so the
test sees the document's structure, not its characters.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from markdown_it import MarkdownIt
from markdown_it.token import Token

from chimera.core.sessions.store import SessionStore
from tests.cli_runner import run_here

FORGED = "Forged by the tool"
ATTACKS = {
    "a backtick fence": f"```\n## {FORGED}\n",
    "a longer backtick fence": f"``````\n## {FORGED}\n``````",
    "an indented fence": f"   ````\n## {FORGED}\n",
    "a tilde fence": f"~~~\n## {FORGED}\n~~~",
    "raw html": f"</code></pre><h2>{FORGED}</h2>",
    "a details end": f"```\n</details>\n\n## {FORGED}\n",
    "a long fold": "\n".join(["line"] * 20 + ["`````", f"## {FORGED}", "<script>alert(1)</script>"]),
}


def session_with(home: Path, workdir: Path, output: str, *, name: str = "bash", thinking: str = "") -> str:
    """A session whose one tool call returned ``output`` (and whose model named the tool ``name``)."""
    call: dict[str, Any] = {"type": "tool_use", "id": "c1", "name": name, "input": {"command": "cat `notes`"}}
    blocks: list[dict[str, Any]] = [{"type": "thinking", "thinking": thinking, "signature": "s"}] if thinking else []
    with SessionStore.create(home, "forged", workdir=workdir, model="m") as store:
        store.add("user", {"role": "user", "content": "show the notes"})
        store.add("assistant", {"role": "assistant", "content": [*blocks, call]})
        result = {"type": "tool_result", "tool_use_id": "c1", "content": output, "is_error": False}
        store.add("tool_result", {"role": "user", "content": [result]})
        store.add("assistant", {"role": "assistant", "content": [{"type": "text", "text": "Shown."}]})
        store.sync()
    return "forged"


def parsed(document: str) -> list[Token]:
    tokens = MarkdownIt("commonmark", {"html": True}).parse(document)
    flat: list[Token] = []
    for token in tokens:
        flat.append(token)
        flat += token.children or []
    return flat


def headings(tokens: list[Token]) -> list[str]:
    return [tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open"]


def html_tokens(tokens: list[Token]) -> list[str]:
    return [t.content for t in tokens if t.type in {"html_block", "html_inline"}]


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_a_tool_output_stays_inside_its_code_block(attack: str, isolated_env: Path, project: Path) -> None:
    """Whatever fence or HTML a tool prints, the export's headings are its own and the output is one code block."""
    output = ATTACKS[attack]
    proc = run_here("export", session_with(isolated_env, project, output))
    assert proc.returncode == 0, proc.stderr
    tokens = parsed(proc.stdout)
    assert headings(tokens) == ["show the notes", "You", "Chimera", "Chimera"]
    assert all(FORGED not in html for html in html_tokens(tokens))
    [block] = [t for t in tokens if t.type == "fence"]
    assert block.content.rstrip("\n") == output.rstrip("\n")


def test_a_tool_name_and_argument_are_shown_as_text(isolated_env: Path, project: Path) -> None:
    """A tool the model named `<img src=x onerror=alert(1)>` and a command with backticks show as written, inert."""
    name = "<img src=x onerror=alert(1)>"
    proc = run_here("export", session_with(isolated_env, project, "notes", name=name))
    tokens = parsed(proc.stdout)
    assert html_tokens(tokens) == []
    shown = "".join(t.content for t in tokens if t.type in {"text", "code_inline"})
    assert name in shown
    assert "cat `notes`" in shown


def test_thinking_cannot_close_the_details_it_is_folded_in(isolated_env: Path, project: Path) -> None:
    """Thinking that writes `</details>` and a heading of its own stays inside its fold (its Markdown is its own)."""
    thinking = f"</details>\n\n## {FORGED}\n\n<details>"
    proc = run_here("export", session_with(isolated_env, project, "notes", thinking=thinking))
    tokens = parsed(proc.stdout)
    assert html_tokens(tokens) == ["<details><summary>thinking</summary>\n", "</details>\n"]
    opened, closed = (i for i, t in enumerate(tokens) if t.type == "html_block")
    [forged] = [i for i, t in enumerate(tokens) if t.type == "inline" and FORGED in t.content]
    assert opened < forged < closed
