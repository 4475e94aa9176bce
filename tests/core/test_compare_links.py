"""Links the scratch copy leaves out (those leading outside it) are not a variant's doing: its row never lists
them, and its pinned files keep them as they were at the point, so a switch to it never takes them away."""

from __future__ import annotations

from pathlib import Path

import pytest

from chimera.core.compare import Comparison, parse_specs, session_policy
from chimera.core.sessions.reading import Task, read_node
from chimera.core.sessions.start import RunOptions, start_session
from chimera.core.sessions.store import SessionStore
from tests.fake_anthropic import DEFAULT_MODEL as MODEL
from tests.fake_anthropic import FakeAnthropic, Reply, by_model, message, text, tool_use

pytestmark = pytest.mark.usefixtures("model_env")

LINKS = {"abs": "outside/secret.txt", "up": "../outside/secret.txt", "sub/deep": "/etc/hostname"}


def writes(path: str, content: str, model: str) -> list[Reply]:
    return [
        message(tool_use("w", "write", {"path": path, "content": content}), stop_reason="tool_use", model=model),
        message(text("done"), model=model),
    ]


async def test_links_leading_out_are_never_listed_as_a_variants_change(
    api: FakeAnthropic, project: Path, isolated_env: Path, tmp_path: Path
) -> None:
    """REF's files hold links out of the workspace (absolute, `..`, in a folder) and one inside it: a variant
    that writes b.txt lists b.txt alone, and its end files still hold every link as REF had it; a variant that
    writes a file where a link was lists that path, as its own change."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("not the workspace's\n")
    (project / "sub").mkdir()
    for name, target in LINKS.items():
        (project / name).symlink_to(target if not target.startswith("outside") else outside / "secret.txt")
    (project / "inside").symlink_to("a.txt")
    api.script(*writes("a.txt", "hello\n", MODEL))
    session = start_session(RunOptions(workdir=project, model=MODEL, permission_mode="bypass"))
    try:
        await session.run("write the greeting")
    finally:
        await session.close()
    api.responder = by_model({"m1": writes("b.txt", "bee\n", "m1"), "m2": writes("up", "mine now\n", "m2")})
    with SessionStore.open(isolated_env, session.id) as store:
        task = next(n.id for n in store.tree.nodes.values() if isinstance(read_node(n), Task))
        compare = Comparison(
            store,
            task,
            parse_specs(["model=m1", "model=m2"]),
            policy=session_policy(store, isolated_env),
            scratch_root=tmp_path / "scratch",
        )
        (tmp_path / "scratch").mkdir()
        point = compare.point.snapshot
        rows = await compare.run()
        repo = store.checkpoints()
        assert {"abs", "up", "sub/deep", "inside"} <= repo.files(point)
        assert [[(f.path, f.added, f.removed) for f in r.files] for r in rows] == [
            [("b.txt", 1, 0)],
            [("up", 1, 1)],
        ]
        for row in rows:
            assert row.node is not None
            end = store.tree.snapshot_for(row.node)
            assert end is not None
            assert {"abs", "sub/deep", "inside"} <= repo.files(end)
            assert [path for path, _, _ in repo.numstat(point, end)] == [f.path for f in row.files]
