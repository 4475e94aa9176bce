"""Provides ``TreeActions``: the workbench's commands over the session's tree, and the tree panel's host.

``/tree`` (``ctrl+t``) shows the tree panel; ``/switch NODE|NAME`` shows the point's preview and asks
first; ``/branch NODE|NAME`` continues from a point with the files as they are; ``/checkpoint [NAME]``
names the point you are at (the files pinned); ``/label NODE TEXT`` names any point; ``/back`` returns
to where the leaf was before the last switch or branch (every move is kept). A switch asked while a run
works offers to interrupt it and switch once it has stopped, never under it; a name already on another
point asks before it moves. After a move the conversation is told again along the new path. Leaving a
branch can summarize it (``s`` at a switch's question; ``[tree] summarize_left`` in the settings makes it
the default): the model's summary joins the new path as a note, a node of the tree.
Everything that reads or writes the files (a preview, a switch, a checkpoint) runs off the screen's
thread, one at a time.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from dataclasses import replace

from textual import work
from textual.css.query import NoMatches

from chimera.core.errors import ChimeraError, ConfigError
from chimera.core.sessions.history import branch_events
from chimera.core.sessions.session import Session
from chimera.core.sessions.start import RunOptions
from chimera.core.sessions.switch_preview import SwitchPreview, preview_switch
from chimera.core.sessions.switching import name_checkpoint
from chimera.core.sessions.tree_lines import TreeLines
from chimera.core.terminal_text import terminal_safe
from chimera.core.wording import command, plural, point_name
from chimera.tui.commands import Facts
from chimera.tui.outside import tell
from chimera.tui.session_actions import SessionActions
from chimera.tui.widgets.prompt_input import PromptInput
from chimera.tui.widgets.transcript_view import TranscriptView
from chimera.tui.widgets.tree_panel import TreePanel

__all__ = ["TreeActions", "describe"]

_OFFERED = 200  # node ids offered in completion (the newest), after every name


class TreeActions(SessionActions):
    """The session's tree in the workbench: its panel and its moves."""

    def __init__(self, session: Session, options: RunOptions) -> None:
        super().__init__(session, options)
        self.moves: list[tuple[str, str | None]] = []  # (how: "switch"/"branch", the leaf before), oldest first
        self.files_busy = asyncio.Lock()  # a preview, a switch or a checkpoint at a time
        self.tree_shown = asyncio.Event()  # the panel drew the tree as it is now
        self.moved = asyncio.Event()  # a move finished (told in the conversation)
        self._notice_told: str | None = None
        self.tree_clock: Callable[[], float] = time.time  # now, for the tree's ages

    def facts(self) -> Facts:
        tree = self.session.store.tree
        names = tuple(tree.names)
        ids = tuple(list(tree.nodes)[-_OFFERED:][::-1])
        return replace(super().facts(), points=names + ids)

    def warn_once(self, warnings: list[str]) -> None:
        """What opening the session found damaged, in one notice however much it is (the first, and a count)."""
        if not warnings:
            return
        more = (
            f" (and {plural(len(warnings) - 1, 'more problem')}: {command('tree', self.session.id)} lists them)"
            if len(warnings) > 1
            else ""
        )
        tell(self, warnings[0] + more, severity="warning", timeout=8)

    @property
    def tree_panel(self) -> TreePanel:
        return self.query_one(TreePanel)

    # --- the panel ------------------------------------------------------------------------

    def action_tree(self) -> None:
        panel = self.tree_panel
        if panel.has_class("-shown"):
            panel.remove_class("-shown")
            self.query_one(PromptInput).focus()
            return
        panel.add_class("-shown")
        panel.focus()
        self.load_tree()

    def show_tree(self, at: str | None = None) -> None:
        """Show the panel (when hidden) with the tree as it is now, the cursor on ``at``."""
        panel = self.tree_panel
        panel.add_class("-shown")
        panel.focus()
        self.load_tree(at)

    @work(group="tree", exclusive=True, exit_on_error=False)
    async def load_tree(self, at: str | None = None) -> None:
        """Lay the tree out off the screen's thread, then draw it; a damaged tree is told once."""
        self.tree_shown.clear()
        model = await asyncio.to_thread(self._lay_out)
        self.tree_panel.show_model(model, at=at)
        if model.notice and model.notice != self._notice_told:
            self._notice_told = model.notice
            tell(self, model.notice, one_line=True, severity="warning", timeout=8)
        self.tree_shown.set()
        await asyncio.to_thread(model.read_words)  # what each line says, read before the first search

    def _lay_out(self) -> TreeLines:
        for _ in range(3):
            try:
                return TreeLines(self.session.store.tree, clock=self.tree_clock)
            except RuntimeError:  # the run added a node while it was read: read it again
                continue
        return TreeLines(self.session.store.tree, clock=self.tree_clock)

    def tree_selected(self, node: str) -> None:
        self.preview_at(node)

    @work(group="tree-preview", exclusive=True, exit_on_error=False)
    async def preview_at(self, node: str) -> None:
        if self.running:
            self.tree_panel.show_preview(node, "A run is working: the preview waits for it to end.")
            return
        try:
            async with self.files_busy:
                preview = await asyncio.to_thread(preview_switch, self.session.store, node)
        except ChimeraError as err:
            self.tree_panel.show_preview(node, terminal_safe(f"No preview: {err}", one_line=True))
            return
        self.tree_panel.show_preview(node, describe(preview, self.session.store.tree.leaf))

    def tree_switch(self, node: str) -> None:
        if self.running:
            self.tree_panel.ask(
                "A run is working: interrupt it, then switch there?", lambda: self.interrupt_and_switch(node)
            )
            return
        summarize = self.session.summarize_left_default  # the settings' default; s does the other
        self.tree_panel.ask(
            f"Switch to {node}, summarizing the branch left?" if summarize else f"Switch to {node}?",
            lambda: self.switch_at(node, summarize=summarize),
            other=(
                "switch without a summary" if summarize else "switch and summarize the branch left",
                lambda: self.switch_at(node, summarize=not summarize),
            ),
        )

    def tree_branch(self, node: str) -> None:
        self.branch_at(node)

    def tree_back(self) -> None:
        self.go_back()

    def tree_name(self, node: str, name: str, *, checkpoint: bool, move: bool = False) -> None:
        self.name_point(node, name, checkpoint=checkpoint, move=move)

    # --- the commands ---------------------------------------------------------------------

    def _resolve(self, command: str, ref: str) -> str | None:
        node = self.session.store.tree.resolve(ref.strip())
        if node is None:
            self._refuse(f"/{command}: this session has no node or checkpoint {ref.strip()!r}: /tree shows them.")
        return node

    def action_switch(self, ref: str) -> bool:
        node = self._resolve("switch", ref)
        if node is None:
            return False
        self.show_tree(node)
        self.tree_switch(node)
        return True

    def action_branch(self, ref: str) -> bool:
        node = self._resolve("branch", ref)
        if node is None:
            return False
        self.branch_at(node)
        return True

    def action_checkpoint(self, name: str) -> bool:
        leaf = self.session.store.tree.leaf
        if leaf is None:
            return self._refuse("/checkpoint: there is nothing to name yet: give Chimera a task first.")
        self.name_point(leaf, name.strip() or self._free_name(), checkpoint=True)
        return True

    def action_label(self, words: str) -> bool:
        ref, _, text = words.strip().partition(" ")
        if not text.strip():
            return self._refuse("/label needs NODE TEXT: the point (an id or a name), then the label.")
        node = self._resolve("label", ref)
        if node is None:
            return False
        self.name_point(node, text.strip(), checkpoint=False)
        return True

    def action_go_back(self) -> None:
        self.go_back()

    def _free_name(self) -> str:
        taken = set(self.session.store.tree.names)
        n = 1
        while f"checkpoint-{n}" in taken:
            n += 1
        return f"checkpoint-{n}"

    # --- the moves ------------------------------------------------------------------------

    @work(group="tree-move", exclusive=True, exit_on_error=False)
    async def switch_at(self, node: str, *, remember: bool = True, summarize: bool = False) -> None:
        """Switch to ``node`` (the question was answered); ``summarize``: then summarize the branch left behind."""
        before = self.session.store.tree.leaf
        try:
            async with self.files_busy:
                done = await asyncio.to_thread(self.session.switch, node)
        except ChimeraError as err:
            self._refuse(f"The switch to {node} did not happen: {err}")
            return
        if done is None:
            return
        if remember:
            self.moves.append(("switch", before))
        tell(self, f"Switched to {point_name(done.plan.node)}: u in the tree (or /back) goes back.", one_line=True)
        self.load_tree(done.plan.node)
        if summarize:
            self.summarize_left(before)

    @work(exclusive=True, group="run", exit_on_error=False)
    async def summarize_left(self, left: str | None) -> None:
        """The branch the leaf left (``left``: the leaf before the move) summarized by the model and carried
        into the path it is on now as a note, which the tree shows; escape stops it (the move stands)."""
        stopped = "Summary stopped: the move stands, and nothing was added to the conversation."
        done = await self.aside("summarizing", stopped, self.session.summarize_left(left))
        if isinstance(done, ChimeraError):
            self.say(terminal_safe(f"✗ the branch left behind was not summarized: {done}", one_line=True), "error")
            self.show_status(state="idle")
            return
        self.show_status(state="idle")
        if done is None:
            tell(self, "Nothing was left behind to summarize: the move went forward.", timeout=4)
            return
        self.load_tree(self.session.store.tree.leaf)

    @work(group="tree-move", exclusive=True, exit_on_error=False)
    async def interrupt_and_switch(self, node: str) -> None:
        """Stop the run, wait for it to end, then ask nothing more: the switch was asked for."""
        self.action_interrupt()
        for worker in [w for w in self.workers if w.group == "run"]:
            with contextlib.suppress(Exception):
                await worker.wait()
        self.switch_at(node, summarize=self.session.summarize_left_default)

    def branch_at(self, node: str, *, remember: bool = True) -> None:
        if self.running:
            self._refuse("/branch waits for the run: send it when the run ends, or interrupt it.")
            return
        before = self.session.store.tree.leaf
        try:
            self.session.branch(node)
        except ChimeraError as err:
            self._refuse(f"/branch: {err}")
            return
        if remember:
            self.moves.append(("branch", before))
        self.show_path(f"⑂ from here the next task branches from {node}; the files stay as they are")
        self.load_tree(node)
        if remember and self.session.summarize_left_default:  # going back undoes a move: nothing to carry
            self.summarize_left(before)

    def go_back(self) -> None:
        if not self.moves:
            self._refuse("Nothing to go back to: the leaf has not moved since the workbench opened.")
            return
        how, leaf = self.moves[-1]
        if leaf is None:
            self.moves.pop()
            self._refuse("The point before was the very start: /switch to the first message's id to go there.")
            return
        if self.running:
            self._refuse("/back waits for the run: interrupt it, or let it finish.")
            return
        self.moves.pop()
        if how == "branch":
            self.branch_at(leaf, remember=False)
        else:
            self.switch_at(leaf, remember=False)

    @work(group="tree-name", exclusive=True, exit_on_error=False)
    async def name_point(self, node: str, name: str, *, checkpoint: bool, move: bool = False) -> None:
        """Name ``node`` ``name``: a checkpoint (at the leaf the files are pinned) or a label. A name on
        another point asks first, then moves."""
        tree = self.session.store.tree
        holder = tree.names.get(name)
        if holder is not None and holder != node and not move:
            self.show_tree(node)
            self.tree_panel.ask(
                f"{name!r} already names {holder}: move it to {node}?",
                lambda: self.name_point(node, name, checkpoint=checkpoint, move=True),
            )
            return
        try:
            if checkpoint:
                async with self.files_busy:
                    await asyncio.to_thread(self.session.checkpoint, name, node, move=move)
            elif node != tree.leaf:  # away from the leaf a checkpoint's name pins nothing: a label
                name_checkpoint(self.session.store, name, node, move=move)
            else:
                self._label(node, name)
        except ChimeraError as err:
            self._refuse(str(err))
            return
        what = "Checkpoint" if checkpoint else "Label"
        tell(self, f"{what} {name!r} on {node}: /switch {name} comes back to it.", one_line=True)
        if self.tree_panel.has_class("-shown"):
            self.load_tree(node)

    def _label(self, node: str, name: str) -> None:
        """A label at the leaf: the name alone, no files pinned (``name_checkpoint`` would pin them)."""
        store = self.session.store
        if not name.strip() or any(ch < " " or ch == "\x7f" for ch in name):
            raise ConfigError(f"{name!r} cannot be a label: use words with no line breaks or control characters")
        if name in store.tree.nodes or name in store.tree.saved:
            raise ConfigError(f"{name!r} already names something else in session {store.id}: choose another")
        store.label(node, name)

    @work(group="history", exclusive=True, exit_on_error=False)
    async def show_path(self, note: str) -> None:
        """The conversation told again along the path the leaf is on now, then ``note``."""
        events = await asyncio.to_thread(branch_events, self.session.store)
        self.transcript.clear()
        self.state.tell(events)
        self.transcript.note(note)
        with contextlib.suppress(NoMatches):
            self.query_one(TranscriptView).refresh_entries()
        self.moved.set()


def describe(preview: SwitchPreview, leaf: str | None) -> str:
    """A preview as a few lines: where a switch lands, what it leaves behind, each file it changes."""
    if preview.node == leaf and not preview.files:
        return "You are here: a switch changes nothing."
    lines = [f"Switch: lands at {point_name(preview.node)}" + (f", {preview.note}" if preview.note else "") + "."]
    lines.append(
        f"Leaves {plural(preview.turns, 'turn')} and ~{preview.tokens:,} tokens behind (kept in the tree)."
        if preview.turns or preview.tokens
        else "Leaves nothing behind."
    )
    if not preview.pinned:
        lines.append("No snapshot pins this point: the files stay as they are.")
    elif not preview.files:
        lines.append("No file changes.")
    else:
        lines.append(f"Files: {plural(len(preview.files), 'file')} change.")
        lines += [f"  {f.verb:<8}{f.path}  +{f.added} -{f.removed}" for f in preview.files[:6]]
        if len(preview.files) > 6:
            lines.append(f"  … and {len(preview.files) - 6} more")
    return terminal_safe("\n".join(lines))
