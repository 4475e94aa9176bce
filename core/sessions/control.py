"""Provides ``Control``: a session driven by JSON lines, the control channel of ``chimera run --control -``.

One JSON object a line, each with a ``type``:

* ``{"type": "steer", "text": …}``: words for the run in progress (delivered at its next step);
* ``{"type": "follow_up", "text": …}``: a task for when the current run ends;
* ``{"type": "interrupt"}``: stop the run in progress;
* ``{"type": "plan", "decision": "approve" | "edit" | "cancel", "plan": …}``: answer the open plan;
* ``{"type": "permission", "request_id": …, "decision": "allow" | "always" | "deny"}``.

A line that is not one of these (not JSON, nested deeper than a control line
ever is, a lone surrogate that no UTF-8 text can hold, an unknown type, a
missing or wrong field, a request that is not open) is answered with one
``error`` event naming what is wrong; the run goes on, and so does the
channel. When the channel closes, every open question is answered as nobody
can answer it (a permission denied, a plan cancelled) and later questions are
refused as in any headless run.
"""

from __future__ import annotations

import json
import re
import time
from typing import Any

from chimera.core.events import ControlRejected
from chimera.core.loops.base import PLAN_DECISIONS
from chimera.core.sessions.session import Session
from chimera.core.strict_json import deeper_than
from chimera.core.terminal_text import is_blank
from chimera.core.tools.executor import DECISIONS

__all__ = ["Control"]

_KINDS = ("steer", "follow_up", "interrupt", "plan", "permission")
_DEPTH = 4  # arrays and objects inside each other in a control line, the line's object included
_SURROGATE = re.compile("[\ud800-\udfff]")
_SHOWN = 60  # characters of a wrong value an error repeats


class Control:
    """Applies control lines to ``session`` (follow-ups wait in the session's queue)."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self.closed = False

    def handle(self, line: str) -> None:
        """Apply one line (call on the session's event loop); a bad one becomes an ``error`` event."""
        if not line.strip():
            return
        try:
            self._apply(_parse(line))
        except ValueError as err:
            mask = self.session.redactor.mask  # before the line is cut: never half a secret
            self.session.bus.publish(
                ControlRejected(
                    session_id=self.session.id, ts=time.time(), message=mask(str(err)), line=mask(line.strip())[:200]
                )
            )

    def close(self) -> None:
        """The channel ended: nobody answers from here on."""
        self.closed = True
        self.session.agent.stop_asking()

    def _apply(self, command: dict[str, Any]) -> None:
        session = self.session
        match command["type"]:
            case "steer":
                if not session.steer(_text(command)):
                    raise ValueError("no run is going to steer: send a follow_up for the next one")
            case "follow_up":
                session.follow_up(_text(command))
            case "interrupt":
                if not session.agent.running:
                    raise ValueError("no run is going to interrupt")
                session.interrupt()
            case "plan":
                decision = _choice(command, "decision", PLAN_DECISIONS)
                plan = command.get("plan")
                if decision in {"edit", "revise"} and not (isinstance(plan, str) and plan.strip()):
                    what = "an edited plan" if decision == "edit" else "a revision"
                    raise ValueError(f'{what} needs its text in "plan"')
                request_id = session.agent.open_plan()
                if request_id is None:
                    raise ValueError("no plan is waiting for an answer")
                session.answer(request_id, decision, plan if decision in {"edit", "revise"} else None)
            case "permission":
                request_id = command.get("request_id")
                if not isinstance(request_id, str):
                    raise ValueError('a permission answer needs the "request_id" of its permission_requested event')
                if not session.answer(request_id, _choice(command, "decision", DECISIONS)):
                    raise ValueError(f"no permission request {_shown(request_id)} is open")


def _parse(line: str) -> dict[str, Any]:
    try:
        command = json.loads(line)
    except RecursionError:
        raise ValueError(f"the line is nested too deep: send one flat JSON object a line{_EXAMPLE}") from None
    except ValueError:
        raise ValueError("the line is not JSON: send one JSON object a line") from None
    if not isinstance(command, dict):
        raise ValueError("the line is not a JSON object")
    if deeper_than(command, _DEPTH):
        raise ValueError(f"the line is nested more than {_DEPTH} levels deep: send one flat JSON object{_EXAMPLE}")
    surrogate = _lone_surrogate(command)
    if surrogate is not None:
        raise ValueError(
            f"the line holds a lone surrogate ({surrogate!r}), which no UTF-8 text can: send each character "
            "whole (one outside the BMP as its pair of escapes, \\ud83d\\ude00, or as itself)"
        )
    if command.get("type") not in _KINDS:
        raise ValueError(f"unknown type {_shown(command.get('type'))}: use one of {', '.join(_KINDS)}")
    return command


_EXAMPLE = ' such as {"type": "steer", "text": "..."}'


def _lone_surrogate(value: Any) -> str | None:
    """The first lone surrogate in a string of ``value`` (keys too; a pair was joined by the JSON reader)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            found = _SURROGATE.search(item)
            if found is not None:
                return found.group()
        elif isinstance(item, dict):
            stack += [*item.keys(), *item.values()]
        elif isinstance(item, list):
            stack += item
    return None


def _shown(value: object) -> str:
    """A wrong value as an error repeats it: its ``repr``, at most ``_SHOWN`` characters."""
    text = repr(value)
    return text if len(text) <= _SHOWN else text[: _SHOWN - 1] + "…"


def _text(command: dict[str, Any]) -> str:
    text = command.get("text")
    if not isinstance(text, str) or is_blank(text):
        raise ValueError(f'a {command["type"]} needs its words in "text"')
    return text


def _choice(command: dict[str, Any], key: str, choices: tuple[str, ...]) -> str:
    value = command.get(key)
    if value not in choices:
        raise ValueError(f'"{key}" must be one of {", ".join(choices)}, not {_shown(value)}')
    return str(value)
