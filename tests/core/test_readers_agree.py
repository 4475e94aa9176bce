"""For any sequence of runs (some refused by the server), plan runs (approved, edited, sent back to revise or
cancelled, a step failing its check once), steering, follow-ups, interrupts, switches, branches, compactions and
resumes (against the loopback Messages API server, whose tool ids start again from 1 at every resume, as a local
server's do), the session read back from disk is what the model was sent, a refused task is never sent again, and
the resumed history, the export, a replay and `chimera tree` each contain every word the person sent that the run
read, and tell each plan as the run did: its steps and its checks, never the model's raw `- [ ]` list or its
`DONE`, with the event log or from the records alone.

The oracle is independent of the readers under test: which words the run read, and what the plans were, comes
from the events published live (``run_started``, ``steering_delivered``, ``plan_proposed``,
``plan_step_checked``, ``plan_cancelled``), and which of them are on the current branch from the raw JSON of the
branch's records and the nodes the events were published at.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import re
import shutil
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule, run_state_machine_as_test

from chimera.core.bus import EventBus
from chimera.core.events import (
    PermissionRequested,
    PlanCancelled,
    PlanProposed,
    PlanStepChecked,
    RunFinished,
    RunStarted,
    SteeringDelivered,
    StepEvent,
)
from chimera.core.loops.compaction import SUMMARY_SYSTEM
from chimera.core.loops.plan_notes import PLANNING_PROMPT
from chimera.core.messages import prompt_text
from chimera.core.sessions.export import export_markdown
from chimera.core.sessions.files import EVENTS
from chimera.core.sessions.history import branch_events
from chimera.core.sessions.playback import play_back
from chimera.core.sessions.reading import model_context
from chimera.core.sessions.session import Session
from chimera.core.sessions.start import RunOptions, start_session
from chimera.core.sessions.store import SessionStore
from chimera.tui.state.transcript import Transcript
from chimera.tui.tree_command import tree_document
from tests.fake_anthropic import DEFAULT_MODEL, FakeAnthropic, Reply, message, status, text, tool_use

WORDS = st.integers(0, 10**6)  # each word the person sends is made unique with a serial
ACTIONS = ["run", "run", "run_asked", "run_asked", "run_asked", "plan", "switch", "branch", "compact", "resume"]
_WORD = re.compile(r"w\d+x\d+")
_PLAN_KINDS = (PlanProposed, PlanStepChecked, PlanCancelled)
_RAW_PLAN = re.compile(r"^(- \[[ x]\] .*|DONE)$", re.M)  # the model's own checklist, or its bare verdict


def plan_said(events: Iterable[StepEvent]) -> list[tuple[Any, ...]]:
    """What the events tell of plans, in order: each plan's steps, each check (step, passed), each cancel."""
    said: list[tuple[Any, ...]] = []
    for event in events:
        if isinstance(event, PlanProposed):
            said.append(("proposed", tuple(event.steps)))
        elif isinstance(event, PlanStepChecked):
            said.append(("checked", event.index, event.passed))
        elif isinstance(event, PlanCancelled):
            said.append(("cancelled", event.reason))
    return said


def person_words(events: list[StepEvent]) -> list[str]:
    """The person's words the events tell: each task's (a prompt may be several sent as one turn) and steering."""
    words: list[str] = []
    for event in events:
        if isinstance(event, RunStarted):
            words += _WORD.findall(event.task if isinstance(event.task, str) else prompt_text(event.task))
        elif isinstance(event, SteeringDelivered):
            words += _WORD.findall(event.text)
    return words


class Model:
    """Answers as a model would, from the request alone: a summary when asked for one, an answer after tool
    results, and for a new task the tool its words ask for. Tool ids start from 1 again at each ``restart``."""

    def __init__(self) -> None:
        self.ids = itertools.count(1)

    def restart(self) -> None:
        self.ids = itertools.count(1)

    def __call__(self, body: Any) -> Reply:
        if SUMMARY_SYSTEM[:40] in json.dumps(body.get("system", "")):
            return message(text("SUMMARY: the person asked for things, and they were done."))
        last = body["messages"][-1]["content"]
        blocks = last if isinstance(last, list) else [{"type": "text", "text": last}]
        if any(b.get("type") == "tool_result" for b in blocks):
            return message(text("Done with the tools."))
        said = str(blocks[-1].get("text", "")) if blocks else ""  # the person's task comes last in the turn
        planned = self.plan(body, blocks, said)
        if planned is not None:
            return message(text(planned))
        if said.endswith("[refuse]"):
            return status(400, "invalid_request_error", "this task is refused")
        for tool, call in (("[bash]", ("bash", {"command": "true"})), ("[glob]", ("glob", {"pattern": "*"}))):
            if said.endswith(tool):
                return message(tool_use(f"toolu_{next(self.ids)}", *call), stop_reason="tool_use")
        return message(text("Answered."))

    @staticmethod
    def plan(body: Any, blocks: list[dict[str, Any]], said: str) -> str | None:
        """The answer to a plan loop's note: a checklist (the task's steps; one step once sent back), a step's
        work, a verdict (a step named ``[fails]`` fails its first check); None for anything else."""
        if PLANNING_PROMPT in said:
            task = str(blocks[-2].get("text", "")) if len(blocks) > 1 else ""
            return f"- [ ] First step of {task}\n- [ ] Second step of {task}"
        if "The person wants the plan changed" in said:
            return "- [ ] The one step, as revised"
        if (check := re.search(r"Check step (\d+) \((.*)\) with the read-only tools", said)) is not None:
            retried = f"Step {check[1]} is not done" in json.dumps(body["messages"][-6:])
            return "NOT DONE: not yet" if "[fails]" in check[2] and not retried else "DONE"
        if re.search(r"Step \d+ of \d+: |Step \d+ is not done: |The person edited the plan", said):
            return "Did that step."
        return None


class SessionReaders(RuleBasedStateMachine):
    """A live session driven at random; after every step, every reader of its file is checked."""

    api: FakeAnthropic
    home: Path

    def __init__(self) -> None:
        super().__init__()
        self.loop = asyncio.new_event_loop()
        self.project = Path(tempfile.mkdtemp(prefix="chimera-readers-"))
        (self.project / "a.txt").write_text("alpha\n")
        self.model = Model()
        self.api.responder = self.model
        self.serial = itertools.count()
        self.live: list[StepEvent] = []
        self.answered = False
        self.refused: list[tuple[str, int]] = []  # each refused task's word, and how many requests came before
        self.session = self._start(None)

    def _start(self, resume: str | None) -> Session:
        options = RunOptions(
            workdir=self.project, model=DEFAULT_MODEL, permission_mode="ask", interactive=True, resume=resume
        )
        session = start_session(options)
        session.bus.subscribe(self.live.append)
        return session

    def _word(self, n: int) -> str:
        return f"w{next(self.serial)}x{n}"

    def _await(self, work: Any) -> Any:
        return self.loop.run_until_complete(asyncio.wait_for(work, 60))

    # --- what the person does -------------------------------------------------------------

    @rule(
        action=st.sampled_from(ACTIONS),
        n=WORDS,
        tool=st.sampled_from(["", "[glob]", "[refuse]"]),
        steer=st.none() | WORDS,
        follow=st.none() | WORDS,
        stop=st.booleans(),
        pick=st.integers(0, 10**6),
        decision=st.sampled_from(["approve", "edit", "revise", "cancel"]),
    )
    def act(
        self,
        action: str,
        n: int,
        tool: str,
        steer: int | None,
        follow: int | None,
        stop: bool,
        pick: int,
        decision: str,
    ) -> None:
        """One thing the person does (runs twice as likely as each move between them)."""
        if action == "run":
            self.run(n, tool)
        elif action == "run_asked":
            self.run_asked(n, steer, follow, stop)
        elif action == "plan":
            self.run_plan(n, decision, fails=stop)
        elif action in {"switch", "branch"} and len(self.session.store.tree) > 1:
            nodes = list(self.session.store.tree.nodes)
            getattr(self.session, action)(nodes[pick % len(nodes)])
        elif action == "compact":
            self._await(self.session.compact())
        elif action == "resume":
            self.resume()
        self.answered = action in {"run", "run_asked", "plan"}  # the leaf answers the last request only after a run

    def run(self, n: int, tool: str) -> None:
        """A task, answered at once, after a read-only call, or refused by the server (a 400)."""
        word = self._word(n)
        result = self._await(self.session.run(f"{word} {tool}"))
        if result.reason == "bad_request":  # not when it went with cancelled results: the model answers those
            self.refused.append((word, len(self.api.requests)))

    def run_asked(self, n: int, steer: int | None, follow: int | None, stop: bool) -> None:
        """A task whose command waits for permission; meanwhile the person may steer, queue a follow-up, and
        then allow the command or interrupt the run (words it never read come back, follow-ups are taken)."""

        async def drive() -> None:
            events = self.session.bus.stream()
            run = asyncio.create_task(self.session.run(f"{self._word(n)} [bash]"))
            asked: PermissionRequested | None = None
            try:
                async for event in events:
                    if isinstance(event, PermissionRequested | RunFinished):
                        asked = event if isinstance(event, PermissionRequested) else None
                        break
            finally:
                events.cancel()
            if asked is None:
                await run
                return
            if steer is not None:
                self.session.steer(self._word(steer))
            if follow is not None:
                self.session.follow_up(self._word(follow))
            if stop:
                self.session.interrupt()
                self.session.take_follow_ups()
            else:
                self.session.answer(asked.request_id, "allow")
            await run

        self._await(drive())

    def run_plan(self, n: int, decision: str, *, fails: bool) -> None:
        """A task planned first; the person approves the plan, edits it, sends it back (then approves the
        revision) or cancels it; with ``fails`` a step fails its first check."""

        async def drive() -> None:
            events = self.session.bus.stream()
            run = asyncio.create_task(self.session.run(f"{self._word(n)}{' [fails]' if fails else ''}", loop="plan"))
            answers = [decision, "approve"] if decision == "revise" else [decision]
            try:
                async for event in events:
                    if isinstance(event, PlanProposed) and event.request_id and answers:
                        said = {"edit": f"- [ ] Edited step{' [fails]' if fails else ''}", "revise": "one step"}
                        self.session.answer(event.request_id, answers[0], said.get(answers.pop(0)))
                    elif isinstance(event, RunFinished):
                        break
            finally:
                events.cancel()
            await run

        self._await(drive())

    def resume(self) -> None:
        """Chimera stops and starts again on this session; the server numbers its tool ids from 1 again."""
        session_id = self.session.id if self.session.store.on_disk else None  # no task yet: no session to resume
        self._await(self.session.close())
        self.model.restart()
        self.session = self._start(session_id)

    # --- what every reader must show -----------------------------------------------------

    def _delivered(self) -> list[str]:
        """The person's words the runs read, as published live, in order."""
        self._await(self.session.bus.drain(10))
        return person_words(self.live)

    @invariant()
    def every_reader_tells_the_branch(self) -> None:
        delivered = self._delivered()
        if not self.session.store.on_disk:  # no task yet: nothing is written, nothing to read back
            return
        with SessionStore.open(self.home, self.session.id, writable=False) as store:
            path = [json.dumps(node.message) for node in store.tree.path()]
            on_branch = sorted(
                (w for w in delivered if any(w in raw for raw in path)),
                key=lambda w: next(i for i, raw in enumerate(path) if w in raw),
            )
            history = branch_events(store)
            assert person_words(history) == on_branch
            exported = export_markdown(store)
            assert all(word in exported for word in on_branch)
            summaries = [str(node["summary"]) for node in tree_document(store)["nodes"]]
            assert all(word in " ".join(summaries) for word in delivered)
            assert model_context(store.tree).messages == model_context(self.session.store.tree).messages
            self.tell_plans_as_they_ran(store, history, exported, summaries)

    def tell_plans_as_they_ran(
        self, store: SessionStore, history: list[StepEvent], exported: str, summaries: list[str]
    ) -> None:
        """History tells each plan on the branch as it was published live (its steps, its checks, a cancel), and
        no reader shows the model's raw checklist or its DONE."""
        on_path = {node.id for node in store.tree.path()}
        live = [e for e in self.live if isinstance(e, _PLAN_KINDS) and e.node_id in on_path]
        assert plan_said(history) == plan_said(live)
        shown = Transcript()
        shown.apply_all(history)
        assert not any(_RAW_PLAN.search(e.text) for e in shown.entries if e.kind == "text")
        assert not _RAW_PLAN.search(exported)
        assert not any(_RAW_PLAN.search(summary) for summary in summaries)

    def replay_and_records_tell_the_plans(self, replayed: list[StepEvent]) -> None:
        """A replay tells the branch's plans as history does; so do the records alone, but for the cancels
        only the event log keeps."""
        with SessionStore.open(self.home, self.session.id, writable=False) as store:
            told = plan_said(branch_events(store))
            log = store.folder / EVENTS
            aside = log.with_name("events.aside")
            log.rename(aside)
            try:
                alone = plan_said(branch_events(store))
            finally:
                aside.rename(log)
        assert plan_said(replayed) == told
        assert alone == [said for said in told if said[0] != "cancelled"]

    @invariant()
    def a_refused_task_is_never_sent_again(self) -> None:
        """No request after a task's refusal carries it (resumed, switched, compacted or not)."""
        for word, before in self.refused:
            assert not any(word in json.dumps(r.body) for r in self.api.requests[before:])

    @invariant()
    def the_model_was_sent_what_the_session_holds(self) -> None:
        """After a run that answered, the conversation on disk is the last request plus the answer to it."""
        tree = self.session.store.tree
        leaf = tree.nodes.get(tree.leaf or "")
        if not self.answered or leaf is None or leaf.kind != "assistant" or not self.api.requests:
            return
        last = self.api.requests[-1]
        if SUMMARY_SYSTEM[:40] in json.dumps(last.body.get("system", "")):
            return
        with SessionStore.open(self.home, self.session.id, writable=False) as store:
            if store.tree.leaf != tree.leaf:
                return
            messages = model_context(store.tree).messages
        if messages[-1] == leaf.message and len(messages) == len(last.messages) + 1:
            assert messages[:-1] == last.messages

    def teardown(self) -> None:
        try:
            delivered = self._delivered()
            if not self.session.store.on_disk:
                return
            with SessionStore.open(self.home, self.session.id, writable=False) as store:
                path = [json.dumps(node.message) for node in store.tree.path()]
            on_branch = [w for w in delivered if any(w in raw for raw in path)]
            if path:
                bus = EventBus()
                replayed: list[StepEvent] = []
                bus.subscribe(replayed.append)
                self._await(play_back(self.session.id, bus))
                self._await(bus.drain(10))
                assert person_words(replayed) == on_branch
                self.replay_and_records_tell_the_plans(replayed)
        finally:
            self._await(self.session.close())
            self.loop.close()
            shutil.rmtree(self.project, ignore_errors=True)


@pytest.mark.timeout(300)
@pytest.mark.usefixtures("model_env")
def test_every_reader_tells_what_the_person_said(api: FakeAnthropic, isolated_env: Path) -> None:
    """Any sequence of what a person does: the session read back, its history, export, replay and tree agree."""
    SessionReaders.api = api
    SessionReaders.home = isolated_env
    run_state_machine_as_test(SessionReaders, settings=settings(max_examples=25, stateful_step_count=10))
