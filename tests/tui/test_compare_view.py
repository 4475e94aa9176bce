"""The compare view: ``/compare SPEC ...`` in the workbench runs the last task again as variants side by side,
live, then their rows; the workspace untouched until one is adopted; a variant stopped alone, or failing, while
the other completes; against the loopback Messages API."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from textual.pilot import Pilot

from chimera.core.sessions.start import RunOptions
from chimera.tui.app import ChimeraApp, build_app
from chimera.tui.screens.compare import CompareScreen
from chimera.tui.widgets.prompt_input import PromptInput
from tests.fake_anthropic import DEFAULT_MODEL as MODEL
from tests.fake_anthropic import FakeAnthropic, Reply, by_model, message, stalled, status, text, tool_use
from tests.tui_helpers import burst, said, screen_text, send, toasts, until

pytestmark = pytest.mark.usefixtures("model_env")


def writes(path: str, content: str, answer: str, *, model: str = MODEL) -> list[Reply]:
    return [
        message(tool_use("w", "write", {"path": path, "content": content}), stop_reason="tool_use", model=model),
        message(text(answer), model=model),
    ]


async def first_task(pilot: Pilot[int], app: ChimeraApp, api: FakeAnthropic) -> None:
    """The person's task ran: a.txt holds "hello"."""
    api.script(*writes("a.txt", "hello\n", "Wrote it."))
    await send(pilot, "write the greeting")
    await app.run_shown.wait()
    await until(pilot, lambda: not app.running, "the first run to end")


async def compared(pilot: Pilot[int], app: ChimeraApp, specs: str) -> CompareScreen:
    await send(pilot, f"/compare {specs}")
    await until(pilot, lambda: isinstance(app.screen, CompareScreen), "the compare view")
    assert isinstance(app.screen, CompareScreen)
    return app.screen


async def test_two_variants_run_side_by_side_and_the_one_adopted_brings_its_files(
    api: FakeAnthropic, project: Path
) -> None:
    """Both variants show with their rows at the end; the workspace is untouched until one is adopted (y), then
    it holds that variant's files; nothing typed as a command reached the model."""
    app = build_app(RunOptions(workdir=project, model=MODEL, permission_mode="bypass"))
    async with app.run_test(size=(120, 40)) as pilot:
        await first_task(pilot, app, api)
        api.responder = by_model(
            {
                "model-a": writes("a.txt", "Hello!\n", "A done.", model="model-a"),
                "model-b": writes("b.txt", "bee\n", "B done.", model="model-b"),
            }
        )
        view = await compared(pilot, app, "model=model-a model=model-b")
        await until(pilot, lambda: "1 +1 -0" in screen_text(app), "the rows at the end")
        shown = screen_text(app)
        assert "model-a" in shown
        assert "model-b" in shown
        assert [(r.label, r.outcome, r.tool_calls) for r in view.rows or []] == [
            ("model-a", "completed", 1),
            ("model-b", "completed", 1),
        ]
        assert (project / "a.txt").read_text() == "hello\n"
        assert not (project / "b.txt").exists()
        await pilot.press("right", "enter")
        await until(pilot, lambda: "Adopt it (/back undoes it)? y yes" in screen_text(app), "the adoption asked")
        shown = screen_text(app)
        assert "Adopt model-b: lands at" in shown  # the same preview as a switch: the files it changes
        assert "delete  a.txt" in shown
        assert "create  b.txt" in shown
        assert not (project / "b.txt").exists()  # nothing changes before the y
        await pilot.press("y")
        await until(pilot, lambda: not isinstance(app.screen, CompareScreen), "back in the workbench")
        await app.session_tree.settled()  # the adopt's switch (the screen closed at the y)
        assert (project / "b.txt").read_text() == "bee\n"
        assert not (project / "a.txt").exists()  # the task run again from before it: model-b wrote b.txt only
        assert not app.running
        assert isinstance(app.focused, PromptInput)  # the next words are a task
        await send(pilot, "/back")  # undoes the adopt, after its preview and a y
        await until(pilot, lambda: "Go back to" in screen_text(app), "going back asked")
        await pilot.press("y")
        await until(pilot, lambda: (project / "a.txt").exists(), "the files from before the adopt")
        assert (project / "a.txt").read_text() == "hello\n"
        assert not (project / "b.txt").exists()
    assert "/compare" not in str([r.messages for r in api.requests])


async def test_d_shows_the_diff_between_the_two_variants(api: FakeAnthropic, project: Path) -> None:
    """d shows the file diff from one variant's branch to the other's, as chimera diff does."""
    app = build_app(RunOptions(workdir=project, model=MODEL, permission_mode="bypass"))
    async with app.run_test(size=(120, 40)) as pilot:
        await first_task(pilot, app, api)
        api.responder = by_model(
            {
                "model-a": writes("a.txt", "Hello!\n", "A done.", model="model-a"),
                "model-b": writes("b.txt", "bee\n", "B done.", model="model-b"),
            }
        )
        view = await compared(pilot, app, "model=model-a model=model-b")
        await until(pilot, view.done.is_set, "the comparison to end")
        await pilot.press("d")
        await until(pilot, lambda: "+bee" in screen_text(app), "the diff")
        assert "-Hello!" in screen_text(app)
        await pilot.press("escape", "escape")
        await until(pilot, lambda: not isinstance(app.screen, CompareScreen), "back in the workbench")
        assert not (project / "b.txt").exists()
        assert (project / "a.txt").read_text() == "hello\n"


@pytest.mark.parametrize(("brk", "shown"), [("\r", "\\r"), ("\x00", "\\x00")])
async def test_the_diff_shows_a_command_behind_a_line_break_or_a_nul_as_one_added_line(
    api: FakeAnthropic, project: Path, brk: str, shown: str
) -> None:
    """d: a line added as `echo safe<brk>rm -rf x` (a NUL makes git call the file binary) is one `+` line with
    the character escaped; `rm -rf x` is on no line of its own, and no `Binary files` line stands for it."""
    app = build_app(RunOptions(workdir=project, model=MODEL, permission_mode="bypass"))
    async with app.run_test(size=(120, 40)) as pilot:
        await first_task(pilot, app, api)
        api.responder = by_model(
            {
                "model-a": writes("run.sh", "echo hi\n", "A done.", model="model-a"),
                "model-b": writes("run.sh", f"echo hi\necho safe{brk}rm -rf x\n", "B done.", model="model-b"),
            }
        )
        view = await compared(pilot, app, "model=model-a model=model-b")
        await until(pilot, view.done.is_set, "the comparison to end")
        await pilot.press("d")
        await until(pilot, lambda: "model-a → model-b" in screen_text(app), "the diff")
        lines = screen_text(app).splitlines()
        assert [line.strip(" │") for line in lines if "rm -rf x" in line] == [f"+echo safe{shown}rm -rf x"]
        assert not [line for line in lines if "Binary files" in line]


async def test_one_variant_is_stopped_alone(api: FakeAnthropic, project: Path) -> None:
    """s on the chosen variant stops it alone: it ends stopped, the other completes."""
    app = build_app(RunOptions(workdir=project, model=MODEL, permission_mode="bypass"))
    async with app.run_test(size=(120, 40)) as pilot:
        await first_task(pilot, app, api)
        api.responder = by_model(
            {
                "slow": [stalled(text("thinking about it"), model="slow")],
                "fast": writes("b.txt", "bee\n", "B done.", model="fast"),
            }
        )
        view = await compared(pilot, app, "model=slow model=fast")
        asked = lambda: any(r.body.get("model") == "slow" for r in api.requests)  # noqa: E731
        await until(
            pilot, lambda: asked() and view.progress[0].turn == 1, "the slow variant to be waiting on its reply"
        )
        await pilot.press("s")
        await until(pilot, view.done.is_set, "the comparison to end")
        assert [(r.label, r.outcome) for r in view.rows or []] == [("slow", "stopped"), ("fast", "completed")]
        assert "stopped" in screen_text(app)


async def test_a_variant_the_server_fails_shows_failed_while_the_other_completes(
    api: FakeAnthropic, project: Path
) -> None:
    """A 500 on every request of one variant: it shows how it ended and why; the other completes."""
    app = build_app(RunOptions(workdir=project, model=MODEL, permission_mode="bypass"))
    async with app.run_test(size=(120, 40)) as pilot:
        await first_task(pilot, app, api)
        failing = [status(500, "api_error", "Internal server error", headers={"retry-after": "0"}) for _ in range(10)]
        api.responder = by_model({"broken": failing, "fine": writes("b.txt", "bee\n", "B done.", model="fine")})
        view = await compared(pilot, app, "model=broken model=fine")
        await until(pilot, view.done.is_set, "the comparison to end")
        broken, fine = view.rows or []
        assert broken.outcome not in ("completed", "stopped")
        assert fine.outcome == "completed"
        shown = screen_text(app)
        assert broken.outcome in shown
        assert "500" in shown or "server" in shown.lower()


@pytest.mark.parametrize(
    ("typed", "says"),
    [
        ("/compare", "/compare needs SPEC"),
        ("/compare model", "is not key=value"),
        ("/compare loop=nope", "loop='nope' is unknown"),
    ],
)
async def test_compare_refuses_bad_input_in_one_line(api: FakeAnthropic, project: Path, typed: str, says: str) -> None:
    """A missing or bad SPEC is one line naming it; nothing runs, no view opens."""
    app = build_app(RunOptions(workdir=project, model=MODEL, permission_mode="bypass"))
    async with app.run_test(size=(120, 40)) as pilot:
        await first_task(pilot, app, api)
        await send(pilot, typed)
        await until(pilot, lambda: says in toasts(app), says)
        assert not isinstance(app.screen, CompareScreen)


async def test_compare_before_any_task_is_refused(api: FakeAnthropic, project: Path) -> None:
    """With no task given yet there is nothing to run again: one line says so."""
    app = build_app(RunOptions(workdir=project, model=MODEL, permission_mode="bypass"))
    async with app.run_test(size=(120, 40)) as pilot:
        await send(pilot, "/compare loop=plan")
        await until(pilot, lambda: "give Chimera a task first" in toasts(app), "the refusal")
        assert not isinstance(app.screen, CompareScreen)


async def test_a_variant_s_question_names_it_and_y_answers_it(api: FakeAnthropic, project: Path) -> None:
    """In ask mode a variant's write waits on a question naming the variant; y lets it run, and it completes
    with its file, the workspace untouched."""
    app = build_app(RunOptions(workdir=project, model=MODEL, permission_mode="ask"))
    async with app.run_test(size=(120, 40)) as pilot:
        api.script(message(text("Hi.")))
        await send(pilot, "write the greeting")
        await app.run_shown.wait()
        await until(pilot, lambda: not app.running, "the first run to end")
        api.responder = by_model(
            {
                "model-a": writes("a.txt", "hello\n", "A done.", model="model-a"),
                "model-b": [message(text("Nothing to write."), model="model-b")],
            }
        )
        view = await compared(pilot, app, "model=model-a model=model-b")
        await until(pilot, lambda: "model-a asks to run write" in screen_text(app), "the question with its label")
        await pilot.press("y")
        await until(pilot, view.done.is_set, "the comparison to end")
        first, second = view.rows or []
        assert (first.outcome, [f.path for f in first.files]) == ("completed", ["a.txt"])
        assert second.outcome == "completed"
        assert not (project / "a.txt").exists()


async def test_compare_is_refused_while_a_run_works(api: FakeAnthropic, project: Path) -> None:
    """Typed while a run works, /compare says it waits for the run; no view opens, nothing reaches the model."""
    os.mkfifo(project / "go.fifo")
    api.script(message(tool_use("t1", "bash", {"command": "cat go.fifo"}), stop_reason="tool_use"), message(text("ok")))
    app = build_app(RunOptions(workdir=project, model=MODEL, permission_mode="bypass"))
    async with app.run_test(size=(120, 40)) as pilot:
        await send(pilot, "wait for it")
        await until(pilot, lambda: app.running and app.session.agent.running, "the run to work")
        await send(pilot, "/compare loop=plan")
        await until(pilot, lambda: "/compare waits for the run" in toasts(app), "the refusal")
        assert not isinstance(app.screen, CompareScreen)
        (project / "go.fifo").write_text("")
        await app.run_shown.wait()
    assert "/compare" not in str([r.messages for r in api.requests])


async def test_compare_is_refused_in_the_demo(monkeypatch: pytest.MonkeyPatch) -> None:
    """The demo plays a recording: /compare says how to connect a model instead."""
    for name in ("ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY"):  # no model: the demo
        monkeypatch.delenv(name)
    demo = build_app(RunOptions(), demo_pace=0)
    async with demo.run_test(size=(120, 40)) as pilot:
        await demo.run_shown.wait()
        await send(pilot, "/compare loop=plan")
        await until(pilot, lambda: "does not work in the demo" in toasts(demo), "the refusal")
        assert not isinstance(demo.screen, CompareScreen)


async def test_interrupt_stops_every_variant(api: FakeAnthropic, project: Path) -> None:
    """/interrupt (the palette's) while variants run stops them all: each ends as stopped."""
    app = build_app(RunOptions(workdir=project, model=MODEL, permission_mode="bypass"))
    async with app.run_test(size=(120, 40)) as pilot:
        await first_task(pilot, app, api)
        api.responder = by_model({m: [stalled(text("thinking"), model=m)] for m in ("one", "two")})
        view = await compared(pilot, app, "model=one model=two")

        def waiting() -> bool:
            return all(p.turn == 1 for p in view.progress) and len(api.requests) >= 4

        await until(pilot, waiting, "both variants waiting on their replies")
        assert await app.run_command("interrupt")
        await until(pilot, view.done.is_set, "the comparison to end")
        assert [r.outcome for r in view.rows or []] == ["stopped", "stopped"]


async def test_what_the_variants_spend_counts_into_the_workbenchs_totals(api: FakeAnthropic, project: Path) -> None:
    """The status line's tokens and cost (every run since the workbench opened) include a comparison's variants:
    after /compare, they are the first task's plus every variant's, as their rows say, and the line shows so."""
    app = build_app(RunOptions(workdir=project, model=MODEL, permission_mode="bypass"))
    async with app.run_test(size=(120, 40)) as pilot:
        await first_task(pilot, app, api)
        status = app.state.status
        before = (status.input_tokens, status.output_tokens, status.cost)
        assert before[2] > 0
        api.responder = lambda body: message(text("Nothing to do."))
        view = await compared(pilot, app, "label=one label=two")
        await until(pilot, lambda: view.rows is not None, "the rows at the end")
        rows = view.rows or []
        assert all(row.cost_usd > 0 for row in rows)
        assert status.input_tokens == before[0] + sum(row.input_tokens for row in rows)
        assert status.output_tokens == before[1] + sum(row.output_tokens for row in rows)
        assert status.cost == pytest.approx(before[2] + sum(row.cost_usd for row in rows))
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, CompareScreen), "back in the workbench")
        await until(pilot, lambda: f"${status.cost:.4f}" in screen_text(app), "the total on the status line")
        assert status.cost > before[2]


async def test_adopting_over_hand_edits_says_so_and_back_brings_them_back(api: FakeAnthropic, project: Path) -> None:
    """a.txt edited by hand after the task: adopting a variant that rewrites it names the hand edit at risk
    in its preview; once adopted, /back (after its preview and a y) brings the hand edit back."""
    app = build_app(RunOptions(workdir=project, model=MODEL, permission_mode="bypass"))
    async with app.run_test(size=(120, 40)) as pilot:
        await first_task(pilot, app, api)
        (project / "a.txt").write_text("hello, by hand\n")  # the person's own edit, outside Chimera
        api.responder = by_model(
            {
                "model-a": writes("a.txt", "A!\n", "A done.", model="model-a"),
                "model-b": writes("a.txt", "B!\n", "B done.", model="model-b"),
            }
        )
        await compared(pilot, app, "model=model-a model=model-b")
        await until(pilot, lambda: "completed" in screen_text(app) and "1 +1 -0" in screen_text(app), "the rows")
        await pilot.press("enter")
        await until(pilot, lambda: "Adopt it (/back undoes it)? y yes" in screen_text(app), "the adoption asked")
        assert "Edits since the last snapshot it overwrites: a.txt" in screen_text(app)
        await pilot.press("y")
        await until(pilot, lambda: not isinstance(app.screen, CompareScreen), "adopted")
        await app.session_tree.settled()  # the adopt's switch (the screen closed at the y)
        assert (project / "a.txt").read_text() == "A!\n"
        await send(pilot, "/back")
        await until(pilot, lambda: "Go back to" in screen_text(app), "going back asked")
        await pilot.press("y")
        await until(pilot, lambda: (project / "a.txt").read_text() == "hello, by hand\n", "the hand edit back")


async def test_adopting_a_variant_that_deleted_a_file_lists_the_deletion_and_back_brings_it_back(
    api: FakeAnthropic, project: Path
) -> None:
    """A variant whose command deleted a.txt (the first task's file): adopting it lists a.txt among the files it
    deletes before the y, and deletes nothing before it; once adopted, /back brings a.txt back as it was."""
    app = build_app(RunOptions(workdir=project, model=MODEL, permission_mode="bypass"))
    async with app.run_test(size=(120, 40)) as pilot:
        await first_task(pilot, app, api)
        api.script(*writes("b.txt", "bee\n", "Wrote b."))
        await send(pilot, "write b")
        await until(pilot, lambda: (project / "b.txt").exists() and not app.running, "the second task")
        api.responder = by_model(
            {
                "model-a": [
                    message(tool_use("r", "bash", {"command": "rm a.txt"}), stop_reason="tool_use", model="model-a"),
                    *writes("b.txt", "bee\n", "A done.", model="model-a"),
                ],
                "model-b": writes("b.txt", "bee\n", "B done.", model="model-b"),
            }
        )
        view = await compared(pilot, app, "model=model-a model=model-b")
        await until(pilot, view.done.is_set, "the comparison to end")
        await pilot.press("enter")
        await until(pilot, lambda: "Adopt it (/back undoes it)? y yes" in screen_text(app), "the adoption asked")
        shown = screen_text(app)
        assert "Adopt model-a: lands at" in shown
        assert "delete  a.txt" in shown
        assert (project / "a.txt").read_text() == "hello\n"  # nothing deleted before the y
        await pilot.press("y")
        await until(pilot, lambda: not isinstance(app.screen, CompareScreen), "adopted")
        await app.session_tree.settled()  # the adopt's switch (the screen closed at the y)
        assert not (project / "a.txt").exists()
        assert (project / "b.txt").read_text() == "bee\n"
        await send(pilot, "/back")
        await until(pilot, lambda: "Go back to" in screen_text(app), "going back asked")
        assert "create  a.txt" in screen_text(app)
        await pilot.press("y")
        await until(pilot, lambda: (project / "a.txt").exists(), "a.txt back")
        assert (project / "a.txt").read_text() == "hello\n"
        assert (project / "b.txt").read_text() == "bee\n"


async def test_adopting_a_variant_that_deleted_a_file_of_yours_keeps_it_and_says_so(
    api: FakeAnthropic, project: Path
) -> None:
    """A variant whose command deleted a file the person made (not the agent's): the adoption's preview says it
    leaves that path alone, and once adopted the file is still there, as it was."""
    app = build_app(RunOptions(workdir=project, model=MODEL, permission_mode="bypass"))
    async with app.run_test(size=(120, 40)) as pilot:
        await first_task(pilot, app, api)
        (project / "notes.txt").write_text("mine\n")  # the person's own, made outside Chimera
        api.responder = by_model(
            {
                "model-a": [
                    message(
                        tool_use("r", "bash", {"command": "rm notes.txt"}), stop_reason="tool_use", model="model-a"
                    ),
                    *writes("b.txt", "bee\n", "A done.", model="model-a"),
                ],
                "model-b": writes("b.txt", "bee\n", "B done.", model="model-b"),
            }
        )
        view = await compared(pilot, app, "model=model-a model=model-b")
        await until(pilot, view.done.is_set, "the comparison to end")
        await pilot.press("enter")
        await until(pilot, lambda: "Adopt it (/back undoes it)? y yes" in screen_text(app), "the adoption asked")
        shown = screen_text(app)
        assert "Leaves alone 1 path the agent did not make" in shown
        assert "delete  notes.txt" not in shown
        await pilot.press("y")
        await until(pilot, lambda: not isinstance(app.screen, CompareScreen), "adopted")
        await app.session_tree.settled()  # the adopt's switch (the screen closed at the y)
        assert (project / "b.txt").read_text() == "bee\n"
        assert (project / "notes.txt").read_text() == "mine\n"


async def test_a_task_typed_in_one_instant_with_the_adopts_y_is_the_next_task_on_the_adopted_branch(
    api: FakeAnthropic, project: Path
) -> None:
    """``y`` to an adopt and the next task typed in the same instant (one read of the terminal): the compare
    screen closes at the y, the focus is in the input, and the words are sent as a task once the workspace holds
    the variant's files, on its branch; none of them acts on the compare screen (its n, its enter)."""
    app = build_app(RunOptions(workdir=project, model=MODEL, permission_mode="bypass"))
    async with app.run_test(size=(120, 40)) as pilot:
        await first_task(pilot, app, api)
        api.responder = by_model(
            {
                "model-a": writes("a.txt", "Hello!\n", "A done.", model="model-a"),
                "model-b": writes("b.txt", "bee\n", "B done.", model="model-b"),
                MODEL: [message(text("Going on."))],
            }
        )
        await compared(pilot, app, "model=model-a model=model-b")
        await until(pilot, lambda: "1 +1 -0" in screen_text(app), "the rows at the end")
        await pilot.press("right", "enter")
        await until(pilot, lambda: "Adopt it (/back undoes it)? y yes" in screen_text(app), "the adoption asked")
        burst(app, ["y", *"go on", "enter"])
        await until(pilot, lambda: said(app)[-1:] == ["go on"], "the words sent as a task")
        await app.run_shown.wait()
        assert not isinstance(app.screen, CompareScreen)
        assert isinstance(app.focused, PromptInput)
        assert (project / "b.txt").read_text() == "bee\n"  # model-b adopted, once: no second adopt asked
        assert not (project / "a.txt").exists()
        assert "B done." in str(api.requests[-1].messages)  # the task went on the adopted branch
        assert "Going on." in screen_text(app)
