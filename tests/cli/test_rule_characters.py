"""A permission rule says what it looks like: one holding a character that only looks like another is refused.

`deny bash(rm\u00a0-rf *)` shows as `rm -rf *` but, before, never matched `rm -rf`,
so the command it was written to stop ran. Each test runs `chimera` (its ``main``, in the
test's process) with such a rule, from a flag or from `config.toml`, and expects exit 2 and one
line naming the character, before any model request.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_runner import assert_one_line_error, run_here
from tests.fake_anthropic import FakeAnthropic, message, text, tool_use

# (how the rule is spelled, the code point the error must name)
DISGUISED = [
    ("bash(rm\u00a0-rf *)", "U+00A0"),  # no-break space
    ("bash(rm\u202f-rf *)", "U+202F"),  # narrow no-break space
    ("bash(rm\u3000-rf *)", "U+3000"),  # ideographic space
    ("bash(rm\u2003-rf *)", "U+2003"),  # em space
    ("bash(r\u200bm -rf *)", "U+200B"),  # zero-width space
    ("bash(rm\u200d -rf *)", "U+200D"),  # zero-width joiner
    ("bash(\ufeffrm -rf *)", "U+FEFF"),  # byte-order mark
    ("bash(rm -rf *\u200f)", "U+200F"),  # right-to-left mark
    ("bash(rm -rf \u202e* fr-)", "U+202E"),  # right-to-left override
    ("bash(rm -rf \u2066*\u2069)", "U+2066"),  # left-to-right isolate
    ("bash(r\u00adm -rf *)", "U+00AD"),  # soft hyphen
    ("bash(rm\ufe0f -rf *)", "U+FE0F"),  # variation selector
    ("bash(\uff52\uff4d -rf *)", "U+FF52"),  # fullwidth letters
    ("bash(rm \uff0drf *)", "U+FF0D"),  # fullwidth hyphen
    ("bash(\u0440m -rf *)", "U+0440"),  # a Cyrillic letter among Latin ones
    ("read(.\u0435nv)", "U+0435"),  # the same in a path rule
    ("read(.env\u200b)", "U+200B"),
    ("\uff42ash(rm -rf *)", "U+FF42"),  # the tool's name
    ("read(cafe\u0301.txt)", "U+0301"),  # é written as e and a combining accent
]


@pytest.mark.parametrize(("rule", "code"), DISGUISED, ids=[c for _, c in DISGUISED])
def test_a_deny_flag_with_a_disguised_character_is_refused_naming_it(
    rule: str, code: str, api: FakeAnthropic, model_env: dict[str, str], project: Path
) -> None:
    """`--deny` with a character that looks like another: exit 2, one line naming the flag and the code point."""
    proc = run_here("run", "x", "--workdir", str(project), "--permission-mode", "bypass", "--deny", rule)
    assert_one_line_error(proc, "--deny", code)
    assert not api.requests


def test_a_disguised_rule_in_config_toml_is_refused_naming_the_file(
    api: FakeAnthropic, model_env: dict[str, str], project: Path, isolated_env: Path
) -> None:
    """config.toml's deny list with a no-break space: exit 2, one line naming the file and U+00A0, nothing sent."""
    (isolated_env / "config.toml").write_text('[permissions]\ndeny = ["bash(rm\\u00a0-rf *)"]\n')
    proc = run_here("run", "x", "--workdir", str(project), "--permission-mode", "bypass")
    assert_one_line_error(proc, "config.toml", "permissions.deny", "U+00A0", "NO-BREAK SPACE")
    assert not api.requests


def test_an_allow_flag_with_a_disguised_character_is_refused(
    api: FakeAnthropic, model_env: dict[str, str], project: Path
) -> None:
    """`--allow` is held to the same: a zero-width space in an allow rule is refused, not silently inert."""
    proc = run_here("run", "x", "--workdir", str(project), "--allow", "bash(git\u200b status)")
    assert_one_line_error(proc, "--allow", "U+200B")


def test_plain_rules_and_real_words_outside_latin_still_load(
    api: FakeAnthropic, model_env: dict[str, str], project: Path
) -> None:
    """The plain `deny bash(rm -rf *)` stops rm -rf; paths wholly in one script (`read(отчёт.txt)`) load."""
    (project / "keep").mkdir()
    api.script(
        message(tool_use("t1", "bash", {"command": "rm -rf keep"}), stop_reason="tool_use"),
        message(text("Done.")),
    )
    proc = run_here(
        "run",
        "x",
        "--json",
        "--workdir",
        str(project),
        "--permission-mode",
        "bypass",
        "--deny",
        "bash(rm -rf *)",
        "--deny",
        "read(отчёт.txt)",
        "--deny",
        "read(café.txt)",
        "--deny",
        "read(データ/*)",
    )
    assert proc.returncode == 0, proc.stderr
    (finished,) = [e for e in map(json.loads, proc.stdout.splitlines()) if e["type"] == "tool_call_finished"]
    assert finished["is_error"]
    assert "denied by the rule bash(rm -rf *)" in finished["output"]
    assert (project / "keep").is_dir()
