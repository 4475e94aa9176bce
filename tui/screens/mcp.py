"""Provides ``McpScreen``: the MCP servers, one line each, the chosen one in full, and what can be done to it.

``/mcp`` opens it over the conversation. Each server's line says its state, how it is reached (stdio or
HTTP), its tools and the context their definitions cost; under the list, the chosen server in full: its
command or URL, its tools, its last error and warnings, its log. ``r`` starts the chosen server again, ``d``
disables it for the session (its tools no longer offered) or enables it again, ``t`` starts the servers of
a workspace's ``.mcp.json`` that wait for a yes, ``escape`` closes. Every name, command and error is the
servers' own text, drawn as it is. The screen only shows; what it asks for is done by its ``McpControls``
(the workbench's MCP part), and it shows the servers again once that is done.
"""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING, ClassVar, Protocol

from rich.style import Style
from rich.table import Table
from rich.text import Span, Text
from textual import events, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from chimera.core.wording import plural, tokens
from chimera.tui.look import Look, look_of
from chimera.tui.outside import literal
from chimera.tui.workbench.focus import key_line, place_named

if TYPE_CHECKING:
    from chimera.core.mcp.connection import Connection
    from chimera.core.mcp.servers import McpServers

__all__ = ["McpControls", "McpScreen"]

NAME_WIDTH = 24  # a server's name in its line, at most (cut with an ellipsis); in full below the list
DOING = {"reconnect": "Starting again", "enable": "Enabling", "disable": "Disabling"}
STATE_LOOK = {"ready": "tool_done", "failed": "tool_failed", "starting": "tool_running"}  # the theme's colours


class McpControls(Protocol):
    """What the screen asks of the workbench: the servers, the workspace's waiting file, and the actions."""

    @property
    def servers(self) -> McpServers | None: ...

    def waiting(self) -> list[str]:
        """The names of the servers in a workspace's ``.mcp.json`` that waits for a yes (none: nothing waits)."""
        ...

    def waiting_commands(self) -> list[str]:
        """What each of those would start: ``NAME: COMMAND ARGS`` (or its URL)."""
        ...

    async def switch(self, action: str, name: str) -> None:
        """``reconnect``, ``enable`` or ``disable`` the server named ``name``."""
        ...

    def trust(self) -> None:
        """Start the servers of the workspace's ``.mcp.json``."""
        ...


class McpScreen(ModalScreen[None]):
    """The servers and their state; r reconnects, d disables or enables, t trusts the workspace's file: it shows
    what the file would start, and a second t starts it (any other key leaves it waiting)."""

    DEFAULT_CSS = """
    McpScreen {
        align: center middle;
    }
    McpScreen > Vertical {
        width: 100%;
        max-width: 120;
        height: 100%;
        border: round $primary;
        background: $surface;
        padding: 0 1;
    }
    McpScreen #mcp-title {
        text-style: bold;
    }
    McpScreen #mcp-summary, McpScreen #mcp-keys {
        color: $text-muted;
    }
    McpScreen #mcp-list {
        height: auto;
        max-height: 40%;
        margin: 1 0;
        border: none;
        padding: 0;
    }
    McpScreen #mcp-detail {
        height: 1fr;
    }
    """

    PLACE = "mcp"  # in the focus model (``tui.workbench.focus``)
    AUTO_FOCUS = "#mcp-list"

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close", priority=True),  # (as the help's: words typed behind it are the input's)
        Binding("r", "switch('reconnect')", "Reconnect"),
        Binding("d", "enable_or_disable", "Disable/enable"),
        Binding("t", "trust", "Trust .mcp.json", show=False),
    ]

    def __init__(self, controls: McpControls) -> None:
        super().__init__()
        self.controls = controls
        self.busy = False  # an action is being done: another waits for it
        self.trust_asked = False  # t was pressed once: what would start is shown, a second t starts it
        self._lines: list[Text] = []  # each server's line in its colours
        self._marked: int | None = None  # the line drawn in the cursor's colours

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static("MCP servers", id="mcp-title", markup=False)
            yield Static("", id="mcp-summary", markup=False)
            yield OptionList(id="mcp-list")
            with VerticalScroll(id="mcp-detail"):
                yield Static("", id="mcp-about", markup=False)
            yield Static("", id="mcp-keys", markup=False)

    def on_mount(self) -> None:
        self.show()
        self.when_started()

    @work(group="mcp-screen", exit_on_error=False)
    async def when_started(self) -> None:
        """Show the servers again once each has started or failed (they may still be starting as it opens)."""
        servers = self.controls.servers
        if servers is not None:
            await servers.ready()
            self.show()

    @property
    def connections(self) -> list[Connection]:
        servers = self.controls.servers
        return list(servers.connections) if servers is not None else []

    @property
    def chosen(self) -> Connection | None:
        index = self.query_one(OptionList).highlighted
        connections = self.connections
        return connections[index] if index is not None and index < len(connections) else None

    def show(self) -> None:
        """Draw the servers as they are now, keeping the one chosen."""
        servers = self.controls.servers
        connections = self.connections
        waiting = self.controls.waiting()
        listing = self.query_one(OptionList)
        kept = listing.highlighted
        costs = servers.costs() if servers is not None else {}
        look = look_of(self.app.current_theme)
        self._lines = [_line(c, costs.get(c.name, 0), look) for c in connections]
        self._marked = None
        listing.set_options([Option(line) for line in self._lines])
        listing.display = bool(connections)
        if connections:
            listing.highlighted = min(kept or 0, len(connections) - 1)
        self._mark()
        self.query_one("#mcp-summary", Static).update(_summary(servers, waiting))
        self._describe()
        offered = {"↑↓", "r", "d"} if connections else set()
        offered |= {"t"} if waiting else set()
        keys = tuple(k for k in place_named("mcp").keys if k[0] in offered or k[0] == "esc")
        self.query_one("#mcp-keys", Static).update(key_line(keys))

    def on_option_list_option_highlighted(self) -> None:
        self._mark()
        self._describe()

    def _mark(self) -> None:
        """The chosen server's line in the cursor's colours (a state's colour does not read on the cursor), the
        one chosen before in its own again."""
        listing = self.query_one(OptionList)
        chosen = listing.highlighted
        if chosen == self._marked:
            return
        if self._marked is not None and self._marked < len(self._lines):
            listing.replace_option_prompt_at_index(self._marked, self._lines[self._marked])
        if chosen is not None and chosen < len(self._lines):
            listing.replace_option_prompt_at_index(chosen, _uncoloured(self._lines[chosen]))
        self._marked = chosen

    def _describe(self) -> None:
        chosen = self.chosen
        servers = self.controls.servers
        cost = servers.costs().get(chosen.name, 0) if servers is not None and chosen is not None else 0
        searching = servers.searching if servers else False
        about = _about(chosen, cost, look_of(self.app.current_theme), searching=searching) if chosen else ""
        self.query_one("#mcp-about", Static).update(about)

    def action_switch(self, action: str) -> None:
        chosen = self.chosen
        if chosen is not None:
            self._act(action, chosen.name)

    def action_enable_or_disable(self) -> None:
        chosen = self.chosen
        if chosen is not None:
            self._act("enable" if not chosen.config.enabled else "disable", chosen.name)

    def action_trust(self) -> None:
        """A workspace's ``.mcp.json`` runs programs a repository names: the first ``t`` shows them, the second
        starts them (a ``t`` typed among other words never starts anything by itself)."""
        if not self.controls.waiting():
            return
        if not self.trust_asked:
            self.trust_asked = True
            asked = "t again starts them, running " + "; ".join(self.controls.waiting_commands())
            self._saying(asked + " (any other key: they keep waiting)")
            return
        self.trust_asked = False
        self.controls.trust()
        self.show()
        self.when_started()

    def on_key(self, event: events.Key) -> None:
        """Any key but a second ``t`` takes the question back."""
        if self.trust_asked and event.key != "t":
            self.trust_asked = False
            self.show()

    @work(group="mcp-action", exit_on_error=False)
    async def _act(self, action: str, name: str) -> None:
        if self.busy:
            return
        self.busy = True
        try:
            self._saying(f"{DOING[action]} {name}…")
            await self.controls.switch(action, name)
        finally:
            self.busy = False
            self.show()

    def _saying(self, words: str) -> None:
        self.query_one("#mcp-summary", Static).update(literal(words, one_line=True))

    def action_close(self) -> None:
        self.dismiss(None)


def _summary(servers: McpServers | None, waiting: list[str]) -> Text:
    if servers is None or not servers.connections:
        text = Text("None configured: give them in config.toml ([mcp.servers.NAME]) or with --mcp-config FILE.")
    else:
        ready, enabled = servers.counts
        text = Text(f"{ready} of {enabled} ready")
        if servers.searching:
            text.append(" · their tools are offered through mcp_search (all of them would cost too much context)")
    if waiting:
        text.append("\nThis workspace's .mcp.json waits for a yes (t starts them): ")
        text.append_text(literal(", ".join(waiting), one_line=True))
    return text


def _line(connection: Connection, cost: int, look: Look) -> Text:
    """A server's line in the list: name, state, transport, tools, context."""
    name = literal(connection.name, one_line=True)
    name.truncate(NAME_WIDTH, overflow="ellipsis", pad=True)
    state = connection.shown_state if connection.config.enabled else "disabled"
    transport = connection.config.transport
    line = Text.assemble(name, "  ", (f"{state:<9}", look[STATE_LOOK.get(state, "muted")]), f"  {transport:<5}")
    if connection.ready:
        line.append(f"  {plural(len(connection.tools), 'tool')} · ~{tokens(cost)} tokens")
    return line


def _uncoloured(line: Text) -> Text:
    """``line`` in the colours of what it is drawn on, its bold and the like kept."""

    def kept(style: str | Style) -> Style:
        return (Style.parse(style) if isinstance(style, str) else style).without_color

    shown = line.copy()
    shown.style = kept(line.style)
    shown.spans = [Span(span.start, span.end, kept(span.style)) for span in line.spans]
    return shown


def _state_words(connection: Connection) -> str:
    if not connection.config.enabled:
        return "disabled for this session"
    state = connection.shown_state
    if connection.tools and state in ("exited", "failed"):
        return f"{state}: its tools are still offered, and the next call of one starts it again"
    return state


def _about(connection: Connection, cost: int, look: Look, *, searching: bool) -> Table:
    """The chosen server in full: how it is reached, its state, tools, context, error, warnings and log."""
    config = connection.config
    how = shlex.join([config.command, *config.args]) if config.command is not None else str(config.url)
    rows: list[tuple[str, Text]] = [
        ("name", literal(connection.name)),
        ("command" if config.command is not None else "url", literal(how)),
        ("state", Text(_state_words(connection))),
    ]
    if connection.ready:
        names = ", ".join(tool.name for tool in connection.tools) or "none"
        rows.append(("tools", literal(f"{plural(len(connection.tools), 'tool')}: {names}")))
        where = "through mcp_search" if searching else "with every request"
        rows.append(("context", Text(f"~{tokens(cost)} tokens of tool definitions, {where}")))
    if connection.error is not None:
        rows.append(("error", literal(connection.error, look["tool_failed"])))
    rows += [("warning", literal(warning, look["tool_running"])) for warning in connection.warnings]
    rows.append(("log", literal(connection.log)))
    table = Table.grid(padding=(0, 1))
    table.add_column(style="bold", no_wrap=True)
    table.add_column(overflow="fold")  # a path or URL without spaces folds onto the next line, never cut
    for label, value in rows:
        table.add_row(Text(label), value)
    return table
