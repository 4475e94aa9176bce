"""Provides ``SessionTree``: the workbench's commands over the session's tree, and the tree panel's host.

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
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

from chimera.core.errors import ChimeraError, ConfigError
from chimera.core.terminal_text import terminal_safe
from chimera.core.wording import point_name
from chimera.tui.outside import tell
from chimera.tui.workbench.focus import move_to

if TYPE_CHECKING:  # the tree's modules load with the session, after the workbench's first frame
    from chimera.core.sessions.switch_preview import SwitchPreview
    from chimera.core.sessions.tree_lines import TreeLines
    from chimera.tui.app import ChimeraApp
    from chimera.tui.widgets.tree_panel import TreePanel

__all__ = ["SessionTree"]

_OFFERED = 200  # node ids offered in completion (the newest), after every name


class SessionTree:
    """The session's tree in the workbench: its panel and its moves."""

    def __init__(self, app: ChimeraApp) -> None:
        self.app = app
        self.moves: list[tuple[str, str | None]] = []  # (how: "switch"/"branch", the leaf before), oldest first
        self.files_busy = asyncio.Lock()  # a preview, a switch or a checkpoint at a time
        self.shown = asyncio.Event()  # the panel drew the tree as it is now
        self.moved = asyncio.Event()  # a move finished (told in the conversation)
        self._notice_told: str | None = None
        self.clock: Callable[[], float] = time.time  # now, for the tree's ages

    def commands(self) -> dict[str, object]:
        return {
            "tree": self.toggle,
            "switch": self.switch,
            "branch": self.branch,
            "checkpoint": self.checkpoint,
            "label": self.label,
            "back": self.go_back,
        }

    def points(self) -> tuple[str, ...]:
        """The session's checkpoint names and node ids to offer (names first, then the newest ids)."""
        tree = self.app.session.store.tree
        return tuple(tree.names) + tuple(list(tree.nodes)[-_OFFERED:][::-1])

    @property
    def panel(self) -> TreePanel:
        from chimera.tui.widgets.tree_panel import TreePanel

        return self.app.query_one(TreePanel)

    def _run(self, work: Coroutine[Any, Any, None], group: str) -> None:
        """``work`` in a worker of ``group``, the one of its group (a newer one replaces it)."""
        self.app.run_worker(work, group=group, exclusive=True, exit_on_error=False)

    def _refuse(self, line: str) -> bool:
        return self.app.commands.refuse(line)

    # --- the panel ------------------------------------------------------------------------

    def toggle(self) -> None:
        """``ctrl+t``: show the tree and move to it; on it, hide it (back to the input); shown but left (after a
        switch, say), move back to it."""
        panel = self.panel
        if not panel.has_class("-shown"):
            panel.add_class("-shown")
            move_to(panel)
            self.load()
        elif self.app.focused is panel or self.app.focused in panel.walk_children():
            panel.remove_class("-shown")
            self.app.prompt.focus()
        else:
            move_to(panel)

    def show(self, at: str | None = None) -> None:
        """Show the panel (when hidden) with the tree as it is now, the cursor on ``at``."""
        panel = self.panel
        panel.add_class("-shown")
        move_to(panel)
        self.load(at)

    def load(self, at: str | None = None) -> None:
        """Lay the tree out off the screen's thread, then draw it; a damaged tree is told once."""
        self._run(self._load(at), "tree")

    async def _load(self, at: str | None) -> None:
        self.shown.clear()
        model = await asyncio.to_thread(self._lay_out)
        self.panel.show_model(model, at=at)
        if model.notice and model.notice != self._notice_told:
            self._notice_told = model.notice
            tell(self.app, model.notice, one_line=True, severity="warning", timeout=8)
        self.shown.set()
        await asyncio.to_thread(model.read_words)  # what each line says, read before the first search

    def _lay_out(self) -> TreeLines:
        from chimera.core.sessions.tree_lines import TreeLines

        for _ in range(3):
            try:
                return TreeLines(self.app.session.store.tree, clock=self.clock)
            except RuntimeError:  # the run added a node while it was read: read it again
                continue
        return TreeLines(self.app.session.store.tree, clock=self.clock)

    # --- what the panel asks (TreeHost) ---------------------------------------------------------

    def tree_selected(self, node: str) -> None:
        self._run(self._preview(node), "tree-preview")

    async def _preview(self, node: str) -> None:
        if self.app.runs.running:
            self.panel.show_preview(node, "A run is working: the preview waits for it to end.")
            return
        preview = await self._preview_of(node)
        if preview is not None and self.panel.asking is None:  # a question shows the preview it asks about
            from chimera.tui.switch_words import describe_switch

            self.panel.show_preview(node, describe_switch(preview, self.app.session.store.tree.leaf))

    async def settled(self) -> None:
        """Once no preview, switch or checkpoint works on the files: a task sent meanwhile waits for it."""
        async with self.files_busy:
            pass

    async def _preview_of(self, node: str) -> SwitchPreview | None:
        """What a switch to ``node`` would do, worked out off the screen's thread; None (said in the panel) when
        it cannot be told."""
        from chimera.core.sessions.switch_preview import preview_switch

        try:
            async with self.files_busy:
                return await asyncio.to_thread(preview_switch, self.app.session.store, node)
        except ChimeraError as err:
            self.panel.show_preview(node, terminal_safe(f"No preview: {err}", one_line=True))
            return None

    def tree_switch(self, node: str) -> None:
        if self.app.runs.running:
            self.panel.ask(
                "A run is working: interrupt it, then switch there?", lambda: self.interrupt_and_switch(node)
            )
            return
        self._run(self._ask_switch(node), "tree-ask")

    async def _ask_switch(self, node: str, *, back: bool = False) -> None:
        """The switch's preview, then its question, naming the point the switch lands at (which the preview
        names too); a switch that would change nothing asks nothing. ``back``: the move undone by ``/back``."""
        preview = await self._preview_of(node)
        if preview is None:
            return
        leaf = self.app.session.store.tree.leaf
        what = "Back" if back else "Switch"
        from chimera.tui.switch_words import describe_switch

        self.panel.show_preview(node, describe_switch(preview, leaf, what=what))
        if not preview.moves:
            tell(self.app, "You are here already: a switch changes nothing.", timeout=4)
            if back:
                self.moves.pop()
            return
        landing = point_name(preview.node)
        if back:
            self.panel.ask(f"Go back to {landing}?", lambda: self._went_back(node))
            return
        summarize = self.app.session.summarize_left_default  # the settings' default; s does the other
        self.panel.ask(
            f"Switch to {landing}, summarizing the branch left?" if summarize else f"Switch to {landing}?",
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
        node = self.app.session.store.tree.resolve(ref.strip())
        if node is None:
            self._refuse(f"/{command}: this session has no node or checkpoint {ref.strip()!r}: /tree shows them.")
        return node

    def switch(self, ref: str) -> bool:
        node = self._resolve("switch", ref)
        if node is None:
            return False
        self.show(node)
        self.tree_switch(node)
        return True

    def branch(self, ref: str) -> bool:
        node = self._resolve("branch", ref)
        if node is None:
            return False
        self.branch_at(node)
        return True

    def checkpoint(self, name: str) -> bool:
        leaf = self.app.session.store.tree.leaf
        if leaf is None:
            return self._refuse("/checkpoint: there is nothing to name yet: give Chimera a task first.")
        self.name_point(leaf, name.strip() or self._free_name(), checkpoint=True)
        return True

    def label(self, words: str) -> bool:
        ref, _, text = words.strip().partition(" ")
        if not text.strip():
            return self._refuse("/label needs NODE TEXT: the point (an id or a name), then the label.")
        node = self._resolve("label", ref)
        if node is None:
            return False
        self.name_point(node, text.strip(), checkpoint=False)
        return True

    def _free_name(self) -> str:
        taken = set(self.app.session.store.tree.names)
        n = 1
        while f"checkpoint-{n}" in taken:
            n += 1
        return f"checkpoint-{n}"

    # --- the moves ------------------------------------------------------------------------

    def switch_at(self, node: str, *, remember: bool = True, summarize: bool = False) -> None:
        """Switch to ``node`` (the question was answered); ``summarize``: then summarize the branch left behind.
        The focus is in the input at once: what is typed while the files change is the next task, sent once
        the switch is done (``settled``)."""
        self.app.prompt.focus()
        self._run(self._switch_at(node, remember, summarize), "tree-move")

    async def _switch_at(self, node: str, remember: bool, summarize: bool) -> None:
        session = self.app.session
        before = session.store.tree.leaf
        try:
            async with self.files_busy:
                done = await asyncio.to_thread(session.switch, node)
        except ChimeraError as err:
            self._refuse(f"The switch to {node} did not happen: {err}")
            return
        if done is None:
            return
        if remember:
            self.moves.append(("switch", before))
        tell(self.app, f"Switched to {point_name(done.plan.node)}: u in the tree (or /back) goes back.", one_line=True)
        self.load(done.plan.node)
        self.app.prompt.focus()  # the next words are a task on the branch switched to
        if summarize:
            self.summarize_left(before)

    def summarize_left(self, left: str | None) -> None:
        """The branch the leaf left (``left``: the leaf before the move) summarized by the model and carried
        into the path it is on now as a note, which the tree shows; escape stops it (the move stands)."""
        self._run(self._summarize_left(left), "run")

    async def _summarize_left(self, left: str | None) -> None:
        app = self.app
        stopped = "Summary stopped: the move stands, and nothing was added to the conversation."
        done = await app.runs.aside("summarizing", stopped, app.session.summarize_left(left))
        if isinstance(done, ChimeraError):
            app.conversation.say(f"✗ the branch left behind was not summarized: {done}", "error")
            app.conversation.show_status(state="idle")
            return
        app.conversation.show_status(state="idle")
        if done is None:
            tell(app, "Nothing was left behind to summarize: the move went forward.", timeout=4)
            return
        self.load(app.session.store.tree.leaf)

    def interrupt_and_switch(self, node: str) -> None:
        self.app.prompt.focus()  # as for a switch: what is typed meanwhile is the next task
        self._run(self._interrupt_and_switch(node), "tree-move")

    async def _interrupt_and_switch(self, node: str) -> None:
        """Stop the run, wait for it to end, then ask nothing more: the switch was asked for."""
        app = self.app
        app.runs.interrupt()
        for worker in [w for w in app.workers if w.group == "run"]:
            with contextlib.suppress(Exception):
                await worker.wait()
        self.switch_at(node, summarize=app.session.summarize_left_default)

    def branch_at(self, node: str, *, remember: bool = True) -> None:
        app = self.app
        if app.runs.running:
            self._refuse("/branch waits for the run: send it when the run ends, or interrupt it.")
            return
        before = app.session.store.tree.leaf
        try:
            app.session.branch(node)
        except ChimeraError as err:
            self._refuse(f"/branch: {err}")
            return
        if remember:
            self.moves.append(("branch", before))
        self.show_path(f"⑂ from here the next task branches from {node}; the files stay as they are")
        self.load(node)
        app.prompt.focus()  # the next words are the branch's first task
        if remember and app.session.summarize_left_default:  # going back undoes a move: nothing to carry
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
        if self.app.runs.running:
            self._refuse("/back waits for the run: interrupt it, or let it finish.")
            return
        if how == "branch":  # the files stay as they are: nothing to ask
            self.moves.pop()
            self.branch_at(leaf, remember=False)
            return
        self.show(leaf)  # the files change: the preview, then a y (edits made since are at risk)
        self._run(self._ask_switch(leaf, back=True), "tree-ask")

    def _went_back(self, leaf: str) -> None:
        if self.moves and self.moves[-1][1] == leaf:
            self.moves.pop()
        self.switch_at(leaf, remember=False)

    def adopt(self, label: str, checkpoint: str) -> None:
        """Adopt the compared variant ``label``: a switch to ``checkpoint``, at the end of its branch, which
        ``/back`` undoes like any switch. As for a switch, the focus is in the input at once and a task typed
        while the files change is sent once they have (``settled``)."""
        self.app.prompt.focus()
        self._run(self._adopt(label, checkpoint), "tree-move")

    async def _adopt(self, label: str, checkpoint: str) -> None:
        session = self.app.session
        before = session.store.tree.leaf
        try:
            async with self.files_busy:
                done = await asyncio.to_thread(session.switch, checkpoint)
        except ChimeraError as err:
            self._refuse(f"{label} was not adopted: {err}")
            return
        if done is None:
            return
        self.moves.append(("switch", before))
        tell(self.app, f"Adopted {label}: the workspace holds its files (/back undoes it).", one_line=True)
        if self.panel.has_class("-shown"):
            self.load(done.plan.node)

    def name_point(self, node: str, name: str, *, checkpoint: bool, move: bool = False) -> None:
        """Name ``node`` ``name``: a checkpoint (at the leaf the files are pinned) or a label. A name on
        another point asks first, then moves."""
        self._run(self._name_point(node, name, checkpoint, move), "tree-name")

    async def _name_point(self, node: str, name: str, checkpoint: bool, move: bool) -> None:
        session = self.app.session
        tree = session.store.tree
        holder = tree.names.get(name)
        if holder is not None and holder != node and not move:
            self.show(node)
            self.panel.ask(
                f"{name!r} already names {holder}: move it to {node}?",
                lambda: self.name_point(node, name, checkpoint=checkpoint, move=True),
            )
            return
        try:
            if checkpoint:
                async with self.files_busy:
                    await asyncio.to_thread(session.checkpoint, name, node, move=move)
            elif node != tree.leaf:  # away from the leaf a checkpoint's name pins nothing: a label
                from chimera.core.sessions.switching import name_checkpoint

                name_checkpoint(session.store, name, node, move=move)
            else:
                self._label(node, name)
        except ChimeraError as err:
            self._refuse(str(err))
            return
        what = "Checkpoint" if checkpoint else "Label"
        tell(self.app, f"{what} {name!r} on {node}: /switch {name} comes back to it.", one_line=True)
        if self.panel.has_class("-shown"):
            self.load(node)

    def _label(self, node: str, name: str) -> None:
        """A label at the leaf: the name alone, no files pinned (``name_checkpoint`` would pin them)."""
        store = self.app.session.store
        if not name.strip() or any(ch < " " or ch == "\x7f" for ch in name):
            raise ConfigError(f"{name!r} cannot be a label: use words with no line breaks or control characters")
        if name in store.tree.nodes or name in store.tree.saved:
            raise ConfigError(f"{name!r} already names something else in session {store.id}: choose another")
        store.label(node, name)

    def show_path(self, note: str) -> None:
        """The conversation told again along the path the leaf is on now, then ``note``."""
        self._run(self._show_path(note), "history")

    async def _show_path(self, note: str) -> None:
        from chimera.core.sessions.history import branch_events

        events = await asyncio.to_thread(branch_events, self.app.session.store)
        self.app.conversation.tell_again(events, note)
        self.moved.set()
