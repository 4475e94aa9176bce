"""The token counts a server reports are untrusted: nonsense in ``usage`` never reaches a total.

A hostile or buggy local server may send negative, huge, fractional, non-finite,
quoted, null or nested values for ``input_tokens``, ``output_tokens`` and the cache
fields. A nonsense value counts as if it were not sent (the last sound value of
that field, else 0): every total (the events, the status line, the run's cost,
the event log) stays a finite, non-negative whole number, the run goes on, and
nothing is said on stderr (pytest turns any warning into an error).
"""

from __future__ import annotations

import json
import math
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from chimera.core.env.local import LocalEnvironment
from chimera.core.events import UsageReported
from chimera.core.providers.anthropic import AnthropicProvider
from tests.anthropic_harness import collect, finished, make_core, only, open_provider, workspace
from tests.cli_runner import run_here
from tests.fake_anthropic import FakeAnthropic, Reply, message, text

NONSENSE = [
    "-5",
    "-0.5",
    "3.5",
    "1e400",
    "NaN",
    "Infinity",
    "-Infinity",
    "1" + "0" * 30,
    "1e300",
    '"many"',
    '"-3"',
    "null",
    "[7]",
    '{"n": 7}',
]
FIELDS = ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")


@pytest.fixture
async def provider(api: FakeAnthropic) -> AsyncIterator[AnthropicProvider]:
    async with open_provider(api.url) as p:
        yield p


@pytest.fixture
def env(tmp_path: Path) -> Iterator[LocalEnvironment]:
    with workspace(tmp_path) as e:
        yield e


def with_usage(answer: str, start: dict[str, str], delta: dict[str, str]) -> Reply:
    """A streamed answer whose message_start and message_delta carry ``usage`` fields as raw JSON text."""
    reply = message(text(answer))

    def raw(data: object, usage: dict[str, str], where: str) -> str:
        assert isinstance(data, dict)
        holder = data["message"] if where == "start" else data
        holder["usage"] = {}
        document = json.dumps(data)
        fields = ", ".join(f'"{name}": {value}' for name, value in usage.items())
        return document.replace('"usage": {}', '"usage": {' + fields + "}")

    name, data = reply.events[0]
    reply.events[0] = (name, raw(data, start, "start"))
    index = next(i for i, (n, _) in enumerate(reply.events) if n == "message_delta")
    name, data = reply.events[index]
    reply.events[index] = (name, raw(data, delta, "delta"))
    return reply


def counts(event: UsageReported) -> tuple[int, int, int, int]:
    return (event.input_tokens, event.output_tokens, event.cache_read_tokens, event.cache_write_tokens)


def assert_sound(event: UsageReported) -> None:
    for value in counts(event):
        assert type(value) is int
        assert value >= 0
    for cost in (event.cost, event.total_cost):
        assert isinstance(cost, float)
        assert math.isfinite(cost)
        assert cost >= 0


@pytest.mark.parametrize("value", NONSENSE)
async def test_nonsense_in_the_closing_usage_keeps_the_counts_already_sent(
    api: FakeAnthropic, provider: AnthropicProvider, env: LocalEnvironment, value: str
) -> None:
    """Nonsense in every message_delta field leaves message_start's sound counts; the run succeeds."""
    start = {
        "input_tokens": "120",
        "output_tokens": "1",
        "cache_read_input_tokens": "7",
        "cache_creation_input_tokens": "0",
    }
    api.script(with_usage("Fine.", start, dict.fromkeys(FIELDS, value)))
    events = await collect(make_core(provider, env), "go")

    done = finished(events)
    assert (done.success, done.answer) == (True, "Fine.")
    [usage] = only(events, UsageReported)
    assert_sound(usage)
    assert counts(usage) == (120, 1, 7, 0)
    assert math.isfinite(done.cost)


@pytest.mark.parametrize("value", NONSENSE)
async def test_nonsense_in_the_opening_usage_counts_as_nothing(
    api: FakeAnthropic, provider: AnthropicProvider, env: LocalEnvironment, value: str
) -> None:
    """Nonsense in every message_start field counts 0; a sound closing count still counts."""
    api.script(with_usage("Fine.", dict.fromkeys(FIELDS, value), {"output_tokens": "30"}))
    events = await collect(make_core(provider, env), "go")

    done = finished(events)
    assert done.success
    [usage] = only(events, UsageReported)
    assert_sound(usage)
    assert counts(usage) == (0, 30, 0, 0)
    assert done.cost == usage.cost


async def test_sound_counts_still_count(api: FakeAnthropic, provider: AnthropicProvider, env: LocalEnvironment) -> None:
    """Whole numbers, one written as 2.0e3, one in quotes (the SDK reads it as the number), and zero count as sent."""
    start = {
        "input_tokens": "2.0e3",
        "output_tokens": "0",
        "cache_read_input_tokens": '"5"',
        "cache_creation_input_tokens": "6",
    }
    api.script(with_usage("Fine.", start, {"output_tokens": "44"}))
    events = await collect(make_core(provider, env), "go")
    [usage] = only(events, UsageReported)
    assert counts(usage) == (2000, 44, 5, 6)
    assert usage.cost > 0


def test_a_run_against_a_server_sending_nonsense_usage_is_quiet_and_its_totals_sound(
    api: FakeAnthropic, model_env: dict[str, str], tmp_path: Path, isolated_env: Path
) -> None:
    """`chimera run`, JSON or plain: exit 0, nothing on stderr (plain: but its session), sound totals in the events
    and the event log."""
    api.script(
        with_usage("One.", dict.fromkeys(FIELDS, "NaN"), dict.fromkeys(FIELDS, '"many"')),
        with_usage("Two.", dict.fromkeys(FIELDS, "-7"), dict.fromkeys(FIELDS, "1e400")),
    )
    first = run_here("run", "go", "--json", "--workdir", str(tmp_path), env=model_env)
    assert (first.returncode, first.stderr) == (0, "")
    second = run_here("run", "go", "--workdir", str(tmp_path), env=model_env)
    assert (second.returncode, second.stdout) == (0, "Two.\n")
    [said] = second.stderr.splitlines()  # only the line naming the session it kept
    assert said.startswith("chimera: session ")
    events = [json.loads(line) for line in first.stdout.splitlines()]
    usages = [e for e in events if e["type"] == "usage"]
    assert [(u["input_tokens"], u["output_tokens"], u["total_cost"]) for u in usages] == [(0, 0, 0.0)]
    logs = sorted(isolated_env.glob("sessions/*/events.jsonl"))
    assert len(logs) == 2
    for log in logs:
        for line in log.read_text().splitlines():
            record = json.loads(line, parse_constant=lambda c, log=log: pytest.fail(f"{c} in {log}"))
            if record["type"] in {"usage", "run_finished"}:
                tokens = [record[k] for k in record if k.endswith("_tokens")]
                assert all(type(n) is int and n >= 0 for n in tokens), record
                assert math.isfinite(record["cost"])
                assert record["cost"] >= 0
