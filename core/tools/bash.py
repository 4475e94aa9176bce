"""Provides the ``bash`` tool: a shell command in the workspace, in its own process group.

stdout and stderr are merged in the order they were written. On timeout or
cancellation the whole group is killed, background children included, and
when the command exits any children it left behind are killed too, so no
process outlives its call (if Chimera itself is killed, :mod:`watchdog` does
it). Output goes through :class:`OutputSink`, so memory stays bounded
whatever the command prints.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import os
import signal
import subprocess
import time
from typing import Any

from chimera.core.credentials import clean_environment
from chimera.core.tools import watchdog
from chimera.core.tools.base import ToolContext, ToolResult, schema
from chimera.core.tools.output import OutputSink

__all__ = ["DEFAULT_TIMEOUT", "MAX_TIMEOUT", "Bash", "scrubbed_environment"]

DEFAULT_TIMEOUT = 120
MAX_TIMEOUT = 600
_CHUNK = 65536
_DRAIN_AFTER_EXIT = 0.5  # seconds to collect output still in the pipe after the shell exits
# The shell waits at this gate until its group is in the watchdog's list, then becomes the
# command's shell (same pid, same group). If Chimera dies first, the gate reads EOF and the
# command never starts: there is no moment at which it runs unwatched.
_GATE = 'IFS= read -r -u {fd} _ || exit 125; exec {fd}<&-; exec bash -c "$1"'


def scrubbed_environment() -> dict[str, str]:
    """The process environment without API keys: a command's output must never carry them."""
    env = clean_environment()
    env.setdefault("PAGER", "cat")
    env["GIT_PAGER"] = "cat"
    env["TERM"] = "dumb"
    return env


class Bash:
    name = "bash"
    description = (
        "Run a bash command in the workspace folder. stdout and stderr are merged. "
        f"`timeout` is in seconds (default {DEFAULT_TIMEOUT}, at most {MAX_TIMEOUT}). "
        "Long output keeps its head and tail; the full text is saved to a file named in the result."
    )
    input_schema = schema(
        {
            "command": {"type": "string", "description": "The command line to run."},
            "timeout": {
                "type": "integer",
                "minimum": 1,
                "maximum": MAX_TIMEOUT,
                "description": f"Seconds before the command is killed (default {DEFAULT_TIMEOUT}).",
            },
        },
        ["command"],
    )
    read_only = False

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        timeout = int(args.get("timeout", DEFAULT_TIMEOUT))
        sink = OutputSink(ctx.max_output, ctx.spill_dir / f"{ctx.call_id}.txt", redactor=ctx.redactor)
        started = time.monotonic()
        watchdog.start()
        gate, opener = os.pipe()
        try:
            # Popen, not asyncio's subprocess: asyncio's wait() also waits for the pipe to
            # close, which a background child can hold open for as long as it lives.
            proc = subprocess.Popen(  # noqa: ASYNC220 - fork/exec returns at once; waiting happens in a thread
                ["bash", "-c", _GATE.format(fd=gate), "bash", args["command"]],
                cwd=ctx.workspace,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                env=scrubbed_environment(),
                pass_fds=(gate,),
            )
        except BaseException:
            os.close(opener)
            raise
        finally:
            os.close(gate)
        watchdog.watch(proc.pid)  # killed even if Chimera itself is killed mid-call
        with contextlib.suppress(OSError):
            os.write(opener, b"go\n")
        os.close(opener)
        timed_out = False
        try:
            try:
                await asyncio.wait_for(_pump(proc, sink), timeout)
            except TimeoutError:
                timed_out = True
        finally:
            # Normal exit, timeout or cancellation: nothing of the group survives the call.
            _kill_group(proc.pid)
            try:
                await asyncio.to_thread(proc.wait)
            finally:  # even if cancelled again here: the group is killed, so its id must leave the list
                watchdog.forget(proc.pid)
                sink.close()
        code = proc.returncode
        text = sink.render()
        data: dict[str, Any] = {"exit_code": code, "seconds": round(time.monotonic() - started, 3), "timeout": timeout}
        if sink.truncated:
            data["full_output"] = str(sink.spill_path)
        if timed_out:
            note = f"[killed after {timeout}s timeout; raise `timeout` (at most {MAX_TIMEOUT}) if it needs longer]"
            return ToolResult(_join(text, note), is_error=True, data=data)
        if code != 0:
            return ToolResult(_join(text, f"[exit code {code}]"), is_error=True, data=data)
        return ToolResult(text if text else "(no output)", data=data)


async def _pump(proc: subprocess.Popen[bytes], sink: OutputSink) -> None:
    """Copy output into the sink until the shell exits and its pipe drains.

    A background child can hold the pipe open (or keep writing) forever, so once
    the shell has exited, reading goes on for at most ``_DRAIN_AFTER_EXIT``.
    """
    assert proc.stdout is not None
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=_CHUNK)
    transport, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), proc.stdout)
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    exited = asyncio.ensure_future(asyncio.to_thread(proc.wait))
    deadline: float | None = None
    read: asyncio.Future[bytes] | None = None
    drained = False
    try:
        while True:
            read = asyncio.ensure_future(reader.read(_CHUNK))
            if deadline is None:
                await asyncio.wait({read, exited}, return_when=asyncio.FIRST_COMPLETED)
                if exited.done():
                    deadline = time.monotonic() + _DRAIN_AFTER_EXIT
            if not read.done():
                remaining = deadline - time.monotonic() if deadline is not None else None
                if remaining is not None and remaining <= 0:
                    break
                try:
                    await asyncio.wait_for(asyncio.shield(read), remaining)
                except TimeoutError:
                    break
            chunk = read.result()
            read = None
            if not chunk:
                break
            sink.write(decoder.decode(chunk))
        sink.write(decoder.decode(b"", final=True))
        drained = True  # EOF: wait for the exit below instead of killing a command that is finishing
    finally:
        if read is not None and not read.done():
            read.cancel()
        transport.close()
        if not drained and not exited.done():
            _kill_group(proc.pid)  # cancelled or timed out: end the group so the waiting thread returns
        await asyncio.gather(exited, return_exceptions=True)


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def _join(text: str, note: str) -> str:
    if not text:
        return note
    return f"{text}\n{note}" if not text.endswith("\n") else f"{text}{note}"
