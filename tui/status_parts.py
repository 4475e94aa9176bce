"""Provides what the status line says, as parts, and which of them fit a width (no Textual here).

:func:`parts_of` turns a ``RunStatus`` into named parts, in the order they show: the state (with a
spinner and the time elapsed while a run works), the model, the permission mode, the strategy, the turn,
the context used against the model's window, the tokens in and out, the cost, the session's short id and
the workspace. :func:`fit` keeps what fits a width by dropping whole parts, least useful first
(:data:`DROP_ORDER`: the workspace, then the session's id, the turn, the strategy, …), never the state, the tokens or
the cost, so a narrow terminal loses the end of nothing that matters.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.cells import cell_len

from chimera.core.terminal_text import terminal_safe
from chimera.core.wording import tokens
from chimera.tui.state.run_status import RunStatus

__all__ = ["DROP_ORDER", "SEPARATOR", "SPINNER", "Part", "fit", "parts_of", "spin_frame", "spinning", "width_of"]

SEPARATOR = " · "
SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
SPIN_RATE = 8  # spinner frames a second: the line redraws no more often, and only while a run works
# Dropped first to last. The permission mode and whether commands are sandboxed outlast the rest, the model too:
# they say what may run unasked, and where.
DROP_ORDER = ("workspace", "session", "turn", "mcp", "loop", "context", "model", "sandbox", "mode")
SPINNING = frozenset({"running", "compacting", "summarizing"})


@dataclass(frozen=True, slots=True)
class Part:
    """One part of the status line: ``name`` (``state``, ``model``, ``tokens``…) and the words it shows."""

    name: str
    text: str


def spinning(status: RunStatus) -> bool:
    """Whether the line has a spinner (a run or a compaction works): only then does it redraw by itself."""
    return status.state in SPINNING


def spin_frame(status: RunStatus, now: float) -> int:
    """The spinner's frame at monotonic time ``now``, counted from the run's start (its time in seconds is
    this divided by ``SPIN_RATE``): the line needs drawing again only when this moved on."""
    return int(max(0.0, now - status.started) * SPIN_RATE) if status.started is not None else 0


def parts_of(status: RunStatus, now: float, *, spin: bool = True) -> list[Part]:
    """The status line's parts for ``status`` at monotonic time ``now``, in the order they show (``spin``:
    with the spinner and the time elapsed while a run works)."""
    state = status.state
    if spin and spinning(status):
        count = spin_frame(status, now)
        frame = SPINNER[count % len(SPINNER)]
        state = f"{frame} {state} {_clock(count // SPIN_RATE)}" if status.started is not None else f"{frame} {state}"
    parts = [
        Part("state", state),
        Part("model", terminal_safe(status.model, one_line=True) or "no model"),
        Part("mode", status.mode),
        *([Part("sandbox", status.sandbox)] if status.sandbox else []),
        Part("loop", status.loop),
        Part("turn", f"turn {status.turn}"),
    ]
    if status.window:
        parts.append(
            Part("context", f"context {status.context_tokens / status.window:.0%} of {_thousands(status.window)}")
        )
    parts.append(Part("tokens", f"{tokens(status.input_tokens)} in / {tokens(status.output_tokens)} out"))
    parts.append(Part("cost", f"${status.cost:.4f}"))
    if status.mcp:
        parts.append(Part("mcp", status.mcp))
    if status.session:
        parts.append(Part("session", f"#{status.session[:8]}"))
    if status.workspace:
        parts.append(Part("workspace", terminal_safe(status.workspace, one_line=True)))
    return parts


def width_of(parts: Sequence[Part]) -> int:
    """The cells ``parts`` take, joined by :data:`SEPARATOR`."""
    return sum(cell_len(part.text) for part in parts) + cell_len(SEPARATOR) * max(0, len(parts) - 1)


def fit(parts: Sequence[Part], width: int) -> list[Part]:
    """The parts shown in ``width`` cells: whole parts dropped in :data:`DROP_ORDER` until the rest fit
    (the state, the tokens and the cost always stay, even when they alone do not fit)."""
    shown = list(parts)
    for name in DROP_ORDER:
        if width_of(shown) <= width:
            break
        shown = [part for part in shown if part.name != name]
    return shown


def _thousands(count: int) -> str:
    """A context window as a person reads it: ``200k``, ``1M``."""
    if count >= 1_000_000 and count % 1_000_000 == 0:
        return f"{count // 1_000_000}M"
    return f"{count // 1000}k" if count >= 1000 else str(count)


def _clock(seconds: int) -> str:
    """``7s``, ``1m 05s``, ``2h 03m``."""
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m {seconds % 60:02d}s"
    return f"{seconds // 3600}h {seconds % 3600 // 60:02d}m"
