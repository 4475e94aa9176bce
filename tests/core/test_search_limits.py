"""Searches never hold a run hostage: a regular expression that backtracks for ever runs in a worker process that
Ctrl-C, `--max-time` and a stall limit end (with an error naming the cause), and globs are matched in linear
time, so no pattern can freeze Chimera."""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import chimera.core.tools.pysearch as pysearch
from chimera.core.tools.base import ToolContext
from chimera.core.tools.globbing import glob_matches, glob_regex
from chimera.core.tools.grep import Grep
from tests.cli_runner import chimera_command
from tests.fake_anthropic import FakeAnthropic, message, text, tool_use
from tests.interrupt_helpers import assert_interrupted, interrupt, start, until_the_call_starts


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = (tmp_path / "ws").resolve()
    root.mkdir()
    return root


CATASTROPHIC = [
    ({"pattern": "(a+)+$"}, {"CHIMERA_RG": "off"}),  # the pure-Python search
    ({"pattern": "(a+)+(?=b)c"}, {}),  # ripgrep cannot compile lookaround: the Python search takes over
    ({"pattern": "(x+x+)+y", "ignore_case": True}, {"CHIMERA_RG": "off"}),
]


@pytest.mark.parametrize(("args", "env"), CATASTROPHIC, ids=["python", "fallback", "ignore-case"])
def test_ctrl_c_ends_a_grep_whose_pattern_backtracks_for_ever(
    api: FakeAnthropic, model_env: dict[str, str], ws: Path, args: dict[str, Any], env: dict[str, str]
) -> None:
    """A nested quantifier over a long line would take ages in Python's re: Ctrl-C still ends the run at once."""
    (ws / "long.txt").write_text("a" * 64 + "b\n" + "x" * 64 + "\n")
    proc = start(api, model_env, ws, "grep", args, **env)
    until_the_call_starts(proc)
    elapsed, events, err = interrupt(proc)
    assert_interrupted(elapsed, events, err, proc.returncode)


def test_max_time_ends_a_grep_whose_pattern_backtracks_for_ever(
    api: FakeAnthropic, model_env: dict[str, str], ws: Path
) -> None:
    """The wall-time limit ends a run stuck in the Python search."""
    (ws / "long.txt").write_text("a" * 64 + "b\n")
    started = time.monotonic()
    proc = start(api, model_env, ws, "grep", {"pattern": "(a+)+$"}, "--max-time", "5", CHIMERA_RG="off")
    out, err = proc.communicate(timeout=60)
    elapsed = time.monotonic() - started
    done = json.loads(out.splitlines()[-1])
    assert (done["reason"], proc.returncode) == ("time_limit", 1), err
    assert elapsed < 5 + 4, f"the run took {elapsed:.1f}s with a 5s limit"


@pytest.mark.parametrize(("tool", "engine"), [("glob", "ripgrep"), ("grep", "ripgrep"), ("glob", "python")])
def test_a_glob_with_many_stars_over_long_names_answers_at_once(
    api: FakeAnthropic, model_env: dict[str, str], ws: Path, engine: str, tool: str
) -> None:
    """`**a**a…**b` against a name of 200 a's backtracks for ages as a regex: the run still completes at once."""
    (ws / ("a" * 200)).write_text("a\n")
    (ws / ("a" * 100 + "b")).write_text("a\n")
    star = "**a" * 12 + "**b"
    args = {"pattern": star} if tool == "glob" else {"pattern": "a", "glob": star}
    api.script(message(tool_use("t1", tool, args), stop_reason="tool_use"), message(text("Done.")))
    env = {**model_env, "CHIMERA_RG": "off"} if engine == "python" else model_env
    proc = subprocess.run(
        [*chimera_command(), "run", "go", "--json", "--workdir", str(ws), "--permission-mode", "bypass"],
        capture_output=True,
        text=True,
        timeout=30,
        stdin=subprocess.DEVNULL,
        env={**os.environ, **env},
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    events = [json.loads(line) for line in proc.stdout.splitlines()]
    [result] = [e for e in events if e["type"] == "tool_call_finished"]
    expected = "a" * 100 + "b"
    assert result["output"] == (f"{expected}\n" if tool == "glob" else f"{expected}:1:a\n")


async def test_a_pattern_that_makes_no_progress_is_stopped_with_a_clear_error(
    ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past the stall limit the worker is killed and the model reads why, with the matches found before."""
    monkeypatch.setenv("CHIMERA_RG", "off")
    monkeypatch.setattr(pysearch, "STALL", 1.0)
    (ws / "a.txt").write_text("a" * 20 + "\n")  # matches at once
    (ws / "b.txt").write_text("a" * 64 + "b\n")  # ages
    ctx = ToolContext(workspace=ws, spill_dir=tmp_path / "spill")
    started = time.monotonic()
    result = await Grep().run({"pattern": "(a+)+$"}, ctx)
    assert time.monotonic() - started < 5
    assert result.is_error
    assert result.output == (
        "a.txt:1:" + "a" * 20 + "\n"
        "Error: the search made no progress for 1s and was stopped: the pattern backtracks too much "
        "(nested quantifiers such as (a+)+ or (a|aa)* over a long line); simplify it"
    )


async def test_the_python_search_survives_a_worker_that_dies(
    ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker that cannot run gives one error line, not a traceback or a hang."""
    monkeypatch.setenv("CHIMERA_RG", "off")
    monkeypatch.setattr(pysearch, "WORKER", [os.fspath(tmp_path / "no-such-python"), "-c", "pass"])
    (ws / "a.txt").write_text("alpha\n")
    result = await Grep().run({"pattern": "alpha"}, ToolContext(workspace=ws, spill_dir=tmp_path / "spill"))
    assert result.is_error
    assert result.output.startswith("Error: the Python search could not run: ")
    assert "\n" not in result.output


# Globs over short names, with every construct: folders, `*`, `**`, `?`, classes, alternations.
NAMES = st.text(alphabet="ab/.c", max_size=12)
GLOBS = st.lists(
    st.sampled_from(["a", "b", "/", "*", "**", "?", "[ab]", "[!a]", "[", "]", "\\", "{", ",", "}", ".", "c"]),
    max_size=10,
).map("".join)


@given(NAMES, GLOBS)
def test_linear_glob_matching_agrees_with_the_regular_expression(name: str, pattern: str) -> None:
    """The matcher that never backtracks answers exactly as the regular expression the glob stands for."""
    try:
        regex = glob_regex(pattern)
    except ValueError:
        with pytest.raises(ValueError, match=re.escape(repr(pattern))):
            glob_matches(name, pattern)
        return
    assert glob_matches(name, pattern) == (regex.match(name) is not None), (name, pattern)


def test_a_glob_with_many_stars_answers_in_linear_time() -> None:
    """Forty `**a` against a 4,000-character name: a regex would need ages, the matcher a moment."""
    started = time.monotonic()
    assert not glob_matches("a" * 4000, "**a" * 40 + "**b")
    assert glob_matches("a" * 3999 + "b", "**a" * 40 + "**b")
    assert glob_matches("x/" * 1000 + "f.py", "**/*.py")
    assert time.monotonic() - started < 2
