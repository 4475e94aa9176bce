"""An MCP server over stdio whose start-up cost is known: it waits SECONDS before it reads its first line, as a
server that connects to its database or loads its index first would, then answers the handshake, lists one tool,
``echo``, and answers its calls. Plain JSON-RPC, no SDK, so its own start (Python's, ~20 ms) is small beside the
wait. For the MCP benchmarks only (``bench_mcp_start.py``).

Run as ``python mcp_slow_server.py SECONDS``.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any

ECHO = {
    "name": "echo",
    "description": "Says back the message it is given.",
    "inputSchema": {"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]},
    "annotations": {"readOnlyHint": True},
}


def _result(method: str, params: dict[str, Any]) -> dict[str, Any] | None:
    """The result of a request, or None for a method this server does not have."""
    if method == "initialize":
        return {
            "protocolVersion": params.get("protocolVersion", "2025-06-18"),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "slow", "version": "1"},
        }
    if method == "tools/list":
        return {"tools": [ECHO]}
    if method == "tools/call":
        message = str(params.get("arguments", {}).get("message", ""))
        return {"content": [{"type": "text", "text": f"Echo: {message}"}], "isError": False}
    if method == "ping":
        return {}
    return None


def main() -> None:
    time.sleep(float(sys.argv[1]))
    for line in sys.stdin:
        request = json.loads(line)
        if "id" not in request:  # a notification: nothing to answer
            continue
        result = _result(request["method"], request.get("params") or {})
        if result is None:
            reply: dict[str, Any] = {"error": {"code": -32601, "message": f"no method {request['method']}"}}
        else:
            reply = {"result": result}
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": request["id"], **reply}) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
