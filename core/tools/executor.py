"""Provides the ``Executor``: runs one assistant message's tool calls safely.

Calls are checked before they run (known tool, valid JSON, arguments that fit
the schema); a bad call becomes an error result the model can read. Then the
permission policy decides: allow, refuse, or ask the person (an event that
carries a future the UI answers; with nobody to ask, the call is refused with
a message naming the flag that allows it). Read-only tools get the policy's
test of paths a deny rule withholds, so a search never shows those files.
Runs of consecutive read-only calls go concurrently (bounded); a call that
can change things runs alone, after everything before it. One failing call
never cancels its siblings, and results come back in call order. While a
call runs, what it prints is published a few times a second as
``tool_output_delta`` events (see :mod:`live`). Secrets
(API keys) are masked in every result (and in saved full output, as it is
written) before the model, the events or the disk can see them; a lone surrogate (a byte of a file name that is not
UTF-8) is shown as ``\\xHH``. Blocking work runs on daemon threads (see
``threads.py``).
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from chimera.core.errors import ChimeraError, ToolInputError
from chimera.core.events import (
    PermissionDecided,
    PermissionRequested,
    StepEvent,
    ToolCallFinished,
    ToolCallStarted,
    ToolOutputDelta,
)
from chimera.core.permissions.policy import PermissionPolicy
from chimera.core.redact import Redactor
from chimera.core.strict_json import MAX_DEPTH, TOO_DEEP, clean_json, clean_text
from chimera.core.threads import use_daemon_threads
from chimera.core.tool_group import ToolGroup
from chimera.core.tools.base import DEFAULT_MAX_OUTPUT, Previewing, Tool, ToolContext, ToolResult
from chimera.core.tools.live import LiveOutput
from chimera.core.tools.paths import printable, real_path
from chimera.core.tools.recorded import Recorded
from chimera.core.tools.schema import validate

if TYPE_CHECKING:  # the sandbox's modules load with the first command that needs them
    from chimera.core.sandbox.policy import Confinement, SandboxSettings

__all__ = ["CANCELLED", "DECISIONS", "NOT_FINISHED", "UNFINISHED_PREFIX", "Executor", "ToolCall", "ToolOutcome"]

Emit = Callable[[StepEvent], object]
CANCELLED = "Cancelled: the run was stopped (interrupted or out of time) before this call finished."
NOT_FINISHED = (
    "Cancelled: this call did not finish (Chimera stopped, or the session moved back to before it); "
    "check the workspace before relying on it."
)
UNFINISHED_PREFIX = "Cancelled:"  # every result of a call that never ran to its end starts so
DECISIONS = ("allow", "always", "deny")  # the answers to a permission request
SANDBOX_AUTO = "ran unasked, confined by the sandbox (--sandbox-auto)"
SANDBOX_AUTO_MODES = ("ask", "accept-edits")  # the modes that ask about commands; plan refuses, bypass runs them
PLANNING_REFUSAL = (
    "not permitted while planning: {name} can change things, and only read-only tools run until the plan "
    "is approved; answer with the plan"
)
_SURROGATE = re.compile("[\ud800-\udfff]")
log = logging.getLogger("chimera.executor")


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A ``tool_use`` block from an assistant message."""

    id: str
    name: str
    args: dict[str, Any]

    @classmethod
    def from_block(cls, block: dict[str, Any]) -> ToolCall:
        raw = block.get("input")
        return cls(
            id=str(block["id"]),
            name=str(block["name"]),
            args=raw if isinstance(raw, dict) else {"__input__": raw},
        )


@dataclass(frozen=True, slots=True)
class ToolOutcome:
    call: ToolCall
    result: ToolResult
    duration_ms: float

    def finished_event(self) -> ToolCallFinished:
        return ToolCallFinished(
            call_id=self.call.id,
            name=self.call.name,
            args=self.call.args,
            is_error=self.result.is_error,
            duration_ms=self.duration_ms,
            output=self.result.output,
            data=self.result.data,
            status=self.result.ended,
            sandbox=str(self.result.data.get("sandbox", "")),
        )

    def block(self) -> dict[str, Any]:
        """The ``tool_result`` block that answers the call: its text, then the images a tool passed (an MCP
        server's), as image blocks the model sees."""
        images = self.result.data.get("images")
        content: str | list[dict[str, Any]] = self.result.output
        if isinstance(images, list) and images:
            pictures = [{"type": "image", "source": {"type": "base64", **image}} for image in images]
            content = [{"type": "text", "text": self.result.output}, *pictures]
        is_error = self.result.is_error
        return {"type": "tool_result", "tool_use_id": self.call.id, "content": content, "is_error": is_error}


class Executor:
    """Runs tool calls against a workspace.

    Args:
        tools: the tools the model may call.
        workspace: the workspace root; resolved here once.
        spill_dir: where full outputs over the cap are saved.
        max_output: characters of noisy output the model sees.
        concurrency: how many read-only calls may run at once.
        policy: which calls run, which are refused, which are asked about.
        can_ask: whether someone answers permission requests (the workbench does; a
            headless run without a control channel does not).
        secrets: values masked in every result (API keys).
        temp_root: where sandboxed commands get their private temporary folder (None: the system's).
    """

    def __init__(
        self,
        tools: ToolGroup,
        workspace: Path,
        spill_dir: Path,
        *,
        max_output: int = DEFAULT_MAX_OUTPUT,
        concurrency: int = 10,
        policy: PermissionPolicy | None = None,
        can_ask: bool = False,
        secrets: Iterable[str] = (),
        temp_root: Path | None = None,
    ) -> None:
        self.tools = tools
        self.temp_root = temp_root
        self.workspace = real_path(workspace)
        self.spill_dir = spill_dir
        self.max_output = max_output
        self.policy = policy if policy is not None else PermissionPolicy("bypass")
        self.can_ask = can_ask
        self.redactor = Redactor(secrets)
        self._slots = asyncio.Semaphore(concurrency)
        # Replay: results to serve instead of running (in the order recorded), and a check on each real result.
        self.recorded = Recorded()
        self.observe: Callable[[ToolCall, ToolResult], None] | None = None
        self._on_done: Callable[[ToolOutcome], object] | None = None
        # open requests by id: the future of (verdict, the reason for a deny or the rule for an always) and the tool
        self._questions: dict[str, tuple[asyncio.Future[tuple[str, str]], str]] = {}
        self.planning = False  # while True only read-only tools run, whatever the policy says
        self._clocks: dict[str, list[float]] = {}  # when each running call started (or was let run)
        self._confined: tuple[SandboxSettings, Confinement] | None = None

    def confinement(self) -> Confinement | None:
        """What the commands of this workspace's calls are confined to; None when the policy's sandbox is off
        or this machine has none. One per settings (its private TMPDIR lasts as long); the ``read`` deny rules
        are hidden as they are at the first call."""
        settings = self.policy.sandbox
        if settings is None or not settings.on:
            return None
        from chimera.core.sandbox.policy import hidden_by_rules
        from chimera.core.sandbox.probe import support

        if not support().available:
            return None
        if self._confined is None or self._confined[0] is not settings:
            hidden = hidden_by_rules(self.policy.read_denied(), self.workspace)
            self._confined = (settings, settings.confine(self.workspace, hidden, temp_root=self.temp_root))
        return self._confined[1]

    async def run(
        self,
        calls: Sequence[ToolCall],
        emit: Emit,
        done: dict[str, ToolOutcome] | None = None,
        *,
        on_done: Callable[[ToolOutcome], object] | None = None,
    ) -> list[ToolOutcome]:
        """Run ``calls`` and return their outcomes in call order.

        Each outcome is also put in ``done`` (and given to ``on_done``) as soon as it
        exists, so a caller whose run is interrupted knows which calls finished.
        """
        use_daemon_threads(asyncio.get_running_loop())  # a tool stuck in a thread must not keep the process alive
        finished = done if done is not None else {}
        self._on_done = on_done
        batch: list[ToolCall] = []
        for call in calls:
            tool = self.tools.get(call.name)
            if tool is not None and tool.read_only:
                batch.append(call)
                continue
            await self._run_concurrently(batch, emit, finished)
            batch = []
            await self._run_one(call, emit, finished)
        await self._run_concurrently(batch, emit, finished)
        return [finished[c.id] for c in calls]

    async def _run_concurrently(self, calls: list[ToolCall], emit: Emit, done: dict[str, ToolOutcome]) -> None:
        async def bounded(call: ToolCall) -> None:
            async with self._slots:
                await self._run_one(call, emit, done)

        await asyncio.gather(*(bounded(c) for c in calls))

    async def _run_one(self, call: ToolCall, emit: Emit, done: dict[str, ToolOutcome]) -> None:
        emit(ToolCallStarted(call_id=call.id, name=call.name, args=call.args))
        clock = [time.perf_counter()]  # restarted once permission is given: waiting for a person is not run time
        self._clocks[call.id] = clock
        recorded = self.recorded.take(call.id)
        if recorded is not None:
            result = recorded.result
        else:
            # A cancelled call keeps its clock: cancelled() reads how long it ran.
            result = _strict(_printable(self._mask(await self._execute(call, emit, clock))))
            if self.observe is not None:
                self.observe(call, result)
        self._clocks.pop(call.id, None)
        took = recorded.duration_ms if recorded is not None else None
        outcome = ToolOutcome(
            call, result, took if took is not None else round((time.perf_counter() - clock[0]) * 1000, 3)
        )
        done[call.id] = outcome
        if self._on_done is not None:
            self._on_done(outcome)
        emit(outcome.finished_event())

    async def _execute(self, call: ToolCall, emit: Emit, clock: list[float]) -> ToolResult:
        tool = self.tools.get(call.name)
        if tool is None:
            known = ", ".join(self.tools.names)
            return ToolResult.error(f"there is no tool named {call.name!r}; the tools are: {known}")
        if TOO_DEEP in call.args:
            return ToolResult.error(
                f"the arguments are nested more than {MAX_DEPTH} levels deep: send a flatter JSON object"
            )
        if "__invalid_json__" in call.args:
            raw = self.redactor.mask(call.args["__invalid_json__"])[:200]  # masked first: never half a secret
            return ToolResult.error(f"the arguments were not valid JSON ({raw!r}); send a JSON object")
        if "__input__" in call.args:
            return ToolResult.error("the arguments must be a JSON object")
        try:
            validate(call.args, tool.input_schema)
        except ToolInputError as err:
            return ToolResult.error(f"{err}. {call.name} takes: {_signature(tool.input_schema)}")
        if self.planning and not tool.read_only:
            return ToolResult.error(PLANNING_REFUSAL.format(name=call.name), "refused")
        refusal = await self._permit(call, tool, emit)
        if refusal is not None:
            return refusal
        clock[0] = time.perf_counter()
        withheld = self.policy.withheld(self.workspace) if tool.read_only else None
        live = LiveOutput(lambda text, skipped: emit(ToolOutputDelta(call_id=call.id, text=text, skipped=skipped)))
        ctx = ToolContext(
            self.workspace,
            self.spill_dir,
            self.max_output,
            _safe_name(call.id),
            withheld=withheld,
            redactor=self.redactor,
            on_output=live.write,
            sandbox=None if tool.read_only else self.confinement(),
        )
        try:
            result = await tool.run(call.args, ctx)
            if result.data.get("sandbox") == "refused":
                return await self._outside(call, tool, result, ctx, emit)
            return result
        except ChimeraError as err:
            return ToolResult.error(str(err))
        except Exception as err:  # a tool's failure is the model's to read, never the run's end
            return ToolResult.error(f"{call.name} failed: {type(err).__name__}: {err}")
        finally:
            live.close()

    def _sandbox_answers(self, call: ToolCall, tool: Tool) -> bool:
        """Whether ``--sandbox-auto`` lets a command run unasked: the person opted in, the sandbox confines it here
        with the network off, and only the mode asks (``bypass`` would run it: no deny rule, no hidden command,
        nothing of Chimera's own state is in question)."""
        settings = self.policy.sandbox
        if call.name != "bash" or settings is None or not settings.auto or self.policy.mode not in SANDBOX_AUTO_MODES:
            return False
        confinement = self.confinement()
        if confinement is None or confinement.network:
            return False
        bypassed = replace(self.policy, mode="bypass")
        decision = bypassed.decide(call.name, call.args, read_only=tool.read_only, workspace=self.workspace)
        return decision.verdict == "allow"

    async def _permit(self, call: ToolCall, tool: Tool, emit: Emit) -> ToolResult | None:
        """None when the call may run; else the result that tells the model it may not."""
        decision = self.policy.decide(call.name, call.args, read_only=tool.read_only, workspace=self.workspace)
        if decision.verdict == "allow":
            return None
        if decision.verdict == "deny":
            emit(PermissionDecided(call_id=call.id, decision="deny", reason=decision.reason))
            return ToolResult.error(f"not permitted: {decision.reason}", "refused")
        if self._sandbox_answers(call, tool):
            emit(PermissionDecided(call_id=call.id, decision="allow", reason=SANDBOX_AUTO))
            return None
        if not self.can_ask:
            why = f" ({decision.reason})" if decision.reason else ""
            fix = f"pass {decision.fix}" if decision.fix.startswith("--") else decision.fix
            reason = f"{call.name} needs approval{why} and nobody can answer in a headless run: {fix}"
            emit(PermissionDecided(call_id=call.id, decision="deny", reason=reason))
            return ToolResult.error(f"not permitted: {reason}", "refused")
        preview = await self._preview(call, tool)
        verdict, words = await self._ask(call, emit, reason=decision.reason, preview=preview)
        if verdict == "always" and words:  # the rule the person wrote (checked when they answered)
            self.policy = self.policy.keeping(words, call.name, self.tools.names)
        elif verdict == "always":
            # Not again this session: this exact command, this file inside .git (by write or edit), or
            # every edit (write and edit both), or every call of another tool.
            self.policy = self.policy.remembering(call.name, call.args, self.workspace)
        if verdict in {"allow", "always"}:
            return None
        why_not = words
        if why_not:  # the person said why: the model reads it as the call's result
            return ToolResult.error(f"the person declined to run this {call.name} call: {why_not}", "declined")
        return ToolResult.error(f"the person declined to run this {call.name} call; ask or try another way", "declined")

    async def _ask(
        self, call: ToolCall, emit: Emit, *, reason: str, preview: str = "", outside_sandbox: bool = False
    ) -> tuple[str, str]:
        """Ask the person about ``call`` and wait for the answer: (verdict, words)."""
        request_id = f"{call.id}:{uuid.uuid4().hex[:8]}"
        answer: asyncio.Future[tuple[str, str]] = asyncio.get_running_loop().create_future()
        self._questions[request_id] = (answer, call.name)  # before the request is out: an answer may come at once
        try:
            emit(
                PermissionRequested(
                    request_id=request_id,
                    call_id=call.id,
                    name=call.name,
                    args=call.args,
                    reason=reason,
                    preview=preview,
                    outside_sandbox=outside_sandbox,
                )
            )
            verdict, words = await answer
        except asyncio.CancelledError:
            moot = "the run stopped before an answer"
            emit(PermissionDecided(call_id=call.id, decision="cancelled", reason=moot, request_id=request_id))
            raise
        finally:
            del self._questions[request_id]
        who = "answered by the person" if self.can_ask else "nobody can answer any more (the control channel closed)"
        emit(PermissionDecided(call_id=call.id, decision=verdict, reason=who, request_id=request_id))
        return verdict, words

    async def _outside(
        self, call: ToolCall, tool: Tool, refused: ToolResult, ctx: ToolContext, emit: Emit
    ) -> ToolResult:
        """A command the sandbox refused, run again outside it when the person says so (once: never "always");
        never in plan mode, while planning, or with nobody to ask. The refused result otherwise."""
        if not self.can_ask or self.planning or self.policy.mode == "plan":
            return refused
        what = refused.data.get("sandbox_refused")
        reason = f"the sandbox refused {what or 'what it tried to reach'}"
        verdict, words = await self._ask(call, emit, reason=reason, outside_sandbox=True)
        if verdict not in {"allow", "always"}:  # "always" is never kept for leaving the sandbox: it counts once
            return (
                refused
                if not words
                else ToolResult(
                    f"{refused.output}\n[the person would not run it outside the sandbox: {words}]",
                    is_error=True,
                    data=refused.data,
                )
            )
        again = await tool.run(call.args, replace(ctx, sandbox=None))
        note = "[run again outside the sandbox, as the person allowed once]"
        return replace(again, output=f"{again.output}\n{note}", data={**again.data, "sandbox": "outside"})

    async def _preview(self, call: ToolCall, tool: Tool) -> str:
        """What ``call`` would do, for the person asked about it (empty when its tool cannot say), secrets masked."""
        if not isinstance(tool, Previewing):
            return ""
        try:
            preview = await asyncio.to_thread(tool.preview, call.args, self.workspace)
        except Exception:  # a preview is a courtesy: the question is asked without it
            log.exception("the preview of a %s call failed", call.name)
            return ""
        return clean_text(self.redactor.mask(preview))

    async def check(self, command: str, *, timeout: int = 600) -> ToolResult:
        """Run the person's own check command (``--verify``) in the workspace, as ``bash`` runs commands.

        It is the person's, so no permission rule applies; the output is masked like any tool's.
        """
        bash = self.tools.get("bash")
        if bash is None:
            return ToolResult.error("the check needs the bash tool, which this run does not have")
        ctx = ToolContext(self.workspace, self.spill_dir, self.max_output, "verify", redactor=self.redactor)
        return _strict(_printable(self._mask(await bash.run({"command": command, "timeout": timeout}, ctx))))

    def stop_asking(self) -> None:
        """Nobody answers from here on: open requests are denied, and later calls that need asking are refused."""
        self.can_ask = False
        for pending, _ in self._questions.values():
            if not pending.done():
                pending.set_result(("deny", ""))

    def answer(self, request_id: str, decision: str, words: str = "") -> bool:
        """Answer an open permission request: ``allow``, ``always`` or ``deny``. ``words``: for a deny, the
        person's reason (the model reads it as the call's result); for an always, the rule to keep instead of
        the one "always" adds (``PermissionPolicy.keeping``: ConfigError, the question still open, when it is
        not a rule for the call's tool).

        False when no request with that id is open (already answered, or its run stopped).
        """
        if decision not in DECISIONS:
            raise ValueError(f"a permission answer is one of {', '.join(DECISIONS)}, not {decision!r}")
        pending, tool = self._questions.get(request_id, (None, ""))
        if pending is None or pending.done():
            return False
        words = words.strip() if decision in {"deny", "always"} else ""
        if decision == "always" and words:
            self.policy.keeping(words, tool, self.tools.names)  # a rule that cannot be kept is said now, not after
        pending.set_result((decision, words))
        return True

    def _mask(self, result: ToolResult) -> ToolResult:
        return self.redactor.mask_fields(result)

    def skipped(self, call: ToolCall, why: str) -> ToolOutcome:
        """The outcome of a call that was not run because the run stopped first."""
        return ToolOutcome(call, ToolResult.error(f"not run: {why}", "skipped"), 0.0)

    def cancelled(self, call: ToolCall) -> ToolOutcome:
        """The outcome of a call still open when the run stopped, with the time it ran (0 if it never began)."""
        clock = self._clocks.pop(call.id, None)
        elapsed = round((time.perf_counter() - clock[0]) * 1000, 3) if clock is not None else 0.0
        return ToolOutcome(call, ToolResult(CANCELLED, is_error=True, status="cancelled"), elapsed)


def _strict(result: ToolResult) -> ToolResult:
    """``result`` as strict JSON can carry it: a file name that is not UTF-8 holds lone surrogates."""
    output, data = clean_text(result.output), clean_json(result.data)
    if output is result.output and data is result.data:
        return result
    return replace(result, output=output, data=data)


def _printable(result: ToolResult) -> ToolResult:
    """``result`` with no lone surrogate (from a file name that is not UTF-8) left to break UTF-8 readers."""
    texts = [result.output, *(v for v in result.data.values() if isinstance(v, str))]
    if not any(_SURROGATE.search(text) for text in texts):
        return result
    data = {k: printable(v) if isinstance(v, str) else v for k, v in result.data.items()}
    return replace(result, output=printable(result.output), data=data)


def _signature(input_schema: dict[str, Any]) -> str:
    required = set(input_schema.get("required", []))
    parts = []
    for name, sub in input_schema.get("properties", {}).items():
        kind = sub.get("type", "any")
        parts.append(f"{name}: {kind}" if name in required else f"{name}?: {kind}")
    return "(" + ", ".join(parts) + ")"


def _safe_name(call_id: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in call_id)[:80] or "call"
