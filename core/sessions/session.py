"""Provides ``Session``: one live session, the handle every front end drives.

The workbench and the headless runner hold a ``Session`` and talk to the
engine only through it and its bus: ``run`` a task, ``resend`` one the
conversation left out (refused, declined, interrupted), ``interrupt`` it,
``answer`` a question the run published (by its request id), ``switch`` to
another point with its files, ``branch`` from one, name a ``checkpoint``,
``configure`` the strategy, model and permission mode of the next runs. It
owns what a session holds while it is open: the store, the workspace and its
lock, the agent, the event log, and the bus they all share.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from typing import Any

from chimera.core.agent import Agent, AgentResult
from chimera.core.bus import EventBus
from chimera.core.env.local import LocalEnvironment
from chimera.core.errors import ConfigError, SessionError
from chimera.core.events import BranchCreated, BranchSummarized, CheckpointCreated, CompactionDone
from chimera.core.home import chimera_home
from chimera.core.loop_config import LOOPS
from chimera.core.loops.base import LoopStrategy, Steering
from chimera.core.mcp.servers import McpServers
from chimera.core.mcp.trust import WorkspaceServers
from chimera.core.messages import Prompt
from chimera.core.permissions.policy import MODES, PermissionPolicy
from chimera.core.providers.base import Provider
from chimera.core.providers.factory import create_provider
from chimera.core.redact import Redactor
from chimera.core.sessions.catalog import note_session
from chimera.core.sessions.log import SessionLog
from chimera.core.sessions.reading import Reader, Steer, Task, model_context
from chimera.core.sessions.store import SessionStore
from chimera.core.sessions.switching import Named, SwitchDone, SwitchPlan, name_checkpoint, switch_to
from chimera.core.sessions.workspace_lock import WorkspaceLock
from chimera.core.terminal_text import is_blank
from chimera.core.threads import use_daemon_threads
from chimera.core.wording import describe_ending, plural

__all__ = ["Session"]


@dataclass(slots=True)
class Session:
    """A ready agent over a workspace, recording into a session; made by ``start_session``."""

    agent: Agent
    env: LocalEnvironment
    store: SessionStore
    log: SessionLog
    policy: PermissionPolicy
    demo: bool
    demo_task: str = ""
    warnings: list[str] = field(default_factory=list)
    lock: WorkspaceLock | None = None
    redactor: Redactor = field(default_factory=Redactor)  # the provider's secrets, masked in what the run writes
    # The strategy a name stands for (react, plan, reflexion, tot), as the session's options tune it.
    strategy_for: Callable[[str], LoopStrategy] | None = None
    _retired: list[Provider] = field(default_factory=list)  # models used before a change, closed with the session
    _follow_ups: deque[tuple[str, str]] = field(default_factory=deque)  # (queue id, task), in order
    _carried: list[Steering] = field(default_factory=list)  # steering a stopped process never delivered
    summarize_left_default: bool = False  # settings: a move away from a branch summarizes it unless asked not to
    _forgotten: list[int] = field(default_factory=list)  # the numbers of the "always" answers taken back
    mcp: McpServers | None = None  # the MCP servers whose tools the runs offer (None: none configured)
    mcp_unconfirmed: WorkspaceServers | None = None  # the workspace's .mcp.json, until the person says yes to it

    def __post_init__(self) -> None:
        """Words the person queued before the process stopped are taken up again: steering goes to
        the next run, follow-ups run after it."""
        for queue_id, queued in self.store.tree.queued.items():
            if queued.kind == "steer":
                self._carried.append(Steering(queued.text, queue_id))
            else:
                self._follow_ups.append((queue_id, queued.text))
        if self.store.tree.queued:
            count = plural(len(self.store.tree.queued), "queued message")
            self.warnings.append(
                f"{count} from when Chimera last stopped, kept: steering goes to the next run, follow-ups run after it"
            )

    @property
    def id(self) -> str:
        return self.store.id

    @property
    def bus(self) -> EventBus:
        return self.agent.bus

    @property
    def model(self) -> str:
        return self.agent.provider.model

    @property
    def loop_name(self) -> str:
        return self.agent.loop.name

    async def run(self, task: Prompt, *, loop: str | None = None) -> AgentResult:
        """Work on ``task`` (text, or content blocks: text and images) from where the conversation stands, then on
        each follow-up queued meanwhile (unless a run is interrupted); every event goes to the bus. How the last
        run ended.

        ``loop`` names the strategy for ``task`` alone (``plan``: plan it first); the follow-ups run with the
        session's. A blank ``task``, or a strategy that does not exist, raises ConfigError: nothing is sent."""
        if is_blank(task) if isinstance(task, str) else not any(_said(block) for block in task):
            raise ConfigError("the task is empty: say what the agent should do")
        return await self._work(task, loop)

    async def resend(self, ref: str, *, loop: str | None = None) -> AgentResult:
        """Send again words the conversation left out (``ref``: the node of a task, or of steering, that a run
        ended with no answer to: the server refused it, the model declined it, or it was interrupted), as a new
        task from where the conversation stands now, exactly as they were sent (an attachment too); then the
        follow-ups, as :meth:`run`. The left-out node stays in the tree, marked; the new task is a node of its own.

        ConfigError naming the cause and the fix when ``ref`` is no node, is not the person's words, or is part
        of the conversation already (nothing to send again), or while a run works."""
        reading = self.check_resend(ref)
        prompt = reading.content if isinstance(reading, Task) else "\n\n".join(reading.texts)
        return await self._work(prompt, loop)

    def check_resend(self, ref: str) -> Task | Steer:
        """What :meth:`resend` would send for ``ref`` (its reading); ConfigError, naming the cause and the fix,
        when it would refuse."""
        self._idle("sending words again")
        node = self.store.require(ref)
        reading = Reader(self.store.tree).read(node)
        if not isinstance(reading, Task | Steer):
            raise ConfigError(f"node {node} is not your task or steering: only your own words are sent again")
        if not reading.left_out:
            raise ConfigError(
                f"node {node} is part of the conversation already: the model has it (send a new task instead)"
            )
        return reading

    def last_left_out(self) -> str | None:
        """The newest node of the person's words (a task, steering) left out of the conversation on the path to
        where it stands now, for :meth:`resend`; None when there is none."""
        reader = Reader(self.store.tree)
        for node in reversed(self.store.tree.path()):
            reading = reader.read(node.id)
            if isinstance(reading, Task | Steer) and reading.left_out:
                return node.id
        return None

    async def _work(self, task: Prompt, loop: str | None) -> AgentResult:
        """Run ``task`` (with strategy ``loop``, when given), then the follow-ups (see :meth:`run`)."""
        strategy = self._strategy(loop) if loop is not None else None
        use_daemon_threads(asyncio.get_running_loop())  # nothing stuck in a thread keeps the process alive
        if self.mcp is not None:  # each server ready or failed, so its tools are offered from the first turn
            await self.mcp.ready()
        core = self.agent.core_for(self.env, session_id=self.id)
        for steering in self._carried:
            core.steer(steering.text, steering.queue_id)
        self._carried.clear()
        with self.agent.using(strategy) if strategy is not None else contextlib.nullcontext():
            result = await self._ran(self.agent.arun(task, self.env, session_id=self.id))
        while self._follow_ups and result.reason != "interrupted":
            queue_id, follow_up = self._follow_ups.popleft()
            result = await self._ran(self.agent.arun(follow_up, self.env, session_id=self.id, queued=queue_id))
        return result

    async def _ran(self, run: Awaitable[AgentResult]) -> AgentResult:
        """``run``'s result, once the session catalog says how it ended (the session picker lists it so)."""
        result = await run
        note_session(self.store, describe_ending(result.success, result.reason, result.error))
        return result

    def interrupt(self) -> list[str]:
        """Stop the run in progress, if any: the stream ends, tools are killed, it ends as ``interrupted``. Its
        words no answer followed yet (the task, before the first answer) leave the conversation: kept in the
        session, marked, said in ``run_finished``'s ``left_out``; :meth:`resend` sends them again.

        Returns the steering not delivered yet, taken off the session's queue and handed back (a
        ``steering_returned`` event each: the workbench puts them back in the input, a headless run
        reports them). Queued follow-ups stay queued for the next run.
        """
        self.agent.interrupt()
        return [steering.text for steering in self.agent.give_back_steering()]

    def steer(self, text: str) -> bool:
        """Add the person's words to the run in progress: delivered once, after the current tool calls
        have their results and before the next model request (words sent as its last answer streams
        get one more turn). False, and nothing kept, when no run is going or the run has decided it
        is over: the words are the front end's to keep or to send as a task of their own.

        Kept in the session until delivered, so a crash does not lose them."""
        if not self.agent.steerable or is_blank(text):
            return False
        queue_id = self.store.queue("steer", text)
        if not self.agent.steer(text, queue_id):  # cannot happen between the check and here: nothing awaits
            self.store.unqueue(queue_id)
            return False
        return True

    def follow_up(self, text: str) -> None:
        """Queue a task for when the run in progress ends (or after the next run, when none is going).

        Kept in the session until its run starts, so a crash does not lose it. A blank one is ignored."""
        if not is_blank(text):
            self._follow_ups.append((self.store.queue("follow_up", text), text))

    def take_follow_ups(self) -> list[str]:
        """The follow-ups not started yet, taken off the queue (a front end gives them back to the person)."""
        taken = list(self._follow_ups)
        self._follow_ups.clear()
        for queue_id, _ in taken:
            self.store.unqueue(queue_id)
        return [text for _, text in taken]

    @property
    def follow_ups(self) -> list[str]:
        """The follow-ups waiting for their run, in order."""
        return [text for _, text in self._follow_ups]

    def answer(self, request_id: str, decision: str, plan: str | None = None) -> bool:
        """Answer a question the run published (a permission request, a proposed plan: ``plan`` is the
        edited text); False when it is no longer open."""
        return self.agent.answer(request_id, decision, plan)

    @property
    def kept(self) -> list[str]:
        """What each "always" answered this session lets run unasked, oldest first, a line each."""
        return self.agent.kept

    @property
    def kept_numbers(self) -> dict[int, str]:
        """What each "always" answered this session lets run unasked, by its number, oldest first: the n-th
        "always" is number n for the whole session, so taking one back never renumbers the others."""
        kept = self.agent.kept  # in the order answered; only :meth:`forget` takes one out
        numbers = [n for n in range(1, len(kept) + len(self._forgotten) + 1) if n not in self._forgotten]
        return dict(zip(numbers, kept, strict=True))

    def forget(self, number: int) -> str:
        """Take back "always" answer ``number`` (as ``kept_numbers`` numbers them); what it allowed, which is
        asked about again. ConfigError naming the numbers kept when there is no such answer (or no more)."""
        kept = self.kept_numbers
        if number not in kept:
            why = ["it was taken back"] if number in self._forgotten else []
            if kept:
                *others, last = [str(n) for n in kept]
                why.append(f"give {', '.join(others)} or {last}" if others else f"give {last}")
            else:
                why.append("no always answer is kept now" if self._forgotten else "no call has been allowed always yet")
            raise ConfigError(f"there is no kept answer {number}: {'; '.join(why)}")
        words = self.agent.forget(list(kept).index(number))
        self._forgotten.append(number)
        return words

    def switch(self, ref: str, confirm: Callable[[SwitchPlan], bool] = lambda _: True) -> SwitchDone | None:
        """Move to ``ref`` (a node, a checkpoint or saved files' name) with its files; between runs only.

        ``confirm`` sees the plan and its preview first and may say no (then None). The
        workspace's lock is held alone while files change: refused while another run works there.
        """
        self._idle("switching")
        lock = self.lock
        if lock is not None:
            try:
                lock.exclusive()
            except ConfigError:
                lock.shared()  # a failed upgrade let go of the shared hold: take it back
                raise
        try:
            done = switch_to(self.store, ref, confirm=confirm, record=self.bus.publish)
        finally:
            if lock is not None:
                lock.shared()
        if done is not None:
            self.agent.move_to(model_context(self.store.tree))
        return done

    def branch(self, ref: str) -> str:
        """Continue the conversation from ``ref`` (a node or a checkpoint's name), the files left as they are.

        The next run grows a new branch there. Returns the node's id.
        """
        self._idle("branching")
        node = self.store.require(ref)
        self.store.move_leaf(node)
        self.agent.move_to(model_context(self.store.tree))
        self.bus.publish(BranchCreated(session_id=self.id, node_id=node, ts=time.time(), from_node=node))
        return node

    def checkpoint(self, name: str, ref: str | None = None, *, move: bool = False) -> Named:
        """Name a point (the leaf by default; there the files are pinned as they are now)."""
        named = name_checkpoint(self.store, name, ref, move=move)
        if named.snapshot is not None:
            self.bus.publish(
                CheckpointCreated(
                    session_id=self.id, node_id=named.node, ts=time.time(), label=name, snapshot=named.snapshot
                )
            )
        return named

    async def compact(self, focus: str = "") -> CompactionDone | None:
        """Summarize the older part of the conversation now (between runs); the recent part stays as
        it is. ``focus``: what the summary should attend to. None when there is nothing to summarize."""
        self._idle("compacting")
        return await self.agent.compact(self.env, focus, session_id=self.id)

    async def summarize_left(self, left: str | None) -> BranchSummarized | None:
        """Summarize the branch the person left, from ``left`` (the leaf before a switch or a branch) back to
        where it meets the path the leaf is on now, and carry the summary into this path as a note after the
        leaf (a node of its own: the tree shows it, the next run's model reads it). Between runs only.

        None when nothing was left behind (``left`` is on the path: the move went forward, or nowhere).
        ProviderError when the model cannot give the summary: the move stands, nothing is added.
        """
        self._idle("summarizing a branch")
        tree = self.store.tree
        if left is None or left not in tree:
            return None
        here = {node.id for node in tree.path()}
        branch = [node for node in tree.path(left) if node.id not in here]
        if not branch:
            return None
        messages = []
        for node in branch:
            with contextlib.suppress(SessionError):  # a damaged record is left out: the rest is summarized
                messages.append(node.message)
        if not messages:
            return None
        return await self.agent.carry_branch(self.env, messages, left, session_id=self.id)

    def configure(self, *, loop: str | None = None, model: str | None = None, mode: str | None = None) -> None:
        """Choose what the next runs use: the strategy (``loop``: react, plan, reflexion, tot), the ``model``,
        the permission ``mode`` (ask, accept-edits, plan, bypass; rules and "always" answers stay). Between
        runs only; each name is checked before anything changes. ConfigError names what is wrong and the choices.
        """
        if self.demo:
            raise ConfigError(
                "the demo plays a recording: set ANTHROPIC_API_KEY (or ANTHROPIC_BASE_URL) and start Chimera again "
                "to choose the strategy, model or mode"
            )
        self._idle("changing the strategy, model or mode")
        strategy = self._strategy(loop) if loop is not None else None
        if mode is not None and mode not in MODES:
            raise ConfigError(f"the permission mode {mode!r} is unknown: use one of {', '.join(MODES)}")
        provider = self._provider(model) if model is not None else None
        if strategy is not None:
            self.agent.use_loop(strategy)
        if provider is not None:
            self._retired.append(self.agent.provider)
            self.agent.use_provider(provider)
        if mode is not None:
            self.policy = replace(self.policy, mode=mode)
            self.agent.use_mode(mode)
            self.store.set_permissions(self.policy)  # what the runs from here start with (a replay re-runs no more)

    def _strategy(self, name: str) -> LoopStrategy:
        if name not in LOOPS:
            raise ConfigError(f"the strategy {name!r} is unknown: use one of {', '.join(LOOPS)}")
        if self.strategy_for is None:
            raise ConfigError("this session has one strategy only")
        return self.strategy_for(name)

    def _provider(self, model: str) -> Provider:
        name = model.strip()
        if not name or any(not c.isprintable() or c.isspace() for c in name):
            raise ConfigError(f"{model!r} is not a model name: give one word, such as claude-sonnet-4-5")
        return create_provider(name)

    def confirm_workspace_servers(self) -> list[str]:
        """The person said yes to the workspace's ``.mcp.json``: kept for this version of the file, and its servers
        start (those not configured already); their names. ConfigError when there is nothing to confirm."""
        project, self.mcp_unconfirmed = self.mcp_unconfirmed, None
        if project is None or self.mcp is None:
            raise ConfigError("this workspace has no .mcp.json waiting for an answer")
        project.confirm(chimera_home())
        return self.mcp.add(project.servers)

    def _idle(self, doing: str) -> None:
        if self.agent.running:
            raise ConfigError(f"a run is going: interrupt it or let it finish before {doing}")

    async def close(self) -> None:
        """Let readers finish, then release everything, even when one step fails."""
        async with contextlib.AsyncExitStack() as stack:
            stack.push_async_callback(self.agent.provider.aclose)
            if self.mcp is not None:
                stack.push_async_callback(self.mcp.stop)
            for retired in self._retired:
                stack.push_async_callback(retired.aclose)
            stack.callback(self.env.close)
            if self.lock is not None:
                stack.callback(self.lock.release)
            stack.callback(self.store.close)
            stack.callback(self.log.close)
            if self.agent.pins is not None:
                stack.push_async_callback(self.agent.pins.tidy)
            await self.agent.bus.close()


def _said(block: dict[str, Any]) -> bool:
    """Whether a content block of a task says something: a text that is not blank, or anything else (an image)."""
    return block.get("type") != "text" or not is_blank(str(block.get("text", "")))
