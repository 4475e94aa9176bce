"""Branch-and-compare in the core: variants from one point of a session, side by side, against the loopback
Messages API; each on a scratch copy, each recorded as a branch, the person's workspace untouched."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from chimera.core.compare import Comparison, VariantSpec, parse_specs, session_comparison, session_policy
from chimera.core.events import TextDelta
from chimera.core.loops.plan_execute import PLANNING_PROMPT
from chimera.core.sessions.reading import Task, read_node
from chimera.core.sessions.start import RunOptions, start_session
from chimera.core.sessions.store import SessionStore
from tests.fake_anthropic import DEFAULT_MODEL as MODEL
from tests.fake_anthropic import FakeAnthropic, Reply, by_model, message, stalled, status, text, tool_use
from tests.switch_helpers import folder_digest

pytestmark = pytest.mark.usefixtures("model_env")


def writes(path: str, content: str, answer: str, *, model: str = MODEL) -> list[Reply]:
    return [
        message(tool_use("w", "write", {"path": path, "content": content}), stop_reason="tool_use", model=model),
        message(text(answer), model=model),
    ]


async def recorded_session(api: FakeAnthropic, project: Path) -> str:
    """Run 1 writes a.txt "hello"; run 2 ("shout it") makes it "HELLO". Returns the session id."""
    (project / "seed.txt").write_text("seed\n")
    api.script(*writes("a.txt", "hello\n", "Wrote it."), *writes("a.txt", "HELLO\n", "Shouted."))
    session = start_session(RunOptions(workdir=project, model=MODEL, permission_mode="bypass"))
    try:
        await session.run("write the greeting")
        await session.run("shout it")
        return session.id
    finally:
        await session.close()


def second_task(store: SessionStore) -> str:
    """The node of the person's second task ("shout it")."""
    return next(n.id for n in store.tree.nodes.values() if isinstance(r := read_node(n), Task) and r.text == "shout it")


def comparison(store: SessionStore, home: Path, specs: list[str], scratch: Path, **kw: Any) -> Comparison:
    return Comparison(
        store, second_task(store), parse_specs(specs), policy=session_policy(store, home), scratch_root=scratch, **kw
    )


async def test_two_variants_by_model_run_from_the_point_and_are_recorded_as_branches(
    api: FakeAnthropic, project: Path, isolated_env: Path, tmp_path: Path
) -> None:
    """Two models re-run "shout it" from before it: each row counts its run, each branch ends in its checkpoint
    with its own files, the workspace and the leaf are as the person left them, no scratch copy is left."""
    session_id = await recorded_session(api, project)
    before = folder_digest(project)
    api.responder = by_model(
        {
            "model-a": writes("a.txt", "Hello!\n", "A done.", model="model-a"),
            "model-b": writes("b.txt", "bee\n", "B done.", model="model-b"),
        }
    )
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    with SessionStore.open(isolated_env, session_id) as store:
        leaf = store.tree.leaf
        fork = store.tree.nodes[second_task(store)].parent_id
        rows = await comparison(store, isolated_env, ["model=model-a", "model=model-b"], scratch).run()

        assert [(r.label, r.outcome, r.turns, r.tool_calls, r.failed_calls) for r in rows] == [
            ("model-a", "completed", 2, 1, 0),
            ("model-b", "completed", 2, 1, 0),
        ]
        assert [[(f.path, f.added, f.removed) for f in r.files] for r in rows] == [
            [("a.txt", 1, 1)],  # from REF's files (a.txt "hello"), not the workspace's
            [("b.txt", 1, 0)],
        ]
        assert all(r.input_tokens > 0 and r.output_tokens > 0 and r.seconds > 0 for r in rows)
        assert store.tree.leaf == leaf
        for row in rows:
            assert row.node is not None
            assert store.tree.names[f"compare-1-{row.label}"] == row.node
            path = [n.id for n in store.tree.path(row.node)]
            assert fork in path  # a branch from the point,
            assert leaf not in path  # beside the person's
    assert folder_digest(project) == before
    assert list(scratch.iterdir()) == []
    for model in ("model-a", "model-b"):  # the conversation up to the point, then the task again
        first = next(r for r in api.requests if r.body["model"] == model)
        assert first.messages[0]["content"] == "write the greeting"
        assert first.messages[-1]["content"] == "shout it"
        assert "HELLO" not in json.dumps(first.messages)


async def test_two_variants_by_loop_each_run_their_strategy(
    api: FakeAnthropic, project: Path, isolated_env: Path, tmp_path: Path
) -> None:
    """A react and a plan variant of one model: the plan one plans first (read-only) and is approved as
    proposed; both finish, each with its own files, and the --verify command passes on each copy."""
    session_id = await recorded_session(api, project)

    def respond(body: Any) -> Reply:
        messages = body["messages"]
        tools = {t["name"] for t in body["tools"]}
        said = json.dumps(messages)
        if "write" not in tools:
            return message(text("- [ ] write the greeting file"))
        last = messages[-1]["content"]
        if isinstance(last, list) and any(b.get("type") == "tool_result" for b in last):
            return message(text("Done."))
        path = "planned.txt" if PLANNING_PROMPT[:40] in said else "direct.txt"
        return message(tool_use("w", "write", {"path": path, "content": "hi\n"}), stop_reason="tool_use")

    api.responder = respond
    with SessionStore.open(isolated_env, session_id) as store:
        rows = await comparison(
            store, isolated_env, ["loop=react", "loop=plan"], tmp_path, verify="test -f planned.txt -o -f direct.txt"
        ).run()
    assert [(r.label, r.outcome, r.verified) for r in rows] == [
        ("react", "completed", True),
        ("plan", "completed", True),
    ]
    assert [[f.path for f in r.files] for r in rows] == [["direct.txt"], ["planned.txt"]]
    assert rows[1].turns > rows[0].turns  # planning took a turn of its own


async def test_one_variant_is_stopped_alone(
    api: FakeAnthropic, project: Path, isolated_env: Path, tmp_path: Path
) -> None:
    """Stopping one variant through the core API ends it as stopped; the other completes."""
    session_id = await recorded_session(api, project)
    api.responder = by_model(
        {
            "slow": [stalled(text("thinking about it"), model="slow")],
            "fast": writes("b.txt", "bee\n", "B done.", model="fast"),
        }
    )
    with SessionStore.open(isolated_env, session_id) as store:
        compare = comparison(store, isolated_env, ["model=slow", "model=fast"], tmp_path)
        slow = compare.variant("slow")
        events = slow.bus.stream()

        async def stop_when_streaming() -> None:
            async for event in events:
                if isinstance(event, TextDelta):
                    slow.stop()
                    return

        stopper = asyncio.create_task(stop_when_streaming())
        rows = await compare.run()
        await stopper
    assert [(r.label, r.outcome) for r in rows] == [("slow", "stopped"), ("fast", "completed")]
    assert rows[0].node is not None  # its branch is kept as far as it went


async def test_a_variant_the_server_fails_is_reported_while_the_other_completes(
    api: FakeAnthropic, project: Path, isolated_env: Path, tmp_path: Path
) -> None:
    """A 500 on every request of one variant: its row says it failed and why; the other variant completes."""
    session_id = await recorded_session(api, project)
    failing = [status(500, "api_error", "Internal server error", headers={"retry-after": "0"}) for _ in range(10)]
    api.responder = by_model({"broken": failing, "fine": writes("b.txt", "bee\n", "B done.", model="fine")})
    with SessionStore.open(isolated_env, session_id) as store:
        rows = await comparison(store, isolated_env, ["model=broken", "model=fine"], tmp_path).run()
    broken, fine = rows
    assert broken.outcome not in ("completed", "stopped")
    assert "500" in broken.error or "server" in broken.error.lower()
    assert broken.files == ()
    assert (fine.outcome, [f.path for f in fine.files]) == ("completed", ["b.txt"])


def test_specs_name_their_variants() -> None:
    """Specs give each variant its loop, model, limits and a label of its own (a default one when unsaid)."""
    specs = parse_specs(["loop=plan,max-turns=5", "model=m1,label=fast", "loop=tot,candidates=2", "loop=plan"])
    assert specs == [
        VariantSpec("plan", loop="plan", max_turns=5),
        VariantSpec("fast", model="m1"),
        VariantSpec("tot", loop="tot", candidates=2),
        VariantSpec("plan-2", loop="plan"),
    ]


async def test_variants_follow_the_sessions_permission_mode(
    api: FakeAnthropic, project: Path, isolated_env: Path, tmp_path: Path
) -> None:
    """A session in plan mode (read-only): a variant's write is refused as the session's would be; nothing changes."""
    (project / "seed.txt").write_text("seed\n")
    api.script(message(text("Nothing to change.")))
    session = start_session(RunOptions(workdir=project, model=MODEL, permission_mode="plan"))
    try:
        await session.run("look around")
    finally:
        await session.close()
    api.responder = by_model({"m": writes("a.txt", "A\n", "I could not write.", model="m")})
    with SessionStore.open(isolated_env, session.id) as store:
        ref = next(n.id for n in store.tree.nodes.values() if n.kind == "user")
        compare = Comparison(
            store, ref, parse_specs(["model=m"]), policy=session_policy(store, isolated_env), scratch_root=tmp_path
        )
        [row] = await compare.run()
    assert (row.outcome, row.tool_calls, row.failed_calls, row.files) == ("completed", 1, 1, ())
    assert not (project / "a.txt").exists()


async def test_a_variant_stopped_while_it_waits_for_its_turn_never_runs(
    api: FakeAnthropic, project: Path, isolated_env: Path, tmp_path: Path
) -> None:
    """With one job at a time, a variant stopped before its turn comes ends as stopped with no branch; no request."""
    session_id = await recorded_session(api, project)
    api.responder = by_model({"first": writes("a.txt", "A\n", "done", model="first")})
    with SessionStore.open(isolated_env, session_id) as store:
        compare = comparison(store, isolated_env, ["model=first", "model=second"], tmp_path, jobs=1)
        compare.variant("second").stop()
        rows = await compare.run()
        assert not any(name.endswith("-second") for name in store.tree.names)
    assert [(r.label, r.outcome, r.node) for r in rows[1:]] == [("second", "stopped", None)]
    assert rows[0].outcome == "completed"
    assert all(r.body["model"] != "second" for r in api.requests)


async def test_a_comparison_in_a_live_session_leaves_its_conversation_where_it_was(
    api: FakeAnthropic, project: Path
) -> None:
    """Compared from a live session (the workbench's way), the variants are its branches; its next run goes on
    from the person's leaf, not from a variant's."""
    (project / "seed.txt").write_text("seed\n")
    api.script(*writes("a.txt", "hello\n", "Wrote it."), *writes("a.txt", "HELLO\n", "Shouted."))
    session = start_session(RunOptions(workdir=project, model=MODEL, permission_mode="bypass"))
    try:
        await session.run("write the greeting")
        await session.run("shout it")
        leaf = session.store.tree.leaf
        api.responder = by_model({"m": writes("a.txt", "Hi!\n", "Variant done.", model="m")})
        [row] = await session_comparison(session, second_task(session.store), parse_specs(["model=m"])).run()
        assert row.outcome == "completed"
        assert session.store.tree.names["compare-1-m"] == row.node
        assert session.store.tree.leaf == leaf
        api.responder = None
        api.script(message(text("Still loud.")))
        await session.run("how is it?")
    finally:
        await session.close()
    sent = json.dumps(api.requests[-1].messages)
    assert "HELLO" in sent
    assert "Variant done." not in sent
    assert (project / "a.txt").read_text() == "HELLO\n"
