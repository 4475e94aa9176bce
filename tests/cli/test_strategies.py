"""Each loop strategy end to end: `chimera run` against the loopback Messages API (the real command for
reflexion and tree-of-thought, its ``main`` in the test's process for the rest)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from chimera.core.env.local import LocalEnvironment
from chimera.core.loops.reflexion import REFLECTION_PROMPT, Reflexion
from chimera.core.loops.tree_of_thought import TreeOfThought
from chimera.core.providers.factory import create_provider
from chimera.core.tool_group import DEFAULT_TOOLS
from tests.cli_runner import assert_one_line_error, run_chimera, run_here
from tests.fake_anthropic import DEFAULT_MODEL as MODEL
from tests.fake_anthropic import FakeAnthropic, message, text, tool_use


@pytest.fixture
def three_files_project(project: Path) -> Path:
    """The project holding a.txt, b.txt and c.txt, one line each."""
    for name in ("a.txt", "b.txt", "c.txt"):
        (project / name).write_text(f"{name} holds {name[0]}\n")
    return project


def events_of(stdout: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stdout.splitlines()]


def reads(*names: str) -> Any:
    return message(*(tool_use(f"r{n}", "read", {"path": n}) for n in names), stop_reason="tool_use")


def texts_sent(request_messages: list[dict[str, Any]]) -> str:
    return json.dumps(request_messages)


# --- Reflexion ---------------------------------------------------------------------------


def test_reflexion_reflects_after_every_n_tool_calls(
    api: FakeAnthropic, model_env: dict[str, str], three_files_project: Path
) -> None:
    """With --reflect-every 2: two calls, a reflection; one call, none yet; one more, a reflection."""
    api.script(
        reads("a.txt", "b.txt"), reads("c.txt"), reads("a.txt"), message(text("Reflected.")), message(text("All read."))
    )
    flags = ("--loop", "reflexion", "--reflect-every", "2", "--json", "--permission-mode", "bypass")
    proc = run_chimera("run", "read the files", "--workdir", str(three_files_project), *flags, env=model_env)

    assert proc.returncode == 0, proc.stderr
    events = events_of(proc.stdout)
    assert events[0]["loop"] == "reflexion"
    order = [e["type"] for e in events if e["type"] in {"turn_started", "reflection"}]
    assert order == ["turn_started", "reflection", "turn_started", "turn_started", "reflection", *["turn_started"] * 2]
    sent = [texts_sent(r.messages) for r in api.requests]
    assert [s.count(REFLECTION_PROMPT) for s in sent] == [0, 1, 1, 2, 2]
    last_user = api.requests[1].messages[-1]["content"]  # the tool results, then the reflection, one user turn
    assert [b["type"] for b in last_user] == ["tool_result", "tool_result", "text"]


def test_a_reflexion_session_replays_and_exports_without_the_reflection_as_a_prompt(
    api: FakeAnthropic, model_env: dict[str, str], three_files_project: Path
) -> None:
    api.script(reads("a.txt"), message(text("Reflected.")), message(text("Done.")))
    flags = ("--loop", "reflexion", "--reflect-every", "1", "--json", "--permission-mode", "bypass")
    proc = run_here("run", "read a", "--workdir", str(three_files_project), *flags, env=model_env)
    assert proc.returncode == 0, proc.stderr
    session_id = events_of(proc.stdout)[0]["session_id"]

    replayed = run_here("replay", session_id, "--json")
    assert replayed.returncode == 0, replayed.stderr
    replay_events = events_of(replayed.stdout)
    assert [e["type"] for e in replay_events].count("run_started") == 1  # the reflection is not a task of its own
    assert replay_events[-1]["success"] is True
    exported = run_here("export", session_id)
    assert exported.stdout.count("## You") == 1
    assert f"> *The loop:* {REFLECTION_PROMPT}" in exported.stdout  # the loop's note, never the person's words


def test_reflect_every_must_be_positive(isolated_env: Path) -> None:
    assert_one_line_error(run_here("run", "x", "--loop", "reflexion", "--reflect-every", "0"), "reflect-every")


@pytest.mark.usefixtures("model_env")
def test_reflexion_from_python(api: FakeAnthropic, three_files_project: Path) -> None:
    api.script(reads("a.txt", "b.txt", "c.txt"), message(text("Reflected.")), message(text("Read three.")))
    with LocalEnvironment(workdir=three_files_project) as env:
        result = Reflexion(max_steps=50, reflect_every=3).run(create_provider(MODEL), DEFAULT_TOOLS, "read", env)
    assert (result.success, result.steps, result.answer) == (True, 3, "Read three.")
    assert texts_sent(api.requests[1].messages).count(REFLECTION_PROMPT) == 1
    with pytest.raises(ValueError, match="at least 1"):
        Reflexion(reflect_every=0)


# --- TreeOfThought -------------------------------------------------------------------------


def run_tot(
    model_env: dict[str, str], project: Path, *flags: str
) -> tuple[subprocess.CompletedProcess[str], list[dict[str, Any]]]:
    proc = run_here(
        "run",
        "look around",
        "--workdir",
        str(project),
        "--loop",
        "tot",
        "--json",
        "--permission-mode",
        "bypass",
        *flags,
        env=model_env,
    )
    assert proc.returncode == 0, proc.stderr
    return proc, events_of(proc.stdout)


def test_tree_of_thought_samples_candidates_takes_a_tool_call_then_the_best_scored(
    api: FakeAnthropic, model_env: dict[str, str], three_files_project: Path
) -> None:
    api.script(
        message(text("I could guess.")),
        reads("a.txt"),
        message(text("Or ask you.")),
        message(text("A holds a.")),
        message(text("It says a, clearly and briefly.")),
        message(text("Not sure.")),
        message(text("1: 4\n2: 9\n3: 2")),  # the evaluation of turn 2's three answers
    )
    _, events = run_tot(model_env, three_files_project)

    bodies = [r.body for r in api.requests]
    assert not [b for b in bodies if "temperature" in b]  # the Messages API of 2026-10-21 refuses sampling parameters
    assert bodies[0]["messages"] == bodies[1]["messages"] == bodies[2]["messages"]  # one context, forked
    assert "Rate how well each one moves" in json.dumps(bodies[6]["messages"][-1])
    chosen = [e for e in events if e["type"] == "candidate_chosen"]
    assert [c["reason"] for c in chosen] == [
        "the first candidate that calls a tool",
        "the evaluation scored it highest (9 of 10)",
    ]
    assert chosen[1]["scores"] == [4, 9, 2]
    proposed = [e for e in events if e["type"] == "candidate"]
    assert len(proposed) == 6
    best = next(p for p in proposed[3:] if p["index"] == chosen[1]["index"])
    done = events[-1]
    assert (done["type"], done["success"], done["steps"]) == ("run_finished", True, 2)
    assert done["answer"] == best["message"]["content"][0]["text"]
    assert [e["name"] for e in events if e["type"] == "tool_call_finished"] == ["read"]
    assert not [e for e in events if e["type"] == "text_delta" and e["text"] in {"I could guess.", "Or ask you."}]


def test_candidates_not_taken_stay_in_the_tree_as_siblings(
    api: FakeAnthropic, model_env: dict[str, str], three_files_project: Path
) -> None:
    api.script(message(text("One.")), message(text("Two.")), message(text("no scores here")))
    _, events = run_tot(model_env, three_files_project, "--candidates", "2")
    chosen = next(e for e in events if e["type"] == "candidate_chosen")
    assert (chosen["index"], chosen["reason"]) == (0, "the evaluation gave no scores: the first candidate")

    tree = json.loads(run_here("tree", events[0]["session_id"], "--json").stdout)
    answers = [n for n in tree["nodes"] if n["kind"] == "assistant"]
    assert len(answers) == 2
    assert answers[0]["parent_id"] == answers[1]["parent_id"]  # siblings: both answer the task
    assert tree["leaf"] == next(n["id"] for n in answers if n["summary"] == events[-1]["answer"])
    assert not any("Rate how well" in n["summary"] for n in tree["nodes"])  # the evaluation joins no conversation


def test_candidates_must_be_positive(isolated_env: Path) -> None:
    assert_one_line_error(run_here("run", "x", "--loop", "tot", "--candidates", "0"), "candidates")
    with pytest.raises(ValueError, match="at least 1"):
        TreeOfThought(n_candidates=0)


def test_reflexion_with_a_verifier_leads_each_reflection_with_its_result(
    api: FakeAnthropic, model_env: dict[str, str], three_files_project: Path
) -> None:
    """The deterministic check comes first: the model reflects on what the command said."""
    api.script(reads("a.txt"), message(text("Reflected.")), message(text("Done.")))
    flags = ("--loop", "reflexion", "--reflect-every", "1", "--verify", "test -f done.txt && echo ok || echo missing")
    proc = run_here(
        "run",
        "read a",
        "--workdir",
        str(three_files_project),
        *flags,
        "--json",
        "--permission-mode",
        "bypass",
        env=model_env,
    )
    assert proc.returncode == 0, proc.stderr
    (reflection,) = [e for e in events_of(proc.stdout) if e["type"] == "reflection"]
    assert reflection["text"].startswith("The check `test -f done.txt && echo ok || echo missing` passed.")
    assert "missing" in reflection["text"]
    assert reflection["text"].endswith(REFLECTION_PROMPT)
    assert "Its output ends:\\nmissing" in json.dumps(api.requests[1].messages[-1])


# --- ReAct's plan suggestion -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("task", "reason"),
    [
        ("rename load_config to read_config across the codebase", "a rename across files"),
        ("migrate the settings to TOML", "a migration"),
        ("update every call site of parse()", "a change to many files"),
        ("what does a.txt say?", None),
        ("change the port to 8080", None),
    ],
)
def test_react_suggests_the_plan_loop_for_a_change_across_many_files(
    api: FakeAnthropic, model_env: dict[str, str], three_files_project: Path, task: str, reason: str | None
) -> None:
    api.script(message(text("Sure.")))
    proc = run_here("run", task, "--workdir", str(three_files_project), "--json", env=model_env)
    assert proc.returncode == 0, proc.stderr
    suggested = [e["reason"] for e in events_of(proc.stdout) if e["type"] == "plan_suggested"]
    if reason is None:
        assert suggested == []
    else:
        assert suggested == [f"the task looks like {reason}: --loop plan would plan it first"]


def test_the_plain_printer_shows_the_plan_tip_on_stderr(
    api: FakeAnthropic, model_env: dict[str, str], three_files_project: Path
) -> None:
    api.script(message(text("Sure.")))
    proc = run_here("run", "refactor the parser", "--workdir", str(three_files_project), env=model_env)
    assert proc.returncode == 0, proc.stderr
    assert "chimera: tip: the task looks like a refactor: --loop plan would plan it first" in proc.stderr
    assert proc.stdout.strip() == "Sure."
