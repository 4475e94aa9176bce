"""Compaction: a long conversation summarized so it fits the model's window, over the real store, git
and the loopback Messages API.

By the threshold (the input tokens the API reports against ``CHIMERA_CONTEXT_WINDOW``), by a
"prompt is too long" answer (once, then one retry), and by hand (``Session.compact``). The tail
is kept as it was and never parts a tool call from its result; the compaction is a node in the
tree, so a point before it still has the whole history.
"""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chimera.core.context import Context
from chimera.core.events import CompactionDone, StepEvent
from chimera.core.loops.compaction import (
    COMPACTION_HEADER,
    SUMMARY_SYSTEM,
    Compaction,
    cut,
    summary_message,
    transcript,
)
from chimera.core.loops.plan_execute import PLANNING_PROMPT
from chimera.core.messages import STEERING_LEAD, reminder_block
from chimera.core.sessions.reading import model_context
from chimera.core.sessions.session import Session
from chimera.core.sessions.start import RunOptions, start_session
from chimera.tui.cli import main
from tests.cli_runner import assert_one_line_error, run_here
from tests.fake_anthropic import DEFAULT_MODEL as MODEL
from tests.fake_anthropic import (
    FakeAnthropic,
    Received,
    conversation_problem,
    message,
    paused,
    status,
    text,
    tool_use,
)

WINDOW = 10_000  # tokens: the threshold (0.8) is 8,000
TASK = "Read the three files and tell me what they hold."
TOO_LONG = "prompt is too long: 210000 tokens > 200000 maximum"


@pytest.fixture
def small_window(model_env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """The model environment with a context window of WINDOW tokens, set here and returned for a child."""
    monkeypatch.setenv("CHIMERA_CONTEXT_WINDOW", str(WINDOW))
    return {**model_env, "CHIMERA_CONTEXT_WINDOW": str(WINDOW)}


@pytest.fixture
def summarizable_project(project: Path) -> Path:
    """The project holding a.txt, b.txt and c.txt, each long enough to be worth summarizing."""
    for name in ("a.txt", "b.txt", "c.txt"):
        filler = "".join(f"line {i} of {name}\n" for i in range(60))
        (project / name).write_text(f"{name} holds the letter {name[0]}\n{filler}")
    return project


def read(name: str, *, input_tokens: int = 500) -> Any:
    return message(tool_use(f"r{name[0]}", "read", {"path": name}), stop_reason="tool_use", input_tokens=input_tokens)


def open_session(project: Path, **options: object) -> Session:
    return start_session(RunOptions(workdir=project, model=MODEL, permission_mode="bypass", **options))  # type: ignore[arg-type]


async def run(session: Session, task: str) -> tuple[list[StepEvent], Any]:
    seen: list[StepEvent] = []
    session.bus.subscribe(seen.append)
    result = await session.run(task)
    assert await session.bus.drain(timeout=5)
    return seen, result


def compactions(events: list[StepEvent]) -> list[CompactionDone]:
    return [e for e in events if isinstance(e, CompactionDone)]


def is_summary_request(received: Received) -> bool:
    return json.dumps(received.body.get("system")).find(SUMMARY_SYSTEM[:40]) >= 0


def calls_in(messages: list[dict[str, Any]]) -> list[str]:
    return [
        b["input"]["path"]
        for m in messages
        if isinstance(m["content"], list)
        for b in m["content"]
        if b.get("type") == "tool_use"
    ]


@pytest.mark.usefixtures("small_window")
async def test_past_the_threshold_the_older_part_is_summarized_and_the_tail_kept_whole(
    api: FakeAnthropic, summarizable_project: Path
) -> None:
    api.script(
        read("a.txt"),
        read("b.txt", input_tokens=3_000),
        read("c.txt", input_tokens=9_000),  # past 80% of the window: compact before the next request
        message(text("SUMMARY: a.txt and b.txt were read.")),
        message(text("They hold a, b and c.")),
    )
    session = open_session(summarizable_project)
    try:
        events, result = await run(session, TASK)
        assert result.success, result.reason

        [done] = compactions(events)
        assert done.reason == "threshold"
        assert done.tokens_before == 9_030  # what the API reported: 9,000 in, 30 out
        assert 0 < done.tokens_after < done.tokens_before
        assert done.summary == "SUMMARY: a.txt and b.txt were read."

        summary_request = api.requests[3]
        assert is_summary_request(summary_request)
        assert not summary_request.body.get("tools")  # the summarizer is offered no tool to call
        asked = json.dumps(summary_request.messages)
        assert "a.txt holds the letter a" in asked
        assert TASK in asked

        after = api.requests[4]
        assert conversation_problem(after.body) is None
        first = after.messages[0]
        assert first["role"] == "user"
        blocks = [b["text"] for b in first["content"]]
        assert blocks[0] == COMPACTION_HEADER
        assert any(TASK in b for b in blocks)  # the task, verbatim
        assert any("SUMMARY: a.txt and b.txt were read." in b for b in blocks)
        # The last call stays with its result; the older calls are only in the summary.
        assert calls_in(after.messages) == ["c.txt"]
        assert after.messages[1]["role"] == "assistant"
        assert after.messages[2]["content"][0]["type"] == "tool_result"
        assert "c.txt holds the letter c" in json.dumps(after.messages[2])
    finally:
        await session.close()


@pytest.mark.usefixtures("small_window")
async def test_a_point_before_the_compaction_keeps_the_whole_history_and_a_resume_the_compacted_one(
    api: FakeAnthropic, summarizable_project: Path
) -> None:
    api.script(
        read("a.txt"),
        read("b.txt", input_tokens=9_000),
        message(text("SUMMARY: a.txt was read.")),
        message(text("Done.")),
        message(text("Still here.")),
    )
    session = open_session(summarizable_project)
    try:
        await run(session, TASK)
        tree = session.store.tree
        [node] = [n for n in tree.path() if n.kind == "compaction"]
        assert tree.nodes[tree.kept[node.id]].kind == "assistant"
        before = node.parent_id
        assert before is not None
        assert calls_in(model_context(tree, before).messages) == ["a.txt", "b.txt"]  # nothing deleted
        assert calls_in(model_context(tree).messages) == ["b.txt"]
        assert model_context(tree).messages[0]["content"][0]["text"] == COMPACTION_HEADER
        session_id = session.id
    finally:
        await session.close()

    resumed = open_session(summarizable_project, resume=session_id)
    try:
        await run(resumed, "And now?")
        sent = api.requests[-1].messages
        assert conversation_problem(api.requests[-1].body) is None
        assert sent[0]["content"][0]["text"] == COMPACTION_HEADER
        assert calls_in(sent) == ["b.txt"]
    finally:
        await resumed.close()


@pytest.mark.usefixtures("small_window")
async def test_a_switch_to_before_the_compaction_brings_back_the_whole_conversation(
    api: FakeAnthropic, summarizable_project: Path
) -> None:
    api.script(
        read("a.txt"),
        read("b.txt", input_tokens=9_000),
        message(text("SUMMARY: a.txt was read.")),
        message(text("Done.")),
        message(text("From the full history.")),
    )
    session = open_session(summarizable_project)
    try:
        await run(session, TASK)
        tree = session.store.tree
        [node] = [n for n in tree.path() if n.kind == "compaction"]
        assert node.parent_id is not None
        session.switch(node.parent_id)
        await run(session, "Go on from here.")
        sent = api.requests[-1].messages
        assert calls_in(sent) == ["a.txt", "b.txt"]
        assert COMPACTION_HEADER not in json.dumps(sent)
    finally:
        await session.close()


@pytest.mark.parametrize(
    ("error_type", "words"),
    [
        pytest.param("invalid_request_error", TOO_LONG, id="anthropic"),
        pytest.param(
            "exceed_context_size_error",
            "the request exceeds the available context size, try increasing it",
            id="llama.cpp",
        ),
        pytest.param(
            "exceed_context_size_error", "request (5210 tokens) exceeds the context (4096 tokens)", id="llama.cpp-type"
        ),
        pytest.param(
            "BadRequestError",
            "This model's maximum context length is 4096 tokens. However, you requested 5120 tokens "
            "(1024 in the messages, 4096 in the completion). Please reduce the length of the messages or completion.",
            id="vllm",
        ),
        pytest.param(
            "BadRequestError",
            "The decoder prompt (length 5120) is longer than the maximum model length of 4096. "
            "Make sure that `max_model_len` is no smaller than the number of text tokens.",
            id="vllm-v1",
        ),
        pytest.param(
            "invalid_request_error",
            "litellm.ContextWindowExceededError: litellm.BadRequestError: context window of 8192 tokens exceeded",
            id="litellm",
        ),
        pytest.param(
            "invalid_request_error",
            "The number of tokens to keep from the initial prompt is greater than the context length.",
            id="lm-studio",
        ),
    ],
)
@pytest.mark.usefixtures("small_window")
async def test_prompt_too_long_compacts_once_and_retries(
    api: FakeAnthropic, summarizable_project: Path, error_type: str, words: str
) -> None:
    api.script(
        read("a.txt"),
        read("b.txt"),
        status(400, error_type, words),
        message(text("SUMMARY: both read.")),
        message(text("Done.")),
    )
    session = open_session(summarizable_project)
    try:
        events, result = await run(session, TASK)
        assert result.success, result.reason
        [done] = compactions(events)
        assert done.reason == "prompt_too_long"
        assert is_summary_request(api.requests[3])
        retried = api.requests[4]
        assert conversation_problem(retried.body) is None
        assert calls_in(retried.messages) == ["b.txt"]
        assert len(api.requests) == 5
    finally:
        await session.close()


@pytest.mark.usefixtures("small_window")
async def test_prompt_too_long_again_after_compacting_ends_the_run_with_one_line(
    api: FakeAnthropic, summarizable_project: Path
) -> None:
    api.script(
        read("a.txt"),
        read("b.txt"),
        status(400, "invalid_request_error", TOO_LONG),
        message(text("SUMMARY: both read.")),
        status(400, "invalid_request_error", TOO_LONG),
    )
    session = open_session(summarizable_project)
    try:
        events, result = await run(session, TASK)
        assert not result.success
        assert result.reason == "prompt_too_long"
        assert "even after compacting" in result.error
        assert "\n" not in result.error
        assert len(compactions(events)) == 1
        assert len(api.requests) == 5  # one compaction, one retry: no loop
    finally:
        await session.close()


@pytest.mark.usefixtures("small_window")
async def test_compact_by_hand_with_a_focus(api: FakeAnthropic, summarizable_project: Path) -> None:
    api.script(
        read("a.txt"),
        read("b.txt"),
        message(text("Read both.")),
        message(text("SUMMARY by hand.")),
        message(text("Next.")),
    )
    session = open_session(summarizable_project)
    try:
        await run(session, TASK)
        seen: list[StepEvent] = []
        session.bus.subscribe(seen.append)
        done = await session.compact("the letters in the files")
        assert done is not None
        assert done.reason == "manual"
        assert await session.bus.drain(timeout=5)
        assert done in seen
        asked = api.requests[3]
        assert is_summary_request(asked)
        assert "Pay particular attention to: the letters in the files" in json.dumps(asked.messages)

        await run(session, "Next?")
        sent = api.requests[-1].messages
        assert conversation_problem(api.requests[-1].body) is None
        assert sent[0]["content"][0]["text"] == COMPACTION_HEADER
        assert sent[1] == {"role": "assistant", "content": [{"type": "text", "text": "Read both."}]}  # the last answer
        assert calls_in(sent) == []
        assert "Next?" in json.dumps(sent[-1])
    finally:
        await session.close()


@pytest.mark.usefixtures("small_window")
async def test_a_summary_longer_than_what_it_stands_for_changes_nothing(
    api: FakeAnthropic, summarizable_project: Path
) -> None:
    api.script(
        read("a.txt"),
        read("b.txt", input_tokens=9_000),
        message(text("SUMMARY " * 5_000)),  # longer than the two reads it would replace
        message(text("Done.")),  # the threshold does not ask again this run
    )
    session = open_session(summarizable_project)
    try:
        events, result = await run(session, TASK)
        assert result.success
        assert compactions(events) == []
        assert all(n.kind != "compaction" for n in session.store.tree.nodes.values())
        assert calls_in(api.requests[-1].messages) == ["a.txt", "b.txt"]
        assert len(api.requests) == 4
    finally:
        await session.close()


@pytest.mark.usefixtures("small_window")
async def test_the_plan_survives_a_compaction_verbatim(api: FakeAnthropic, summarizable_project: Path) -> None:
    api.script(
        message(text("- [ ] read a.txt\n- [ ] read b.txt")),  # the plan, approved by the flag
        read("a.txt", input_tokens=9_000),
        message(text("SUMMARY: a.txt was read.")),
        message(text("Step 1 done.")),
        message(text("Step 2 done.")),
    )
    session = open_session(summarizable_project, loop="plan", approve_plan=True, verify="true")
    try:
        events, result = await run(session, TASK)
        assert result.success, result.error
        assert len(compactions(events)) == 1
        assert is_summary_request(api.requests[2])
        first = [b["text"] for b in api.requests[3].messages[0]["content"]]
        assert "The plan, steps done so far checked:\n- [ ] read a.txt\n- [ ] read b.txt" in first
        assert any(TASK in b for b in first)
    finally:
        await session.close()


@pytest.mark.parametrize("window", [4096, 8192, 32768])
@pytest.mark.usefixtures("small_window")
async def test_the_summary_request_fits_a_small_window(
    api: FakeAnthropic, summarizable_project: Path, monkeypatch: pytest.MonkeyPatch, window: int
) -> None:
    """A local model with a small window (llama.cpp, vLLM) can still be asked for the summary: the
    transcript and the summary's output limit together fit its window."""
    monkeypatch.setenv("CHIMERA_CONTEXT_WINDOW", str(window))
    names = ["d.txt", "e.txt", "f.txt", "g.txt", "h.txt", "i.txt"]
    for name in names:
        (summarizable_project / name).write_text(
            "".join(f"line {i} of {name}, which says something\n" for i in range(600))
        )
    api.script(
        *(read(name) for name in names[:-1]),
        read(names[-1], input_tokens=window - 100),
        message(text("SUMMARY: six files read.")),
        message(text("Done.")),
    )
    session = open_session(summarizable_project)
    try:
        events, result = await run(session, TASK)
        assert result.success, result.error
        assert len(compactions(events)) == 1
        [asked] = [r for r in api.requests if is_summary_request(r)]
        sent = len(json.dumps(asked.body["system"])) + len(json.dumps(asked.messages))
        assert sent / 2 + asked.body["max_tokens"] <= window  # even at two characters a token
    finally:
        await session.close()


@pytest.mark.usefixtures("small_window")
async def test_a_compaction_in_the_planning_pass_keeps_the_instruction_to_plan(
    api: FakeAnthropic, summarizable_project: Path
) -> None:
    """Compacted while it plans, the model is still told to answer with a checklist and change nothing."""
    api.script(
        read("a.txt"),
        read("b.txt"),
        read("c.txt", input_tokens=9_000),  # still looking around: compact before the next request
        message(text("SUMMARY: three files read.")),
        message(text("- [ ] write d.txt")),  # the plan
        message(text("Step 1 done.")),
    )
    session = open_session(summarizable_project, loop="plan", approve_plan=True, verify="true")
    try:
        events, result = await run(session, TASK)
        assert result.success, result.error
        assert len(compactions(events)) == 1
        assert is_summary_request(api.requests[3])
        planning = api.requests[4]
        assert conversation_problem(planning.body) is None
        assert PLANNING_PROMPT in json.dumps(planning.messages)
        assert "write" not in json.dumps(planning.body.get("tools"))  # still read-only
        executing = json.dumps(api.requests[5].messages)
        assert "Before changing anything, make a plan" not in executing.split("Step 1 of 1")[-1]
    finally:
        await session.close()


@pytest.mark.usefixtures("small_window")
async def test_a_compaction_by_hand_after_a_plan_run_says_nothing_of_its_steps(
    api: FakeAnthropic, summarizable_project: Path
) -> None:
    api.script(
        message(text("- [ ] read a.txt\n- [ ] read b.txt")),
        read("a.txt"),
        message(text("Step 1 done.")),
        read("b.txt"),
        message(text("Step 2 done.")),
        message(text("SUMMARY by hand.")),
    )
    session = open_session(summarizable_project, loop="plan", approve_plan=True, verify="true")
    try:
        await run(session, TASK)
        done = await session.compact()
        assert done is not None
        first = [b["text"] for b in session.agent.context.messages[0]["content"]]
        assert not any(t.startswith("Step 2 of 2") or "Step 2 of 2" in t.split(":", 1)[0] for t in first)
        assert not any("the loop" in t.split("\n", 1)[0].lower() for t in first[1:])
    finally:
        await session.close()


@pytest.mark.usefixtures("small_window")
async def test_stopping_a_compaction_by_hand_stops_it_at_once_and_records_nothing(
    api: FakeAnthropic, summarizable_project: Path
) -> None:
    """Stopped while the summary streams (the workbench's escape cancels it), at whatever moment,
    the compaction ends at once and the conversation is as it was: the stop is never lost."""
    api.script(read("a.txt"), read("b.txt"), message(text("Read both.")))
    session = open_session(summarizable_project)
    try:
        await run(session, TASK)
        leaf, count = session.store.tree.leaf, len(session.store.tree.nodes)
        for moment in range(8):  # the stop lands a little later each time, while events arrive
            release, reached = threading.Event(), threading.Event()
            api.script(paused(message(text("SUMMARY that never comes.")), release, reached, after=3))
            compacting = asyncio.create_task(session.compact())
            try:
                assert await asyncio.to_thread(reached.wait, 10)
                session.interrupt()
                for _ in range(moment):
                    await asyncio.sleep(0)
                compacting.cancel()
                finished, _ = await asyncio.wait({compacting}, timeout=5)
                assert finished, f"the compaction went on after it was stopped (moment {moment})"
                assert compacting.cancelled(), f"the compaction ended as {compacting.result()} (moment {moment})"
            finally:
                release.set()
            assert (session.store.tree.leaf, len(session.store.tree.nodes)) == (leaf, count)
        api.script(message(text("Still here.")))
        _, result = await run(session, "go on")
        assert result.success
        assert conversation_problem(api.requests[-1].body) is None
        assert calls_in(api.requests[-1].messages) == ["a.txt", "b.txt"]
    finally:
        await session.close()


@pytest.mark.usefixtures("small_window")
async def test_a_short_conversation_has_nothing_to_compact(api: FakeAnthropic, summarizable_project: Path) -> None:
    api.script(message(text("Hello.")))
    session = open_session(summarizable_project)
    try:
        await run(session, "hi")
        assert await session.compact() is None
        assert len(api.requests) == 1
        assert all(n.kind != "compaction" for n in session.store.tree.path())
    finally:
        await session.close()


# --- headless ---------------------------------------------------------------------------


def test_chimera_run_json_reports_the_compaction(
    api: FakeAnthropic, small_window: dict[str, str], summarizable_project: Path, isolated_env: Path
) -> None:
    api.script(
        read("a.txt"),
        read("b.txt", input_tokens=9_000),
        message(text("SUMMARY: a.txt was read.")),
        message(text("Done.")),
    )
    proc = run_here(
        "run", TASK, "--json", "--workdir", str(summarizable_project), "--permission-mode", "bypass", env=small_window
    )
    assert proc.returncode == 0, proc.stderr
    events = [json.loads(line) for line in proc.stdout.splitlines()]
    [done] = [e for e in events if e["type"] == "compaction"]
    assert done["reason"] == "threshold"
    assert done["tokens_before"] == 9_030
    assert done["tokens_after"] < 9_030
    assert events[-1]["type"] == "run_finished"
    assert events[-1]["success"]


def test_chimera_run_says_it_compacted_on_stderr(
    api: FakeAnthropic, small_window: dict[str, str], summarizable_project: Path, isolated_env: Path
) -> None:
    api.script(
        read("a.txt"),
        read("b.txt", input_tokens=9_000),
        message(text("SUMMARY: a.txt was read.")),
        message(text("Done.")),
    )
    proc = run_here(
        "run", TASK, "--workdir", str(summarizable_project), "--permission-mode", "bypass", env=small_window
    )
    assert proc.returncode == 0, proc.stderr
    [line] = [line for line in proc.stderr.splitlines() if "compacted" in line]
    assert line.startswith("  ⇣ compacted the conversation (the context was filling up): about 9.0k → ")
    assert proc.stdout.strip() == "Done."


@pytest.mark.parametrize("value", ["lots", "12", "-5", "1e6", "32768²", "9" * 5000, "10" + "0" * 12])
def test_a_context_window_that_is_not_a_size_is_one_line(value: str, isolated_env: Path, project: Path) -> None:
    env = {"CHIMERA_CONTEXT_WINDOW": value, "ANTHROPIC_BASE_URL": "http://127.0.0.1:9", "ANTHROPIC_API_KEY": "k"}
    proc = run_here("run", "hi", "--workdir", str(project), env=env)
    assert_one_line_error(proc, "CHIMERA_CONTEXT_WINDOW", "in tokens")


# --- where the cut falls, and what survives ------------------------------------------------

_user = st.text(alphabet="abc ", min_size=1, max_size=40)


@st.composite
def conversations(draw: st.DrawFn) -> list[dict[str, Any]]:
    """A valid conversation: the task, then turns that call tools (answered) or only speak."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": draw(_user)}]
    for turn in range(draw(st.integers(1, 12))):
        calls = draw(st.integers(0, 3))
        words = draw(st.text(alphabet="xyz ", max_size=300))
        blocks: list[dict[str, Any]] = [{"type": "text", "text": words or "ok"}]
        blocks += [{"type": "tool_use", "id": f"t{turn}_{i}", "name": "read", "input": {}} for i in range(calls)]
        messages.append({"role": "assistant", "content": blocks})
        if calls:
            output = draw(st.text(alphabet="0123", max_size=400))
            results = [{"type": "tool_result", "tool_use_id": f"t{turn}_{i}", "content": output} for i in range(calls)]
            messages.append({"role": "user", "content": results})
        elif draw(st.booleans()):
            messages.append({"role": "user", "content": draw(_user)})
    return messages


@settings(max_examples=300, deadline=None)
@given(conversations(), st.floats(0.0, 1.0))
def test_the_cut_never_parts_a_call_from_its_result_and_keeps_the_last_answer(
    messages: list[dict[str, Any]], keep: float
) -> None:
    context = Context.along((m, f"n{i}") for i, m in enumerate(messages))
    split = cut(context, Compaction(keep=keep))
    if split is None:
        return
    assert split.older
    assert split.kept
    assert split.older + split.kept == messages
    assert split.kept[0]["role"] == "assistant"
    assert split.kept_from == context.starts[len(split.older)]
    last_answer = max(i for i, m in enumerate(messages) if m["role"] == "assistant")
    assert len(split.older) <= last_answer
    compacted = [summary_message("S", split.older, {}), *split.kept]
    assert conversation_problem({"messages": compacted}) is None


def test_a_second_compaction_keeps_the_task_and_the_persons_words_from_the_first() -> None:
    steering = reminder_block(f"{STEERING_LEAD}\n\nuse tabs, not spaces")
    first_part = [
        {"role": "user", "content": "rename foo to bar everywhere"},
        {"role": "assistant", "content": [{"type": "text", "text": "On it."}]},
        {"role": "user", "content": [{"type": "text", "text": "also update the docs"}, steering]},
    ]
    first = summary_message("did half", first_part, {"The plan": "- [x] code\n- [ ] docs"})
    second = summary_message("did the rest", [first, {"role": "assistant", "content": "ok"}], {})
    texts = [b["text"] for b in second["content"]]
    assert texts[0] == COMPACTION_HEADER
    assert any(t.endswith("rename foo to bar everywhere") for t in texts)
    assert [t for t in texts if "also update the docs" in t or "use tabs" in t] == [
        "Later, the person said:\nalso update the docs",
        "Later, the person said:\nuse tabs, not spaces",
    ]
    assert sum("did" in t for t in texts) == 1  # only the new summary: the old one was summarized into it
    assert "The plan:\n- [x] code\n- [ ] docs" in [b["text"] for b in first["content"]]


def test_a_second_compaction_keeps_the_plan_as_the_plan_and_the_persons_words_as_they_said_them() -> None:
    """What the first compaction kept (the plan) is not the person's words in the second, and a
    person whose words begin like a part of a summary is still quoted whole."""
    task = "Summary of the work so far:\nnothing yet. Rename foo to bar everywhere."
    first_part = [
        {"role": "user", "content": task},
        {"role": "assistant", "content": [{"type": "text", "text": "On it."}]},
        {"role": "user", "content": "Later, the person said:\nthis is how I talk"},
    ]
    first = summary_message("did half", first_part, {"The plan": "- [x] code\n- [ ] docs"})
    after = [first, {"role": "assistant", "content": "ok"}]
    resumed = summary_message("did more", after, {})  # a new process remembers nothing: the first compaction does
    texts = [b["text"] for b in resumed["content"]]
    assert texts.count("The plan:\n- [x] code\n- [ ] docs") == 1
    assert not any("The plan" in t for t in texts if t.startswith("Later, the person said:"))
    assert "The task, in the person's words:\n" + task in texts
    assert "Later, the person said:\nLater, the person said:\nthis is how I talk" in texts
    assert sum("did" in t for t in texts) == 1
    updated = summary_message("did it all", after, {"The plan": "- [x] code\n- [x] docs"})
    plans = [t for t in (b["text"] for b in updated["content"]) if "The plan" in t]
    assert plans == ["The plan:\n- [x] code\n- [x] docs"]


def test_the_transcript_cuts_a_huge_output_in_the_middle() -> None:
    huge = "HEAD" + "x" * 50_000 + "TAIL"
    ls = {"type": "tool_use", "id": "t1", "name": "bash", "input": {"command": "ls"}}
    messages = [
        {"role": "assistant", "content": [ls]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": huge}]},
    ]
    shown = transcript(messages, limit=100_000, max_block=4_000)
    assert "[bash result] HEAD" in shown
    assert shown.rstrip().endswith("TAIL")
    assert "characters left out" in shown
    assert len(shown) < 5_000


@pytest.mark.usefixtures("small_window")
def test_tree_export_and_replay_of_a_compacted_session(
    api: FakeAnthropic, summarizable_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    api.script(
        read("a.txt"),
        read("b.txt", input_tokens=9_000),
        message(text("SUMMARY: a.txt was read.")),
        message(text("They hold a and b.")),
    )

    async def compacted() -> Session:
        session = open_session(summarizable_project)
        try:
            await run(session, TASK)
        finally:
            await session.close()
        return session

    session = asyncio.run(compacted())
    capsys.readouterr()

    assert main(["tree", session.id, "--json"]) == 0
    kinds = [n["kind"] for n in json.loads(capsys.readouterr().out)["nodes"]]
    assert kinds.count("compaction") == 1
    assert kinds.index("compaction") == len(kinds) - 2  # after the second read's result, before the answer

    assert main(["export", session.id]) == 0
    exported = capsys.readouterr().out
    assert exported.index("read") < exported.index("## Summary of earlier turns") < exported.index("They hold a and b.")
    assert "SUMMARY: a.txt was read." in exported

    assert main(["replay", session.id, "--json"]) == 0  # the recorded answers play back over the whole history
    replayed = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert replayed[-1]["type"] == "run_finished"
    assert replayed[-1]["success"]
