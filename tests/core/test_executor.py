"""The executor checks every call, runs calls safely and in order, and keeps paths inside the workspace."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from chimera.core.errors import WorkspaceError
from chimera.core.events import StepEvent, ToolCallFinished, ToolCallStarted
from chimera.core.tool_group import DEFAULT_TOOLS, ToolGroup
from chimera.core.tools.base import ToolContext, ToolResult, schema
from chimera.core.tools.executor import Executor, ToolCall

READ_SIGNATURE = "read takes: (path: string, offset?: integer, limit?: integer)"


# --- helpers -----------------------------------------------------------------------


class Recorder:
    """The emit callback: keeps every event in the order it was emitted."""

    def __init__(self) -> None:
        self.events: list[StepEvent] = []

    def __call__(self, event: StepEvent) -> None:
        self.events.append(event)

    def trace(self) -> list[tuple[str, str]]:
        """Starts and ends of calls, in order (a slow command's live output left out)."""
        return [
            ("start" if isinstance(e, ToolCallStarted) else "finish", e.call_id)
            for e in self.events
            if isinstance(e, ToolCallStarted | ToolCallFinished)
        ]


class Gate:
    """A read-only test tool: `wait` blocks until a sibling runs `open`; `crash` and `refuse` raise."""

    description = "test gate"
    input_schema = schema({"action": {"type": "string", "enum": ["wait", "open", "crash", "refuse"]}}, ["action"])
    read_only = True

    def __init__(self, name: str = "gate") -> None:
        self.name = name
        self.opened = asyncio.Event()

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        action = args["action"]
        if action == "open":
            self.opened.set()
            return ToolResult("opened")
        if action == "crash":
            raise RuntimeError("kaput")
        if action == "refuse":
            raise WorkspaceError("no such place")
        try:
            await asyncio.wait_for(self.opened.wait(), 5)
        except TimeoutError:
            return ToolResult.error("never opened: the calls did not run at the same time")
        return ToolResult("released")


@dataclass
class Crowd:
    """A read-only test tool that records how many of its calls run at once."""

    barrier: asyncio.Barrier
    name: str = "crowd"
    description: str = "test crowd"
    read_only: bool = True
    running: int = 0
    peak: int = 0

    @property
    def input_schema(self) -> dict[str, Any]:
        return schema({}, [])

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        self.running += 1
        self.peak = max(self.peak, self.running)
        try:
            await asyncio.wait_for(self.barrier.wait(), 5)
        except TimeoutError:
            return ToolResult.error("no partner arrived")
        finally:
            self.running -= 1
        return ToolResult("ok")


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = (tmp_path / "ws").resolve()
    root.mkdir()
    return root


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    root = (tmp_path / "outside").resolve()
    root.mkdir()
    (root / "secret.txt").write_text("TOPSECRET\n")
    return root


@pytest.fixture
def spill(tmp_path: Path) -> Path:
    return (tmp_path / "spill").resolve()


@pytest.fixture
def executor(ws: Path, spill: Path) -> Executor:
    return Executor(DEFAULT_TOOLS, ws, spill)


def call(call_id: str, name: str, **args: Any) -> ToolCall:
    return ToolCall(id=call_id, name=name, args=args)


async def run_one(executor: Executor, tool_call: ToolCall) -> ToolResult:
    outcomes = await executor.run([tool_call], Recorder())
    assert [o.call for o in outcomes] == [tool_call]
    return outcomes[0].result


def count_to(n: int, start: int = 1) -> str:
    """A bash command printing start..n with builtins only (see count_to in test_tools.py)."""
    return f"printf '%s\\n' {{{start}..{n}}}"


def names(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def outside_error(path: str, ws: Path) -> str:
    return f"Error: {path!r} is outside the workspace {ws}: use a path inside it (relative paths are best)"


# --- checking calls before they run ---------------------------------------------------


async def test_an_unknown_tool_is_an_error_listing_the_tools(executor: Executor) -> None:
    """Calling a tool that does not exist tells the model which tools there are."""
    result = await run_one(executor, call("c1", "delete_everything", path="x"))
    assert result.is_error
    assert result.output == (
        "Error: there is no tool named 'delete_everything'; the tools are: read, write, edit, glob, grep, bash, think"
    )


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        ({}, "missing required argument 'path'"),
        ({"path": 3}, "argument 'path' must be a string, not an integer"),
        ({"path": "a.txt", "offset": True}, "argument 'offset' must be an integer, not a boolean"),
        ({"path": "a.txt", "offset": "2"}, "argument 'offset' must be an integer, not a string"),
        ({"path": "a.txt", "offset": 0}, "argument 'offset' must be at least 1, not 0"),
        ({"path": "a.txt", "encoding": "utf-8"}, "unknown argument 'encoding' (known: path, offset, limit)"),
    ],
    ids=["missing", "wrong-type", "bool-for-int", "string-for-int", "below-minimum", "unknown-extra"],
)
async def test_bad_arguments_are_an_error_naming_the_problem_and_the_signature(
    executor: Executor, ws: Path, args: dict[str, Any], problem: str
) -> None:
    """Arguments that break the schema never reach the tool; the error names the fault and the signature."""
    (ws / "a.txt").write_text("hello\n")
    result = await run_one(executor, ToolCall("c1", "read", args))
    assert result.is_error
    assert result.output == f"Error: {problem}. {READ_SIGNATURE}"


async def test_bash_timeout_above_the_maximum_is_refused_before_running(executor: Executor, ws: Path) -> None:
    """A bash timeout over 600 seconds is rejected and the command does not run."""
    result = await run_one(executor, call("c1", "bash", command="touch ran", timeout=601))
    assert result.output == (
        "Error: argument 'timeout' must be at most 600, not 601. bash takes: (command: string, timeout?: integer)"
    )
    assert not (ws / "ran").exists()


async def test_invalid_json_arguments_are_an_error_quoting_them(executor: Executor, ws: Path) -> None:
    """Arguments that were not valid JSON come back as an error quoting what was sent."""
    result = await run_one(executor, ToolCall("c1", "write", {"__invalid_json__": '{"path": "a.txt", "con'}))
    assert result.is_error
    assert result.output == (
        'Error: the arguments were not valid JSON (\'{"path": "a.txt", "con\'); send a JSON object'
    )
    assert not (ws / "a.txt").exists()


async def test_arguments_that_are_not_an_object_are_an_error(executor: Executor) -> None:
    """A tool_use block whose input is not a JSON object becomes an error result, not a crash."""
    tool_call = ToolCall.from_block({"type": "tool_use", "id": "c1", "name": "read", "input": ["a.txt"]})
    result = await run_one(executor, tool_call)
    assert (result.is_error, result.output) == (True, "Error: the arguments must be a JSON object")


async def test_a_crashing_tool_becomes_an_error_result(ws: Path, spill: Path) -> None:
    """A tool raising an unexpected exception, or a Chimera error, gives the model an error to read."""
    executor = Executor(ToolGroup([Gate()]), ws, spill)
    outcomes = await executor.run([call("c1", "gate", action="crash"), call("c2", "gate", action="refuse")], Recorder())
    assert [(o.result.is_error, o.result.output) for o in outcomes] == [
        (True, "Error: gate failed: RuntimeError: kaput"),
        (True, "Error: no such place"),
    ]


# --- events and results --------------------------------------------------------------


async def test_each_call_emits_started_then_finished_with_its_details(executor: Executor, ws: Path) -> None:
    """Each call emits ToolCallStarted and ToolCallFinished with its id, name, args, outcome and output."""
    (ws / "a.txt").write_text("hello\n")
    recorder = Recorder()
    outcomes = await executor.run([call("c1", "read", path="a.txt"), call("c2", "read", path="missing.txt")], recorder)
    started = [e for e in recorder.events if isinstance(e, ToolCallStarted)]
    finished = {e.call_id: e for e in recorder.events if isinstance(e, ToolCallFinished)}
    assert [(e.call_id, e.name, e.args) for e in started] == [
        ("c1", "read", {"path": "a.txt"}),
        ("c2", "read", {"path": "missing.txt"}),
    ]
    assert len(recorder.events) == 4
    ok, bad = finished["c1"], finished["c2"]
    assert (ok.name, ok.args, ok.is_error, ok.output) == ("read", {"path": "a.txt"}, False, "     1\thello\n")
    assert (bad.name, bad.args, bad.is_error, bad.output) == (
        "read",
        {"path": "missing.txt"},
        True,
        "Error: missing.txt does not exist",
    )
    for event, outcome in zip((ok, bad), outcomes, strict=True):
        assert isinstance(event.duration_ms, float)
        assert event.duration_ms >= 0
        assert event.duration_ms == outcome.duration_ms
        assert event.output == outcome.result.output


async def test_rejected_calls_also_emit_started_and_finished(executor: Executor) -> None:
    """A call refused before running still shows up as started and finished with is_error set."""
    recorder = Recorder()
    await executor.run([call("bad", "nope")], recorder)
    assert recorder.trace() == [("start", "bad"), ("finish", "bad")]
    finished = recorder.events[1]
    assert isinstance(finished, ToolCallFinished)
    assert finished.is_error
    assert finished.output.startswith("Error: there is no tool named 'nope'")


async def test_outcome_block_is_the_tool_result_the_model_receives(executor: Executor, ws: Path) -> None:
    """The tool_result block answers the call id with the output and the error flag."""
    (ws / "a.txt").write_text("hi\n")
    ok, bad = await executor.run([call("toolu_1", "read", path="a.txt"), call("toolu_2", "nope")], Recorder())
    assert ok.block() == {
        "type": "tool_result",
        "tool_use_id": "toolu_1",
        "content": "     1\thi\n",
        "is_error": False,
    }
    assert bad.block()["tool_use_id"] == "toolu_2"
    assert bad.block()["is_error"] is True


# --- concurrency and order ----------------------------------------------------------------


async def test_read_only_calls_of_one_message_overlap(ws: Path, spill: Path) -> None:
    """A read-only call waiting on a later sibling finishes, so the two ran at the same time."""
    executor = Executor(ToolGroup([Gate()]), ws, spill)
    recorder = Recorder()
    calls = [call("w", "gate", action="wait"), call("o", "gate", action="open")]
    outcomes = await executor.run(calls, recorder)
    assert [o.result.output for o in outcomes] == ["released", "opened"]
    # Results are in call order even though the second call finished first.
    assert [o.call.id for o in outcomes] == ["w", "o"]
    assert recorder.trace() == [("start", "w"), ("start", "o"), ("finish", "o"), ("finish", "w")]


async def test_concurrency_is_bounded(ws: Path, spill: Path) -> None:
    """With concurrency=2, six read-only calls run two at a time, never more."""
    crowd = Crowd(asyncio.Barrier(2))
    executor = Executor(ToolGroup([crowd]), ws, spill, concurrency=2)
    outcomes = await executor.run([call(f"c{i}", "crowd") for i in range(6)], Recorder())
    assert [o.result.output for o in outcomes] == ["ok"] * 6
    assert crowd.peak == 2


async def test_one_failing_call_does_not_cancel_its_siblings(ws: Path, spill: Path) -> None:
    """A call that crashes while a sibling is mid-flight leaves that sibling to finish normally."""
    executor = Executor(ToolGroup([Gate()]), ws, spill)
    outcomes = await executor.run(
        [
            call("w", "gate", action="wait"),
            call("x", "gate", action="crash"),
            call("o", "gate", action="open"),
        ],
        Recorder(),
    )
    assert [(o.call.id, o.result.is_error, o.result.output) for o in outcomes] == [
        ("w", False, "released"),
        ("x", True, "Error: gate failed: RuntimeError: kaput"),
        ("o", False, "opened"),
    ]


async def test_a_write_between_reads_runs_alone_and_in_order(executor: Executor, ws: Path) -> None:
    """read, write, read of one file: the first read sees the old text, the second the new, in call order."""
    (ws / "f.txt").write_text("old\n")
    recorder = Recorder()
    outcomes = await executor.run(
        [
            call("r1", "read", path="f.txt"),
            call("w", "write", path="f.txt", content="new\n"),
            call("r2", "read", path="f.txt"),
        ],
        recorder,
    )
    assert [o.result.output for o in outcomes] == [
        "     1\told\n",
        "Overwrote f.txt (1 line).",
        "     1\tnew\n",
    ]
    assert recorder.trace() == [
        ("start", "r1"),
        ("finish", "r1"),
        ("start", "w"),
        ("finish", "w"),
        ("start", "r2"),
        ("finish", "r2"),
    ]


async def test_write_calls_run_one_after_another_in_call_order(executor: Executor, ws: Path) -> None:
    """Several edits to one file apply in the order they were called, each after the last finished."""
    (ws / "f.txt").write_text("a\n")
    recorder = Recorder()
    outcomes = await executor.run(
        [
            call("e1", "edit", path="f.txt", old="a", new="ab"),
            call("e2", "edit", path="f.txt", old="ab", new="abc"),
            call("e3", "bash", command='echo "$(< f.txt)"'),
        ],
        recorder,
    )
    assert [o.result.is_error for o in outcomes] == [False, False, False]
    assert outcomes[2].result.output == "abc\n"
    assert recorder.trace() == [
        ("start", "e1"),
        ("finish", "e1"),
        ("start", "e2"),
        ("finish", "e2"),
        ("start", "e3"),
        ("finish", "e3"),
    ]


async def test_each_truncated_call_keeps_its_own_saved_output(ws: Path, spill: Path) -> None:
    """Two noisy calls in one message save their full outputs to different files, each complete."""
    executor = Executor(DEFAULT_TOOLS, ws, spill, max_output=200)
    calls = [call("a", "bash", command=count_to(500)), call("b", "bash", command=count_to(1500, start=1000))]
    outcomes = await executor.run(calls, Recorder())
    first, second = (Path(o.result.data["full_output"]) for o in outcomes)
    assert first != second
    assert first.read_text() == "".join(f"{i}\n" for i in range(1, 501))
    assert second.read_text() == "".join(f"{i}\n" for i in range(1000, 1501))
    assert f"full output: {first} ...]" in outcomes[0].result.output


# --- confinement -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "args", "shown"),
    [
        ("read", {"path": "../outside/secret.txt"}, "../outside/secret.txt"),
        ("read", {"path": "/etc/passwd"}, "/etc/passwd"),
        ("read", {"path": "sub/../../outside/secret.txt"}, "sub/../../outside/secret.txt"),
        ("write", {"path": "../outside/new.txt", "content": "x"}, "../outside/new.txt"),
        ("write", {"path": "{outside}/new.txt", "content": "x"}, "{outside}/new.txt"),
        ("edit", {"path": "{outside}/secret.txt", "old": "TOP", "new": "NOT"}, "{outside}/secret.txt"),
        ("edit", {"path": "../outside/secret.txt", "old": "TOP", "new": "NOT"}, "../outside/secret.txt"),
        ("glob", {"pattern": "*", "path": ".."}, ".."),
        ("grep", {"pattern": "TOP", "path": "../outside"}, "../outside"),
    ],
    ids=[
        "read-dotdot",
        "read-absolute",
        "read-nested-dotdot",
        "write-dotdot",
        "write-absolute",
        "edit-absolute",
        "edit-dotdot",
        "glob-dotdot",
        "grep-dotdot",
    ],
)
async def test_paths_outside_the_workspace_are_refused(
    executor: Executor, ws: Path, outside: Path, name: str, args: dict[str, Any], shown: str
) -> None:
    """`..` and absolute paths out of the workspace are refused with a clear error, touching nothing."""
    (ws / "sub").mkdir()
    args = {k: v.replace("{outside}", str(outside)) if isinstance(v, str) else v for k, v in args.items()}
    result = await run_one(executor, ToolCall("c1", name, args))
    assert result.is_error
    assert result.output == outside_error(shown.replace("{outside}", str(outside)), ws)
    assert names(outside) == ["secret.txt"]
    assert (outside / "secret.txt").read_text() == "TOPSECRET\n"


async def test_symlinks_pointing_out_of_the_workspace_are_refused(executor: Executor, ws: Path, outside: Path) -> None:
    """A link inside the workspace to a file, a folder, or a not-yet-existing file outside cannot be used."""
    (ws / "link.txt").symlink_to(outside / "secret.txt")
    (ws / "linkdir").symlink_to(outside, target_is_directory=True)
    (ws / "dangling.txt").symlink_to(outside / "planted.txt")
    attempts = [
        call("r1", "read", path="link.txt"),
        call("r2", "read", path="linkdir/secret.txt"),
        call("w1", "write", path="link.txt", content="overwritten"),
        call("w2", "write", path="linkdir/new.txt", content="planted"),
        call("w3", "write", path="dangling.txt", content="planted"),
        call("e1", "edit", path="link.txt", old="TOP", new="NOT"),
        call("g1", "grep", pattern="TOP", path="linkdir"),
        call("g2", "glob", pattern="*", path="linkdir"),
    ]
    outcomes = await executor.run(attempts, Recorder())
    shown = [
        "link.txt",
        "linkdir/secret.txt",
        "link.txt",
        "linkdir/new.txt",
        "dangling.txt",
        "link.txt",
        "linkdir",
        "linkdir",
    ]
    assert [(o.result.is_error, o.result.output) for o in outcomes] == [
        (True, outside_error(path, ws)) for path in shown
    ]
    assert names(outside) == ["secret.txt"]
    assert (outside / "secret.txt").read_text() == "TOPSECRET\n"


async def test_grep_does_not_read_through_a_symlink_out_of_the_workspace(
    executor: Executor, ws: Path, outside: Path
) -> None:
    """Searching the whole workspace never prints the content of a file outside it reached via a link."""
    (ws / "inside.txt").write_text("nothing here\n")
    (ws / "link.txt").symlink_to(outside / "secret.txt")
    result = await run_one(executor, call("c1", "grep", pattern="TOPSECRET"))
    assert "TOPSECRET" not in result.output
    assert result.output == "No matches."


async def test_links_that_stay_inside_the_workspace_work(executor: Executor, ws: Path) -> None:
    """A symlink to another file inside the workspace is followed normally."""
    (ws / "real.txt").write_text("real\n")
    (ws / "alias.txt").symlink_to(ws / "real.txt")
    result = await run_one(executor, call("c1", "read", path="alias.txt"))
    assert (result.is_error, result.output) == (False, "     1\treal\n")


async def test_absolute_paths_inside_the_workspace_work(executor: Executor, ws: Path) -> None:
    """An absolute path that lies inside the workspace is accepted and shown relative to it."""
    target = ws / "dir" / "a.txt"
    outcomes = await executor.run(
        [
            call("w", "write", path=str(target), content="hello\nworld\n"),
            call("r", "read", path=str(target)),
            call("e", "edit", path=str(target), old="world", new="there"),
            call("g", "grep", pattern="hello", path=str(ws)),
        ],
        Recorder(),
    )
    assert [o.result.output for o in outcomes] == [
        "Created dir/a.txt (2 lines).",
        "     1\thello\n     2\tworld\n",
        "Edited dir/a.txt: replaced 1 occurrence (line 2).",
        "dir/a.txt:1:hello\n",
    ]
    assert target.read_text() == "hello\nthere\n"


async def test_saved_full_output_can_be_read_back(ws: Path, spill: Path) -> None:
    """The file named in a truncation marker can be read with `read`, though it lies outside the workspace."""
    executor = Executor(DEFAULT_TOOLS, ws, spill, max_output=300)
    (noisy,) = await executor.run([call("toolu_9", "bash", command=count_to(1000))], Recorder())
    saved = noisy.result.data["full_output"]
    assert saved == str(spill / "toolu_9.txt")
    result = await run_one(executor, call("c2", "read", path=saved, offset=500, limit=2))
    assert (result.is_error, result.output) == (
        False,
        "   500\t500\n   501\t501\n[... more lines follow: read again with offset=502 ...]\n",
    )
    # The spill folder lets `read` in, but it is not a way out for tools that change things.
    refused = await run_one(executor, call("c3", "write", path=saved, content="x"))
    assert refused.output == outside_error(saved, ws)


async def test_saved_output_is_readable_when_the_spill_path_holds_a_symlink(ws: Path, tmp_path: Path) -> None:
    """The marker's file can be read back even when the spill folder is reached through a link."""
    (tmp_path / "spill-real").mkdir()
    (tmp_path / "spill-link").symlink_to(tmp_path / "spill-real", target_is_directory=True)
    executor = Executor(DEFAULT_TOOLS, ws, tmp_path / "spill-link", max_output=300)
    (noisy,) = await executor.run([call("c1", "bash", command=count_to(1000))], Recorder())
    result = await run_one(executor, call("c2", "read", path=noisy.result.data["full_output"], limit=1))
    assert (result.is_error, result.output) == (
        False,
        "     1\t1\n[... more lines follow: read again with offset=2 ...]\n",
    )
