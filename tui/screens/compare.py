"""Provides ``CompareScreen``: a comparison run from the workbench (``/compare``), its variants side by side.

A screen of its own, not a docked panel: the variants need the width (a column each at 120 columns, a row
each at 80), and while they run the workbench's input must not start a run of its own in the same session.
Each variant streams its progress live from its own bus (turn, the call now, tokens, cost, time); ``←``/``→``
choose one, ``s`` stops it alone, a permission it asks shows its label and ``y``/``n`` answer it (through
``Variant.answer``). At the end the table of rows shows; ``d`` shows the file diff between two variants'
branches (the diff of ``chimera diff``), ``enter``/``a`` adopts the chosen one after a ``y``: the screen closes at
the ``y`` and the workbench switches the session to its branch with its files (the focus in the input at once,
a task typed meanwhile sent once the switch is done); ``escape`` goes back to the workbench, the workspace
untouched. Its keys are priority bindings: each is run before the next key is handed on, in the order typed.
What the variants spend (tokens, cost) counts into the ``totals`` it is given (the workbench's run status,
every run since it opened) as it comes.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

from rich.table import Table
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import Static

from chimera.core.bus import StreamSubscription
from chimera.core.compare import Comparison, Row, Variant, files_at
from chimera.core.difflines import diff_lines
from chimera.core.errors import ChimeraError
from chimera.core.events import UsageReported
from chimera.core.sessions.session import Session
from chimera.core.sessions.switch_preview import preview_switch
from chimera.core.terminal_text import terminal_safe
from chimera.core.wording import plural
from chimera.tui.outside import tell
from chimera.tui.state.compare import VariantProgress
from chimera.tui.state.run_status import RunStatus
from chimera.tui.switch_words import describe_switch

__all__ = ["Adopted", "CompareScreen", "rows_grid"]


def _safe(text: str) -> str:
    return terminal_safe(text, one_line=True)


def rows_grid(rows: list[Row]) -> Table:
    """The comparison's rows for a person: a variant a line, what it took and which files it changed. Every cell
    is ``Text`` (Rich reads a plain ``str`` cell as markup): what a row holds is drawn as its characters."""
    table = Table(box=None, pad_edge=False, header_style="bold", expand=False)
    for name in ("variant", "outcome", "turns", "calls", "failed", "tokens", "cost", "time", "files"):
        table.add_column(name, no_wrap=True, justify="left" if name in {"variant", "outcome", "files"} else "right")
    for row in rows:
        added = sum(f.added for f in row.files)
        removed = sum(f.removed for f in row.files)
        cells = (
            row.label,
            row.outcome,
            str(row.turns),
            str(row.tool_calls),
            str(row.failed_calls),
            f"{row.input_tokens + row.output_tokens}",
            f"${row.cost_usd:.4f}",
            f"{row.seconds:.1f}s",
            f"{len(row.files)} +{added} -{removed}",
        )
        table.add_row(*(Text(_safe(cell)) for cell in cells))
    return table


class VariantCard(Static):
    """One variant's column (or row): its label, state and progress."""

    def __init__(self, progress: VariantProgress) -> None:
        super().__init__(classes="variant")
        self.progress = progress

    def render(self) -> Text:
        p = self.progress
        text = Text(_safe(p.label), style="bold")
        text.append(f"  {p.state}")
        for line in p.lines():
            text.append("\n" + line)
        if p.question is not None:
            text.append(f"\nasks: {_safe(p.question.name)} — y allow, n deny", style="bold")
        if p.row is not None and p.row.error:
            text.append("\n" + _safe(p.row.error))
        return text


@dataclass(frozen=True, slots=True)
class Adopted:
    """How the screen ended when a variant was adopted (its ``y``): the variant, and the checkpoint at the end
    of its branch, which the workbench switches to."""

    label: str
    checkpoint: str


class CompareScreen(Screen[Adopted | None]):
    """The variants of one comparison, live, then their rows; diff, adopt or leave."""

    DEFAULT_CSS = """
    CompareScreen {
        layout: vertical;
    }
    CompareScreen #compare-title {
        text-style: bold;
        padding: 0 1;
    }
    CompareScreen #variants {
        height: auto;
        max-height: 75%;
        overflow-y: auto;
    }
    CompareScreen.-narrow #variants {
        layout: vertical;
    }
    CompareScreen .variant {
        width: 1fr;
        height: auto;
        border: round $panel;
        padding: 0 1;
    }
    CompareScreen .variant.-chosen {
        border: round $accent;
    }
    CompareScreen #rows {
        height: auto;
        padding: 0 1;
    }
    CompareScreen #diff {
        height: 1fr;
        padding: 0 1;
        display: none;
    }
    CompareScreen #diff.-shown {
        display: block;
    }
    CompareScreen #compare-foot {
        dock: bottom;
        height: auto;
    }
    CompareScreen #compare-line {
        height: auto;
        padding: 0 1;
        text-style: bold;
    }
    CompareScreen #compare-keys {
        height: 1;
        padding: 0 1;
        color: $text-muted;
    }
    """

    PLACE = "compare"  # in the focus model (``tui.workbench.focus``)

    # Priority bindings: the app runs each before it hands on the next key, so a y that closes the screen leaves
    # the keys typed behind it to the input, and keys typed together act in the order typed (``tui.workbench.focus``).
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("left,up", "choose(-1)", "Previous", show=False, priority=True),
        Binding("right,down,tab", "choose(1)", "Next", show=False, priority=True),
        Binding("s", "stop", "Stop the variant", priority=True),
        Binding("d", "diff", "Diff", priority=True),
        Binding("enter,a", "adopt", "Adopt", priority=True),
        Binding("y", "yes", "Yes", priority=True),
        Binding("n", "no", "No", priority=True),
        Binding("escape", "leave", "Back", priority=True),
    ]

    def __init__(
        self,
        session: Session,
        comparison: Comparison,
        *,
        totals: RunStatus | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__()
        self.totals = totals if totals is not None else RunStatus()  # what the variants spend counts in here
        self.session = session
        self.comparison = comparison
        self.progress = [VariantProgress(v.label, clock=clock) for v in comparison.variants]
        self.chosen = 0
        self.rows: list[Row] | None = None
        self.diff_from: int | None = None  # the first of two variants to diff, once d is pressed with 3 or more
        self.adopting: int | None = None  # the variant to adopt once y confirms
        self.adopt_shown = False  # its preview is on screen: y now adopts it
        self.done = asyncio.Event()

    def compose(self) -> ComposeResult:
        count = plural(len(self.progress), "variant")
        task = _safe(self.comparison.task)
        yield Static(f"Comparing {count} on: {task}", id="compare-title", markup=False)
        with Horizontal(id="variants"):
            for progress in self.progress:
                yield VariantCard(progress)
        yield Static("", id="rows", markup=False)
        with VerticalScroll(id="diff"):
            yield Static("", id="diff-text", markup=False)
        with Vertical(id="compare-foot"):
            yield Static("", id="compare-line", markup=False)
            yield Static("", id="compare-keys", markup=False)

    def on_mount(self) -> None:
        for variant, progress in zip(self.comparison.variants, self.progress, strict=True):
            self._follow(variant.bus.stream(), progress)  # subscribed before anything runs: no event is missed
        self._run()
        self.set_interval(1.0, self._redraw)
        self._redraw()

    # --- the comparison, live -------------------------------------------------------------

    @work(group="compare-bus", exit_on_error=False)
    async def _follow(self, events: StreamSubscription, progress: VariantProgress) -> None:
        totals = self.totals
        async for batch in events.batches():
            for event in batch:
                progress.apply(event)
                if isinstance(event, UsageReported):  # a variant's spending is the session's too
                    totals.add_spent(event)
            self._redraw()

    @work(group="compare", exit_on_error=False)
    async def _run(self) -> None:
        try:
            rows = await self.comparison.run()
        except ChimeraError as err:
            self._say(f"The comparison failed: {err}")
            rows = [v.row or Row(v.label, None, "failed", error=str(err)) for v in self.comparison.variants]
        for progress, row in zip(self.progress, rows, strict=True):
            progress.finish(row)
        self.rows = rows
        self.query_one("#rows", Static).update(rows_grid(rows))
        self.done.set()
        self._redraw()
        tell(self.app, "The comparison is done: d diffs two variants, enter adopts one, esc goes back.", timeout=6)

    def _redraw(self) -> None:
        for n, card in enumerate(self.query(VariantCard)):
            card.set_class(n == self.chosen, "-chosen")
            card.refresh()
        self.query_one("#compare-keys", Static).update(self._keys())
        if self.adopting is None and self.diff_from is None:
            self.query_one("#compare-line", Static).update(self._asking())

    def _asking(self) -> str:
        asking = next((p for p in self.progress if p.question is not None), None)
        if asking is None or asking.question is None:
            return ""
        q = asking.question
        about = ", ".join(f"{k}={v}" for k, v in list(q.args.items())[:2])
        return _safe(f"{asking.label} asks to run {q.name} ({about}): y allow, n deny")

    def _keys(self) -> str:
        if self.rows is None:
            return "←/→ choose · s stop the variant · y/n answer its question"
        return "←/→ choose · d diff · enter/a adopt · esc back (the workspace as it is)"

    def _say(self, line: str) -> None:
        self.query_one("#compare-line", Static).update(_safe(line))

    # --- keys -----------------------------------------------------------------------------

    def action_choose(self, step: int) -> None:
        self.chosen = (self.chosen + step) % len(self.progress)
        self._redraw()

    def action_stop(self) -> None:
        variant = self.comparison.variants[self.chosen]
        if variant.row is not None:
            tell(self.app, f"{variant.label} has ended: nothing to stop.", severity="warning")
            return
        variant.stop()
        self.progress[self.chosen].stopping = True
        self._redraw()

    def _question_of(self) -> tuple[Variant, str] | None:
        for variant, progress in zip(self.comparison.variants, self.progress, strict=True):
            if progress.question is not None:
                return variant, progress.question.request_id
        return None

    def action_yes(self) -> None:
        if self.adopting is not None:
            if self.adopt_shown:  # a y before the preview shows adopts nothing: it is answered once it is read
                self._adopt(self.adopting)
            return
        asked = self._question_of()
        if asked is not None:
            asked[0].answer(asked[1], "allow")

    def action_no(self) -> None:
        if self.adopting is not None:
            self.adopting = None
            self._say("Not adopted: the workspace is as it was.")
            return
        asked = self._question_of()
        if asked is not None:
            asked[0].answer(asked[1], "deny")

    def action_adopt(self) -> None:
        if self.rows is None:
            self._refuse("The variants still run: adopt one once they end (s stops the chosen one).")
            return
        row = self.rows[self.chosen]
        if row.checkpoint is None:
            self._refuse(f"{row.label} has no branch to adopt ({row.outcome}): choose another.")
            return
        self.adopting = self.chosen
        self.adopt_shown = False
        self._say(f"Adopt {row.label}? Working out what it changes in the workspace…")
        self._preview_adopt(self.chosen, row.checkpoint)

    @work(group="compare-adopt", exclusive=True, exit_on_error=False)
    async def _preview_adopt(self, index: int, checkpoint: str) -> None:
        """What adopting the variant would do, as a switch's preview says it (the files it rewrites or deletes,
        edits made since the last snapshot that it overwrites); then ``y`` adopts."""
        label = self.progress[index].label
        try:
            preview = await asyncio.to_thread(preview_switch, self.session.store, checkpoint)
        except ChimeraError as err:
            self.adopting = None
            self._refuse(f"{label} cannot be adopted: {err}")
            return
        if self.adopting != index:  # answered, or another chosen, meanwhile
            return
        said = describe_switch(preview, self.session.store.tree.leaf, what=f"Adopt {label}")
        self.query_one("#compare-line", Static).update(Text(f"{said}\nAdopt it (/back undoes it)? y yes, n no"))
        self.adopt_shown = True

    def _adopt(self, index: int) -> None:
        """The ``y`` to an adopt: the screen closes at once, and the workbench switches to the variant's branch
        (keys typed meanwhile are the input's: the next task, sent once the switch is done)."""
        self.adopting = None
        row = self.rows[index] if self.rows is not None else None
        if row is None or row.checkpoint is None:
            return
        self.dismiss(Adopted(row.label, row.checkpoint))

    def action_diff(self) -> None:
        if self.rows is None:
            self._refuse("The variants still run: d diffs two of them once they end.")
            return
        if len(self.rows) == 2:
            self._show_diff(0, 1)
        elif self.diff_from is None or self.diff_from == self.chosen:
            self.diff_from = self.chosen
            self._say(f"Diff from {self.rows[self.chosen].label}: choose the other with ←/→ and press d again")
        else:
            first, self.diff_from = self.diff_from, None
            self._show_diff(first, self.chosen)

    def _show_diff(self, first: int, second: int) -> None:
        assert self.rows is not None
        a, b = self.rows[first], self.rows[second]
        missing = next((r for r in (a, b) if r.checkpoint is None), None)
        if missing is not None:
            self._refuse(f"{missing.label} has no branch ({missing.outcome}): there are no files of its to diff.")
            return
        assert a.checkpoint is not None
        assert b.checkpoint is not None
        store = self.comparison.store
        try:
            old, new = files_at(store, a.checkpoint)[1], files_at(store, b.checkpoint)[1]
            patch = store.checkpoints().patch(old, new) if old != new else b""
        except ChimeraError as err:
            self._refuse(f"No diff: {err}")
            return
        lines = diff_lines(patch.decode(errors="replace"))
        shown = "\n".join(lines) if lines else f"{a.label} and {b.label} have the same files."
        self.query_one("#diff-text", Static).update(Text(f"{a.label} → {b.label}\n{shown}"))
        self.query_one("#diff").add_class("-shown")
        self._say(f"The diff from {a.label} to {b.label} (esc hides it)")

    def action_leave(self) -> None:
        diff = self.query_one("#diff")
        if diff.has_class("-shown"):
            diff.remove_class("-shown")
            self._say("")
            return
        if self.adopting is not None or self.diff_from is not None:
            self.adopting = self.diff_from = None
            self._say("")
            return
        if self.rows is None:
            self._refuse("The variants still run: s stops the chosen one; esc goes back once they end.")
            return
        self.dismiss()

    def _refuse(self, line: str) -> None:
        tell(self.app, line, one_line=True, severity="warning", timeout=6)
