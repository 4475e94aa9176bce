"""Provides what Textual builds from the command registry (``tui.commands``): the app's key bindings
(:func:`command_bindings`) and the command palette's provider (:class:`WorkbenchCommands`).

Every binding runs ``command('<id>')`` on the app, the same way a typed ``/<id>`` and a palette hit do, so
a command's keys, slash and palette entry never disagree; a command that does not work now leaves its keys
to whatever else wants them. In the palette, a command with a choice of arguments (``/loop``, ``/theme``)
is one hit per choice; one that needs free words (``/plan TASK``) puts ``/plan `` in the input to finish.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any, ClassVar, Protocol, cast

from textual.binding import Binding
from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.content import Content
from textual.fuzzy import Matcher

from chimera.core.terminal_text import terminal_safe
from chimera.tui.commands import COMMANDS, Command, Facts, available

__all__ = ["CommandHost", "CommandKeys", "PaletteEntry", "WorkbenchCommands", "command_bindings", "palette_entries"]


_EXACT = 1_000.0  # a typed name or "name choice" itself: above any fuzzy score (those grow with the query)


class CommandHost(Protocol):
    """The app the commands act on."""

    def facts(self) -> Facts: ...

    async def run_command(self, name: str, argument: str = "") -> bool: ...

    def prefill(self, text: str) -> None: ...


class CommandKeys:
    """Mixed into a panel whose keys are registry commands (``command_bindings(scope)``): they run on the app,
    and act only while the command works, as the app's own keys do.

    A panel's keys are priority bindings: the app runs each before it hands on the next key, so keys typed in
    the same instant as one that moves the focus (``k`` and what to change, ``d`` and the reason, escape and
    words) reach where it put the focus, never the panel's other keys. They act only while the panel itself
    has the focus: in a line or an editor it opened, the keys are that line's (but ``keys_within``'s)."""

    app: Any
    keys_within: ClassVar[frozenset[str]] = frozenset()  # actions that also act from the panel's lines

    async def action_command(self, name: str) -> None:
        await cast(CommandHost, self.app).run_command(name)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if self.app.focused is not self and action not in self.keys_within:
            return False  # handed on to the line that has the focus
        result: bool | None = self.app.check_action(action, parameters)
        return result


def command_bindings(scope: str = "app") -> list[Binding]:
    """A binding for every command with keys bound in ``scope`` (the app's, or a panel's)."""
    return [
        Binding(
            command.keys,
            f"command({command.id!r})",
            command.title,
            key_display=command.key_display or None,
            priority=command.priority or scope != "app",  # a panel's: see CommandKeys
        )
        for command in COMMANDS
        if command.keys and command.scope == scope
    ]


@dataclass(frozen=True, slots=True)
class PaletteEntry:
    """One line of the palette: its ``text`` and ``help``, the ``command`` and the ``argument`` it runs with
    (None: it needs words typed in the input)."""

    text: str
    help: str
    command: Command
    argument: str | None


def palette_entries(facts: Facts) -> list[PaletteEntry]:
    """The palette's lines: each command that works now; one per choice for a choice of arguments."""
    entries: list[PaletteEntry] = []
    for command in available(facts):
        about = f"{command.usage}: {command.help}"
        # a choice that is the whole argument runs as it is; one that begins it (/label NODE TEXT) is taken in the input
        choices = command.choices(facts) if command.argument and " " not in command.argument else ()
        entries += [PaletteEntry(f"{command.title}: {c}", f"{command.slash} {c}", command, c) for c in choices]
        if command.needs_argument:
            entries.append(PaletteEntry(f"{command.title}…", about, command, None))  # free words, typed in the input
        else:
            entries.append(PaletteEntry(command.title, about, command, ""))
    return entries


class WorkbenchCommands(Provider):
    """The registry's commands that work now, in the command palette."""

    @property
    def host(self) -> CommandHost:
        return cast(CommandHost, self.app)

    def _runner(self, entry: PaletteEntry) -> Callable[[], object]:
        if entry.argument is None:
            return partial(self.host.prefill, f"{entry.command.slash} ")
        return partial(self.host.run_command, entry.command.id, entry.argument)

    async def discover(self) -> Hits:
        for entry in palette_entries(self.host.facts()):
            yield DiscoveryHit(_literal(entry.text), self._runner(entry), text=entry.text, help=_help(entry))

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        typed = query.strip().removeprefix("/").lower()
        for entry in palette_entries(self.host.facts()):
            # A command's name alone is its own entry exactly, not one of its choices (/mode lists, /mode ask chooses).
            exact = typed == f"{entry.command.id} {entry.argument or ''}".rstrip()
            score = _EXACT if exact else max(matcher.match(entry.text), matcher.match(entry.help.partition(":")[0]))
            if score > 0:
                shown = _highlight(matcher, entry.text)
                yield Hit(score, shown, self._runner(entry), text=entry.text, help=_help(entry))


# The palette reads a hit's words as markup, but for a ``Content``, which it takes as it is. Its entries hold
# names from outside (a theme's, a checkpoint's), so each is given as ``Content``, never as markup.


def _literal(text: str) -> Content:
    return Content(terminal_safe(text, one_line=True))


def _help(entry: PaletteEntry) -> str:
    return cast(str, _literal(entry.help))  # a Content: Textual's palette shows it as it is (see above)


def _highlight(matcher: Matcher, text: str) -> Content:
    """``text`` as literal words, the characters the query matched in the matcher's style (Textual's own
    ``Matcher.highlight`` reads the words as markup)."""
    shown = terminal_safe(text, one_line=True)
    content = Content(shown)
    _, offsets = matcher.fuzzy_search.match(matcher.query, shown)
    for offset in offsets:
        if not shown[offset].isspace():
            content = content.stylize(matcher.match_style, offset, offset + 1)
    return content
