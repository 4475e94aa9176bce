"""Runs chimera's agent loop over the real ``anthropic`` SDK against :mod:`fake_anthropic`.

The ``api`` fixture (conftest.py) is :func:`serve_fake`; test modules build
their provider fixtures on it with :func:`open_provider`, and drive runs with
:func:`collect`.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterator, Mapping
from pathlib import Path
from typing import Any, TypeVar

import anthropic  # noqa: F401 - imported at collection: the first import takes seconds, which must not count against a run
import pytest

from chimera.core.agent_loop import AgentLoop
from chimera.core.env.local import LocalEnvironment
from chimera.core.events import RetryScheduled, RunFinished, StepEvent
from chimera.core.loop import ReAct
from chimera.core.loop_config import LoopConfig, RetryPolicy
from chimera.core.providers.anthropic import AnthropicProvider
from chimera.core.tool_group import DEFAULT_TOOLS
from tests.fake_anthropic import DEFAULT_MODEL, FakeAnthropic

MODEL = DEFAULT_MODEL  # priced as claude-sonnet, and not on the SDK's deprecated list
API_KEY = "test-key"
STALL_TIMEOUT = 0.5
RUN_TIMEOUT = 10.0  # a guard against a hung run, never reached by a passing test

_PROXY_VARS = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")
# The machine's model settings, which no test inherits (conftest's isolated_env takes them away).
MODEL_SETTINGS = (
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_BASE_URL",
    "CHIMERA_MODEL",
    "CHIMERA_THINKING",
    "CHIMERA_MAX_TOOL_OUTPUT",
    "ANTHROPIC_PROFILE",
    "ANTHROPIC_CONFIG_DIR",
)

_E = TypeVar("_E", bound=StepEvent)


@contextlib.contextmanager
def serve_fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAnthropic]:
    """A running fake Messages API; requests to it never go through a proxy from the machine."""
    unproxied(monkeypatch)
    with FakeAnthropic() as fake:
        yield fake
    assert not fake.errors, f"the fake server failed while handling a request: {fake.errors!r}"


def unproxied(monkeypatch: pytest.MonkeyPatch) -> None:
    """Requests from this process to loopback go through no proxy from the machine."""
    for name in _PROXY_VARS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")


def direct_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """``environ`` without the machine's model settings and proxies, loopback never proxied: the environment of a
    process that a fixture longer-lived than one test starts (a test's own has these taken away already)."""
    kept = {name: value for name, value in environ.items() if name not in (*MODEL_SETTINGS, *_PROXY_VARS)}
    return {**kept, "NO_PROXY": "127.0.0.1,localhost"}


@contextlib.asynccontextmanager
async def open_provider(base_url: str, **options: Any) -> AsyncIterator[AnthropicProvider]:
    """An ``AnthropicProvider`` for ``base_url`` whose client is closed afterwards."""
    options.setdefault("api_key", API_KEY)
    options.setdefault("stall_timeout", STALL_TIMEOUT)
    provider = AnthropicProvider(options.pop("model", MODEL), base_url=base_url, **options)
    try:
        yield provider
    finally:
        await provider.aclose()


@contextlib.contextmanager
def workspace(path: Path) -> Iterator[LocalEnvironment]:
    with LocalEnvironment(path) as env:
        yield env


def config(*, max_steps: int = 20, max_tokens: int = 4096, **retry: Any) -> LoopConfig:
    """A loop config whose retries wait 0.01 s, doubling, unless ``retry`` says otherwise."""
    retry.setdefault("base_delay", 0.01)
    retry.setdefault("max_delay", 0.1)
    return LoopConfig(max_steps=max_steps, max_tokens=max_tokens, retry=RetryPolicy(**retry))


def make_core(provider: AnthropicProvider, env: LocalEnvironment, cfg: LoopConfig | None = None) -> AgentLoop:
    return AgentLoop(provider, DEFAULT_TOOLS, env, strategy=ReAct(cfg or config()))


async def collect(core: AgentLoop, task: str, *, within: float = RUN_TIMEOUT) -> list[StepEvent]:
    """Every event of one run of ``task``; a run not over ``within`` seconds fails with TimeoutError."""
    events: list[StepEvent] = []

    async def drain() -> None:
        async for event in core.run(task):
            events.append(event)

    await asyncio.wait_for(drain(), within)
    return events


def kinds(events: list[StepEvent]) -> list[str]:
    return [e.type for e in events]


def only(events: list[StepEvent], cls: type[_E]) -> list[_E]:
    return [e for e in events if isinstance(e, cls)]


def finished(events: list[StepEvent]) -> RunFinished:
    """The run's last event, which must be its ``run_finished``."""
    assert events, "the run produced no events"
    last = events[-1]
    assert isinstance(last, RunFinished), f"the run ended with {last.type}, not run_finished"
    assert len(only(events, RunFinished)) == 1
    return last


def retries(events: list[StepEvent]) -> list[tuple[str, int, float]]:
    """``(reason, attempt, wait_s)`` of every retry event, in order."""
    return [(e.reason, e.attempt, e.wait_s) for e in only(events, RetryScheduled)]
