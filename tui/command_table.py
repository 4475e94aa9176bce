"""Provides ``COMMANDS``: every command of the workbench, defined once, each with when it works (a function of
:class:`~chimera.tui.command.Facts` that says why not, and what to do instead). No Textual here.
"""

from __future__ import annotations

from chimera.core.option_names import LOOPS, MODES
from chimera.tui.command import Command, Facts

__all__ = ["COMMANDS"]


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
