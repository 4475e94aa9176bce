"""Permission rules about MCP tools, as the model names them: ``mcp__db`` and ``mcp__db__*`` name every tool of
the server ``db``, ``mcp__db__query`` one; they allow, deny and ask as other rules do; a tool the server marks
read-only counts as a read, any other asks in ``ask`` mode, and plan mode refuses it."""

from __future__ import annotations

import pytest

from chimera.core.errors import ConfigError
from chimera.core.permissions.policy import PermissionPolicy
from chimera.core.permissions.rule import Rule
from chimera.core.tool_group import DEFAULT_TOOLS

TOOLS = DEFAULT_TOOLS.names


@pytest.mark.parametrize(
    ("rule", "tool", "named"),
    [
        ("mcp__db", "mcp__db__query", True),
        ("mcp__db__*", "mcp__db__drop_table", True),
        ("mcp__db__query", "mcp__db__query", True),
        ("mcp__db__query", "mcp__db__query_all", False),
        ("mcp__db", "mcp__db2__query", False),
        ("mcp__db", "mcp__dbx__query", False),
        ("mcp__my_db", "mcp__my_db__query", True),
        ("*", "mcp__db__query", True),
        ("mcp__db", "bash", False),
    ],
)
def test_a_rule_names_the_tools_it_says(rule: str, tool: str, named: bool) -> None:
    """A server-wide rule names that server's tools and no other server's, however alike their names."""
    assert Rule.parse(rule, TOOLS).names(tool) is named


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("mcp__db__query(src/*)", "has a pattern, which an MCP tool's rule does not take: write mcp__db__query"),
        ("mcp__", "is not understood"),
        ("mcp__db__*(x)", "has a pattern"),
    ],
)
def test_a_bad_mcp_rule_is_one_line_saying_how_to_write_it(text: str, needle: str) -> None:
    """A pattern on an MCP rule, or an MCP rule of no server, is refused saying what to write."""
    with pytest.raises(ConfigError, match=r"^the permission rule") as caught:
        Rule.parse(text, TOOLS)
    assert needle in str(caught.value)


def test_in_ask_mode_an_action_asks_naming_the_rule_and_a_read_runs() -> None:
    """An MCP tool that may change things asks, its fix ``--allow mcp__db__drop``; one marked read-only runs."""
    policy = PermissionPolicy.build("ask", tools=TOOLS)
    asked = policy.decide("mcp__db__drop", {"path": "x"}, read_only=False)
    assert asked.verdict == "ask"
    assert asked.fix == "--permission-mode bypass, or --allow mcp__db__drop"
    assert policy.decide("mcp__db__query", {}, read_only=True).verdict == "allow"


def test_rules_allow_and_deny_a_servers_tools() -> None:
    """``--allow mcp__db`` lets every tool of db run unasked; ``--deny mcp__db__drop`` still refuses that one,
    even a read; another server's tools still ask."""
    policy = PermissionPolicy.build("ask", allow=["mcp__db"], deny=["mcp__db__drop"], tools=TOOLS)
    assert policy.decide("mcp__db__insert", {}, read_only=False).verdict == "allow"
    assert policy.decide("mcp__db__drop", {}, read_only=True).verdict == "deny"
    assert policy.decide("mcp__other__insert", {}, read_only=False).verdict == "ask"


def test_plan_mode_refuses_an_mcp_action_and_runs_a_read() -> None:
    """Plan mode is read-only for MCP tools too: an action is refused by the executor's policy, a read runs."""
    policy = PermissionPolicy.build("plan", allow=["mcp__db"], tools=TOOLS)
    assert policy.decide("mcp__db__insert", {}, read_only=False).verdict == "deny"
    assert policy.decide("mcp__db__query", {}, read_only=True).verdict == "allow"


def test_always_for_an_mcp_tool_keeps_a_rule_for_that_tool_only() -> None:
    """Answering "always" to one MCP tool allows that tool from then on, not the server's others."""
    policy = PermissionPolicy.build("ask", tools=TOOLS).remembering("mcp__db__insert", {"row": 1})
    assert policy.decide("mcp__db__insert", {"row": 2}, read_only=False).verdict == "allow"
    assert policy.decide("mcp__db__drop", {}, read_only=False).verdict == "ask"
