"""The MCP client the conformance suite drives: Chimera's own ``Connection``, as a program.

``conformance client --command "python conformance_client.py"`` starts it with the scenario's server URL as its
last argument and the scenario's name in ``MCP_CONFORMANCE_SCENARIO``. It connects as Chimera connects to any
Streamable HTTP server, lists the tools, and calls each one with the arguments the scenario's tool asks for.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path
from typing import Any

from chimera.core.mcp.config import ServerConfig
from chimera.core.mcp.connection import Connection

ARGUMENTS: dict[str, dict[str, Any]] = {"add_numbers": {"a": 2, "b": 3}}  # what the scenarios' tools take


async def main(url: str) -> int:
    with tempfile.TemporaryDirectory() as folder:
        server = Connection(
            ServerConfig(name="conformance", origin="conformance", url=url), Path(folder) / "log", Path(folder)
        )
        await server.start()
        if not server.ready:
            print(f"could not connect: {server.error}", file=sys.stderr)
            return 1
        try:
            for tool in server.tools:
                result = await server.call(tool.name, ARGUMENTS.get(tool.name, {}), None)
                print(f"{tool.name}: {result.text}")
        finally:
            await server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[-1])))
