"""Provides the fixtures of the tests of ``chimera acp``: one loopback model server and one ``chimera acp`` for the
test worker, shared as an editor shares one agent among its sessions, and each test's own view of them.

Starting ``chimera acp`` and its first session costs about two seconds (the interpreter, the session's machinery,
the model's SDK); every later session of the same process, a tenth of that. So most tests join the worker's agent
(``agent``): each opens its own sessions in its own folder, and its ``api`` is a scripted model of its own on the
shared server, taking only the requests of runs in that folder. A test that needs a process of its own (startup
options, stdout, an environment without a model) starts one with ``acp_agent``, pointed at the same server.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import pytest_asyncio

from tests.acp_helpers import Agent, Client, shared_acp_agent, working_in
from tests.anthropic_harness import serve_fake, unproxied
from tests.fake_anthropic import FakeAnthropic, status


@pytest.fixture(scope="session")
def shared_api() -> Iterator[FakeAnthropic]:
    """The worker's loopback Messages API; a request no test's model takes is refused in words that say so."""
    with pytest.MonkeyPatch.context() as patch, serve_fake(patch) as fake:
        fake.fallback = status(400, "invalid_request_error", "fake server: no test's model takes this request")
        yield fake


@pytest.fixture
def api(shared_api: FakeAnthropic, project: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAnthropic]:
    """This test's scripted model on the worker's server: the requests of the runs working in ``project``."""
    unproxied(monkeypatch)
    failed = len(shared_api.errors)
    with shared_api.routed(working_in(project)) as model:
        yield model
    assert shared_api.errors[failed:] == [], "the fake server failed while handling a request"


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def shared_agent(shared_api: FakeAnthropic, tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Agent]:
    """The worker's ``chimera acp`` (no options: sessions open in ask), on the worker's model server."""
    folder = tmp_path_factory.mktemp("shared-acp")
    async with shared_acp_agent(shared_api.url, folder, tmp_path_factory.getbasetemp()) as agent:
        yield agent


@pytest_asyncio.fixture(loop_scope="session")
async def agent(shared_agent: Agent) -> AsyncIterator[Agent]:
    """The worker's ``chimera acp`` as this test's client sees it: the sessions it opens, and their updates and
    questions, are its own (answered allow_once unless the test sets ``agent.client.answer``)."""
    if shared_agent.process.returncode is not None:
        pytest.fail(f"the worker's chimera acp ended (exit {shared_agent.process.returncode}): {shared_agent.stderr}")
    mine = shared_agent.joined(Client())
    yield mine
    await mine.leave()
