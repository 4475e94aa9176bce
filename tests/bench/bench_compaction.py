"""Benchmark: what compaction costs Chimera itself, apart from the model's summary request.

Run by hand: `python tests/bench/bench_compaction.py`. Prints, for a conversation
of 2,000 messages (about 9 MB, the realistic mix of `bench_sessions`): the time to
choose the cut and write the transcript and summary message sent to the model;
the transcript's size against the conversation's; and, for the 10,000-entry
session of `bench_sessions`, rebuilding the context at the leaf with and without
5 compactions along the path (a resume: the session opened and the leaf's context decoded).
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

from chimera.core.loops.compaction import Compaction, cut, summary_message, summary_prompt
from chimera.core.sessions.reading import model_context
from chimera.core.sessions.store import SessionStore

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from tests.bench.bench_sessions import _build

WINDOW = 200_000  # tokens: the transcript's limit is about twice this in characters


def _median_ms(work: object, runs: int = 5) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        work()  # type: ignore[operator]
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def _long_session(home: Path, name: str, count: int, every: int | None) -> None:
    """``count`` nodes of turns (an answer with a read, its result), a compaction after every ``every``
    of them (kept from the last answer, as the loop does), all on one line."""
    with SessionStore.create(home, name, workdir=home, model="claude-sonnet-4-6") as store:
        store.add("user", {"role": "user", "content": "Refactor the parser and keep the tests green."})
        answer = ""
        for i in range(count):
            if i % 2 == 0:
                text = "I will look at the next module. " * 40
                call = {"type": "tool_use", "id": f"t{i}", "name": "read", "input": {"path": f"src/m{i}.py"}}
                answer = store.add(
                    "assistant", {"role": "assistant", "content": [{"type": "text", "text": text}, call]}
                ).id
            else:
                output = "".join(f"{n:>6}\tcode line {n} of module {i}\n" for n in range(150))
                result = {"type": "tool_result", "tool_use_id": f"t{i - 1}", "content": output}
                store.add("tool_result", {"role": "user", "content": [result]})
                if every and (i + 1) % every == 0:
                    summary = {"role": "user", "content": [{"type": "text", "text": f"summary of {i} nodes"}]}
                    store.add("compaction", summary, keep=answer)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        _build(home, 2_000, name="small")
        with SessionStore.open(home, "small") as store:
            context = model_context(store.tree)
        size = sum(len(json.dumps(m)) for m in context.messages)
        policy = Compaction()

        def prepare() -> str:
            split = cut(context, policy)
            assert split is not None
            summary_message("a summary", split.older, {"The plan": "- [ ] a step"})
            return summary_prompt(split.older, "", WINDOW * 2, policy.max_block)

        prompt = prepare()
        print(f"conversation: {len(context.messages):,} messages, {size / 1e6:.1f} MB")
        print(f"cut + transcript + summary message           {_median_ms(prepare):8.1f} ms")
        print(f"transcript sent to be summarized             {len(prompt) / 1e6:8.2f} MB ({len(prompt) / size:.0%})")

        results = {}
        for name, every in (("plain", None), ("compacted", 2_000)):
            _long_session(home, name, 10_000, every)

            def resume(name: str = name) -> int:
                with SessionStore.open(home, name, writable=False) as store:
                    return len(model_context(store.tree).messages)

            results[name] = (_median_ms(resume), resume())
        timing, messages = results["plain"]
        print(f"open + context at the leaf, 10,000 entries   {timing:8.1f} ms ({messages:,} messages)")
        timing, messages = results["compacted"]
        print(f"the same with 5 compactions on the path      {timing:8.1f} ms ({messages:,} messages sent)")


if __name__ == "__main__":
    main()
