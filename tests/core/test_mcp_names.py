"""The names the model sees for MCP tools: ``mcp__SERVER__TOOL`` where that is a valid, free name; otherwise cut
and ended in a hash, always unique, never a built-in's, and the same whatever order the servers answered in."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from chimera.core.mcp.names import LONGEST, model_names
from chimera.core.tool_group import DEFAULT_TOOLS

BUILTIN = DEFAULT_TOOLS.names
VALID = re.compile(r"[A-Za-z0-9_-]{1,64}")

parts = st.text(min_size=0, max_size=80)  # any Unicode, blank and overlong included
tool_sets = st.lists(st.tuples(parts, parts), max_size=30)


def test_a_plain_tool_keeps_its_names() -> None:
    """A server ``db`` with a tool ``query`` is ``mcp__db__query``, as Claude Code names it."""
    assert model_names([("db", "query")], BUILTIN) == {("db", "query"): "mcp__db__query"}


def test_names_that_clash_once_cleaned_both_end_in_a_hash() -> None:
    """``a.b`` and ``a_b`` would both be ``mcp__s__a_b``: neither takes it, so neither looks like the other."""
    names = model_names([("s", "a.b"), ("s", "a_b")], BUILTIN)
    assert len(set(names.values())) == 2
    assert all(re.fullmatch(r"mcp__s__a_b_[0-9a-f]{8}", name) for name in names.values())


def test_a_long_name_is_cut_to_the_apis_limit_and_stays_told_apart() -> None:
    """Two tools whose names share their first 70 characters get two names of at most 64 characters."""
    stem = "x" * 70
    names = model_names([("server", stem + "1"), ("server", stem + "2")], BUILTIN)
    assert len(set(names.values())) == 2
    assert all(len(name) <= LONGEST and name.startswith("mcp__server__xxx") for name in names.values())


@given(tool_sets)
def test_every_name_is_valid_unique_and_never_a_builtins(tools: list[tuple[str, str]]) -> None:
    """Whatever servers and tools are called (control characters, emoji, blank, overlong), each gets a name the
    API takes, no two the same, none equal to a built-in tool's."""
    names = model_names(tools, BUILTIN)
    assert set(names) == set(tools)
    assert all(VALID.fullmatch(name) for name in names.values())
    assert len(set(names.values())) == len(names)
    assert not set(names.values()) & set(BUILTIN)


@given(tool_sets, st.randoms())
def test_names_do_not_depend_on_the_order_tools_were_listed_in(tools: list[tuple[str, str]], rnd: object) -> None:
    """Servers answer in any order: the same tools get the same names, so a session's calls name the same tools."""
    shuffled = list(tools)
    rnd.shuffle(shuffled)  # type: ignore[attr-defined]
    assert model_names(tools, BUILTIN) == model_names(shuffled, BUILTIN)


def test_a_name_a_builtin_has_is_never_given() -> None:
    """Were a built-in tool ever called like an MCP tool, the MCP tool gives way, not the built-in."""
    names = model_names([("db", "query")], [*BUILTIN, "mcp__db__query"])
    assert names[("db", "query")] != "mcp__db__query"
    assert names[("db", "query")].startswith("mcp__db__query_")
