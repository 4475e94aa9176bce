"""Provides ``LiveSession``: one Chimera ``Session`` driven by an ACP client.

Everything the session's bus carries goes to the client as ``session/update`` notifications, in order, from
one reader (``updates.Updates``); a question the run asks goes to the client as ``session/request_permission``
on a task of its own, so the updates go on while it waits, and the answer goes back through
``Session.answer``. A prompt is a turn: the run of its task, answered once every update of the run is out,
with its stop reason (``endings``). A prompt sent while a run works is steering for that run (``Session.steer``),
answered when that run ends; one that comes once the run has stopped taking words waits and runs next.
``cancel`` stops the run as Escape does in the workbench: open questions are resolved as cancelled, the
prompts waiting on it answer ``cancelled``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Any

from acp import RequestError
from acp.helpers import (
    SessionUpdate,
    start_tool_call,
    update_agent_message_text,
    update_available_commands,
    update_tool_call,
)
from acp.interfaces import Client
from acp.schema import PermissionOption, StopReason, ToolCallUpdate

from chimera.core.errors import ChimeraError, ConfigError
from chimera.core.events import PermissionRequested, PlanProposed, StepEvent
from chimera.core.messages import Prompt
from chimera.core.modes.acp.commands import AVAILABLE, parse, run_command
from chimera.core.modes.acp.endings import BAD_INPUT, RUN_FAILED, stop_reason
from chimera.core.modes.acp.questions import ALLOW, ALWAYS, APPROVE, decision, permission_question, plan_question
from chimera.core.modes.acp.updates import Updates, coalesced
from chimera.core.sessions.session import Session

__all__ = ["LiveSession"]

log = logging.getLogger("chimera.acp")


class LiveSession:
    """``session`` as the client ``client`` sees it and drives it."""

    def __init__(self, session: Session, client: Client) -> None:
        self.session = session
        self.client = client
        self.updates = Updates(session.env.workdir)
        self._stream = session.bus.stream()
        self._reader = asyncio.create_task(self._forward(), name=f"acp:{session.id}")
        self._asking: set[asyncio.Task[None]] = set()
        self._turn: asyncio.Future[StopReason] | None = None
        self._next = asyncio.Lock()  # one run at a time: a prompt the run cannot take waits here
        self._cancels = 0  # session/cancel notifications so far
        self._cancelled = False  # the turn going on was cancelled
        self._said: set[str] = set()  # the session's warnings and notices told the person already

    @property
    def id(self) -> str:
        return self.session.id

    # --- updates and questions --------------------------------------------------------------

    async def send(self, update: SessionUpdate) -> None:
        """Send one update of this session; a client gone is logged, not raised (the run goes on to its end)."""
        try:
            await self.client.session_update(session_id=self.id, update=update)
        except Exception:
            log.warning("an update of session %s could not be sent", self.id, exc_info=True)

    async def say(self, line: str) -> None:
        """Tell the person ``line`` as the agent's words, a paragraph of its own."""
        await self.send(update_agent_message_text(f"{line}\n\n"))

    async def announce(self) -> None:
        """The commands a prompt may be, for the client to offer."""
        await self.send(update_available_commands(AVAILABLE))

    async def _forward(self) -> None:
        async for batch in self._stream.batches():
            for event in coalesced(batch):
                for update in self.updates.of(event):
                    await self.send(update)
                self._ask_about(event)

    async def replay(self) -> None:
        """Tell the client the active branch as it happened (``history.branch_events``), for ``session/load``."""
        from chimera.core.sessions.history import branch_events

        for event in await asyncio.to_thread(branch_events, self.session.store):
            for update in self.updates.of(event, replay=True):
                await self.send(update)

    def _ask_about(self, event: StepEvent) -> None:
        match event:
            case PermissionRequested(request_id=request_id):
                call, options = permission_question(event, self.updates.call_id(event.call_id))
                self._ask(call, options, lambda choice: self._answer(request_id, choice), opens=False)
            case PlanProposed(request_id=request_id) if request_id:
                call, options = plan_question(event)
                self._ask(call, options, lambda choice: self._answer(request_id, choice), opens=True)

    def _answer(self, request_id: str, choice: str) -> None:
        try:
            self.session.answer(request_id, choice)
        except (ValueError, ConfigError):  # not an answer the question takes: it is refused
            self.session.answer(request_id, "cancel" if request_id.startswith("plan:") else "deny")

    def _ask(
        self, call: ToolCallUpdate, options: list[PermissionOption], answer: Callable[[str], None], *, opens: bool
    ) -> None:
        """Ask the client about ``call`` on a task of its own; ``opens``: the question is a call of its own (a
        plan), shown first and closed with the answer."""

        async def ask() -> None:
            if opens:
                await self.send(
                    start_tool_call(
                        call.tool_call_id, call.title or "", kind=call.kind, status="pending", content=call.content
                    )
                )
            response: Any
            try:
                response = await self.client.request_permission(session_id=self.id, tool_call=call, options=options)
            except Exception as err:  # an error is a refusal: the run goes on without what it asked
                log.warning("the client answered a question of session %s with an error: %s", self.id, err)
                response = err
            choice = decision(response, options)
            yes = choice in (ALLOW, ALWAYS, APPROVE)
            # Said before the answer goes in: once it does, the call may run and end at once.
            if opens:
                await self.send(update_tool_call(call.tool_call_id, status="completed" if yes else "failed"))
            elif yes:
                await self.send(update_tool_call(call.tool_call_id, status="in_progress"))
            answer(choice)

        task = asyncio.create_task(ask(), name=f"acp:ask:{call.tool_call_id}")
        self._asking.add(task)
        task.add_done_callback(self._asking.discard)

    # --- turns ------------------------------------------------------------------------------

    async def prompt(self, content: Prompt) -> StopReason:
        """Answer one prompt: a command, steering for the run going on, or the task of a new run."""
        loop = None
        command = parse(content) if isinstance(content, str) else None
        if command is not None:
            name, argument = command
            if name != "plan":
                async with self._next:
                    await self.say(await run_command(self.session, name, argument))
                return "end_turn"
            if not argument:
                await self.say("/plan needs the task: /plan TASK")
                return "end_turn"
            content, loop = argument, "plan"
        turn = self._turn
        going = turn is not None and not turn.done()
        if going and loop is None and isinstance(content, str) and self.session.steer(content):
            assert turn is not None
            return await asyncio.shield(turn)  # steering: the run going on reads it at its next step
        cancels = self._cancels
        async with self._next:
            if self._cancels != cancels:  # cancelled while it waited for the run before it
                return "cancelled"
            self._cancelled = False
            turn = self._turn = asyncio.ensure_future(self._run(content, loop))
            return await asyncio.shield(turn)

    async def _run(self, content: Prompt, loop: str | None) -> StopReason:
        session = self.session
        try:
            if session.mcp is not None:  # each server ready or failed before the first request
                await session.mcp.ready()
            for note in [*session.warnings, *(session.mcp.notices if session.mcp is not None else [])]:
                if note not in self._said:
                    self._said.add(note)
                    await self.say(session.redactor.mask(f"⚠ {note}"))
            if self._cancelled:
                return "cancelled"
            try:
                result = await session.run(content, loop=loop)
            except ConfigError as err:  # the task or the strategy: nothing was sent
                raise RequestError(BAD_INPUT, session.redactor.mask(str(err))) from None
            except ChimeraError as err:
                raise RequestError(RUN_FAILED, session.redactor.mask(str(err))) from None
            await session.bus.drain()  # every update of the run is out before its answer
            reason, why = stop_reason(result, cancelled=self._cancelled)
            if why:
                await self.say(session.redactor.mask(why))
            return reason
        finally:
            for task in list(self._asking):  # a question the client never answered is moot now
                task.cancel()

    def cancel(self) -> None:
        """Stop the run going on, as Escape does; the prompts waiting on it answer ``cancelled``."""
        self._cancels += 1
        if self._turn is not None and not self._turn.done():
            self._cancelled = True
            self.session.interrupt()

    async def close(self) -> None:
        """Stop the run going on, if any, and close the session (its updates sent first)."""
        self.cancel()
        if self._turn is not None:
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await asyncio.wait_for(asyncio.shield(self._turn), 10)
        for task in list(self._asking):
            task.cancel()
        try:
            await self.session.close()
        finally:
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await asyncio.wait_for(self._reader, 5)
