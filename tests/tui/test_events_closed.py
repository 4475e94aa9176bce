"""Events are a closed set: every kind is in ``Event``, and every reader that matches on events either handles a
kind or names it as ignored, so a kind added later cannot pass a reader unseen. Each reader is fed one event of
every kind; one it neither handles nor names raises."""

from __future__ import annotations

import dataclasses
import io
from pathlib import Path
from typing import Any

import pytest

from chimera.core import events as ev
from chimera.core.printer import Printer
from chimera.core.sessions.start import RunOptions
from chimera.tui.app import build_app
from chimera.tui.state import Transcript, WorkbenchState
from chimera.tui.widgets.status_line import StatusLine

SAMPLE_VALUES: dict[str, Any] = {
    "str": "x",
    "int": 1,
    "float": 1.0,
    "bool": False,
    "str | None": None,
    "dict[str, Any]": {},
    "list[str]": ["a step"],
    "list[int | None]": [None],
    "AssistantMessage": {"role": "assistant", "content": [{"type": "text", "text": "x"}]},
    "str | list[dict[str, Any]]": "x",
}


def sample(kind: type[ev.StepEvent]) -> ev.StepEvent:
    """An event of ``kind`` with every field it needs filled in by its type."""
    needed = {
        f.name: SAMPLE_VALUES[str(f.type)]
        for f in dataclasses.fields(kind)
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
    }
    return kind(**needed)


def every_kind() -> list[ev.StepEvent]:
    return [sample(kind) for kind in ev.EVENT_TYPES]


def test_every_registered_kind_is_in_the_union() -> None:
    """`Event` names every kind `event_from_dict` knows, and each round-trips through JSON."""
    assert set(ev.EVENT_TYPES) == set(ev._REGISTRY.values())
    for event in every_kind():
        assert ev.event_from_dict(event.to_dict()) == event


def test_the_conversation_handles_or_names_every_kind() -> None:
    """The transcript's reducer takes one event of every kind without meeting one it does not know."""
    transcript = Transcript()
    for event in every_kind():
        transcript.apply(event)


def test_the_workbench_state_handles_or_names_every_kind() -> None:
    """Every part of the workbench's state (questions, plan, run status, its own) takes every kind; an unknown
    kind is a TypeError there too."""
    state = WorkbenchState()
    for event in every_kind():
        state.apply(event)

    @dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
    class Unheard(ev.StepEvent):
        type = "unheard"

    for part in (state.questions, state.plan, state.status, state):
        with pytest.raises(TypeError, match="neither handled here nor named as ignored"):
            part.apply(Unheard())


def test_the_text_printer_handles_or_names_every_kind() -> None:
    """`chimera run` without --json prints or names every kind."""
    printer = Printer(io.StringIO(), io.StringIO(), json_lines=False, on_gone=lambda: None)
    for event in every_kind():
        printer(event)


def test_a_reader_meeting_a_kind_it_does_not_name_says_so() -> None:
    """A kind a reader neither handles nor names as ignored is a TypeError, not silence."""

    @dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
    class Unheard(ev.StepEvent):
        type = "unheard"

    with pytest.raises(TypeError, match="neither handled here nor named as ignored"):
        Transcript().apply(Unheard())


async def test_the_workbench_and_its_status_line_handle_or_name_every_kind(project: Path) -> None:
    """The app's own reactions and the status line take one event of every kind."""
    app = build_app(RunOptions(workdir=project), demo_pace=10.0)
    async with app.run_test(size=(100, 30)):
        status = app.query_one(StatusLine)
        for event in every_kind():
            status.follow(event)
        app.reactions.shown([e for e in every_kind() if not isinstance(e, ev.Switched)])
