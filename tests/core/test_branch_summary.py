"""Leaving a branch can summarize it: the model's summary of the branch left behind joins the path the person
came to as a note, a node of the tree that every reader shows and the next run's model reads. Off by default;
``[tree] summarize_left`` in the settings makes it the default. Over the real store, git and the loopback
Messages API."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chimera.core.errors import ConfigError, ProviderError
from chimera.core.events import BranchSummarized, StepEvent
from chimera.core.messages import CARRIED_LEAD
from chimera.core.sessions.export import export_markdown
from chimera.core.sessions.history import branch_events
from chimera.core.sessions.reading import Carried, read_node, summary
from chimera.core.sessions.session import Session
from chimera.core.sessions.start import RunOptions, start_session
from chimera.core.sessions.tree_lines import TreeLines
from chimera.core.settings import load_settings
from tests.fake_anthropic import DEFAULT_MODEL as MODEL
from tests.fake_anthropic import FakeAnthropic, message, status, text, tool_use

SUMMARY = "Tried v2 by editing a.txt in place; the person wanted v1 kept."


async def _two_runs(api: FakeAnthropic, project: Path) -> tuple[Session, list[StepEvent], str]:
    """Run 1 writes a.txt (v1), run 2 makes it v2; the session, what its bus published, and run 1's answer."""
    api.script(
        message(tool_use("w", "write", {"path": "a.txt", "content": "v1\n"}), stop_reason="tool_use"),
        message(text("Wrote v1.")),
        message(tool_use("w", "write", {"path": "a.txt", "content": "v2\n"}), stop_reason="tool_use"),
        message(text("Wrote v2.")),
    )
    session = start_session(RunOptions(workdir=project, model=MODEL, permission_mode="bypass"))
    seen: list[StepEvent] = []
    session.bus.subscribe(seen.append)
    await session.run("write v1")
    await session.run("now make it v2")
    first = next(n.id for n in session.store.tree.path() if summary(read_node(n)) == "Wrote v1.")
    return session, seen, first


@pytest.mark.usefixtures("model_env")
async def test_the_branch_left_is_summarized_into_the_path_switched_to(api: FakeAnthropic, project: Path) -> None:
    """After a switch back to the first answer, the summary asked for covers the turn left behind (not the
    one kept), joins the new path as a node under that answer, and the next run's model reads it; the tree,
    the history, the export and the events log all show it."""
    session, seen, first = await _two_runs(api, project)
    try:
        left = session.store.tree.leaf
        assert session.switch(first) is not None
        api.script(message(text(SUMMARY)))
        done = await session.summarize_left(left)

        assert done is not None
        assert done.summary == SUMMARY
        assert done.from_node == left
        asked = json.dumps(api.requests[-1].messages)
        assert "now make it v2" in asked
        assert "Wrote v2." in asked
        assert "write v1" not in asked  # what the path keeps is not summarized
        tree = session.store.tree
        note = tree.nodes[tree.leaf or ""]
        assert note.parent_id == first
        reading = read_node(note)
        assert isinstance(reading, Carried)
        assert reading.summary == SUMMARY
        assert (project / "a.txt").read_text() == "v1\n"  # the files stay as the switch left them

        api.script(message(text("Keeping v1.")))
        await session.run("what now?")
        sent = json.dumps(api.requests[-1].messages)
        assert CARRIED_LEAD in sent
        assert SUMMARY in sent
        assert "now make it v2" not in sent  # the branch itself stays out of the model's sight

        await session.bus.drain()
        assert [e.summary for e in seen if isinstance(e, BranchSummarized)] == [SUMMARY]
        lines = TreeLines(tree)
        shown = [(lines.who(line), lines.text(line)) for line in lines.lines if line.node == note.id]
        assert shown == [("left", f"[branch left] {SUMMARY}")]
        assert any(isinstance(e, BranchSummarized) and e.summary == SUMMARY for e in branch_events(session.store))
        assert f"## Summary of a branch left behind\n\n{SUMMARY}" in export_markdown(session.store)
    finally:
        await session.close()
    assert '"type":"branch_summary"' in (session.store.folder / "events.jsonl").read_text()


@pytest.mark.usefixtures("model_env")
async def test_nothing_is_asked_when_the_move_left_nothing_behind(api: FakeAnthropic, project: Path) -> None:
    """A switch forward (back to the leaf it came from) leaves nothing behind: no request, no node."""
    session, _, first = await _two_runs(api, project)
    try:
        leaf = session.store.tree.leaf
        assert session.switch(first) is not None
        assert session.switch(leaf or "") is not None
        asked = len(api.requests)
        assert await session.summarize_left(first) is None
        assert len(api.requests) == asked
        assert session.store.tree.leaf == leaf
    finally:
        await session.close()


@pytest.mark.usefixtures("model_env")
async def test_a_failed_summary_leaves_the_switch_standing_and_adds_nothing(api: FakeAnthropic, project: Path) -> None:
    """The model refuses the summary request (a 400): the error says so, the switch stands, no node is added,
    and the next run starts from the point switched to."""
    session, _, first = await _two_runs(api, project)
    try:
        left = session.store.tree.leaf
        assert session.switch(first) is not None
        count = len(session.store.tree)
        api.script(status(400, "invalid_request_error", "no summaries today"))
        with pytest.raises(ProviderError, match="no summaries today"):
            await session.summarize_left(left)
        assert session.store.tree.leaf == first
        assert len(session.store.tree) == count
        api.script(message(text("From v1.")))
        await session.run("go on")
        assert "no summaries" not in json.dumps(api.requests[-1].messages)
    finally:
        await session.close()


def test_the_setting_makes_it_the_default_and_a_typo_is_named(isolated_env: Path) -> None:
    """``[tree] summarize_left = true`` is read; a misspelled key names the right one; a word that is not
    true or false is refused."""
    config = isolated_env / "config.toml"
    assert load_settings(isolated_env).summarize_left is False
    config.write_text("[tree]\nsummarize_left = true\n")
    assert load_settings(isolated_env).summarize_left is True
    config.write_text("[tree]\nsumarize_left = true\n")
    with pytest.raises(ConfigError, match=r"unknown key tree\.sumarize_left .*did you mean tree\.summarize_left"):
        load_settings(isolated_env)
    config.write_text('[tree]\nsummarize_left = "yes"\n')
    with pytest.raises(ConfigError, match=r"tree\.summarize_left must be true or false"):
        load_settings(isolated_env)


@pytest.mark.usefixtures("model_env")
async def test_a_switch_to_the_summary_lands_on_it(api: FakeAnthropic, project: Path) -> None:
    """The summary is context to keep, not a task to ask again: a switch to its node lands on it (a person's
    message lands just before it), so coming back to it keeps what it says."""
    session, _, first = await _two_runs(api, project)
    try:
        left = session.store.tree.leaf
        assert session.switch(first) is not None
        api.script(message(text(SUMMARY)))
        done = await session.summarize_left(left)
        assert done is not None
        note = session.store.tree.leaf or ""
        assert session.switch(left or "") is not None
        moved = session.switch(note)
        assert moved is not None
        assert moved.plan.node == note
        assert session.store.tree.leaf == note
    finally:
        await session.close()
