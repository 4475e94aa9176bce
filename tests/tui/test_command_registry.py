"""The command registry (``tui.commands``) is the one table every way in is built from: each command is
reachable by slash, in the palette and, when it has keys, by a binding of the app; an unknown name is one
line; completion puts an exact name first; the footer's hints are the commands with keys that work now."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from chimera.core.events import PermissionRequested, PlanProposed, RunFinished
from chimera.core.sessions.start import RunOptions
from chimera.tui.app import ChimeraApp, build_app
from chimera.tui.command_views import palette_entries
from chimera.tui.commands import (
    COMMANDS,
    Command,
    Facts,
    complete,
    find,
    is_command,
    key_hints,
    literal,
    parse,
    unknown,
)
from chimera.tui.state import WorkbenchState
from chimera.tui.widgets.plan_panel import PlanPanel
from chimera.tui.widgets.question_panel import QuestionPanel
from chimera.tui.workbench.focus import FOCUS_KEYS
from tests.fake_anthropic import DEFAULT_MODEL as MODEL

IDLE = Facts(WorkbenchState(), recorded=True, themes=("chimera-dark", "chimera-light"), models=("claude-x",))


def plan_waiting() -> Facts:
    state = WorkbenchState()
    state.apply(PlanProposed(steps=["a"], request_id="plan:1"))
    return replace(IDLE, state=state)


def call_waiting() -> Facts:
    state = WorkbenchState()
    state.apply(PermissionRequested(request_id="r1", call_id="c1", name="bash", args={"command": "ls"}))
    return replace(IDLE, state=state, running=True)


def words_left_out() -> Facts:
    state = WorkbenchState()
    ended = RunFinished(success=False, reason="error", steps=0, cost=0.0, left_out="refused", left_out_nodes=["n1"])
    state.apply(ended)
    return replace(IDLE, state=state)


SITUATIONS = {
    "idle": IDLE,
    "words left out": words_left_out(),
    "running": replace(IDLE, running=True),
    "a plan waits": plan_waiting(),
    "a call waits": call_waiting(),
}


def where_enabled(command: Command) -> Facts:
    """A situation in which ``command`` works (each works in at least one)."""
    return next(facts for facts in SITUATIONS.values() if command.enabled(facts))


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c.id)
def test_every_command_is_reachable_by_slash_palette_and_its_keys(command: Command) -> None:
    """Typed as /id it is found; the palette lists it where it works; its keys are a binding of the app that
    runs the same command."""
    name, argument = parse(f"{command.slash} x" if command.argument else command.slash)
    assert find(name) is command
    assert argument == ("x" if command.argument else "")
    listed = {entry.command.id for entry in palette_entries(where_enabled(command))}
    assert command.id in listed
    keys = {"app": ChimeraApp.BINDINGS, "plan": PlanPanel.BINDINGS, "question": QuestionPanel.BINDINGS}
    bound = [b for b in keys[command.scope] if getattr(b, "action", "") == f"command({command.id!r})"]
    assert bool(bound) == bool(command.keys)
    if command.keys:
        assert bound[0].key == command.keys  # type: ignore[union-attr]


@pytest.mark.usefixtures("model_env")
def test_every_command_is_answered_by_exactly_one_part_of_the_workbench(project: Path) -> None:
    """The workbench's parts hand the runner a handler for each command of the registry, and for nothing else
    (two parts answering one command, or none answering it, stops the app from being built)."""
    app = build_app(RunOptions(workdir=project, model=MODEL))
    assert sorted(app.commands.handlers) == sorted(c.id for c in COMMANDS)


def test_the_app_binds_no_key_outside_the_registry() -> None:
    """Every key the workbench's app binds runs a registry command (an action is in all four ways or in none), but
    the keys written down as focus moves, which act on nothing."""
    actions = [str(getattr(b, "action", "")) for b in ChimeraApp.BINDINGS]
    assert all(a.startswith("command(") for a in actions if a not in FOCUS_KEYS.values())
    assert set(FOCUS_KEYS.values()) <= set(actions)


def test_a_command_not_working_now_is_left_out_of_the_palette() -> None:
    listed = {entry.command.id for entry in palette_entries(IDLE)}
    assert "approve" not in listed
    assert "interrupt" not in listed
    assert "compact" in listed


def test_an_unknown_name_is_one_line_naming_the_nearest_command() -> None:
    assert (
        unknown("frob") == "/frob is not a command: /help lists them (start with // to send words that begin with /)."
    )
    assert unknown("hepl").startswith("/hepl is not a command: did you mean /help? ")
    assert "\n" not in unknown("x" * 500)


def test_a_double_slash_is_words_and_a_slash_is_a_command() -> None:
    """`//etc/hosts` is words beginning with a slash; `/help` and ` /help` are commands."""
    assert (is_command("/help"), is_command(" /help"), is_command("//etc/hosts"), is_command("hi /help")) == (
        True,
        True,
        False,
        False,
    )
    assert literal("//etc/hosts is odd") == "/etc/hosts is odd"
    assert parse("/compact   the line numbers ") == ("compact", "the line numbers")


def test_completion_ranks_the_exact_name_first() -> None:
    """`/mode` offers /mode before /model; `/mod` offers both, in the registry's order; `/loop p` offers plan."""
    assert [c.label for c in complete("/mode", IDLE)][:2] == ["/mode [NAME]", "/model NAME"]
    assert [c.text for c in complete("/mod", IDLE)] == ["/model ", "/mode "]
    assert [c.text for c in complete("/loop p", IDLE)] == ["/loop plan"]
    assert [c.text for c in complete("/theme chimera-d", IDLE)] == ["/theme chimera-dark"]
    assert complete("hello", IDLE) == []
    assert complete("//etc", IDLE) == []


def test_completion_offers_only_what_works_now() -> None:
    """While a run works, /compact is not offered; /interrupt is."""
    running = SITUATIONS["running"]
    offered = {c.text.strip() for c in complete("/", running)}
    assert "/compact" not in offered
    assert "/interrupt" in offered


def test_the_footer_hints_are_the_commands_with_keys_that_work_now() -> None:
    assert key_hints(IDLE) == [("?/F1", "Keys and commands"), ("^t", "Session tree"), ("ctrl+q", "Quit")]
    assert ("esc", "Interrupt") in key_hints(SITUATIONS["running"])
