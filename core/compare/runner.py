"""Provides ``Comparison``: variants of one task run side by side from one point of a session.

Each ``Variant`` starts from the point's conversation (a fork of its
``Context``) and a scratch copy of the point's files made from their snapshot,
never from the person's workspace. It runs with its own agent, strategy, model
and limits, publishes its events on a bus of its own (``variant.bus``: a front
end shows one column per variant), and can be stopped alone
(``variant.stop()``). Its messages are recorded in the session as a branch
from the point, its files snapshotted into the session's checkpoints as it
goes, and its last node named ``compare-N-LABEL`` with its end files pinned,
so ``chimera switch`` (or adopting in the workbench) brings them into the
workspace like any switch. Variants run up to ``jobs`` at once. One that
fails is a row saying so; the others go on. The session's leaf never leaves
where the person left it (each variant's node is recorded beside it, in one
record: see ``branch.py``), and the scratch copies are gone, however the
comparison ends (Ctrl-C included): their commands are stopped first. Copies
that a comparison killed outright (SIGKILL) left are swept when the next one
starts (``scratch.py``).
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from chimera.core.agent import Agent
from chimera.core.agent_loop import AgentLoop
from chimera.core.bus import EventBus
from chimera.core.compare.branch import BranchRecorder
from chimera.core.compare.point import StartPoint, start_point
from chimera.core.compare.row import FileChange, Row, Tally
from chimera.core.compare.scratch import scratch_space, sweep
from chimera.core.compare.spec import VariantSpec
from chimera.core.env.local import LocalEnvironment
from chimera.core.errors import ChimeraError, ConfigError
from chimera.core.events import StepEvent
from chimera.core.loop import ReAct
from chimera.core.loop_config import LoopConfig
from chimera.core.loops.base import LoopStrategy
from chimera.core.loops.plan_execute import PlanAndExecute
from chimera.core.loops.reflexion import Reflexion
from chimera.core.loops.tree_of_thought import TreeOfThought
from chimera.core.mcp.config import ServerConfig
from chimera.core.mcp.servers import McpServers
from chimera.core.permissions.policy import PermissionPolicy
from chimera.core.providers.base import Provider
from chimera.core.providers.factory import create_provider
from chimera.core.sessions.checkpoints import ShadowRepo
from chimera.core.sessions.files import CHECKPOINTS
from chimera.core.sessions.pins import WorkspacePins
from chimera.core.sessions.rerun_guard import remove_links_out
from chimera.core.sessions.store import SessionStore
from chimera.core.terminal_text import is_blank
from chimera.core.tool_group import DEFAULT_TOOLS

__all__ = ["MAX_JOBS", "Comparison", "Variant", "check_verify", "strategy_for"]

MAX_JOBS = 4  # variants at once when the caller does not say
_NUMBERED = re.compile(r"compare-(\d+)-")


def check_verify(verify: str | None) -> None:
    """ConfigError for a ``--verify`` with no command in it: it would pass every variant, having checked nothing."""
    if verify is not None and is_blank(verify):
        raise ConfigError(
            "--verify is empty, so it would pass every variant having checked nothing: give the command that "
            "checks a variant's files (it passes when it exits 0), or leave --verify out"
        )


def strategy_for(
    spec: VariantSpec, verify: str | None = None, handler: Callable[[StepEvent], object] | None = None
) -> LoopStrategy:
    """The strategy ``spec`` names, with its limits; a plan is approved as proposed. ``handler`` hears every
    event as the loop emits it."""
    config = LoopConfig(max_steps=spec.max_turns, handler=handler)
    if spec.loop == "plan":
        return PlanAndExecute(config, approve=True, verify=verify)
    if spec.loop == "reflexion":
        return Reflexion(config, reflect_every=spec.reflect_every, verify=verify)
    if spec.loop == "tot":
        return TreeOfThought(config, n_candidates=spec.candidates)
    return ReAct(config)


class Variant:
    """One variant while it runs: its ``spec``, its ``bus`` of events, ``stop()``, and its ``row`` once done."""

    def __init__(self, spec: VariantSpec, checkpoint: str) -> None:
        self.spec = spec
        self.checkpoint = checkpoint  # the name its last node gets: compare-N-LABEL
        self.bus = EventBus()
        self.tally = Tally()  # fed by the loop itself, so it is complete once the run is
        self.row: Row | None = None
        self.stopped = False
        self._agent: Agent | None = None
        self._branch: BranchRecorder | None = None
        self._checking: asyncio.Future[tuple[bool, str]] | None = None  # its --verify command, while it runs

    @property
    def nodes(self) -> set[str]:
        """The session nodes this variant recorded so far."""
        return set(self._branch.nodes) if self._branch is not None else set()

    @property
    def label(self) -> str:
        return self.spec.label

    @property
    def running(self) -> bool:
        return self._agent is not None and self.row is None

    def stop(self) -> None:
        """Stop this variant alone: its stream ends and its commands are killed, its --verify command too (one not
        started never starts)."""
        self.stopped = True
        if self._agent is not None:
            self._agent.interrupt()
        if self._checking is not None:
            self._checking.cancel()

    def answer(self, request_id: str, decision: str, plan: str | None = None) -> bool:
        """Answer a question this variant asked (a permission); False when it is not open."""
        return self._agent is not None and self._agent.answer(request_id, decision, plan)


class Comparison:
    """Variants of one task from ``ref`` of ``store``'s session (open for writing), ready to ``run``.

    Args:
        store: the session, open under its lock; the variants' branches are recorded in it.
        ref: the point (a node id or a checkpoint's name); ConfigError now when it has no files pinned.
        specs: the variants (labels unique: see ``parse_specs``).
        task: what each variant works on; None: the person's message right after ``ref``.
        verify: a command run on each variant's copy at its end (``row.verified``); plan and reflexion use it too.
        jobs: variants at once (default: as many as there are, at most ``MAX_JOBS``).
        policy: the permissions every variant's calls are judged by (the session's).
        can_ask: whether someone answers permission questions (``variant.answer``); else they are denied.
        provider_for: the model of a variant (None: the configured one).
        scratch_root: where scratch copies are made (the system's temporary folder when None).
        mcp_servers: the MCP servers each variant gets a set of its own, started in its scratch copy.
    """

    def __init__(
        self,
        store: SessionStore,
        ref: str,
        specs: Sequence[VariantSpec],
        *,
        task: str | None = None,
        verify: str | None = None,
        jobs: int | None = None,
        policy: PermissionPolicy,
        can_ask: bool = False,
        provider_for: Callable[[str | None], Provider] = create_provider,
        scratch_root: Path | None = None,
        mcp_servers: Sequence[ServerConfig] = (),
    ) -> None:
        if not specs:
            raise ConfigError("nothing to compare: give each variant as --try key=value[,key=value]")
        self.store = store
        self.point: StartPoint = start_point(store, ref)
        if task is not None and is_blank(task):
            raise ConfigError("--task is empty: say what each variant should do")
        chosen = task if task is not None else self.point.task
        if chosen is None:
            raise ConfigError(
                f"no message of the person follows {ref!r} in session {store.id}: pass --task with what to do"
            )
        self.task = chosen
        check_verify(verify)
        self.verify = verify
        self.jobs = max(1, jobs if jobs is not None else min(len(specs), MAX_JOBS))
        self.policy = policy
        self.can_ask = can_ask
        self.provider_for = provider_for
        self.scratch_root = _outside(store.workdir, scratch_root)
        self.mcp_servers = tuple(mcp_servers)
        self.number = 1 + max((int(m.group(1)) for name in store.tree.names if (m := _NUMBERED.match(name))), default=0)
        self.variants = [Variant(spec, f"compare-{self.number}-{spec.label}") for spec in specs]

    def variant(self, label: str) -> Variant:
        """The variant labelled ``label``; KeyError when none is."""
        for variant in self.variants:
            if variant.label == label:
                return variant
        raise KeyError(label)

    def stop(self) -> None:
        """Stop every variant (Ctrl-C): each ends as stopped, its branch recorded as far as it went."""
        for variant in self.variants:
            variant.stop()

    async def run(self) -> list[Row]:
        """Run the variants, up to ``jobs`` at once; their rows, in the order given. Each bus is closed after."""
        slots = asyncio.Semaphore(self.jobs)
        try:
            await asyncio.to_thread(sweep, self.scratch_root)  # the copies of comparisons killed before
            with scratch_space(self.scratch_root) as scratch:
                async with asyncio.TaskGroup() as group:  # one that raises stops the others before the copies go
                    runs = [
                        group.create_task(self._run(variant, scratch / str(n), slots))
                        for n, variant in enumerate(self.variants, 1)
                    ]
                return [run.result() for run in runs]
        finally:
            for variant in self.variants:
                await variant.bus.close()

    async def _run(self, variant: Variant, folder: Path, slots: asyncio.Semaphore) -> Row:
        async with slots:
            if variant.stopped:
                variant.row = Row(variant.label, None, "stopped")
                return variant.row
            try:
                variant.row = await self._work(variant, folder)
            except (ChimeraError, OSError) as err:  # it could not start (git failing, a full disk)
                variant.row = Row(variant.label, None, "failed", error=_why(err))
            return variant.row

    async def _copy(self, folder: Path) -> tuple[Path, ShadowRepo]:
        """The variant's scratch copy of the point's files, made in ``folder``, and the repository its snapshots
        go to; ChimeraError saying where and why when the copy cannot be made (a full disk)."""
        files = folder / "files"
        try:
            files.mkdir(parents=True)
            repo = ShadowRepo(files, self.store.folder / CHECKPOINTS, index=folder / "index")
            await asyncio.to_thread(repo.export, self.point.snapshot, files)
            left_out = await asyncio.to_thread(remove_links_out, files)  # nothing run there reaches out by a link
            if left_out:  # not the variant's to change: its snapshots keep them as they were at the point
                await asyncio.to_thread(repo.hold, self.point.snapshot, left_out)
        except OSError as err:
            root = folder.parent.parent
            raise ChimeraError(
                f"its scratch copy of {self.point.ref}'s files could not be made in {root}: {err.strerror or err}: "
                "free space there, or set TMPDIR to a folder with room"
            ) from None
        return files, repo

    async def _work(self, variant: Variant, folder: Path) -> Row:
        started = time.monotonic()
        files, repo = await self._copy(folder)
        provider = self.provider_for(variant.spec.model)
        env = LocalEnvironment(files, spill_dir=folder / "output", temp_root=folder)  # all of it goes at the end
        variant._branch = BranchRecorder(self.store)
        mcp = McpServers(self.mcp_servers, folder / "output", files, DEFAULT_TOOLS.names) if self.mcp_servers else None
        try:
            if mcp is not None:  # its own servers, working in its copy, ready before its first request
                await mcp.ready()
            agent = Agent(
                provider,
                DEFAULT_TOOLS if mcp is None else DEFAULT_TOOLS.with_extra(lambda: mcp.tools, mcp.refresh),
                strategy_for(variant.spec, self.verify, variant.tally),
                bus=variant.bus,
                policy=self.policy,
                can_ask=self.can_ask,
                recorder=variant._branch,
                context=self.point.context.fork(),
                pins=WorkspacePins(repo, self.store),
            )
            variant._agent = agent
            core = agent.core_for(env, session_id=self.store.id)
            if variant.stopped:  # stopped while its copy was made: nothing runs (no await from here to the run)
                return Row(variant.label, None, "stopped")
            result = await agent.arun(self.task, env, session_id=self.store.id)
            seconds = time.monotonic() - started
            end = core.node_id if core.node_id != self.point.node else None
            unkept = ""  # why its end could not be kept, when it could not
            try:
                changes, verified = await self._end(variant, repo, end, core)
            except (ChimeraError, OSError) as err:  # a full disk: said in its row, with what it did
                changes, verified, unkept = (), None, _why(err)
        finally:
            if mcp is not None:
                await mcp.stop()
            env.close()
            with contextlib.suppress(Exception):
                await provider.aclose()
        tally = variant.tally
        if unkept or result.reason == "session":  # its branch could not be kept: not how its run went
            outcome = "failed"
        elif variant.stopped and (not result.success or (self.verify is not None and verified is None)):
            outcome = "stopped"  # its run, or its check, did not get to the end
        else:
            outcome = result.reason
        return Row(
            label=variant.label,
            node=end,
            outcome=outcome,
            turns=max(tally.turns, result.steps),
            tool_calls=tally.tool_calls,
            failed_calls=tally.failed_calls,
            input_tokens=tally.input_tokens,
            output_tokens=tally.output_tokens,
            cost_usd=round(max(tally.cost_usd, result.cost), 6),
            seconds=round(seconds, 3),
            files=changes,
            verified=verified,
            checkpoint=variant.checkpoint if end is not None and not unkept else None,
            error=unkept or result.error,
        )

    async def _end(
        self,
        variant: Variant,
        repo: ShadowRepo,
        end: str | None,
        core: AgentLoop,
    ) -> tuple[tuple[FileChange, ...], bool | None]:
        """Pin the variant's end files to its last node under its checkpoint name; what changed; the check's word."""
        commit = await asyncio.to_thread(repo.snapshot, variant.checkpoint)
        if end is not None:
            self.store.pin(end, commit)
            self.store.label(end, variant.checkpoint)
        stat = await asyncio.to_thread(repo.numstat, self.point.snapshot, commit)
        changes = tuple(FileChange(path, added, removed) for path, added, removed in stat)
        return changes, await self._verified(variant, core)

    async def _verified(self, variant: Variant, core: AgentLoop) -> bool | None:
        """Whether the ``--verify`` command passed on the variant's copy; None without one, or when the variant
        was stopped before it could say (its command is killed)."""
        if self.verify is None or variant.stopped:
            return None
        check = asyncio.ensure_future(core.check(self.verify))
        variant._checking = check
        try:
            await asyncio.wait({check})  # not `await check`: its cancel by stop() is not this task's
        except asyncio.CancelledError:  # this task was cancelled while it waited: the command goes first
            check.cancel()
            await asyncio.wait({check})
            raise
        finally:
            variant._checking = None
        return None if check.cancelled() else check.result()[0]


def _why(err: ChimeraError | OSError) -> str:
    """An error's words for a row: Chimera's own, or the system's with the file it names."""
    if isinstance(err, ChimeraError):
        return str(err)
    return f"{err.strerror or err} ({err.filename})" if err.filename else str(err.strerror or err)


def _outside(workspace: Path, root: Path | None) -> Path | None:
    """``root`` (None: the system's temporary folder), refused when it lies in the person's workspace."""
    where = Path(root if root is not None else tempfile.gettempdir()).resolve()
    if where.is_relative_to(workspace.resolve()):
        raise ConfigError(
            f"scratch copies would be made in {where}, inside the workspace {workspace}, which a comparison never "
            "writes: set TMPDIR to a folder outside it"
        )
    return root
