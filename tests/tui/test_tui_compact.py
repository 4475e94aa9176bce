"""`/compact [focus]` in the workbench: the older part of the conversation summarized, said on screen."""

from __future__ import annotations

import asyncio
import json
import re
import threading
from pathlib import Path

import pytest

from chimera.core.messages import COMPACTION_HEADER
from chimera.core.sessions.start import RunOptions
from chimera.tui.app import build_app
from chimera.tui.widgets.status_line import StatusLine
from tests.fake_anthropic import DEFAULT_MODEL as MODEL
from tests.fake_anthropic import FakeAnthropic, message, paused, text, tool_use
from tests.tui_helpers import said, send, until


@pytest.fixture
def small_window(model_env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """The model environment with a context window of 10,000 tokens, set here and returned for a child."""
    monkeypatch.setenv("CHIMERA_CONTEXT_WINDOW", "10000")
    return {**model_env, "CHIMERA_CONTEXT_WINDOW": "10000"}


@pytest.fixture
def long_files_project(project: Path) -> Path:
    """The project holding a.txt and b.txt, 80 lines each."""
    for name in ("a.txt", "b.txt"):
        (project / name).write_text("".join(f"line {i} of {name}\n" for i in range(80)))
    return project


def reads_then_answer() -> list[object]:
    return [
        message(tool_use("ra", "read", {"path": "a.txt"}), stop_reason="tool_use"),
        message(tool_use("rb", "read", {"path": "b.txt"}), stop_reason="tool_use"),
        message(text("Both read."), input_tokens=6_000),  # 60% of the window
    ]


def shown_notes(app: object) -> str:
    """The notifications on screen (toasts), as one text."""
    return " ".join(n.message for n in app._notifications)  # type: ignore[attr-defined]


def notices(app: object) -> list[str]:
    return [n.name or n.text for n in app.transcript.entries if n.kind in {"notice", "compaction"}]  # type: ignore[attr-defined]


@pytest.mark.usefixtures("small_window")
async def test_compact_with_a_focus_summarizes_and_says_so(api: FakeAnthropic, long_files_project: Path) -> None:
    api.script(*reads_then_answer(), message(text("SUMMARY: both files read.")), message(text("Next.")))
    app = build_app(RunOptions(workdir=long_files_project, model=MODEL, permission_mode="bypass"))
    async with app.run_test(size=(120, 40)) as pilot:  # wide enough for the context (at 80 the mode outlasts it)
        await send(pilot, "read the files")
        await app.run_shown.wait()
        await pilot.pause()
        assert " · context 60%" in str(app.query_one(StatusLine).render())
        await send(pilot, "/compact the line numbers")
        await until(pilot, lambda: any("compacted" in n for n in notices(app)), "the compaction notice")
        assert "(by hand)" in notices(app)[-1]
        shown = int(re.search(r"context (\d+)%", str(app.query_one(StatusLine).render())).group(1))  # type: ignore[union-attr]
        assert shown < 60
        asked = json.dumps(api.requests[3].messages)
        assert "Pay particular attention to: the line numbers" in asked
        assert app.query_one("#prompt").value == ""  # type: ignore[attr-defined]
        # The command is not a task: no user message for it.
        assert said(app) == ["read the files"]

        app.run_shown.clear()
        await send(pilot, "go on")
        await app.run_shown.wait()
        first = api.requests[-1].messages[0]["content"][0]["text"]
        assert first == COMPACTION_HEADER


@pytest.mark.usefixtures("small_window")
async def test_compact_on_a_short_conversation_says_there_is_nothing_to_do(
    api: FakeAnthropic, long_files_project: Path
) -> None:
    api.script(message(text("Hi.")))
    app = build_app(RunOptions(workdir=long_files_project, model=MODEL))
    async with app.run_test(size=(80, 24)) as pilot:
        await send(pilot, "hello")
        await app.run_shown.wait()
        await send(pilot, "/compact")
        await until(pilot, lambda: "Nothing to compact" in shown_notes(app), "the notification")
        assert len(api.requests) == 1


@pytest.mark.usefixtures("small_window")
async def test_a_resumed_session_shows_where_it_was_compacted(api: FakeAnthropic, long_files_project: Path) -> None:
    api.script(*reads_then_answer(), message(text("SUMMARY: both files read.")))
    first = build_app(RunOptions(workdir=long_files_project, model=MODEL, permission_mode="bypass"))
    async with first.run_test(size=(80, 24)) as pilot:
        await send(pilot, "read the files")
        await first.run_shown.wait()
        await send(pilot, "/compact")
        await until(pilot, lambda: any("compacted" in n for n in notices(first)), "the compaction notice")
    app = build_app(RunOptions(resume=first.session.id, model=MODEL))
    async with app.run_test(size=(80, 24)) as pilot:
        await app.history_shown.wait()
        assert any(n.startswith("⇣ compacted the conversation (by hand): about ") for n in notices(app))


@pytest.mark.usefixtures("small_window")
async def test_words_sent_while_the_summary_is_written_stay_in_the_input(
    api: FakeAnthropic, long_files_project: Path
) -> None:
    """No run reads words while /compact writes its summary: they stay in the input, said so, and are sent
    as a task by enter once it is done (never steering, never lost)."""
    release, reached = threading.Event(), threading.Event()
    api.script(
        *reads_then_answer(),
        paused(message(text("SUMMARY: both files read.", pieces=6)), release, reached),
        message(text("Next.")),
    )
    app = build_app(RunOptions(workdir=long_files_project, model=MODEL, permission_mode="bypass"))
    async with app.run_test(size=(80, 24)) as pilot:
        await send(pilot, "read the files")
        await app.run_shown.wait()
        await send(pilot, "/compact")
        await asyncio.to_thread(reached.wait, 10)
        await send(pilot, "go on")
        assert app.query_one("#prompt").value == "go on"  # type: ignore[attr-defined]
        assert "writing a summary" in shown_notes(app)
        release.set()
        await until(pilot, lambda: any("compacted" in n for n in notices(app)), "the compaction notice")
        await until(pilot, lambda: not app.running, "the summary's worker done")
        app.run_shown.clear()
        await send(pilot, "")
        await app.run_shown.wait()
        assert said(app) == ["read the files", "go on"]
    assert len(api.requests) == 5
