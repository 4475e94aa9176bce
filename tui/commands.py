"""Provides the workbench's commands, each defined once (``COMMANDS``), and what is built from them.

A :class:`Command` is data: its id (which is also its slash name), its argument and a function that lists
the argument's completions, its keys, title and one-line help, and when it is available (a function of
:class:`Facts`, the workbench's state and the app's own facts, that says why not); the part of the
workbench that runs it answers to its id. From this one table come the input's slash commands
(:func:`parse`), their completion (:func:`complete`), the footer's hints (:func:`key_hints`), the help
screen (:func:`available`), and in ``tui.command_views`` the app's key bindings and the command palette.
Nothing typed that starts with ``/`` goes to the model: it is a command, or one line saying it is not one
(:func:`unknown`). A line that starts with ``//`` is words that begin with a slash (:func:`literal`). No
Textual here.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from chimera.core.option_names import LOOPS, MODES
from chimera.tui.state import WorkbenchState

__all__ = [
    "COMMANDS",
    "Command",
    "Completion",
    "Facts",
    "available",
    "complete",
    "find",
    "is_command",
    "key_hints",
    "literal",
    "parse",
    "unknown",
]


@dataclass(frozen=True, slots=True)
class Facts:
    """What decides whether a command works now: the workbench's state and the app's own facts."""

    state: WorkbenchState
    running: bool = False  # a run (or a compaction) is working
    demo: bool = False  # the offline demo plays a recording
    recorded: bool = False  # the session holds something to replay or export
    themes: tuple[str, ...] = ()  # the themes the app knows
    models: tuple[str, ...] = ()  # model names to offer (the one in use first)
    kept: tuple[int, ...] = ()  # the numbers of the answers kept by "always" this session (as /mode lists them)
    points: tuple[str, ...] = ()  # the session's checkpoint names and node ids to offer, names first
    mcp: tuple[tuple[str, bool], ...] = ()  # the MCP servers: each one's name and whether it is enabled


def _always(_: Facts) -> str:
    return ""


@dataclass(frozen=True, slots=True)
class Command:
    """One command. ``argument`` is how its argument reads in help (``TASK``; in brackets when optional:
    ``[FILE]``); ``keys`` are Textual key names, comma-separated; ``unavailable`` says why it does not work
    now, and what to do instead ("" when it works)."""

    id: str
    title: str
    help: str
    argument: str = ""
    keys: str = ""
    key_display: str = ""
    priority: bool = False  # its keys work over everything, even a question's screen
    scope: str = "app"  # where its keys are bound: the app, or a panel ("plan", "question") when it has the focus
    completions: Callable[[Facts], Sequence[str]] | None = None
    unavailable: Callable[[Facts], str] = field(default=_always)
    # When the completions are examples, not the only choices: what else the argument may be ("any model your
    # server serves"); empty when the completions are all there is (a strategy, a theme).
    open_choice: str = ""

    @property
    def slash(self) -> str:
        return f"/{self.id}"

    @property
    def usage(self) -> str:
        """How it is typed: ``/loop NAME``."""
        return f"{self.slash} {self.argument}" if self.argument else self.slash

    @property
    def needs_argument(self) -> bool:
        return bool(self.argument) and not self.argument.startswith("[")

    def enabled(self, facts: Facts) -> bool:
        return not self.unavailable(facts)

    def choices(self, facts: Facts) -> list[str]:
        """The argument's completions now (none for a free one, such as a task)."""
        return list(self.completions(facts)) if self.completions is not None else []


# --- when a command works ------------------------------------------------------------------

_WAIT = "waits for the run: send it when the run ends, or interrupt it."
_DEMO = (
    "does not work in the demo, which replays a recording: "
    "set ANTHROPIC_API_KEY (or ANTHROPIC_BASE_URL) and start Chimera again."
)


def _between_runs(facts: Facts) -> str:
    return _WAIT if facts.running else ""


def _configurable(facts: Facts) -> str:
    """Between runs, with a model (not the demo)."""
    return _DEMO if facts.demo else _between_runs(facts)


def _mcp_actions(facts: Facts) -> list[str]:
    """``/mcp``'s choices: trust, and for each server, reconnect it and disable (or enable) it."""
    return [
        "trust",
        *(f"{how} {name}" for name, on in facts.mcp for how in ("reconnect", "disable" if on else "enable")),
    ]


def _mcp(facts: Facts) -> str:
    return "does not work in the demo, which has no MCP servers." if facts.demo else ""


def _plan_waiting(facts: Facts) -> str:
    if facts.state.questions.plan is None:
        return "has no plan to answer: none is waiting. /plan TASK plans a task first."
    return ""


def _permission_waiting(facts: Facts) -> str:
    if not any(q.kind == "permission" for q in facts.state.questions.open):
        return "has no question to answer: none is waiting."
    return ""


def _always_offered(facts: Facts) -> str:
    """A permission question waits, and "always" may answer it: never for leaving the sandbox."""
    waiting = _permission_waiting(facts)
    if waiting:
        return waiting
    first = next(q for q in facts.state.questions.open if q.kind == "permission")
    if first.outside_sandbox:
        return "is never offered for leaving the sandbox: y runs the command outside it this once."
    return ""


def _question_waiting(facts: Facts) -> str:
    return "has no question to go to: none is waiting." if not len(facts.state.questions) else ""


def _running(facts: Facts) -> str:
    return "has nothing to stop: no run is working." if not facts.running else ""


def _recorded(facts: Facts) -> str:
    if not facts.recorded:
        return "has nothing to work with yet: give Chimera a task first."
    return _between_runs(facts)


def _movable(facts: Facts) -> str:
    """The leaf can move (a switch asked while a run works offers to interrupt it first)."""
    return _DEMO if facts.demo else "" if facts.recorded else "has nothing to move to yet: give Chimera a task first."


def _left_out(facts: Facts) -> str:
    if facts.state.left_out is None:
        return "has nothing to send again: no words of yours were left out of the conversation."
    return _configurable(facts)


def _has_tree(facts: Facts) -> str:
    return "" if facts.recorded else "has nothing to show yet: give Chimera a task first."


def _tree_work(facts: Facts) -> str:
    """Naming and branching: a recorded session, between runs."""
    return _movable(facts) or _between_runs(facts)


def _points(facts: Facts) -> tuple[str, ...]:
    return facts.points


def _comparable(facts: Facts) -> str:
    """Between runs, with a model, once a task was given (its node is where the variants start)."""
    if facts.demo or facts.running:
        return _configurable(facts)
    return "has no task to run again: give Chimera a task first." if not facts.recorded else ""


COMMANDS: tuple[Command, ...] = (
    Command(
        "help",
        "Keys and commands",
        "Show the keys and commands that work now",
        keys="f1,question_mark",
        key_display="?/F1",
        priority=True,
    ),
    Command(
        "plan",
        "Plan a task",
        "Plan TASK first (plan and execute, this task only): approve, edit or cancel the plan",
        argument="TASK",
        unavailable=_configurable,
    ),
    Command(
        "approve",
        "Approve the plan",
        "Approve the plan waiting for an answer (as you edited it, when you did)",
        keys="a",
        scope="plan",
        unavailable=_plan_waiting,
    ),
    Command(
        "edit",
        "Edit the plan",
        "Edit the plan waiting for an answer as Markdown (ctrl+s uses it; esc keeps the edit for a to approve)",
        keys="e",
        scope="plan",
        unavailable=_plan_waiting,
    ),
    Command(
        "keep-planning",
        "Keep planning",
        "Say what to change in the plan waiting for an answer: the model revises it, and you answer again",
        argument="[CHANGES]",
        keys="k",
        scope="plan",
        unavailable=_plan_waiting,
    ),
    Command(
        "cancel",
        "Cancel the plan",
        "Cancel the plan waiting for an answer (the run ends cancelled; c asks first)",
        keys="c",
        scope="plan",
        unavailable=_plan_waiting,
    ),
    Command(
        "question",
        "Go to the question",
        "Move to the oldest question waiting (it waits, unfocused, while you type)",
        keys="ctrl+y",
        priority=True,
        unavailable=_question_waiting,
    ),
    Command(
        "allow",
        "Allow once",
        "Let the call asked about run, this once",
        keys="y",
        scope="question",
        unavailable=_permission_waiting,
    ),
    Command(
        "always",
        "Always allow",
        "Let the call asked about run, and add the rule shown so the like of it runs unasked",
        keys="a",
        scope="question",
        unavailable=_always_offered,
    ),
    Command(
        "always-rule",
        "Always allow, by a rule you write",
        "Let the call asked about run, and keep RULE (such as bash(make *)) instead of the rule shown (e edits it)",
        argument="[RULE]",
        keys="e",
        scope="question",
        unavailable=_always_offered,
    ),
    Command(
        "deny",
        "Deny",
        "Refuse the call asked about",
        keys="n",
        scope="question",
        unavailable=_permission_waiting,
    ),
    Command(
        "deny-why",
        "Deny, saying why",
        "Refuse the call asked about and tell the model why (REASON; d asks for it)",
        argument="[REASON]",
        keys="d",
        scope="question",
        unavailable=_permission_waiting,
    ),
    Command(
        "loop",
        "Strategy",
        f"Choose the strategy of the next runs ({', '.join(LOOPS)})",
        argument="NAME",
        completions=lambda _: LOOPS,
        unavailable=_configurable,
    ),
    Command(
        "model",
        "Model",
        "Choose the model of the next runs",
        argument="NAME",
        completions=lambda facts: facts.models,
        unavailable=_configurable,
        open_choice="any model your server serves",
    ),
    Command(
        "mode",
        "Permission mode",
        f'Choose the permission mode of the next runs ({", ".join(MODES)}); alone, list what "always" allows',
        argument="[NAME]",
        completions=lambda facts: (*MODES, *(f"forget {n}" for n in facts.kept)),
        unavailable=_configurable,
    ),
    Command(
        "theme",
        "Change theme",
        "Switch the colours",
        argument="NAME",
        completions=lambda facts: facts.themes,
    ),
    Command(
        "compact",
        "Compact the conversation",
        "Summarize the older part of the conversation now, attending to [focus]",
        argument="[focus]",
        unavailable=_configurable,
    ),
    Command(
        "tree",
        "Session tree",
        "Show or hide the session's tree: see where you are, switch, branch, name checkpoints, go back",
        keys="ctrl+t",
        key_display="^t",
        unavailable=_has_tree,
    ),
    Command(
        "switch",
        "Switch to a point",
        "Move to NODE (an id or a checkpoint's name) with its files, after its preview and a y",
        argument="NODE|NAME",
        completions=_points,
        unavailable=_movable,
    ),
    Command(
        "branch",
        "Branch from a point",
        "Continue from NODE (an id or a name): the next task grows a new branch there; the files stay as they are",
        argument="NODE|NAME",
        completions=_points,
        unavailable=_tree_work,
    ),
    Command(
        "checkpoint",
        "Name a checkpoint",
        "Name the point you are at NAME (checkpoint-N when not given), the files pinned as they are now",
        argument="[NAME]",
        unavailable=_tree_work,
    ),
    Command(
        "label",
        "Label a point",
        "Put a label on NODE (an id or a name): it shows in the tree and names the point",
        argument="NODE TEXT",
        completions=_points,
        unavailable=_tree_work,
    ),
    Command(
        "back",
        "Go back",
        "Return to where you were before the last switch or branch (u in the tree)",
        unavailable=_movable,
    ),
    Command(
        "compare",
        "Compare variants",
        "Run the last task again as variants side by side (SPEC as chimera compare --try: loop=plan, "
        "model=NAME…); adopt the one you like",
        argument="SPEC [SPEC ...]",
        unavailable=_comparable,
    ),
    Command("sessions", "Sessions", "Choose a session to resume (this workspace's first)"),
    Command(
        "export",
        "Export as Markdown",
        "Write this session as Markdown to FILE (in the workspace unless a full path)",
        argument="[FILE]",
        unavailable=_recorded,
    ),
    Command("replay", "Replay", "Say how to watch this session again", unavailable=_recorded),
    Command(
        "mcp",
        "MCP servers",
        "Open the MCP servers' panel (state, tools, the context they cost, errors, logs); ACTION trust starts "
        "the workspace's .mcp.json, reconnect NAME starts one again, disable NAME and enable NAME stop and start one",
        argument="[ACTION]",
        completions=_mcp_actions,
        unavailable=_mcp,
    ),
    Command("new", "New session", "Start a fresh session in this workspace", unavailable=_configurable),
    Command(
        "resend",
        "Send left-out words again",
        "Send again, as a new task, the words a run left out of the conversation (the server refused them, the "
        "model declined them, or you interrupted before an answer): the newest, or [NODE]",
        argument="[NODE]",
        unavailable=_left_out,
    ),
    Command(
        "interrupt",
        "Interrupt",
        "Stop the run: running commands are killed, the conversation stays valid",
        keys="escape",
        key_display="esc",
        unavailable=_running,
    ),
    Command("quit", "Quit", "Leave Chimera (the session is kept)", keys="ctrl+q", priority=True),
)

_BY_ID = {command.id: command for command in COMMANDS}


def find(name: str) -> Command | None:
    """The command ``name`` (with or without its slash), or None."""
    return _BY_ID.get(name.removeprefix("/"))


def is_command(text: str) -> bool:
    """Whether typed ``text`` is a command (it starts with one slash), not words for the model."""
    text = text.lstrip()
    return text.startswith("/") and not text.startswith("//")


def literal(text: str) -> str:
    """Words typed to begin with a slash: ``//etc/hosts`` is ``/etc/hosts`` (anything else as it is)."""
    stripped = text.lstrip()
    return stripped[1:] if stripped.startswith("//") else text


def parse(text: str) -> tuple[str, str]:
    """A typed command line as its name (without the slash) and its argument (stripped)."""
    name, _, argument = text.strip().removeprefix("/").partition(" ")
    return name, argument.strip()


def unknown(name: str) -> str:
    """One line for a name that is no command, naming the nearest one when there is one."""
    near = difflib.get_close_matches(name, list(_BY_ID), n=1, cutoff=0.6)
    hint = f"did you mean /{near[0]}? " if near else ""
    return f"/{name} is not a command: {hint}/help lists them (start with // to send words that begin with /)."


def available(facts: Facts) -> list[Command]:
    """The commands that work now, in the registry's order."""
    return [command for command in COMMANDS if command.enabled(facts)]


def key_hints(facts: Facts) -> list[tuple[str, str]]:
    """What a footer shows: (keys, title) of each command that works now and has keys."""
    return [(c.key_display or c.keys, c.title) for c in available(facts) if c.keys]


@dataclass(frozen=True, slots=True)
class Completion:
    """One completion of what is typed: ``text`` replaces the input's text; ``label`` and ``help`` show."""

    text: str
    label: str
    help: str = ""


def complete(text: str, facts: Facts) -> list[Completion]:
    """The completions of a typed command line, best first: the exact name (or argument) typed, then those
    that begin with it, then those that hold it. Only commands that work now; nothing for words."""
    if not is_command(text):
        return []
    typed = text.lstrip()
    name, space, argument = typed.removeprefix("/").partition(" ")
    if not space:
        commands = {c.id: c for c in available(facts)}
        ranked = [commands[found] for found in _ranked(name, list(commands))]
        return [Completion(c.slash + (" " if c.argument else ""), c.usage, c.help) for c in ranked]
    command = find(name)
    if command is None or not command.enabled(facts):
        return []
    more = " " if " " in (command.argument or "") else ""  # words follow the one completed (/label NODE TEXT)
    return [
        Completion(f"{command.slash} {choice}{more}", choice)
        for choice in _ranked(argument.strip(), command.choices(facts))
    ]


def _ranked(typed: str, names: list[str]) -> list[str]:
    """``names`` that match ``typed``: the exact one, then those beginning with it, then those holding it
    (case ignored), each group in its own order."""
    low = typed.lower()
    exact = [n for n in names if n.lower() == low]
    starts = [n for n in names if n.lower().startswith(low) and n not in exact]
    holds = [n for n in names if low in n.lower() and n not in exact and n not in starts]
    return exact + starts + holds
