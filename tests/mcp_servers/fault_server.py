"""Provides the MCP server that goes wrong on purpose, for the fault tests: written with the SDK's own server API
(``MCPServer``), served over stdio as ``python fault_server.py [BEHAVIOUR...]``.

Its tools, always offered:

- ``echo(text)``: the text back (a server still at work);
- ``fail(reason)``: a result with ``isError``, carrying ``reason`` as the server's words;
- ``slow(steps, pause)``: reports ``steps`` progress notifications (``step N of STEPS``), ``pause`` seconds apart,
  then says it is done;
- ``meet(name, expected)``: read-only; waits (5 s at most) until ``expected`` calls of it are at work at once,
  then says whether they met (the calls ran together) or it waited alone;
- ``crash(last_words)``: writes ``last_words`` to stderr and ends the process in the middle of the call;
- ``add_tool(name)`` / ``remove_tool(name)``: changes the tool list, then sends ``notifications/tools/list_changed``
  (an added tool answers ``NAME was added``).

Behaviours, from the command line:

- ``junk``: lines that are not the protocol on stdout before the protocol starts (a structured logger's JSON record
  and a banner, as careless servers print), then a working server;
- ``only-junk``: a usage line on stdout, then the process ends without speaking the protocol (a program that is not
  an MCP server at all);
- ``silent``: ``initialize`` is never answered (the handshake is held forever), the pipes left open;
- ``pid=PATH``: the process's id written to ``PATH`` first, so a test can see it gone.
"""

import os
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

JUNK = b'{"level": "info", "msg": "fault server v1 starting"}\nfault server v1, hello!\n'
USAGE = b"Usage: not-a-server [OPTIONS] FILE\n"


def build(behaviours: set[str]) -> "MCPServer":
    """The server, its middleware set for ``behaviours``."""
    # The SDK is imported here, after the pid is written: it takes a good part of a second, and a test that gives
    # up on the server sooner than that still finds the process it must see gone.
    import anyio
    from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
    from mcp.server.mcpserver import Context, MCPServer
    from mcp.server.mcpserver.exceptions import ToolError
    from mcp.types import ToolAnnotations

    read_only = ToolAnnotations(read_only_hint=True)
    server = MCPServer("fault", version="1")

    @server.tool(annotations=read_only)
    def echo(text: str) -> str:
        """Say the text back."""
        return text

    @server.tool(annotations=read_only)
    def fail(reason: str) -> str:
        """Fail, saying why (a result with isError)."""
        raise ToolError(reason)

    @server.tool(annotations=read_only)
    async def slow(steps: int, pause: float, ctx: Context) -> str:
        """Work for a while, reporting progress at each step."""
        for step in range(1, steps + 1):
            await anyio.sleep(pause)
            await ctx.report_progress(step, steps, f"step {step} of {steps}")
        return f"done after {steps} steps"

    arrived: list[str] = []
    everyone = anyio.Event()

    @server.tool(annotations=read_only)
    async def meet(name: str, expected: int) -> str:
        """Wait (5 s at most) until ``expected`` calls of meet are at work at once: they ran together, or not."""
        nonlocal everyone
        arrived.append(name)
        if len(arrived) >= expected:
            everyone.set()
        with anyio.move_on_after(5):
            await everyone.wait()
        met = everyone.is_set()
        arrived.remove(name)
        if not arrived:
            everyone = anyio.Event()
        return f"{name} met the others" if met else f"{name} waited alone"

    @server.tool()
    async def crash(last_words: str) -> str:
        """End the server's process in the middle of the call."""
        sys.stderr.write(f"{last_words}\n")
        sys.stderr.flush()
        os._exit(3)

    @server.tool()
    async def add_tool(name: str, ctx: Context) -> str:
        """Offer one more tool, and say the list changed."""

        def added() -> str:
            return f"{name} was added"

        server.add_tool(added, name=name, description=f"The tool {name}, added while the server ran.")
        await ctx.session.send_tool_list_changed()
        return f"added {name}"

    @server.tool()
    async def remove_tool(name: str, ctx: Context) -> str:
        """Stop offering a tool, and say the list changed."""
        server.remove_tool(name)
        await ctx.session.send_tool_list_changed()
        return f"removed {name}"

    if "silent" in behaviours:

        async def never_answer_initialize(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
            if ctx.method == "initialize":
                await anyio.sleep_forever()
            return await call_next(ctx)

        server.middleware.insert(0, never_answer_initialize)
    return server


def main(argv: list[str]) -> None:
    behaviours = {arg for arg in argv if "=" not in arg}
    settings = dict(arg.split("=", 1) for arg in argv if "=" in arg)
    unknown = behaviours - {"junk", "only-junk", "silent"} or settings.keys() - {"pid"}
    if unknown:
        sys.exit(f"fault_server.py: unknown behaviour {sorted(unknown)[0]}: use junk, only-junk, silent or pid=PATH")
    if "pid" in settings:
        with open(settings["pid"], "w") as pid:
            pid.write(f"{os.getpid()}\n")
    if "only-junk" in behaviours:
        os.write(1, USAGE)
        return
    if "junk" in behaviours:
        os.write(1, JUNK)  # on the wire itself: while it serves, the SDK points fd 1 at stderr
    build(behaviours).run("stdio")


if __name__ == "__main__":
    main(sys.argv[1:])
