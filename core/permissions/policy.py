"""Provides ``PermissionPolicy``: whether a tool call may run, must be asked about, or is refused.

Modes: ``ask`` (read-only calls run, the rest are asked about), ``accept-edits``
(file edits run too, commands are asked about), ``plan`` (read-only: every
call that can change something is refused, whatever the model sends) and
``bypass`` (everything runs). Rules (``rule.py``) refine a mode: ``allow`` and ``deny``
lists of ``tool`` or ``tool(pattern)``, such as ``bash(git status *)`` or
``edit(src/**)``. A deny rule always wins; plan mode cannot be loosened by an
allow rule.

Rules judge what a call means, not how it is spelled:

- A ``bash`` command is parsed as the shell will run it (``shell.py``) and
  patterns are compared word by word (``rules.py``). A deny rule refuses
  the call when any command in it, at any depth and behind any known wrapper,
  matches (``true; /bin/rm -fr x``, ``if …; then rm …; fi``, ``sudo -E rm -r -f
  x``, ``$(rm -rf x)``, ``rm -{r,f} x``, ``$'\\x72m' -rf x``). An allow rule
  covers only a line that is one plain command (``shell_plain.py``): plain
  words, no expansion of any kind, no wildcard, no assignment, no wrapper, no
  redirection to a file.
- A command whose text does not say what runs (``eval``, ``sh -c``, a command
  word that is an expansion) is never covered by an allow rule, so it is
  asked about. When the text hides what runs from the deny rules for
  ``bash`` too (``eval "$x"``, a shell reading a file, an option of a wrapper
  that is not in its spec, text the parser reads otherwise than bash), it is
  asked about even in ``bypass``, because a deny rule cannot be shown not to
  apply.
- A path is taken relative to the workspace with ``.``, ``..`` and links
  resolved. A deny rule on a path also covers what lies inside it. A ``read``
  deny rule covers every tool that reads the path: ``edit`` (its answers tell
  what the file holds), ``grep`` and ``glob`` given it (their results never
  show it; see ``withheld``) and, as a best effort, a ``bash`` word or input
  redirection that names it. A ``write`` or ``edit`` deny rule covers both
  tools, and a ``bash`` output redirection to the path.
- A rule is what it looks like: one holding a character that shows as another, or as nothing
  (a no-break space, a zero-width or bidi mark, fullwidth letters: ``rule_text.py``), is refused.
- Chimera's own home (CHIMERA_HOME), when it lies in the workspace, is not the agent's: a write or
  edit there, or a command naming it, is asked about in every mode (``own_state.py``).
- A write or edit inside a git directory (a ``.git`` folder, the workspace's
  or a nested repository's, or any folder git would take for one:
  ``git_dirs.py``) is not an ordinary edit: it is asked about in
  ``accept-edits`` unless an allow rule names it.
"""

from __future__ import annotations

import glob as globbing
import itertools
import posixpath
import shlex
from collections.abc import Callable, Collection, Iterable, Iterator
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from chimera.core.errors import ConfigError
from chimera.core.option_names import MODES
from chimera.core.permissions.git_dirs import git_owned, names_git
from chimera.core.permissions.kept import Kept, always_words
from chimera.core.permissions.own_state import own_state
from chimera.core.permissions.rule import EDIT_TOOLS, Rule, normal_path, normal_pattern, subject_of
from chimera.core.tools.paths import shown_name

if TYPE_CHECKING:  # imported on first use: `chimera --help` needs a policy's modes, not its parser
    from chimera.core.permissions.rules import CommandPattern
    from chimera.core.permissions.shell import Line
    from chimera.core.permissions.shell_words import Command
    from chimera.core.sandbox.policy import SandboxSettings

__all__ = ["MODES", "Decision", "PermissionPolicy"]

_SEARCH_TOOLS = frozenset({"grep", "glob"})
_MAX_EXPANSION = 500  # files a wildcard in a command word is expanded to, when checking read rules

Verdict = Literal["allow", "ask", "deny"]


@dataclass(frozen=True, slots=True)
class Decision:
    """A verdict, why (for the person, or the model when refused), and for an ask what lets it run unasked."""

    verdict: Verdict
    reason: str = ""
    fix: str = ""


@dataclass(frozen=True, slots=True)
class PermissionPolicy:
    """A mode and rules; ``decide`` says what happens to one call.

    ``approved`` holds what the person allowed for the rest of the session, exactly:
    (tool, command) or (tool, path) pairs; see ``remembering``.
    """

    mode: str = "ask"
    allow: tuple[Rule, ...] = field(default_factory=tuple)
    deny: tuple[Rule, ...] = field(default_factory=tuple)
    approved: frozenset[tuple[str, str]] = frozenset()
    kept: tuple[Kept[Rule], ...] = ()  # each "always" answered, in order: what it added (``kept``, ``forgetting``)
    # Chimera's own state (CHIMERA_HOME): never changed unasked (own_state.py). Where it is, not a rule.
    home: Path | None = field(default=None, compare=False)
    # What the commands a call starts are confined to (None: nothing is); rules decide what is asked, the
    # sandbox what is possible.
    sandbox: SandboxSettings | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ConfigError(f"the permission mode {self.mode!r} is unknown: use one of {', '.join(MODES)}")

    @classmethod
    def build(
        cls,
        mode: str,
        allow: Iterable[str] = (),
        deny: Iterable[str] = (),
        *,
        tools: Collection[str] | None = None,
        home: Path | None = None,
        sandbox: SandboxSettings | None = None,
    ) -> PermissionPolicy:
        """A policy from rule texts; with ``tools``, each rule must name one of them. Raises ConfigError.

        ``home`` is Chimera's own state folder, which no tool changes unasked when it lies in the workspace.
        """
        allowed, denied = tuple(Rule.parse(r, tools) for r in allow), tuple(Rule.parse(r, tools) for r in deny)
        return cls(mode, allowed, denied, home=home, sandbox=sandbox)

    def decide(self, tool: str, args: dict[str, Any], *, read_only: bool, workspace: Path | None = None) -> Decision:
        """What happens to a call of ``tool`` with ``args``; paths are judged relative to ``workspace``."""
        call = _Call(tool, args, workspace)
        refusal = self._refusal(call)
        if refusal is not None:
            return Decision("deny", refusal)
        if self.mode == "plan" and not read_only:
            return Decision("deny", f"plan mode is read-only: {tool} may change files, so it does not run")
        if (tool, call.key) in self.approved:
            return Decision("allow", "allowed by the person for this session")
        hidden = self._hidden_from_deny_rules(call)
        if hidden is not None:
            return hidden
        own = None if read_only else self._own_state(call)
        if own is not None:
            return own
        if read_only or self.mode == "bypass":
            return Decision("allow")
        if tool == "bash":
            return self._bash(call)
        protected = tool in EDIT_TOOLS and git_owned(call.path, workspace)
        for rule in self.allow:
            names_it = rule.pattern is not None and (names_git(rule.pattern) or git_owned(rule.pattern, workspace))
            if rule.names(tool) and rule.allows_path(call.subject, workspace) and (names_it or not protected):
                return Decision("allow", f"allowed by the rule {rule}")
        exact = f"--allow {shlex.quote(f'{tool}({globbing.escape(call.subject)})')}" if call.subject else ""
        if protected:
            return Decision(
                "ask",
                f"{call.subject} belongs to git ({'a .git folder' if names_git(call.path) else 'a git directory'}), "
                "and a change there is not an ordinary edit",
                f"--permission-mode bypass, or {exact}",
            )
        if self.mode == "accept-edits" and tool in EDIT_TOOLS:
            return Decision("allow")
        fix = exact or f"--allow {tool}"
        mode = "accept-edits" if tool in EDIT_TOOLS else "bypass"
        return Decision("ask", "", f"--permission-mode {mode}, or {fix}")

    def remembering(self, tool: str, args: dict[str, Any], workspace: Path | None = None) -> PermissionPolicy:
        """This policy after the person answered "always" for this call (``kept.always_words`` says it in words).

        A command is remembered exactly as written. "Always allow edits" means every edit: given on
        ``write`` or ``edit`` it covers both tools, for every file outside a git directory and Chimera's own
        state; on a file inside one, for that file only (by either tool). Any other call: every call of its tool.
        """
        call = _Call(tool, args, workspace)
        state = own_state(self.home, workspace)
        own = state is not None and state.holds(call.path)
        if tool == "bash":
            words = always_words(tool, {"command": call.key})
            return self._keep(Kept(words, approved=frozenset({(tool, call.key)})))
        if tool in EDIT_TOOLS and (own or git_owned(call.path, workspace)):
            pairs = frozenset((edit, call.key) for edit in sorted(EDIT_TOOLS))
            return self._keep(Kept(always_words(tool, {"path": call.key}, one_file=True), approved=pairs))
        if tool in EDIT_TOOLS:
            return self._keep(Kept(always_words(tool, {}), rules=tuple(Rule(t) for t in sorted(EDIT_TOOLS))))
        return self._keep(Kept(always_words(tool, {}), rules=(Rule(tool),)))

    def keeping(self, text: str, tool: str, tools: Collection[str] | None = None) -> PermissionPolicy:
        """This policy after the person answered "always" to a ``tool`` call with a rule of their own, ``text``
        (``tool`` or ``tool(pattern)``, as ``--allow`` takes it). The rule must name that tool (for ``write`` or
        ``edit``, either: it then covers both, as "always" does). ConfigError saying why otherwise."""
        rule = Rule.parse(text, tools)
        family = EDIT_TOOLS if tool in EDIT_TOOLS else frozenset({tool})
        if rule.tool not in family:
            raise ConfigError(
                f"the rule {str(rule)!r} is not about {tool}: an answer to this question keeps a rule for "
                f"{' or '.join(sorted(family))}, such as {sorted(family)[0]}(PATTERN)"
            )
        rules = tuple(Rule(name, rule.pattern) for name in sorted(family))
        return self._keep(Kept(", ".join(str(r) for r in rules), rules=rules))

    def forgetting(self, index: int) -> PermissionPolicy:
        """This policy without the ``index``-th "always" (0 first): what it added runs asked again, unless a
        rule given at start or another "always" still allows it. IndexError when there is no such answer."""
        gone = self.kept[index]
        allow = list(self.allow)
        for rule in gone.rules:
            allow.reverse()
            allow.remove(rule)  # the latest copy: a rule given at start comes first and stays
            allow.reverse()
        kept = self.kept[:index] + self.kept[index + 1 :]
        still = frozenset().union(*(k.approved for k in kept))
        return replace(self, allow=tuple(allow), approved=self.approved - (gone.approved - still), kept=kept)

    def _keep(self, kept: Kept[Rule]) -> PermissionPolicy:
        return replace(
            self, allow=(*self.allow, *kept.rules), approved=self.approved | kept.approved, kept=(*self.kept, kept)
        )

    def withheld(self, workspace: Path) -> Callable[[str], bool] | None:
        """A test of workspace-relative paths a ``read`` deny rule covers (None when there are none).

        ``grep`` and ``glob`` leave such files out of what they show.
        """
        rules = self._read_rules()
        if not rules:
            return None

        @lru_cache(maxsize=4096)
        def covered(path: str) -> bool:
            return any(rule.denies_path(posixpath.normpath(path), workspace) for rule in rules)

        return covered

    # --- deny ----------------------------------------------------------------------------

    def read_denied(self) -> tuple[str, ...]:
        """The path patterns ``read`` deny rules name (the sandbox hides them from commands too)."""
        return tuple(r.pattern for r in self._read_rules() if r.pattern is not None)

    def _read_rules(self) -> tuple[Rule, ...]:
        return tuple(r for r in self.deny if r.tool in ("read", "*"))

    def _refusal(self, call: _Call) -> str | None:
        """Why a deny rule refuses the call, or None."""
        tool = call.tool
        for rule in self.deny:
            if not rule.covers(tool):
                continue
            if rule.pattern is None:
                return f"{tool} is denied by the rule {rule}"
            if tool == "bash":
                pattern = rule.command
                denied = next((c for c in call.commands() if pattern is not None and pattern.denies(c)), None)
                if denied is not None and pattern is not None:
                    return f"bash is denied by the rule {rule}{_wildcard_hint(pattern, denied)}"
            elif rule.denies_path(call.subject, call.workspace):
                return f"{tool} is denied by the rule {rule}"
        if tool in _SEARCH_TOOLS:
            return self._search_refusal(call)
        if tool == "bash":
            return self._bash_path_refusal(call)
        return None

    def _search_refusal(self, call: _Call) -> str | None:
        """A grep or glob given a path (or a literal glob) that a read deny rule covers."""
        base = str(call.args.get("path") or ".")
        named = [base]
        literal = call.args.get("glob") if call.tool == "grep" else call.args.get("pattern")
        if isinstance(literal, str) and literal:
            named.append(posixpath.join(base, literal))
        for path in named:
            normal = normal_path(path, call.workspace)
            for rule in self._read_rules():
                if rule.denies_path(normal, call.workspace):
                    return f"{call.tool} is denied by the rule {rule}: it would read {shown_name(normal)}"
        return None

    def _bash_path_refusal(self, call: _Call) -> str | None:
        """Best effort: a command word or redirection naming a path that a read (or write/edit) deny rule covers."""
        reads = self._read_rules()
        writes = tuple(r for r in self.deny if r.tool in EDIT_TOOLS)
        if not reads and not writes:
            return None
        line = call.line()
        for rules, words, verb in ((reads, line.reads, "reads"), (writes, line.writes, "writes")):
            if not rules:
                continue
            for path in _paths(words, call.workspace):
                for rule in rules:
                    if rule.pattern is not None and rule.denies_path(path, call.workspace):
                        return f"bash is denied by the rule {rule}: it {verb} {shown_name(path)}"
        return None

    def _hidden_from_deny_rules(self, call: _Call) -> Decision | None:
        """An ask for a command whose text hides what runs, while deny rules for bash must be checked."""
        if call.tool != "bash" or not any(r.names("bash") and r.pattern is not None for r in self.deny):
            return None
        opaque = call.line().opaque
        if not opaque:
            return None
        return Decision(
            "ask",
            f"{opaque}, so the deny rules for bash cannot be checked",
            "spell the command out so the deny rules can see what it runs (or run without bash deny rules)",
        )

    def _own_state(self, call: _Call) -> Decision | None:
        """An ask for a call that would change (or, for bash, names) Chimera's own home inside the workspace."""
        state = own_state(self.home, call.workspace)
        if state is None:
            return None
        why = "Chimera's own state (CHIMERA_HOME: its settings and sessions), which the agent never changes unasked"
        elsewhere = "set CHIMERA_HOME to a folder outside the workspace"
        if call.tool in EDIT_TOOLS and state.holds(call.path):
            for rule in self.allow:
                names_it = rule.pattern is not None and state.holds(normal_pattern(rule.pattern, call.workspace))
                if names_it and rule.names(call.tool) and rule.allows_path(call.subject, call.workspace):
                    return Decision("allow", f"allowed by the rule {rule}")
            exact = f"--allow {shlex.quote(f'{call.tool}({globbing.escape(call.subject)})')}"
            return Decision("ask", f"{shown_name(call.path)} is {why}", f"{exact}, or {elsewhere}")
        if call.tool != "bash":
            return None
        line = call.line()
        paths = _paths((*line.reads, *line.writes), call.workspace)
        place = next((shown_name(p) for p in paths if state.holds(p)), "") or state.named_by(line.expansions)
        if place:
            return Decision("ask", f"it names {place}, {why}", elsewhere)
        return None

    # --- allow for bash ----------------------------------------------------------------------

    def _bash(self, call: _Call) -> Decision:
        line = call.line()
        single = line.single
        plain = single.layers[0] if single is not None and isinstance(line.plain, tuple) else None
        for rule in self.allow:
            if not rule.names("bash"):
                continue
            if rule.pattern is None:
                return Decision("allow", f"allowed by the rule {rule}")
            pattern = rule.command
            if plain is not None and pattern is not None and pattern.allows(plain):
                return Decision("allow", f"allowed by the rule {rule}")
        if plain is not None:
            from chimera.core.permissions.rules import rule_word

            word = shlex.quote(rule_word(plain))
            return Decision("ask", "", f"--permission-mode bypass, or --allow {shlex.quote(f'bash({word} *)')}")
        if line.unknown:
            return Decision("ask", f"{line.unknown}, which no allow rule covers", "--permission-mode bypass")
        what = line.plain if isinstance(line.plain, str) and line.plain else "a chain of commands"
        if isinstance(line.plain, tuple):
            what = "a substitution" if line.substituted else "a redirection" if line.redirected else what
        return Decision("ask", f"it holds {what}, which no allow rule covers", "--permission-mode bypass")


class _Call:
    """One call being judged: its tool, arguments, normalized subject, and (for bash) its parse, made once."""

    def __init__(self, tool: str, args: dict[str, Any], workspace: Path | None) -> None:
        self.tool = tool
        self.args = args
        self.workspace = workspace
        self.subject = subject_of(tool, args, workspace)
        self.path = self.subject if "path" in args else ""
        self.key = str(args.get("command", "")).strip() if tool == "bash" else self.subject
        self._line: Line | None = None

    def line(self) -> Line:
        if self._line is None:
            from chimera.core.permissions.shell import parse_line

            self._line = parse_line(str(self.args.get("command", "")))
        return self._line

    def commands(self) -> Iterator[Command]:
        """Every command the line runs, each layer of each (``sudo rm x``: ``sudo …`` and ``rm x``)."""
        return itertools.chain.from_iterable(inv.layers for inv in self.line().invocations)


def _wildcard_hint(pattern: CommandPattern, command: Command) -> str:
    """Why a command matched only because a wildcard may expand to a flag, and how to say it does not."""
    if not command.open or pattern.denies(replace(command, open=False)):
        return ""
    globs = [a.text for a in command.operands if a.glob and (a.text or "")[:1] in "*?["]
    if not globs:
        return ""
    return f": {globs[0]} may expand to a file named like a flag (write ./{globs[0]}, or -- before it)"


def _tilde(word: str, workspace: Path | None) -> str:
    """``word`` with a leading ``~+`` or ``/proc/self/cwd`` (the working folder: the workspace) or ``~`` (the home
    folder) expanded."""
    for here in ("~+", "/proc/self/cwd", "/proc/thread-self/cwd"):
        if workspace is not None and (word == here or word.startswith(here + "/")):
            return str(workspace) + word[len(here) :]
    if word == "~" or word.startswith("~/"):
        return str(Path.home()) + word[1:]
    return word


def _paths(words: Iterable[str], workspace: Path | None) -> Iterator[str]:
    """The normalized paths ``words`` may name; a word with wildcards as the files it expands to."""
    for word in words:
        word = _tilde(word, workspace)
        yield normal_path(word, workspace)
        if workspace is not None and any(c in word for c in "*?["):
            try:
                found = globbing.iglob(word, root_dir=workspace)
                for match in itertools.islice(found, _MAX_EXPANSION):
                    yield normal_path(match, workspace)
            except (OSError, ValueError):
                continue
