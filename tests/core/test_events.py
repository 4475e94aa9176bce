"""Events are frozen, stamped, and round-trip through one JSON object each."""

from __future__ import annotations

import dataclasses
import json
import typing

import pytest

from chimera.core import events
from chimera.core.events import (
    PermissionRequested,
    StepEvent,
    ToolCallFinished,
    event_from_dict,
    event_from_json,
)

_SAMPLES: dict[type, typing.Any] = {str: "x", int: 3, float: 1.5, bool: True}


def _sample(cls: type[StepEvent]) -> StepEvent:
    hints = typing.get_type_hints(cls)
    values: dict[str, typing.Any] = {}
    for f in dataclasses.fields(cls):
        if f.metadata.get("transient") or f.name in {"run_id", "session_id", "node_id", "seq", "ts"}:
            continue
        hint = hints[f.name]
        origin = typing.get_origin(hint)
        if origin is list:
            values[f.name] = ["one", "two"]
        elif origin is dict or hint is dict:
            values[f.name] = {"role": "assistant", "content": [{"type": "text", "text": "hi"}]}
        else:
            values[f.name] = _SAMPLES.get(hint, "x")
    return cls(run_id="r1", session_id="s1", node_id="n1", seq=7, ts=1.25, **values)


ALL_EVENTS = [
    cls
    for cls in vars(events).values()
    if isinstance(cls, type) and issubclass(cls, StepEvent) and cls is not StepEvent
]


@pytest.mark.parametrize("cls", ALL_EVENTS, ids=lambda c: c.type)
def test_every_event_round_trips_through_json(cls: type[StepEvent]) -> None:
    """Each event kind becomes one JSON line and comes back equal."""
    event = _sample(cls)
    line = event.to_json()
    assert "\n" not in line
    data = json.loads(line)
    assert data["type"] == cls.type
    assert {"run_id", "session_id", "seq", "ts"} <= set(data)
    assert event_from_json(line) == event


def test_events_are_frozen() -> None:
    """An event cannot be changed after it is published."""
    event = _sample(ToolCallFinished)
    with pytest.raises(dataclasses.FrozenInstanceError):
        event.output = "changed"  # type: ignore[misc]


def test_a_permission_request_is_plain_data_with_an_id_to_answer() -> None:
    """A question carries no future: its request id is all a front end needs to answer it."""
    event = PermissionRequested(request_id="t1:ab12", call_id="t1", name="bash", args={"command": "ls"})
    data = json.loads(event.to_json())
    assert data["request_id"] == "t1:ab12"
    assert event_from_dict(data) == event


def test_unknown_event_type_is_rejected() -> None:
    """A JSON line with an unknown type fails clearly instead of becoming a wrong event."""
    with pytest.raises(ValueError, match="unknown event type"):
        event_from_dict({"type": "nope"})
