"""Provides ``run_headless``: a task run without the workbench, for scripts and CI.

With ``json_lines`` every event goes to stdout as one JSON object a line;
otherwise the answer streams to stdout and tool activity to stderr. Returns
the process exit code: 0 when the run succeeds, 1 when it fails (max turns,
refusal, interrupted, a model error), 2 when the setup is wrong (a rejected
key, an unknown model, an unreachable server).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TextIO

from chimera.core.demo import DEMO_NOTICE
from chimera.core.events import (
    RetryScheduled,
    RunFinished,
    StepEvent,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
)
from chimera.core.launch import RunOptions, prepare

__all__ = ["CONFIG_REASONS", "run_headless"]

CONFIG_REASONS = frozenset({"auth", "not_found", "permission", "unreachable"})


class _TextPrinter:
    """Prints a run for a person reading a terminal."""

    def __init__(self, out: TextIO, err: TextIO) -> None:
        self.out = out
        self.err = err

    def __call__(self, event: StepEvent) -> None:
        match event:
            case TextDelta(text=text):
                self.out.write(text)
                self.out.flush()
            case ToolCallStarted(name=name, args=args):
                self.out.write("\n")
                self.err.write(f"● {name} {_brief(args)}\n")
            case ToolCallFinished(is_error=is_error, output=output, duration_ms=ms):
                lines = output.count("\n") + 1
                mark = "✗" if is_error else "✓"
                self.err.write(f"  {mark} {lines} lines in {ms / 1000:.2f}s\n")
            case RetryScheduled(reason=reason, attempt=attempt, wait_s=wait):
                self.err.write(f"  ↻ retry {attempt} ({reason}) in {wait:.1f}s\n")
            case RunFinished():
                self.out.write("\n")
                self.out.flush()
            case _:
                pass
        self.err.flush()


def _json_printer(out: TextIO) -> Callable[[StepEvent], None]:
    def emit(event: StepEvent) -> None:
        out.write(event.to_json() + "\n")
        out.flush()

    return emit


def _brief(args: dict[str, object]) -> str:
    for key in ("command", "path", "pattern", "thought"):
        if key in args:
            text = str(args[key]).replace("\n", " ")
            return text if len(text) <= 80 else text[:79] + "…"
    return ""


async def run_headless(
    task: str,
    options: RunOptions,
    *,
    json_lines: bool = False,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
) -> int:
    """Run ``task`` with ``options``; print as it goes; return the exit code."""
    out = stdout or sys.stdout
    err = stderr or sys.stderr
    launch = prepare(options)
    if launch.demo:
        err.write(f"chimera: {DEMO_NOTICE}\n")
        err.write(f"chimera: demo task: {launch.demo_task} (workspace: {launch.env.workdir})\n")
        task = launch.demo_task
    printer = _json_printer(out) if json_lines else _TextPrinter(out, err)
    launch.bus.subscribe(printer, name="printer")
    try:
        result = await launch.run(task)
    finally:
        await launch.close()
    if result.success:
        return 0
    err.write(f"chimera: the run failed ({result.reason}): {result.error}\n")
    return 2 if result.reason in CONFIG_REASONS else 1
