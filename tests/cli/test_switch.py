"""Switching a session to another node brings its files back, exactly, and never loses the person's work."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chimera.core.sessions.store import SessionStore
from tests.cli_runner import assert_one_line_error, run_chimera, run_here
from tests.fake_anthropic import DEFAULT_MODEL as MODEL
from tests.fake_anthropic import FakeAnthropic, message, text
from tests.git_helpers import git
from tests.switch_helpers import answer_node, folder_digest, two_runs


def test_switch_back_and_forth_restores_the_files_exactly(
    api: FakeAnthropic, model_env: dict[str, str], git_project: Path, isolated_env: Path
) -> None:
    """Switch to the end of run 1 (v1, no b.txt), then back to the leaf (v2 and b.txt), byte for byte."""
    session_id = two_runs(api, model_env, git_project)
    dot_git = folder_digest(git_project / ".git")
    head = git(git_project, "rev-parse", "HEAD")
    leaf = str(json.loads(run_chimera("tree", session_id, "--json").stdout)["leaf"])
    after_v2 = folder_digest(git_project)
    (git_project / "mine.txt").write_text("the person's notes\n")  # no snapshot ever saw this

    back = run_chimera("switch", session_id, answer_node(isolated_env, session_id, "Wrote v1."), "--yes")
    assert back.returncode == 0, back.stderr
    assert "rewrite a.txt" in " ".join(back.stdout.split())
    assert "delete b.txt" in " ".join(back.stdout.split())
    assert "keep mine.txt" in " ".join(back.stdout.split())
    assert (git_project / "a.txt").read_text() == "v1\n"
    assert not (git_project / "b.txt").exists()
    assert (git_project / "mine.txt").read_text() == "the person's notes\n"

    forth = run_chimera("switch", session_id, leaf, "--yes")
    assert forth.returncode == 0, forth.stderr
    assert {k: v for k, v in folder_digest(git_project).items() if k != "mine.txt"} == after_v2
    assert (git_project / "mine.txt").read_text() == "the person's notes\n"
    # The person's own repository was never touched: same files under .git, same HEAD.
    assert folder_digest(git_project / ".git") == dot_git
    assert git(git_project, "rev-parse", "HEAD") == head
    with SessionStore.open(isolated_env, session_id, writable=False) as store:
        assert store.tree.leaf == leaf  # recorded: a restart lands where the person was


def test_a_new_run_from_an_earlier_node_starts_a_branch(
    api: FakeAnthropic, model_env: dict[str, str], git_project: Path, isolated_env: Path
) -> None:
    """After switching back, a resumed run grows a second branch from that node; the first stays."""
    session_id = two_runs(api, model_env, git_project)
    fork_point = answer_node(isolated_env, session_id, "Wrote v1.")
    assert run_here("switch", session_id, fork_point, "--yes").returncode == 0
    api.script(message(text("Taking the other road.")))
    proc = run_here("run", "another way", "--resume", session_id, "--json", env=model_env)
    assert proc.returncode == 0, proc.stderr
    sent = api.requests[-1].messages
    assert [m["role"] for m in sent] == ["user", "assistant", "user", "assistant", "user"]
    assert sent[-1]["content"] == "another way"  # run 2's turns are not in this branch's context
    with SessionStore.open(isolated_env, session_id, writable=False) as store:
        assert store.tree.is_branch_point(fork_point)
        branches = [store.tree.nodes[c].message["content"] for c in store.tree.children[fork_point]]
        assert branches == ["make it v2", "another way"]


def test_switch_without_a_terminal_needs_yes(
    api: FakeAnthropic, model_env: dict[str, str], git_project: Path, isolated_env: Path
) -> None:
    """With no terminal to ask on, a switch that rewrites files is refused until --yes; nothing changes."""
    session_id = two_runs(api, model_env, git_project)
    before = folder_digest(git_project)
    proc = run_here("switch", session_id, answer_node(isolated_env, session_id, "Wrote v1."))
    assert proc.returncode == 2
    assert "pass --yes" in proc.stderr
    assert "rewrite" in proc.stdout  # the preview was shown
    assert folder_digest(git_project) == before


def test_switch_to_an_unknown_node_is_one_line(
    api: FakeAnthropic, model_env: dict[str, str], git_project: Path, isolated_env: Path
) -> None:
    """A node id that is not in the session gets one line pointing at `chimera tree`."""
    session_id = two_runs(api, model_env, git_project)
    assert_one_line_error(run_here("switch", session_id, "nope", "--yes"), "nope", "chimera tree")


async def test_closing_a_session_packs_a_big_snapshot_store(
    tmp_path: Path, isolated_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past the size limit, closing packs the snapshots: the store shrinks and every pinned one still restores."""
    from chimera.core.sessions import pins as workspace_pins
    from chimera.core.sessions.checkpoints import ShadowRepo
    from chimera.core.sessions.pins import WorkspacePins

    workdir = tmp_path / "w"
    workdir.mkdir()
    with SessionStore.create(isolated_env, "s", workdir=workdir, model=MODEL) as store:
        repo = ShadowRepo(workdir, store.folder / "checkpoints.git")
        pins = WorkspacePins(repo, store)
        body = "".join(f"line {i} of a file that keeps changing a little\n" for i in range(4000))
        for version in range(30):
            (workdir / "big.txt").write_text(body + f"version {version}\n")
            node = store.add("user", {"role": "user", "content": f"v{version}"})
            assert await pins.pin(node.id) is not None
        loose = repo.disk_bytes()
        monkeypatch.setattr(workspace_pins, "PACK_ABOVE", loose // 2)
        await pins.tidy()
        assert repo.disk_bytes() < loose // 5
        first = store.tree.snapshots[store.tree.path()[0].id]
        repo.restore(first, known=repo.seen(store.tree.snapshots.values()))
        assert (workdir / "big.txt").read_text().endswith("version 0\n")


def test_a_named_checkpoint_pins_the_files_and_switch_finds_it_by_name(
    api: FakeAnthropic, model_env: dict[str, str], git_project: Path, isolated_env: Path
) -> None:
    """`chimera checkpoint ID NAME` names the leaf with the files as they are; `switch ID NAME` returns there."""
    session_id = two_runs(api, model_env, git_project)
    (git_project / "a.txt").write_text("hand-edited\n")
    named = run_chimera("checkpoint", session_id, "before-cleanup")
    assert named.returncode == 0, named.stderr
    document = json.loads(run_here("tree", session_id, "--json").stdout)
    (leaf,) = [n for n in document["nodes"] if n["id"] == document["leaf"]]
    assert leaf["label"] == "before-cleanup"
    assert leaf["checkpoint"]
    assert run_here("switch", session_id, answer_node(isolated_env, session_id, "Wrote v1."), "--yes").returncode == 0
    assert (git_project / "a.txt").read_text() == "v1\n"
    back = run_here("switch", session_id, "before-cleanup", "--yes")
    assert back.returncode == 0, back.stderr
    assert (git_project / "a.txt").read_text() == "hand-edited\n"


def test_leaving_the_point_before_the_first_message_says_how_to_come_back_and_that_works(
    api: FakeAnthropic, model_env: dict[str, str], git_project: Path, isolated_env: Path
) -> None:
    """A switch away from before the first message names the command back (never "None"), and it restores edits."""
    session_id = two_runs(api, model_env, git_project)
    document = json.loads(run_here("tree", session_id, "--json").stdout)
    first, leaf = document["nodes"][0]["id"], document["leaf"]
    assert run_here("switch", session_id, first, "--yes").returncode == 0  # lands before the first message
    assert not (git_project / "a.txt").exists()  # write made it, a later edit changed it: the agent's all along
    assert not (git_project / "b.txt").exists()
    (git_project / "README.md").write_text("edited before any message\n")
    forth = run_here("switch", session_id, leaf, "--yes")
    assert forth.returncode == 0, forth.stderr
    assert "None" not in forth.stdout
    way_back = f"Switching back to before the first message (`chimera switch {session_id} {first}`) brings the files"
    assert way_back in forth.stdout
    assert (git_project / "README.md").read_text() == "project\n"
    back = run_here("switch", session_id, first, "--yes")
    assert back.returncode == 0, back.stderr
    assert (git_project / "README.md").read_text() == "edited before any message\n"


def _two_nodes(home: Path, workdir: Path) -> tuple[str, str]:
    """Session "s" with a prompt and its answer (the leaf); their ids."""
    with SessionStore.create(home, "s", workdir=workdir, model=MODEL) as store:
        prompt = store.add("user", {"role": "user", "content": "go"}, sync=True)
        answer = store.add("assistant", {"role": "assistant", "content": [{"type": "text", "text": "Done."}]})
        return prompt.id, answer.id


def test_a_checkpoint_name_is_on_one_node_and_moves_only_when_asked(isolated_env: Path, tmp_path: Path) -> None:
    """A name another node has is refused; with move it moves; a name resolves to one node, on disk too."""
    from chimera.core.errors import ConfigError
    from chimera.core.sessions.switching import name_checkpoint

    prompt, answer = _two_nodes(isolated_env, tmp_path)
    with SessionStore.open(isolated_env, "s") as store:
        assert name_checkpoint(store, "stable", prompt).node == prompt
        with pytest.raises(ConfigError, match=f"already has a checkpoint 'stable', at {prompt}: pass --move"):
            name_checkpoint(store, "stable", answer)
        assert store.tree.resolve("stable") == prompt
        moved = name_checkpoint(store, "stable", answer, move=True)
        assert (moved.node, moved.moved_from) == (answer, prompt)
        assert store.tree.names == {"stable": answer}
        with pytest.raises(ConfigError, match="is the id of a node"):
            name_checkpoint(store, prompt, answer)
    with SessionStore.open(isolated_env, "s", writable=False) as again:
        assert again.tree.names == {"stable": answer}
        assert again.tree.resolve("stable") == answer


def test_a_name_given_twice_by_an_older_chimera_resolves_to_the_latest_node_only(
    isolated_env: Path, tmp_path: Path
) -> None:
    """Two label records with one name (written before names were unique) leave the name on the later node only."""
    prompt, answer = _two_nodes(isolated_env, tmp_path)
    entries = isolated_env / "sessions" / "s" / "entries.jsonl"
    with entries.open("a") as fh:
        for node in (prompt, answer):
            fh.write(json.dumps({"t": "label", "id": node, "label": "twice"}) + "\n")
    document = json.loads(run_here("tree", "s", "--json").stdout)
    assert [n["id"] for n in document["nodes"] if n["label"] == "twice"] == [answer]


def test_checkpoint_refuses_a_taken_name_in_one_line_and_moves_it_with_move(isolated_env: Path, tmp_path: Path) -> None:
    """`chimera checkpoint` with a name already used: one line naming --move; with --move, one line saying it moved."""
    prompt, answer = _two_nodes(isolated_env, tmp_path)
    assert run_here("checkpoint", "s", "stable", "--node", prompt).returncode == 0
    assert_one_line_error(run_here("checkpoint", "s", "stable"), f"already has a checkpoint 'stable', at {prompt}")
    moved = run_here("checkpoint", "s", "stable", "--move")
    assert moved.returncode == 0, moved.stderr
    (line,) = moved.stdout.splitlines()
    assert line.startswith(f"Moved checkpoint 'stable' from {prompt} to {answer}, files pinned as snapshot ")
    document = json.loads(run_here("tree", "s", "--json").stdout)
    assert [n["id"] for n in document["nodes"] if n["label"] == "stable"] == [answer]
