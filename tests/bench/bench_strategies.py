"""Benchmark: the four loop strategies on one small suite of coding tasks.

Run by hand: `python tests/bench/bench_strategies.py [--model MODEL]`.

Each task is a small workspace with its own check: a bug fix, a rename across
three files, and a task whose plan is falsified midway (the file it starts from
is deleted after the first tool call, as a person might). Every strategy runs
every task through the real client.

Against the loopback server (the default) a scripted model plays the tasks: it
answers each strategy's own prompts (a plan, a step check, an evaluation) and
otherwise takes the task's next action, reading what it needs from the files,
so every strategy does the same work and the figures show what each one costs
around it. Its token counts are estimates (a token per four characters). With
`--model`, the same suite runs on a real model (`ANTHROPIC_API_KEY`, or
`ANTHROPIC_BASE_URL` for a local server) and the counts are the server's.

Prints, per task and strategy: steps (turns), model requests, tokens in and
out, tool calls, and whether the task's own check passed.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from chimera.core.env.local import LocalEnvironment
from chimera.core.events import StepEvent, ToolCallFinished, UsageReported
from chimera.core.loop_config import LoopConfig
from chimera.core.loops.plan_execute import PlanAndExecute
from chimera.core.loops.react import ReAct
from chimera.core.loops.reflexion import Reflexion
from chimera.core.loops.strategy import Strategy
from chimera.core.loops.tree_of_thought import TreeOfThought
from chimera.core.providers.factory import create_provider
from chimera.core.tool_group import DEFAULT_TOOLS
from tests.fake_anthropic import FakeAnthropic, Reply, message, text, tool_use

Action = Callable[[Path], tuple[str, dict[str, Any]]]  # the workspace -> a tool name and its input


@dataclass(frozen=True)
class Task:
    name: str
    prompt: str
    files: dict[str, str]
    plan: list[tuple[str, list[Action]]]  # each step of the scripted plan, with its actions
    check: Callable[[Path], bool]
    revised: list[tuple[str, list[Action]]] = field(default_factory=list)  # the plan once falsified
    delete_after_first_call: str | None = None

    @property
    def actions(self) -> list[Action]:
        return [action for _, actions in self.plan for action in actions]


def _read(path: str) -> Action:
    return lambda _: ("read", {"path": path})


def _edit(path: str, old: str, new: str) -> Action:
    return lambda _: ("edit", {"path": path, "old": old, "new": new, "replace_all": True})


def _summary(root: Path) -> tuple[str, dict[str, Any]]:
    notes = root / "notes.txt"
    body = notes.read_text() if notes.exists() else "the notes are gone\n"
    return "write", {"path": "summary.txt", "content": body + "done\n"}


TASKS = [
    Task(
        "bug fix",
        "add() in calc.py subtracts: fix it.",
        {"calc.py": "def add(a, b):\n    return a - b\n"},
        [("Read `calc.py`", [_read("calc.py")]), ("Fix add in `calc.py`", [_edit("calc.py", "a - b", "a + b")])],
        lambda root: "return a + b" in (root / "calc.py").read_text(),
    ),
    Task(
        "rename across 3 files",
        "Rename old_name to new_name across the codebase.",
        {
            "util.py": "def old_name():\n    return 1\n",
            "a.py": "from util import old_name\n\nprint(old_name())\n",
            "b.py": "from util import old_name\n\nassert old_name() == 1\n",
        },
        [
            ("Find every use of old_name", [lambda _: ("grep", {"pattern": "old_name"})]),
            ("Rename it in `util.py`", [_edit("util.py", "old_name", "new_name")]),
            (
                "Rename it in `a.py` and `b.py`",
                [_edit("a.py", "old_name", "new_name"), _edit("b.py", "old_name", "new_name")],
            ),
        ],
        lambda root: all("old_name" not in (root / f).read_text() for f in ("util.py", "a.py", "b.py")),
    ),
    Task(
        "plan falsified midway",
        "Copy notes.txt into summary.txt, then add a line 'done'.",
        {"notes.txt": "alpha\n"},
        [("Read `notes.txt`", [_read("notes.txt")]), ("Write `notes.txt` into `summary.txt` with done", [_summary])],
        lambda root: (root / "summary.txt").exists() and (root / "summary.txt").read_text().endswith("done\n"),
        revised=[("Write `summary.txt` saying the notes are gone, then done", [_summary])],
        delete_after_first_call="notes.txt",
    ),
]

STRATEGIES: dict[str, Callable[[LoopConfig], Strategy]] = {
    "react": lambda config: ReAct(config),
    "plan": lambda config: PlanAndExecute(config, approve=True),
    "reflexion": lambda config: Reflexion(config, reflect_every=2),
    "tot": lambda config: TreeOfThought(config, n_candidates=3),
}


class ScriptedModel:
    """Plays a task through any strategy: answers its prompts, else takes the task's next action."""

    def __init__(self, task: Task, root: Path) -> None:
        self.task, self.root = task, root
        self.ids = itertools.count(1)
        self.replanned = False

    def __call__(self, body: dict[str, Any]) -> Reply:
        messages = body["messages"]
        said = _text(messages[-1])
        tokens_in = len(json.dumps(body)) // 4
        if "Rate how well" in said:
            return self._say("1: 8\n2: 6\n3: 5", tokens_in)
        if "make a plan" in said:
            return self._say(_checklist(self.task.plan), tokens_in)
        if "The plan no longer holds" in said:
            self.replanned = True
            return self._say(_checklist(self.task.revised or self.task.plan), tokens_in)
        if "Check step" in said:
            return self._say("DONE", tokens_in)
        plan = self.task.revised if self.replanned else self.task.plan
        step_at = _last_index(messages, "Step ")
        if step_at is not None:  # PlanAndExecute: this step's actions, then done
            number = int(_text(messages[step_at]).split("Step ", 1)[1].split(" ", 1)[0])
            done_here = _calls_after(messages, step_at)
            actions = plan[min(number, len(plan)) - 1][1]
        else:
            done_here = _calls_after(messages, 0)
            actions = self.task.actions
        if done_here < len(actions):
            name, args = actions[done_here](self.root)
            call = tool_use(f"t{next(self.ids)}", name, args)
            return message(
                call, stop_reason="tool_use", input_tokens=tokens_in, output_tokens=len(json.dumps(args)) // 4
            )
        return self._say("Done: the task is complete.", tokens_in)

    @staticmethod
    def _say(words: str, tokens_in: int) -> Reply:
        return message(text(words), input_tokens=tokens_in, output_tokens=max(1, len(words) // 4))


def _text(message_: dict[str, Any]) -> str:
    content = message_.get("content")
    if isinstance(content, str):
        return content
    return "\n".join(str(b.get("text", "")) for b in content or [] if isinstance(b, dict))


def _last_index(messages: list[dict[str, Any]], marker: str) -> int | None:
    for index in range(len(messages) - 1, -1, -1):
        if (
            messages[index]["role"] == "user"
            and f"{marker}" in _text(messages[index])
            and " of " in _text(messages[index])
        ):
            return index
    return None


def _calls_after(messages: list[dict[str, Any]], start: int) -> int:
    return sum(
        1
        for m in messages[start:]
        if m["role"] == "assistant" and isinstance(m["content"], list)
        for b in m["content"]
        if b.get("type") == "tool_use"
    )


def _checklist(plan: list[tuple[str, list[Action]]]) -> str:
    return "The plan:\n\n" + "\n".join(f"- [ ] {step}" for step, _ in plan)


@dataclass
class Figures:
    steps: int = 0
    requests: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    calls: int = 0
    replans: int = 0
    success: bool = False


def run_one(task: Task, make: Callable[[LoopConfig], Strategy], model: str, fake: FakeAnthropic | None) -> Figures:
    figures = Figures()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "ws"
        root.mkdir()
        for name, body in task.files.items():
            (root / name).write_text(body)
        before = len(fake.requests) if fake is not None else 0
        if fake is not None:
            fake.responder = ScriptedModel(task, root)

        def observe(event: StepEvent) -> None:
            if isinstance(event, ToolCallFinished):
                figures.calls += 1
                if figures.calls == 1 and task.delete_after_first_call:
                    (root / task.delete_after_first_call).unlink(missing_ok=True)
            elif event.type == "replanned":
                figures.replans += 1
            elif isinstance(event, UsageReported):
                figures.requests += 1
                figures.tokens_in += event.input_tokens
                figures.tokens_out += event.output_tokens

        strategy = make(LoopConfig(max_steps=30, handler=observe))
        with LocalEnvironment(workdir=root) as env:
            result = strategy.run(create_provider(model), DEFAULT_TOOLS, task.prompt, env)
        figures.steps = result.steps
        if fake is not None:
            figures.requests = len(fake.requests) - before
        figures.success = result.success and task.check(root)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", help="run on this real model instead of the loopback server's scripted one")
    args = parser.parse_args()
    fake: FakeAnthropic | None = None
    model = args.model or "claude-sonnet-4-6"
    if args.model is None:
        fake = FakeAnthropic().start()
        os.environ.update(ANTHROPIC_BASE_URL=fake.url, ANTHROPIC_API_KEY="loopback", NO_PROXY="127.0.0.1")
    os.environ.setdefault("CHIMERA_HOME", tempfile.mkdtemp(prefix="chimera-bench-"))
    where = f"model {model}" if args.model else "the loopback server, scripted model (tokens estimated)"
    print(f"strategies on {len(TASKS)} tasks, {where}")
    print(
        f"{'task':<24}{'strategy':<11}{'steps':>6}{'requests':>10}{'tokens in':>11}{'tokens out':>11}"
        f"{'calls':>7}{'replans':>9}  ok"
    )
    totals: dict[str, Figures] = {name: Figures(success=True) for name in STRATEGIES}
    try:
        for task in TASKS:
            for name, make in STRATEGIES.items():
                f = run_one(task, make, model, fake)
                t = totals[name]
                t.steps, t.requests, t.calls = t.steps + f.steps, t.requests + f.requests, t.calls + f.calls
                t.tokens_in, t.tokens_out = t.tokens_in + f.tokens_in, t.tokens_out + f.tokens_out
                t.success = t.success and f.success
                ok = "yes" if f.success else "NO"
                print(
                    f"{task.name:<24}{name:<11}{f.steps:>6}{f.requests:>10}{f.tokens_in:>11}{f.tokens_out:>11}"
                    f"{f.calls:>7}{f.replans:>9}  {ok}"
                )
        react = totals["react"]
        print("\nall tasks, relative to react (requests / tokens in):")
        for name, t in totals.items():
            print(f"  {name:<10} {t.requests / react.requests:.2f}x / {t.tokens_in / max(1, react.tokens_in):.2f}x")
    finally:
        if fake is not None:
            fake.stop()


if __name__ == "__main__":
    main()
