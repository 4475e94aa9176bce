"""Provides ``serve_stdio``: ``chimera acp``, an Agent Client Protocol (v1) agent on stdin and stdout.

An editor or client (Zed, Toad, acpx) starts ``chimera acp`` and drives Chimera sessions through it, built on
the protocol's Python SDK (``agent-client-protocol``). It is a front end of the same ``Session`` as the
workbench and ``chimera run``: it reads the session's bus and acts through the session's API, and the tools
run inside Chimera (its executor, permissions and sandbox), never through the client's ``fs/*`` or
``terminal/*``. Its modules:

- ``stdio``: the process (stdout kept for the protocol alone, the log file, the connection);
- ``agent``: the protocol's methods (initialize, session/new, load, set_mode, prompt, cancel);
- ``live``: one session over ACP: its turns, steering, cancel, and the questions put to the client;
- ``updates``, ``tool_calls``, ``plan``: the bus's events as ``session/update`` notifications;
- ``questions``: permission questions and plan approvals as ``session/request_permission``;
- ``endings``: how a run's end answers the prompt; ``commands``: the slash commands a prompt may be;
- ``prompts``, ``servers``: a prompt's content blocks, and the client's MCP servers, in Chimera's terms.
"""

from chimera.core.modes.acp.stdio import serve_stdio

__all__ = ["serve_stdio"]
