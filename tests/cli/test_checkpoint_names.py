"""Checkpoint names: a node may carry several and none is dropped silently; every command Chimera prints for
a person to run is quoted for the shell, so pasting it runs exactly that command."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest

from chimera.core.sessions.store import SessionStore
from tests.cli_runner import run_here


def one_answer(home: Path, workdir: Path) -> str:
    """Session "s": a prompt and its answer (the leaf); the answer's id."""
    with SessionStore.create(home, "s", workdir=workdir, model="m") as store:
        store.add("user", {"role": "user", "content": "go"}, sync=True)
        return store.add("assistant", {"role": "assistant", "content": [{"type": "text", "text": "Done."}]}).id


def printed_commands(text: str) -> list[list[str]]:
    """Every `chimera …` command the lines of ``text`` end by offering, split as a shell would split it."""
    return [shlex.split(found) for found in re.findall(r"`(chimera .*)` comes back to it", text)]


def test_naming_a_node_twice_keeps_both_names(isolated_env: Path, project: Path) -> None:
    """`chimera checkpoint s a` then `s b` on the same node: both names stay, and either switches there."""
    answer = one_answer(isolated_env, project)
    assert run_here("checkpoint", "s", "first").returncode == 0
    second = run_here("checkpoint", "s", "second")
    assert second.returncode == 0, second.stderr
    assert "(also named 'first')" in second.stdout
    nodes = json.loads(run_here("tree", "s", "--json").stdout)["nodes"]
    [named] = [n for n in nodes if n["labels"]]
    assert (named["id"], named["labels"], named["label"]) == (answer, ["first", "second"], "second")
    assert "[first, second]" in run_here("tree", "s").stdout
    for name in ("first", "second"):
        switched = run_here("switch", "s", name, "--yes")
        assert switched.returncode == 0, switched.stderr


@pytest.mark.parametrize("name", ["my point", "it's; rm -rf ~", "$(touch pwned)", "a`b`c", "-x"])
def test_a_printed_command_runs_exactly_what_it_says(name: str, isolated_env: Path, project: Path) -> None:
    """The `chimera switch …` printed after naming a checkpoint, run as a shell splits it, switches to that name."""
    answer = one_answer(isolated_env, project)
    named = run_here("checkpoint", "s", "--", name) if name.startswith("-") else run_here("checkpoint", "s", name)
    assert named.returncode == 0, named.stderr
    [printed] = printed_commands(named.stdout)
    assert printed[:2] == ["chimera", "switch"]
    assert printed[-1] == name
    switched = run_here(printed[1], "--yes", *printed[2:])
    assert switched.returncode == 0, switched.stderr
    with SessionStore.open(isolated_env, "s", writable=False) as store:
        assert store.tree.resolve(name) == answer
