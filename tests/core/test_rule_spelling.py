"""Rules are written one way wherever Chimera shows or keeps them, as ``--allow`` takes them (``bash(make test)``),
and the older spelling (``bash: make test``) is still read: what "always" keeps, what a question says it keeps,
and what a settings file or ``--allow`` may hold."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from chimera.core.errors import ConfigError
from chimera.core.permissions.kept import always_words
from chimera.core.permissions.policy import PermissionPolicy
from chimera.core.permissions.rule import Rule
from tests.cli_runner import run_here
from tests.fake_anthropic import FakeAnthropic, message, text, tool_use

CALLS: list[tuple[str, dict[str, Any], bool, str]] = [  # tool, args, asked for what the file is, the words
    ("bash", {"command": "make test"}, False, "bash(make test)"),
    ("bash", {"command": "  pytest -x tests/a.py  "}, False, "bash(pytest -x tests/a.py)"),
    ("edit", {"path": "src/a.py", "old": "a", "new": "b"}, False, "edit, write"),
    ("write", {"path": "src/a.py", "content": ""}, False, "edit, write"),
    ("write", {"path": ".git/config", "content": ""}, True, "edit(.git/config), write(.git/config)"),
    ("edit", {"path": ".git/a[1]*", "old": "a", "new": "b"}, True, "edit(.git/a[[]1][*]), write(.git/a[[]1][*])"),
    ("glob", {"pattern": "**/*.py"}, False, "glob"),
]  # fmt: skip


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A workspace that is a git repository (its .git is git's, not an ordinary folder)."""
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    return tmp_path


@pytest.mark.parametrize(("tool", "args", "one_file", "words"), CALLS, ids=[c[3] for c in CALLS])
def test_what_always_keeps_is_said_as_allow_takes_it(
    repo: Path, tool: str, args: dict[str, Any], one_file: bool, words: str
) -> None:
    """The words a question shows and /mode lists are the same, rules as --allow takes them; given to --allow,
    they let the same call run unasked."""
    kept = PermissionPolicy("ask").remembering(tool, args, repo)
    assert always_words(tool, args, one_file=one_file) == words  # as the question says it, before the answer
    assert kept.kept[0].words == words  # as /mode lists it, after
    rules = words.split(", ")
    assert [str(Rule.parse(rule)) for rule in rules] == rules
    again = PermissionPolicy.build("ask", allow=rules)
    assert again.decide(tool, args, read_only=tool == "glob", workspace=repo).verdict == "allow"


def test_an_edit_in_chimeras_own_home_is_kept_for_that_file_by_both_tools(tmp_path: Path) -> None:
    """Always on a write inside CHIMERA_HOME (in the workspace): that file, by write and edit, as the question says."""
    home = tmp_path / ".chimera"
    home.mkdir()
    write = {"path": ".chimera/config.toml", "content": ""}
    policy = PermissionPolicy("accept-edits", home=home)
    assert policy.decide("write", write, read_only=False, workspace=tmp_path).verdict == "ask"
    kept = policy.remembering("write", write, tmp_path)
    assert kept.kept[0].words == always_words("write", write, one_file=True)
    assert kept.kept[0].words == "edit(.chimera/config.toml), write(.chimera/config.toml)"
    edit = {"path": ".chimera/config.toml", "old": "a", "new": "b"}
    assert kept.decide("edit", edit, read_only=False, workspace=tmp_path).verdict == "allow"
    other = {"path": ".chimera/sessions/x", "content": ""}
    assert kept.decide("write", other, read_only=False, workspace=tmp_path).verdict == "ask"


def test_a_rule_kept_from_the_answer_is_said_as_its_rules() -> None:
    """A rule written with the answer: one rule as it is; an edit rule as the two it keeps."""
    assert PermissionPolicy("ask").keeping("bash(make *)", "bash").kept[0].words == "bash(make *)"
    kept = PermissionPolicy("ask").keeping("write(src/**)", "write", ["edit", "write"])
    assert kept.kept[0].words == "edit(src/**), write(src/**)"


@pytest.mark.parametrize(
    ("older", "rule"),
    [
        ("bash: make test", Rule("bash", "make test")),
        ("bash:git status *", Rule("bash", "git status *")),
        ("read: every call", Rule("read")),
        ("edit: every file", Rule("edit")),
        ("edit: src/**", Rule("edit", "src/**")),
        ("  write :  docs/*.md ", Rule("write", "docs/*.md")),
    ],
)
def test_the_older_spelling_is_read_as_the_rule_it_said(older: str, rule: Rule) -> None:
    """`tool: pattern`, as Chimera once showed what "always" kept, is the rule `tool(pattern)`."""
    assert Rule.parse(older, ["bash", "read", "edit", "write"]) == rule


@pytest.mark.parametrize("text_", ["bash:", "bash:   ", "bash: make && rm -rf /", "bahs: make"])
def test_the_older_spelling_is_checked_like_the_other(text_: str) -> None:
    """An older-spelled rule with nothing after the colon, a chain, or a tool that does not exist is refused."""
    with pytest.raises(ConfigError, match="permission rule"):
        Rule.parse(text_, ["bash", "read"])


def test_a_settings_file_in_the_older_spelling_still_allows(
    api: FakeAnthropic, model_env: dict[str, str], project: Path, isolated_env: Path
) -> None:
    """config.toml with allow = ["bash: touch made"]: the command runs unasked in a headless run, and the session
    keeps the rule as --allow writes it."""
    (isolated_env / "config.toml").write_text('[permissions]\nallow = ["bash: touch made"]\n')
    api.script(
        message(tool_use("b1", "bash", {"command": "touch made"}), stop_reason="tool_use"),
        message(text("Made.")),
    )
    proc = run_here("run", "make it", "--workdir", str(project), env=model_env)
    assert proc.returncode == 0, proc.stderr
    assert (project / "made").exists()
    (entries,) = (isolated_env / "sessions").glob("*/entries.jsonl")
    assert '"allow":["bash(touch made)"]' in entries.read_text()
