"""A command that prints 200 MB costs the cap in memory, not 200 MB, and keeps every byte on disk."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

from tests.cli_runner import run_here
from tests.fake_anthropic import FakeAnthropic, message, text, tool_use

SCRIPT = textwrap.dedent(
    """
    import asyncio, json, resource, sys
    from pathlib import Path
    from chimera.core.tools.base import ToolContext
    from chimera.core.tools.bash import Bash

    ws, spill = Path(sys.argv[1]), Path(sys.argv[2])
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    # 200 MB: 2,000,000 lines of 99 characters and a newline.
    line = "abcdefghij" * 9 + "abcdefghi"
    result = asyncio.run(Bash().run({"command": f"yes {line} | head -n 2000000"}, ToolContext(ws, spill)))
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"grew_kb": after - before, "output": result.output, "data": result.data}))
    """
)


def test_two_hundred_megabytes_of_output_stay_out_of_memory(tmp_path: Path) -> None:
    """bash printing 200 MB: the process grows by far less than that, and the saved file holds it all."""
    ws, spill = tmp_path / "ws", tmp_path / "spill"
    ws.mkdir()
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(ws), str(spill)], capture_output=True, text=True, timeout=120, check=True
    )
    report = json.loads(proc.stdout)
    assert report["grew_kb"] < 60_000, f"peak memory grew by {report['grew_kb']} KB for 200 MB of output"
    saved = Path(report["data"]["full_output"])
    assert saved.stat().st_size == 200_000_000
    output = report["output"]
    assert len(output) < 21_000
    assert "[... " in output
    assert " lines truncated; full output: " in output
    assert output.rstrip().endswith("\n" + "abcdefghij" * 9 + "abcdefghi")


def test_events_carry_only_the_truncated_output(tmp_path: Path) -> None:
    """The tool_call_finished event holds what the model saw, not the whole output."""
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            textwrap.dedent(
                """
                import asyncio, json, sys
                from pathlib import Path
                from chimera.core.tools.executor import Executor, ToolCall
                from chimera.core.tool_group import DEFAULT_TOOLS
                events = []
                ex = Executor(DEFAULT_TOOLS, Path(sys.argv[1]), Path(sys.argv[2]))
                call = ToolCall("c1", "bash", {"command": "seq 1 3000000"})
                asyncio.run(ex.run([call], events.append))
                print(json.dumps([(e.type, len(e.to_json())) for e in events]))
                """
            ),
            str(tmp_path),
            str(tmp_path / "spill"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    sizes = json.loads(proc.stdout)
    assert [sizes[0][0], sizes[-1][0]] == ["tool_call_started", "tool_call_finished"]
    # ~20 KB of output plus the event's fields, not ~20 MB; the live output on the way is capped too.
    assert all(size < 25_000 for _, size in sizes)


def test_chimera_max_tool_output_caps_what_the_model_sees(
    api: FakeAnthropic, model_env: dict[str, str], tmp_path: Path, isolated_env: Path
) -> None:
    """CHIMERA_MAX_TOOL_OUTPUT=500: the next request and the event get 500 characters and the marker; the file, all."""
    api.script(
        message(tool_use("t1", "bash", {"command": "seq 1 3000"}), stop_reason="tool_use"),
        message(text("Counted.")),
    )
    proc = run_here(
        "run",
        "count",
        "--json",
        "--workdir",
        str(tmp_path),
        "--permission-mode",
        "bypass",
        env={**model_env, "CHIMERA_MAX_TOOL_OUTPUT": "500"},  # 13,893 characters of output: under the default cap
    )
    assert proc.returncode == 0, proc.stderr
    events = [json.loads(line) for line in proc.stdout.splitlines()]
    output = next(e["output"] for e in events if e["type"] == "tool_call_finished")
    [result] = api.requests[1].messages[-1]["content"]
    assert (result["tool_use_id"], result["content"]) == ("t1", output)
    found = re.search(r"^\[\.\.\. (\d+) lines truncated; full output: (.+) \.\.\.\]\n", output, re.MULTILINE)
    assert found, output
    head, tail = output[: found.start()].splitlines(), output[found.end() :].splitlines()
    assert len(output) - len(found.group(0)) <= 500
    assert head == [str(n) for n in range(1, len(head) + 1)]
    assert tail == [str(n) for n in range(3001 - len(tail), 3001)]
    assert int(found.group(1)) == 3000 - len(head) - len(tail)
    saved = Path(found.group(2))
    assert saved.is_relative_to(isolated_env)
    assert saved.read_text() == "".join(f"{n}\n" for n in range(1, 3001))
