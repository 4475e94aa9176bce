"""Benchmark: the context the reference server's tool list costs the model, offered directly vs through the search
tool (``mcp_search``).

Run by hand: `python tests/bench/bench_mcp_tokens.py` (the reference server needs npm, and is installed on first use
as the tests install it). Two measures, both printed:
- **Chimera's count**, what ``/mcp`` shows (``McpServers.costs``; ``servers.tokens``: the definitions' JSON, four
  characters a token), of what is offered each way: every tool of ``mcp-server-everything``, or ``mcp_search`` alone;
  and what one search adds (it loads up to five tools, offered from the next request on).
- **The bytes as sent**: the real ``chimera run`` with the server given by ``--mcp-config``, its model the loopback
  Messages API (``tests/fake_anthropic.py``): the request's ``tools`` as that server received them, each entry's
  compact JSON, once with the settings' default (offered directly) and once with ``[mcp] search_threshold`` so low,
  in a ``config.toml`` made for the run, that search stands in. The built-in tools, sent either way, are counted
  apart. The loopback server counts no tokens (the API's ``count_tokens`` is Anthropic's service), so bytes it is.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from chimera.core.mcp.config import ServerConfig
from chimera.core.mcp.servers import McpServers, tokens
from chimera.core.tool_group import DEFAULT_TOOLS
from chimera.core.tools.base import ToolContext
from tests.cli_runner import run_chimera
from tests.fake_anthropic import DEFAULT_MODEL, FakeAnthropic, message, text
from tests.mcp_helpers import everything_server

SERVER = "everything"
QUERY = "add two numbers"  # one search, as a model would make it


async def _counted(folder: Path) -> None:
    """Chimera's count of each way, printed."""
    config = ServerConfig(name=SERVER, origin="bench", command=str(everything_server()))
    servers = McpServers([config], folder, folder, DEFAULT_TOOLS.names)
    try:
        await servers.ready()
        if servers.notices:
            raise SystemExit(f"bench: {'; '.join(servers.notices)}")
        with contextlib.suppress(TimeoutError):  # it adds a tool once it learns Chimera answers roots
            await asyncio.wait_for(servers.connections[0].changed.wait(), 5)
        await servers.refresh()
        direct, every = servers.costs()[SERVER], len(servers.every_tool)
        servers.search_threshold = 0.001  # so that search stands in, as it does past the threshold
        alone = tokens(servers.tools)
        found = await servers.search.run({"query": QUERY}, ToolContext(workspace=folder, spill_dir=folder))
        loaded = [tool.name for tool in servers.tools[1:]]
        after = tokens(servers.tools)
        if found.is_error or not loaded:
            raise SystemExit(f"bench: the search for {QUERY!r} loaded nothing: {found.output}")
    finally:
        await servers.stop()
    print(f"Chimera's count (what /mcp shows: the definitions' JSON, 4 characters a token), {every} tools:")
    print(f"  offered directly      {direct:6,} tokens")
    print(f"  through mcp_search    {alone:6,} tokens  ({direct / alone:.1f}x less)")
    print(f"  after one search      {after:6,} tokens  ({QUERY!r} loaded {len(loaded)}: {', '.join(loaded)})")


def _sent(folder: Path) -> None:
    """The bytes of the tools the real ``chimera run`` sent the loopback server, each way, printed."""
    servers = folder / "mcp.json"
    servers.write_text(json.dumps({"mcpServers": {SERVER: {"command": str(everything_server())}}}))
    homes = {"offered directly": folder / "home-direct", "through mcp_search": folder / "home-search"}
    for home in homes.values():
        home.mkdir()
    (homes["through mcp_search"] / "config.toml").write_text("[mcp]\nsearch_threshold = 0.001\n")
    workdir = folder / "work"
    workdir.mkdir()
    print("the request's tools as the loopback model server received them (compact JSON of each entry):")
    with FakeAnthropic() as api:
        for way, home in homes.items():
            api.script(message(text("Done.")))
            env = {
                "CHIMERA_HOME": str(home),
                "ANTHROPIC_BASE_URL": api.url,
                "ANTHROPIC_API_KEY": "sk-ant-bench-not-a-real-key-0000",
                "CHIMERA_MODEL": DEFAULT_MODEL,
            }
            done = run_chimera("run", "look", "--workdir", str(workdir), "--mcp-config", str(servers), env=env)
            if done.returncode != 0:
                raise SystemExit(f"bench: chimera run failed ({done.returncode}): {done.stderr.strip()}")
            sent: list[dict[str, Any]] = api.requests[-1].body["tools"]
            mcp = [tool for tool in sent if tool["name"].startswith("mcp")]
            builtin = [tool for tool in sent if not tool["name"].startswith("mcp")]
            print(
                f"  {way:20} {_bytes(mcp):7,} bytes, {len(mcp):2} tools  "
                f"(the {len(builtin)} built-in tools: {_bytes(builtin):,} bytes more)"
            )


def _bytes(tools: list[dict[str, Any]]) -> int:
    return sum(len(json.dumps(tool, separators=(",", ":"), ensure_ascii=False).encode()) for tool in tools)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        asyncio.run(_counted(Path(tmp)))
        _sent(Path(tmp))


if __name__ == "__main__":
    main()
