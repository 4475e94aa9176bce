"""One reading of a stored session: every reader (history, export, replay, `chimera tree`) tells the same story.

Tool calls are known by their place in the tree: a local server numbers its tool ids
from 1 at every start, so two runs of one session reuse them, and nothing may show
one call's diff, duration or result for another.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from chimera.core.events import SteeringDelivered, ToolCallFinished
from chimera.core.messages import steering_block
from chimera.core.sessions.history import branch_events
from chimera.core.sessions.store import SessionStore
from tests.cli_runner import run_here
from tests.fake_anthropic import FakeAnthropic, message, text, tool_use


def edit_then_answer(old: str, new: str, answer: str) -> list[Any]:
    """A run whose server calls its first tool call ``toolu_1``, as a local server does at every start."""
    edit = {"path": "a.txt", "old": old, "new": new}
    return [message(tool_use("toolu_1", "edit", edit), stop_reason="tool_use"), message(text(answer))]


def two_runs_reusing_an_id(api: FakeAnthropic, project: Path, model_env: dict[str, str]) -> str:
    """Two runs of one session, each from a fresh process whose server numbers tool ids from 1; the session id."""
    (project / "a.txt").write_text("one\n")
    api.script(*edit_then_answer("one", "two", "Now two."), *edit_then_answer("two", "three", "Now three."))
    flags = ["--json", "--workdir", str(project), "--permission-mode", "bypass"]
    first = run_here("run", "make it two", *flags, env=model_env)
    assert first.returncode == 0, first.stderr
    session_id = str(json.loads(first.stdout.splitlines()[0])["session_id"])
    second = run_here("run", "make it three", *flags, "--resume", session_id, env=model_env)
    assert second.returncode == 0, second.stderr
    assert (project / "a.txt").read_text() == "three\n"
    return session_id


def test_a_resumed_branch_shows_each_reused_id_with_its_own_diff(
    api: FakeAnthropic, project: Path, model_env: dict[str, str], isolated_env: Path
) -> None:
    """History of a session whose two runs both called `toolu_1`: each edit shows its own diff, not the last one's."""
    session_id = two_runs_reusing_an_id(api, project, model_env)
    with SessionStore.open(isolated_env, session_id, writable=False) as store:
        finished = [e for e in branch_events(store) if isinstance(e, ToolCallFinished)]
    assert [e.call_id for e in finished] == ["toolu_1", "toolu_1"]
    first, second = (e.data["diff"] for e in finished)
    assert "-one" in first
    assert "+two" in first
    assert "-two" in second
    assert "+three" in second


def test_export_shows_each_reused_id_with_its_own_diff(
    api: FakeAnthropic, project: Path, model_env: dict[str, str], isolated_env: Path
) -> None:
    """`chimera export` of the same session: the first edit's diff is one→two, the second's two→three."""
    session_id = two_runs_reusing_an_id(api, project, model_env)
    proc = run_here("export", session_id)
    assert proc.returncode == 0, proc.stderr
    first, second = proc.stdout.split("make it three")
    assert "+two" in first
    assert "+three" not in first
    assert "+three" in second
    assert "+two\n" not in second.split("```diff", 1)[1]


def test_a_replay_serves_each_reused_id_its_own_result(
    api: FakeAnthropic, project: Path, model_env: dict[str, str], isolated_env: Path
) -> None:
    """`chimera replay --json`: each replayed `toolu_1` carries its own recorded diff, in order."""
    session_id = two_runs_reusing_an_id(api, project, model_env)
    proc = run_here("replay", session_id, "--json")
    assert proc.returncode == 0, proc.stderr
    events = [json.loads(line) for line in proc.stdout.splitlines()]
    diffs = [e["data"].get("diff", "") for e in events if e["type"] == "tool_call_finished"]
    assert len(diffs) == 2
    assert "+two" in diffs[0]
    assert "+three" in diffs[1]


def steered_session(home: Path, workdir: Path) -> str:
    """A session in which the person steered the run while it worked (as the loop records it)."""
    with SessionStore.create(home, "steered", workdir=workdir, model="m") as store:
        store.add("user", {"role": "user", "content": "count the files"})
        store.add("assistant", {"role": "assistant", "content": [tool_use_block("c1", "glob", {"pattern": "*"})]})
        store.add("tool_result", {"role": "user", "content": [result_block("c1", "a.txt")]})
        store.add("user", {"role": "user", "content": [steering_block("only the text files, please")]})
        store.add("assistant", {"role": "assistant", "content": [{"type": "text", "text": "One text file."}]})
        store.sync()
    return "steered"


def tool_use_block(call_id: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": name, "input": args}


def result_block(call_id: str, output: str) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": call_id, "content": output, "is_error": False}


def test_steering_shows_in_history_export_and_the_tree(isolated_env: Path, project: Path) -> None:
    """The person's words sent mid-run are in the resumed history, the export and `chimera tree`, as their words."""
    session_id = steered_session(isolated_env, project)
    words = "only the text files, please"
    with SessionStore.open(isolated_env, session_id, writable=False) as store:
        assert [e.text for e in branch_events(store) if isinstance(e, SteeringDelivered)] == [words]
    exported = run_here("export", session_id)
    assert exported.returncode == 0, exported.stderr
    assert f"## You, while it worked\n\n{words}" in exported.stdout
    assert "system-reminder" not in exported.stdout
    tree = run_here("tree", session_id, "--json")
    nodes = json.loads(tree.stdout)["nodes"]
    assert [n["part"] for n in nodes] == ["prompt", "answer", "results", "steering", "answer"]
    assert words in nodes[3]["summary"]
    shown = run_here("tree", session_id)
    assert any("steering" in line and words in line for line in shown.stdout.splitlines())


def test_a_replay_delivers_steering_where_the_person_sent_it(isolated_env: Path, project: Path) -> None:
    """`chimera replay --json` of a steered session: the words arrive after the glob's result, before the answer."""
    session_id = steered_session(isolated_env, project)
    proc = run_here("replay", session_id, "--json")
    assert proc.returncode == 0, proc.stderr
    events = [json.loads(line) for line in proc.stdout.splitlines()]
    told = {"tool_call_finished", "steering_delivered", "message_completed"}
    kinds = [e["type"] for e in events if e["type"] in told]
    assert kinds == ["message_completed", "tool_call_finished", "steering_delivered", "message_completed"]
    [steering] = [e for e in events if e["type"] == "steering_delivered"]
    assert steering["text"] == "only the text files, please"
    assert events[-1]["type"] == "run_finished"
    assert events[-1]["success"]


def read_call(name: str, *, input_tokens: int = 500) -> Any:
    return message(tool_use(f"r{name[0]}", "read", {"path": name}), stop_reason="tool_use", input_tokens=input_tokens)


def test_a_compaction_shows_in_replay_export_and_the_tree(
    api: FakeAnthropic, project: Path, model_env: dict[str, str], isolated_env: Path
) -> None:
    """A run compacted at the threshold: its replay compacts at the same point with the same summary, and
    the export and `chimera tree` show the summary."""
    for name in ("a.txt", "b.txt"):
        (project / name).write_text("".join(f"line {i} of {name}\n" for i in range(60)))
    api.script(
        read_call("a.txt"),
        read_call("b.txt", input_tokens=9_000),
        message(text("SUMMARY: a.txt was read.")),
        message(text("Done.")),
    )
    env = {**model_env, "CHIMERA_CONTEXT_WINDOW": "10000"}
    flags = ["--json", "--workdir", str(project), "--permission-mode", "bypass"]
    proc = run_here("run", "read both files", *flags, env=env)
    assert proc.returncode == 0, proc.stderr
    session_id = str(json.loads(proc.stdout.splitlines()[0])["session_id"])

    replay = run_here("replay", session_id, "--json")
    assert replay.returncode == 0, replay.stderr
    events = [json.loads(line) for line in replay.stdout.splitlines()]
    [compaction] = [e for e in events if e["type"] == "compaction"]
    assert compaction["summary"] == "SUMMARY: a.txt was read."
    assert compaction["reason"] == "threshold"
    order = [e["type"] for e in events if e["type"] in {"compaction", "message_completed"}]
    assert order == ["message_completed", "message_completed", "compaction", "message_completed"]
    assert events[-1]["type"] == "run_finished"
    assert events[-1]["success"]

    exported = run_here("export", session_id).stdout
    assert "## Summary of earlier turns\n\nSUMMARY: a.txt was read." in exported
    nodes = json.loads(run_here("tree", session_id, "--json").stdout)["nodes"]
    [summary_node] = [n for n in nodes if n["part"] == "compaction"]
    assert "SUMMARY: a.txt was read." in summary_node["summary"]


def test_a_replay_plays_the_turn_late_words_got(isolated_env: Path, project: Path) -> None:
    """Words sent as the last answer streamed got one more turn; the replay plays it too, and ends as recorded."""
    with SessionStore.create(isolated_env, "late", workdir=project, model="m") as store:
        store.add("user", {"role": "user", "content": "say done"})
        store.add("assistant", {"role": "assistant", "content": [{"type": "text", "text": "Done."}]})
        store.add("user", {"role": "user", "content": [steering_block("and say hi")]})
        store.add("assistant", {"role": "assistant", "content": [{"type": "text", "text": "Hi."}]})
        store.sync()
    proc = run_here("replay", "late", "--json")
    assert proc.returncode == 0, proc.stderr
    events = [json.loads(line) for line in proc.stdout.splitlines()]
    told = [(e["type"], e.get("text", "")) for e in events if e["type"] in {"steering_delivered", "message_completed"}]
    assert told == [("message_completed", ""), ("steering_delivered", "and say hi"), ("message_completed", "")]
    assert [e["type"] for e in events].count("run_started") == 1
    assert events[-1]["type"] == "run_finished"
    assert events[-1]["success"]
    assert "replay completed: 1 run" in proc.stderr
