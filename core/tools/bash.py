"""Provides the ``bash`` tool: a shell command in the workspace, ended with everything it started.

stdout and stderr are merged in the order they were written. When the command
exits, times out or is cancelled, every process it started is killed, however
it detached (see :mod:`shell`), so no process outlives its call, even if
Chimera itself is killed. Output goes through :class:`OutputSink`, so memory
stays bounded whatever the command prints, and on to the context's
``on_output`` as it comes, for the person watching the call run.
"""

from __future__ import annotations

import asyncio
import codecs
import time
from typing import Any

from chimera.core.credentials import clean_environment
from chimera.core.tools.base import ToolContext, ToolResult, schema
from chimera.core.tools.output import OutputSink
from chimera.core.tools.shell import Shell, start_shell

__all__ = ["DEFAULT_TIMEOUT", "MAX_TIMEOUT", "Bash", "scrubbed_environment"]

DEFAULT_TIMEOUT = 120
MAX_TIMEOUT = 600
_CHUNK = 65536
_DRAIN_AFTER_EXIT = 0.5  # seconds to collect output still in the pipe after the shell exits
_KILL_GRACE = 0.5  # seconds the supervisor has to end a command before Chimera kills it all itself


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
        spill = ctx.spill_dir / f"{ctx.call_id}.txt"
        sink = OutputSink(ctx.max_output, spill, redactor=ctx.redactor, listener=ctx.on_output)
        started = time.monotonic()
        env, rules = scrubbed_environment(), ""
        guard = None
        if ctx.sandbox is not None:
            from chimera.core.sandbox.git_guard import GitGuard  # loaded with the first confined command
            from chimera.core.sandbox.probe import support

            env, rules = ctx.sandbox.environment(env), ctx.sandbox.spec(support().abi)
            guard = await asyncio.to_thread(GitGuard.take, ctx.workspace)
        shell = start_shell(args["command"], ctx.workspace, env, rules)
        timed_out = False
        try:
            try:
                await asyncio.wait_for(_pump(shell, sink), timeout)
            except TimeoutError:
                timed_out = True
        finally:
            # Normal exit, timeout or cancellation: nothing the command started survives the call.
            try:
                await _ended(shell)
            finally:  # even if cancelled again here: the processes are killed already
                shell.close()
                sink.close()
        code = shell.wait()
        text = sink.render()
        data: dict[str, Any] = {"exit_code": code, "seconds": round(time.monotonic() - started, 3), "timeout": timeout}
        data.update(sink.cut_data())
        if ctx.sandbox is not None and guard is not None:
            from chimera.core.sandbox.refusals import git_refusal, git_unrestored, refusal

            refused = refusal(text, ctx.sandbox, ctx.workspace)
            try:
                put_back = await asyncio.to_thread(guard.restore)  # nothing the command started is left to race it
            except OSError as err:  # (a folder made unreadable): said, never a traceback
                where = f"{err.filename or 'the git directory'} ({err.strerror})"
                refused = "; ".join(filter(None, (refused, git_unrestored(where))))
            else:
                if put_back:
                    refused = "; ".join(filter(None, (refused, git_refusal(put_back, lost=guard.lost))))
            data["sandbox"] = "refused" if refused else "confined"
            if refused:
                data["sandbox_refused"] = refused
                text = _join(text, f"[the sandbox refused {refused}]")
        if timed_out:
            return ToolResult(_join(text, _timeout_note(timeout)), is_error=True, data=data)
        if shell.note:
            return ToolResult(_join(text, f"[{shell.note}]"), is_error=True, data=data)
        if code != 0:
            return ToolResult(_join(text, f"[exit code {code}]"), is_error=True, data=data)
        if data.get("sandbox") == "refused":  # it exited 0, but not all it did stands (a hook put back)
            return ToolResult(text, is_error=True, data=data)
        return ToolResult(text if text else "(no output)", data=data)


async def _pump(shell: Shell, sink: OutputSink) -> None:
    """Copy output into the sink until the command ends and its pipe drains.

    Should a process that escaped the command hold the pipe open (or keep
    writing), reading goes on for at most ``_DRAIN_AFTER_EXIT`` after the end.
    """
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=_CHUNK)
    transport, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), shell.output)
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    exited = asyncio.ensure_future(asyncio.to_thread(shell.wait))
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
            await _ended(shell, exited)  # cancelled or timed out: end the command so the waiting thread returns
        await asyncio.gather(exited, return_exceptions=True)


async def _ended(shell: Shell, waiting: asyncio.Future[int] | None = None) -> None:
    """Kill the command and wait for the end; past ``_KILL_GRACE`` (its supervisor kept stopped), kill it from here."""
    shell.kill()
    if waiting is None:
        waiting = asyncio.ensure_future(asyncio.to_thread(shell.wait))
    try:
        done, _ = await asyncio.wait({waiting}, timeout=_KILL_GRACE)
    except BaseException:  # cancelled again while waiting: leave nothing running anyway
        shell.force()
        raise
    if not done:
        shell.force()
        await waiting


def _timeout_note(timeout: int) -> str:
    """What a timed-out call's result ends with: the knob that gives it longer, while there is one."""
    if timeout < MAX_TIMEOUT:
        return f"[killed after {timeout}s timeout; raise `timeout` (at most {MAX_TIMEOUT}) if it needs longer]"
    return f"[killed after {timeout}s timeout, the longest a call may run: split the work into shorter commands]"


def _join(text: str, note: str) -> str:
    if not text:
        return note
    return f"{text}\n{note}" if not text.endswith("\n") else f"{text}{note}"
