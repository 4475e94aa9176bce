"""The status line: what it shows (model, strategy, mode, turn, context, tokens, cost, a spinner with the time
elapsed while a run works, the session's short id, the workspace), what it leaves out when narrow (the
workspace first; the tokens and the cost always stay), and that nothing redraws it while idle."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from chimera.core.events import TextDelta
from chimera.core.sessions.start import RunOptions
from chimera.tui.app import build_app
from chimera.tui.state import RunStatus
from chimera.tui.status_parts import DROP_ORDER, Part, fit, parts_of
from chimera.tui.widgets.plan_panel import PlanPanel
from chimera.tui.widgets.status_line import StatusLine
from tests.fake_anthropic import DEFAULT_MODEL as MODEL
from tests.fake_anthropic import FakeAnthropic, message, paced, text, tool_use
from tests.tui_helpers import answering, asked, screen_text, send, until


def busy_status() -> RunStatus:
    status = RunStatus(model="claude-sonnet-4-6", loop="reflexion", mode="ask", state="done", turn=12)
    status.input_tokens, status.output_tokens, status.cost = 123_456, 7_890, 1.2345
    status.context_tokens, status.window = 90_000, 200_000
    status.session, status.workspace = "0f3a9c2e-77aa-4bcd-9e01-aa0011223344", "~/src/projects/chimera-workbench"
    status.mcp = "mcp 2/3"
    status.sandbox = "sandboxed"
    return status


def names(parts: list[Part]) -> list[str]:
    return [part.name for part in parts]


def test_wide_enough_every_part_shows() -> None:
    """Wide enough (170 columns), the line shows every part in order, the session by its short id, the MCP
    servers ready of those configured."""
    shown = fit(parts_of(busy_status(), 0.0), 180)
    assert names(shown) == [
        "state", "model", "mode", "sandbox", "loop", "turn", "context", "tokens", "cost", "mcp", "session",
        "workspace",
    ]  # fmt: skip
    assert [p.text for p in shown][6:11] == [
        "context 45% of 200k", "123.5k in / 7.9k out", "$1.2345", "mcp 2/3", "#0f3a9c2e"
    ]  # fmt: skip


def test_at_120_and_80_columns_the_workspace_goes_first_and_the_mode_sandbox_tokens_and_cost_stay() -> None:
    """At 120 columns the turn, the MCP count, the workspace and the session's id are left out; at 80 the
    strategy and context too, whole; the permission mode, whether commands are sandboxed, the tokens and the cost
    stay."""
    parts = parts_of(busy_status(), 0.0)
    assert [p for p in names(parts) if p not in names(fit(parts, 118))] == ["turn", "mcp", "session", "workspace"]
    assert names(fit(parts, 78)) == ["state", "model", "mode", "sandbox", "tokens", "cost"]


def test_parts_leave_in_the_drop_order_as_the_line_narrows() -> None:
    """Narrowing one cell at a time drops whole parts in DROP_ORDER; state, tokens and cost never leave."""
    parts = parts_of(busy_status(), 0.0)
    gone: list[str] = []
    for width in range(200, 10, -1):
        shown = names(fit(parts, width))
        gone += [name for name in names(parts) if name not in shown and name not in gone]
    assert gone == list(DROP_ORDER)
    assert names(fit(parts, 5)) == ["state", "tokens", "cost"]


def test_while_running_a_spinner_and_the_time_elapsed_show() -> None:
    """A run working shows a spinner frame (a new one each eighth of a second) and its whole seconds."""
    now = [100.0]
    status = RunStatus(clock=lambda: now[0])
    status.begin("running")
    first = parts_of(status, 112.3)[0].text
    assert first.endswith("running 12s")
    assert parts_of(status, 112.3 + 0.125)[0].text != first
    assert parts_of(status, 100.0 + 65)[0].text.endswith("running 1m 05s")
    status.state = "done"
    assert parts_of(status, 200.0)[0].text == "done"


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.usefixtures("model_env")
async def test_the_status_line_keeps_tokens_and_cost_at_80_and_120_columns(
    api: FakeAnthropic, project: Path, size: tuple[int, int]
) -> None:
    """After a run with big totals, the screen's last line shows the tokens and the cost whole, never an ellipsis;
    the turn shows at 120 columns and not at 80."""
    api.script(message(text("Done.")))
    app = build_app(RunOptions(workdir=project, model=MODEL))
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        await send(pilot, "hello")
        await app.run_shown.wait()
        status = app.query_one(StatusLine)
        status.input_tokens, status.output_tokens, status.cost = 123_456, 78_900, 12.5
        await pilot.pause()
        line = screen_text(app).splitlines()[-2].rstrip()  # above the footer
        assert "123.5k in / 78.9k out · $12.5000" in line
        assert "…" not in line
        assert (" · turn 1 · " in line) is (size[0] == 120)  # at 80 columns the turn is left out, whole


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.usefixtures("model_env")
async def test_after_a_plan_run_the_line_shows_the_sessions_strategy_and_keeps_the_mode_longest(
    api: FakeAnthropic, project: Path, size: tuple[int, int]
) -> None:
    """/plan TASK plans that task alone: while it runs the line says plan, once it is over the session's own
    strategy again (react: what the next task uses). At 80 columns the permission mode stays where the strategy
    (and the context) are left out: it says what may run unasked."""
    api.script(message(text("- [ ] say hello")), message(text("Hello.")), message(text("DONE")))
    app = build_app(RunOptions(workdir=project, model=MODEL, permission_mode="bypass"))
    async with app.run_test(size=size) as pilot:
        await send(pilot, "/plan greet")
        await until(pilot, lambda: app.state.status.loop == "plan", "the plan's strategy while it runs")
        await answering(pilot, app, PlanPanel)
        await pilot.press("a")
        await app.run_shown.wait()
        await until(pilot, lambda: app.state.status.state == "done", "the plan carried out")
        await pilot.pause()
        line = status_line(app)
        assert " · plan · " not in line
        assert f"{MODEL} · bypass · " in line
        sandbox = app.state.status.sandbox
        assert sandbox in ("sandboxed", "not sandboxed")
        assert f" · bypass · {sandbox} · " in line  # whether commands are sandboxed stays beside the mode
        assert (f" · {sandbox} · react · " in line) is (size[0] == 120)  # at 80 columns the strategy is left out


def status_line(app: object) -> str:
    return screen_text(app).splitlines()[-2]  # above the footer


@pytest.mark.usefixtures("model_env")
async def test_the_spinner_ticks_while_running_and_nothing_ticks_while_idle(api: FakeAnthropic, project: Path) -> None:
    """While a run waits on a question the spinner ticks with the elapsed time; once it ends the ticker stops."""
    api.script(message(tool_use("t1", "bash", {"command": "touch x"}), stop_reason="tool_use"), message(text("Ok.")))
    app = build_app(RunOptions(workdir=project, model=MODEL))
    async with app.run_test(size=(120, 40)) as pilot:
        status = app.query_one(StatusLine)
        await pilot.pause()
        assert not status.ticking  # idle: nothing redraws the line
        assert status.ticks == 0
        await send(pilot, "make x")
        await asked(pilot, app)
        await until(pilot, lambda: status.ticks >= 3, "the spinner to tick")
        assert status.ticking
        assert "running 0s" in str(status.render()) or "running 1s" in str(status.render())
        await pilot.press("y")
        await app.run_shown.wait()
        await until(pilot, lambda: not status.ticking, "the ticker to stop")
        ticks = status.ticks
        await pilot.pause()
        assert status.ticks <= ticks + 1  # at most the tick that found the run over
        assert str(status.render()).startswith("done")


@pytest.mark.usefixtures("model_env")
async def test_while_words_stream_the_spinner_moves_with_them(
    api: FakeAnthropic, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While words stream the spinner keeps moving, drawn in the screen updates that draw the words: the
    ticker leaves the line to them (one screen update for both, not one each)."""
    words = [f"word{n} " for n in range(100)]
    api.script(paced(message(text("".join(words), pieces=len(words))), 0.02, threading.Event(), threading.Event()))
    app = build_app(RunOptions(workdir=project, model=MODEL))
    async with app.run_test(size=(120, 40)) as pilot:
        status = app.query_one(StatusLine)
        ticks_at_first_word: list[int] = []
        app.session.bus.subscribe(
            lambda e: ticks_at_first_word.append(status.ticks) if isinstance(e, TextDelta) else None
        )
        redraws: list[int] = []  # while words stream
        refresh = status.refresh
        monkeypatch.setattr(
            status, "refresh", lambda *a, **k: (ticks_at_first_word and redraws.append(1), refresh(*a, **k))[1]
        )
        await send(pilot, "talk")
        await until(pilot, lambda: len(ticks_at_first_word) == len(words), "every word")
        by_ticker = status.ticks - ticks_at_first_word[0]
        assert len(redraws) >= 8  # about 2 s of words: the spinner moved on about 16 times
        assert by_ticker <= len(redraws) / 4  # the words drew them, not the ticker
        await app.run_shown.wait()
