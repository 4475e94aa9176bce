"""How `chimera acp` shows what a run does, without a process: the kind of each call (a plain `rm` is a delete,
`curl` a fetch), output fenced so nothing in it closes the block, the question about a command the sandbox
refused (never "always"), plan entries through a plan's life, deltas joined, and every kind of event either
sent or named as not sent."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from chimera.core import events as ev
from chimera.core.modes.acp.plan import PlanEntries
from chimera.core.modes.acp.questions import permission_question
from chimera.core.modes.acp.tool_calls import fenced, kind_of, locations_of
from chimera.core.modes.acp.updates import Updates, coalesced


@pytest.mark.parametrize(
    ("name", "args", "kind"),
    [
        ("read", {"path": "a.py"}, "read"),
        ("edit", {"path": "a.py", "old": "x", "new": "y"}, "edit"),
        ("write", {"path": "a.py", "content": "x"}, "edit"),
        ("grep", {"pattern": "x"}, "search"),
        ("glob", {"pattern": "*.py"}, "search"),
        ("think", {"thought": "x"}, "think"),
        ("bash", {"command": "pytest -q"}, "execute"),
        ("bash", {"command": "rm -rf build"}, "delete"),
        ("bash", {"command": "curl -s https://example.com"}, "fetch"),
        ("bash", {"command": "rm -rf build && make"}, "execute"),  # more than a delete
        ("mcp__db__query", {"sql": "select 1"}, "other"),
    ],
)
def test_each_call_has_the_kind_a_client_shows(name: str, args: dict[str, Any], kind: str) -> None:
    """Reads, edits, searches, thinking, commands, deletes and fetches each get their ACP kind."""
    assert kind_of(name, args) == kind


def test_locations_are_absolute(tmp_path: Path) -> None:
    """A path the model gave relative to the workspace is shown joined to it, with a read's first line."""
    [read] = locations_of(tmp_path, "read", {"path": "src/../a.py", "offset": 10})
    assert (read.path, read.line) == (str(tmp_path / "a.py"), 10)
    [search] = locations_of(tmp_path, "grep", {"pattern": "x"})
    assert search.path == str(tmp_path)


def test_output_is_fenced_longer_than_any_backticks_in_it() -> None:
    """Output holding a fence of its own cannot close the block it is shown in."""
    shown = fenced("before\n````\nafter")
    assert shown.startswith("`````\n")
    assert shown.endswith("\n`````")


def test_a_command_the_sandbox_refused_is_never_offered_always() -> None:
    """Running again outside the sandbox is once or not at all."""
    asked = ev.PermissionRequested(
        request_id="r",
        call_id="c",
        name="bash",
        args={"command": "curl x"},
        reason="the sandbox refused",
        outside_sandbox=True,
    )
    call, options = permission_question(asked, "c")
    assert [o.kind for o in options] == ["allow_once", "reject_once"]
    assert call.title == "Run bash again outside the sandbox?"


def test_plan_entries_follow_the_plan() -> None:
    """Proposed: all pending; approved: the first in progress; checked: completed and the next in progress; a
    re-plan keeps what was done."""
    plan = PlanEntries()
    statuses = []
    for event in (
        ev.PlanProposed(steps=["a", "b"]),
        ev.PlanApproved(steps=["a", "b"]),
        ev.PlanStepChecked(index=0, passed=True),
        ev.Replanned(steps=["a", "c", "d"]),
        ev.PlanStepChecked(index=1, passed=False),
    ):
        plan.apply(event)
        statuses.append([e.status for e in plan.update().entries])
    assert statuses == [
        ["pending", "pending"],
        ["in_progress", "pending"],
        ["completed", "in_progress"],
        ["completed", "in_progress", "pending"],
        ["completed", "in_progress", "pending"],  # a failed check is tried again
    ]


def test_deltas_in_a_row_are_joined() -> None:
    """A burst of text deltas is one chunk; a command's output joins only with its own."""
    joined = coalesced(
        [
            ev.TextDelta(text="a"),
            ev.TextDelta(text="b"),
            ev.ThinkingDelta(text="c"),
            ev.ToolOutputDelta(call_id="1", text="x"),
            ev.ToolOutputDelta(call_id="1", text="y"),
            ev.ToolOutputDelta(call_id="2", text="z"),
        ]
    )
    assert [(type(e).__name__, getattr(e, "text", "")) for e in joined] == [
        ("TextDelta", "ab"),
        ("ThinkingDelta", "c"),
        ("ToolOutputDelta", "xy"),
        ("ToolOutputDelta", "z"),
    ]


def test_every_kind_of_event_is_sent_or_named_as_not_sent(tmp_path: Path) -> None:
    """One event of each kind, live and told again: none is unknown to the translator, so a kind added later
    cannot pass it unseen."""
    values: dict[str, Any] = {
        "str": "x",
        "int": 0,
        "float": 1.0,
        "bool": False,
        "dict[str, Any]": {},
        "list[str]": ["a step"],
        "list[int | None]": [None],
        "AssistantMessage": {"role": "assistant", "content": [{"type": "text", "text": "x"}]},
        "str | list[dict[str, Any]]": "x",
    }
    updates = Updates(tmp_path)
    for kind in ev.EVENT_TYPES:
        needed = {
            f.name: values[str(f.type)]
            for f in dataclasses.fields(kind)
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        }
        event = kind(**needed)
        updates.of(event)
        updates.of(event, replay=True)
