"""A comparison never moves the person's place in the session on disk, even midway: a crash while a variant
works reopens the session where the person was, not on a variant's branch."""

from __future__ import annotations

import asyncio
import os
import threading
from pathlib import Path

import pytest

from chimera.core.compare import Comparison, parse_specs, session_policy
from chimera.core.sessions.files import ENTRIES
from chimera.core.sessions.loading import load_entries
from chimera.core.sessions.reading import Task, read_node
from chimera.core.sessions.start import RunOptions, start_session
from chimera.core.sessions.store import SessionStore
from tests.fake_anthropic import DEFAULT_MODEL as MODEL
from tests.fake_anthropic import FakeAnthropic, Reply, by_model, message, paused, text, tool_use

pytestmark = pytest.mark.usefixtures("model_env")


async def test_midway_the_leaf_on_disk_is_where_the_person_left_it(
    api: FakeAnthropic, project: Path, isolated_env: Path, tmp_path: Path
) -> None:
    """While a variant's second answer streams (its call and result recorded), the session read from disk has
    the variant's nodes and the person's leaf; at the end too."""
    api.script(message(text("Hi.")), message(text("Done.")))
    session = start_session(RunOptions(workdir=project, model=MODEL, permission_mode="bypass"))
    try:
        await session.run("say hi")
        await session.run("say done")
        session_id = session.id
    finally:
        await session.close()
    release, reached = threading.Event(), threading.Event()
    api.script(
        message(tool_use("w", "write", {"path": "a.txt", "content": "x\n"}), stop_reason="tool_use"),
        paused(message(text("Variant done.")), release, reached),
    )
    with SessionStore.open(isolated_env, session_id) as store:
        leaf = store.tree.leaf
        task = next(
            n.id for n in store.tree.nodes.values() if isinstance(r := read_node(n), Task) and r.text == "say done"
        )
        scratch = tmp_path / "scratch"
        scratch.mkdir()
        compare = Comparison(
            store,
            task,
            parse_specs(["label=v"]),
            policy=session_policy(store, isolated_env),
            scratch_root=scratch,
        )
        running = asyncio.create_task(compare.run())
        await asyncio.to_thread(reached.wait, 30)
        try:
            with SessionStore.open(isolated_env, session_id, writable=False) as seen:
                assert len(seen.tree) == len(store.tree) >= 7  # the variant's prompt, call and result are on disk
                assert seen.tree.leaf == leaf
        finally:
            release.set()
        rows = await running
        assert rows[0].outcome == "completed"
    with SessionStore.open(isolated_env, session_id, writable=False) as after:
        assert after.tree.leaf == leaf


async def test_a_kill_after_any_record_of_a_comparison_leaves_the_leaf_where_the_person_was(
    api: FakeAnthropic, project: Path, isolated_env: Path, tmp_path: Path
) -> None:
    """The session's file cut after each record two variants wrote (where a SIGKILL could stop the writer) reads
    back with the person's leaf every time, never a variant's node: a variant's message and the leaf staying
    put are one record."""
    api.script(message(text("Hi.")), message(text("Done.")))
    session = start_session(RunOptions(workdir=project, model=MODEL, permission_mode="bypass"))
    try:
        await session.run("say hi")
        await session.run("say done")
        session_id = session.id
    finally:
        await session.close()

    def variant(model: str) -> list[Reply]:
        return [
            message(
                tool_use("w", "write", {"path": f"{model}.txt", "content": "x\n"}), stop_reason="tool_use", model=model
            ),
            message(text("Variant done."), model=model),
        ]

    api.responder = by_model({"m1": variant("m1"), "m2": variant("m2")})
    with SessionStore.open(isolated_env, session_id) as store:
        leaf = store.tree.leaf
        entries = store.folder / ENTRIES
        start = entries.stat().st_size
        task = next(
            n.id for n in store.tree.nodes.values() if isinstance(r := read_node(n), Task) and r.text == "say done"
        )
        compare = Comparison(
            store,
            task,
            parse_specs(["model=m1", "model=m2"]),
            policy=session_policy(store, isolated_env),
            scratch_root=tmp_path,
        )
        rows = await compare.run()
    assert [r.outcome for r in rows] == ["completed", "completed"]
    written = entries.read_bytes()
    cuts = [at + 1 for at in range(start, len(written)) if written[at : at + 1] == b"\n"]
    assert len(cuts) >= 8  # each variant's prompt, call, result and answer at least
    cut_file = tmp_path / "cut.jsonl"
    for cut in cuts:
        cut_file.write_bytes(written[:cut])
        fd = os.open(cut_file, os.O_RDONLY)
        try:
            _, tree, warnings = load_entries(fd, tmp_path, repair=False)
        finally:
            os.close(fd)
        assert warnings == []
        assert tree.leaf == leaf, f"cut after byte {cut}: {written[start:cut].decode()[-300:]}"
