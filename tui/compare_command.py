"""Provides ``chimera compare`` (variants of a task from one point of a session, side by side) and
``chimera diff`` (the file diff between two points of a session).

``compare`` prints, with ``--json``, every event of every variant as one JSON
object a line carrying ``"variant": LABEL``, then one ``compare_finished``
object with a row per variant; without it, a table. The exit code is 0 when
every variant completed, 1 when one did not, 2 for bad input (nothing run).
Ctrl-C, SIGTERM and SIGHUP (a terminal that closes) stop every variant; the rows
so far are still printed (where they can be) and the scratch copies are removed.
``diff`` prints the unified diff of the two points' pinned files: exactly, for a
program (a pipe, a file), and for a terminal with every character that could
steer it shown as an escape (what a session holds is untrusted).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TextIO

from chimera.core import credentials
from chimera.core.compare import Comparison, Row, files_at, open_comparison, parse_specs
from chimera.core.difflines import diff_lines
from chimera.core.events import RunFinished, StepEvent
from chimera.core.home import chimera_home
from chimera.core.redact import Redactor
from chimera.core.sessions.store import SessionStore
from chimera.core.terminal_text import inert_json, terminal_safe
from chimera.core.wording import describe_ending, plural
from chimera.tui.hangup import let_go_of_gone_streams
from chimera.tui.printing import line, warn_opened

__all__ = ["compare_session", "diff_session", "rows_table"]


def compare_session(
    session_id: str,
    ref: str,
    specs: Sequence[str],
    *,
    task: str | None,
    verify: str | None,
    jobs: int | None,
    as_json: bool,
    out: TextIO,
    permission_mode: str | None = None,
    allow: Sequence[str] = (),
    deny: Sequence[str] = (),
    sandbox: str | None = None,
    allow_network: bool = False,
    sandbox_auto: bool = False,
    mcp_config: Path | None = None,
) -> int:
    """Run the comparison ``chimera compare`` asks for; print it; its exit code."""
    variants = parse_specs(specs)  # a bad spec is one line before anything opens
    opening = open_comparison(
        session_id,
        ref,
        variants,
        task=task,
        verify=verify,
        jobs=jobs,
        permission_mode=permission_mode,
        allow=allow,
        deny=deny,
        sandbox=sandbox,
        allow_network=allow_network,
        sandbox_auto=sandbox_auto,
        mcp_config=mcp_config,
    )
    with opening as comparison:
        warn_opened(comparison.store)
        if as_json:
            _print_events(comparison, out)
        else:
            labels = ", ".join(v.label for v in comparison.variants)
            line(sys.stderr, f"chimera: comparing {plural(len(variants), 'variant')} ({labels}) from {ref}")
            _print_endings(comparison)
        rows = asyncio.run(_run(comparison))
    mask = Redactor(credentials.values()).mask
    if as_json:
        document = {"type": "compare_finished", "session_id": comparison.store.id, "rows": [r.to_json() for r in rows]}
        out.write(inert_json(mask(json.dumps(document, ensure_ascii=False))) + "\n")
    else:
        for text in rows_table(rows):
            line(out, text)
        for row in rows:
            if row.error:
                line(sys.stderr, mask(f"chimera: {row.label}: {row.error}"))
        if any(row.node for row in rows):
            switch = f"chimera switch {comparison.store.id} compare-{comparison.number}-LABEL"
            line(sys.stderr, f"chimera: `{switch}` brings a variant's files into the workspace")
    return 0 if rows and all(row.success for row in rows) else 1


async def _run(comparison: Comparison) -> list[Row]:
    with _on_signals(comparison.stop):
        return await comparison.run()


def _print_events(comparison: Comparison, out: TextIO) -> None:
    """Every variant's events on ``out`` as JSON lines, each with its variant's label, never two mixed in a line."""
    lock = threading.Lock()

    def printer(label: str) -> Callable[[StepEvent], None]:
        def write(event: StepEvent) -> None:
            text = json.dumps({**event.to_dict(), "variant": label}, ensure_ascii=False, separators=(",", ":"))
            with lock:
                out.write(inert_json(text) + "\n")
                out.flush()

        return write

    for variant in comparison.variants:
        variant.bus.subscribe(printer(variant.label), name=f"compare-printer:{variant.label}")


def _print_endings(comparison: Comparison) -> None:
    """A line on stderr as each variant's run ends, in words (the table comes when all have)."""
    lock = threading.Lock()
    mask = Redactor(credentials.values()).mask

    def printer(label: str) -> Callable[[StepEvent], None]:
        def write(event: StepEvent) -> None:
            if isinstance(event, RunFinished):
                ending = describe_ending(event.success, event.reason, event.error)
                words = f"{ending.state}: {ending.why}" if ending.why else ending.state
                with lock:
                    line(sys.stderr, mask(f"chimera: {label} {words} after {plural(event.steps, 'turn')}"))

        return write

    for variant in comparison.variants:
        variant.bus.subscribe(printer(variant.label), name=f"compare-endings:{variant.label}")


@contextlib.contextmanager
def _on_signals(stop: Callable[[], None]) -> Iterator[None]:
    """While the block runs, Ctrl-C, SIGTERM and SIGHUP (the terminal closed) each ``stop`` every variant, so the
    run ends as Ctrl-C ends it: commands killed, rows made, scratch copies removed. After a hangup, the streams
    whose terminal is gone are let go first (see ``tui.hangup``)."""
    loop = asyncio.get_running_loop()

    def hung_up() -> None:
        let_go_of_gone_streams()
        stop()

    handled: list[signal.Signals] = []
    try:
        for signum, action in ((signal.SIGINT, stop), (signal.SIGTERM, stop), (signal.SIGHUP, hung_up)):
            loop.add_signal_handler(signum, action)
            handled.append(signum)
    except (NotImplementedError, RuntimeError):  # not the main thread
        pass
    try:
        yield
    finally:
        for signum in handled:
            loop.remove_signal_handler(signum)


_HEAD = ("variant", "outcome", "turns", "calls", "failed", "in", "out", "cost", "time", "files", "verified")


def rows_table(rows: Sequence[Row]) -> list[str]:
    """The rows as a table for a person: a header, then a line a variant (its branch's checkpoint last)."""
    cells = [_HEAD]
    for row in rows:
        added = sum(f.added for f in row.files)
        removed = sum(f.removed for f in row.files)
        files = f"{len(row.files)} +{added} -{removed}"
        verified = "-" if row.verified is None else "yes" if row.verified else "no"
        cells.append(
            (
                row.label,
                row.outcome,
                str(row.turns),
                str(row.tool_calls),
                str(row.failed_calls),
                str(row.input_tokens),
                str(row.output_tokens),
                f"${row.cost_usd:.4f}",
                f"{row.seconds:.1f}s",
                files,
                verified,
            )
        )
    widths = [max(len(terminal_safe(c[i], one_line=True)) for c in cells) for i in range(len(_HEAD))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(cell, widths, strict=True)).rstrip() for cell in cells]
    lines += [f"{row.label}: {row.checkpoint or 'no branch'}" for row in rows]
    return lines


def diff_session(session_id: str, first: str, second: str, out: TextIO) -> int:
    """Print the diff of the files pinned at ``first`` and ``second`` (nodes or names); exit code 0."""
    with SessionStore.open(chimera_home(), session_id, writable=False) as store:
        warn_opened(store)
        old = files_at(store, first)[1]
        new = files_at(store, second)[1]
        patch = store.checkpoints().patch(old, new) if old != new else b""
    if not patch:
        line(sys.stderr, f"chimera: {first} and {second} have the same files")
    buffer = getattr(out, "buffer", None)
    if buffer is not None and not out.isatty():  # for a program (`git apply`, a file): the diff exactly
        out.flush()
        buffer.write(patch)
        return 0
    for diff_line in diff_lines(patch.decode(errors="replace")):  # for a person: nothing steers the terminal
        out.write(diff_line + "\n")
    return 0
