"""Shared fixtures: a private CHIMERA_HOME with no model configured, the loopback Messages API server,
the model environment that points Chimera at it, a project folder (empty, or the person's git repository)
and the agent's workspace over it (``env``; modules that need another folder declare their own).

Helpers that are not fixtures live in modules of their own: ``tests.cli_runner`` (the ``chimera``
command), ``tests.fake_anthropic`` (the server and its replies), ``tests.anthropic_harness`` and
``tests.helpers_loop`` (driving the loop in-process), ``tests.tui_helpers`` (the workbench under Pilot),
``tests.session_helpers`` (sessions made by hand, a run killed mid-way), ``tests.switch_helpers``,
``tests.interrupt_helpers`` (stopping a headless run), ``tests.git_helpers`` and ``tests.processes``.
No test imports another test file.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

from chimera.core.env.local import LocalEnvironment
from tests.anthropic_harness import MODEL_SETTINGS, serve_fake
from tests.fake_anthropic import DEFAULT_MODEL, FakeAnthropic
from tests.git_helpers import git
from tests.processes import Reaper, subreaper


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto``: two test workers a core. Most of the suite waits on what it starts (the ``chimera`` command,
    servers, a terminal), not on the CPU: on two cores, two workers kept them busy a little over a third of the
    time, and four ran the whole suite in 6:36 where two took over ten minutes."""
    return 2 * (os.cpu_count() or 1)


@pytest.fixture(autouse=True)
def isolated_env(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Path]:
    """Every test gets its own CHIMERA_HOME and no API key, base URL or model from the machine. Sandboxed
    commands may write the test's tmp_path (the FIFOs through which commands tell a test their pid live
    there); the sandbox's own tests take that away (``tests.sandbox_helpers``)."""
    home = tmp_path_factory.mktemp("chimera-home")
    monkeypatch.setenv("CHIMERA_HOME", str(home))
    monkeypatch.setenv("CHIMERA_SANDBOX_WRITABLE", str(tmp_path))
    for name in MODEL_SETTINGS:
        monkeypatch.delenv(name, raising=False)
    return home


@pytest.fixture(autouse=True)
def _screens_of_a_sandboxing_machine(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """A screen snapshot shows the status line of a machine whose kernel sandboxes commands (``sandboxed``),
    whatever this machine offers, so the reviewed pictures hold on any machine; only the words are fixed here,
    never what confines a command (the sandbox's own tests use the real kernel)."""
    if "snap_compare" not in request.fixturenames:
        return
    from chimera.core.sandbox import choice
    from chimera.core.sandbox.probe import Support

    monkeypatch.setattr(choice, "support", lambda: Support("landlock", 7))


@pytest.fixture
def snap_compare(snap_compare: Callable[..., bool]) -> Callable[..., bool]:
    """pytest-textual-snapshot's ``snap_compare`` with every input's and editor's cursor held still and shown before the
    picture is taken: a blinking cursor is on or off by the clock, so a picture would differ by when it was
    taken. A test's own ``run_before`` runs first (a run's end turns the blink back on)."""

    def compare(
        app: Any, *args: Any, run_before: Callable[..., Awaitable[None] | None] | None = None, **kw: Any
    ) -> bool:
        async def steady(pilot: Any) -> None:
            if run_before is not None:
                done = run_before(pilot)
                if inspect.isawaitable(done):
                    await done
            from textual.widgets import Input, TextArea

            for field in [*pilot.app.query(Input), *pilot.app.query(TextArea)]:
                field.cursor_blink = False
            await pilot.pause()

        return snap_compare(app, *args, run_before=steady, **kw)

    return compare


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAnthropic]:
    """The Messages API on 127.0.0.1, answering from its script; no proxy from the machine sits between."""
    with serve_fake(monkeypatch) as fake:
        yield fake


@pytest.fixture
def model_env(api: FakeAnthropic, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """Chimera pointed at :func:`api` (base URL, a key, a model), set in this process and returned for a child's.

    A test that needs another key or model passes ``env={**model_env, ...}`` to the child.
    """
    env = {"ANTHROPIC_BASE_URL": api.url, "ANTHROPIC_API_KEY": "k", "CHIMERA_MODEL": DEFAULT_MODEL}
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return env


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """An empty folder to work in, apart from everything else the test makes."""
    root = tmp_path / "project"
    root.mkdir()
    return root


@pytest.fixture
def env(project: Path) -> Iterator[LocalEnvironment]:
    """The agent's workspace over the project folder (a LocalEnvironment), closed afterwards."""
    with LocalEnvironment(project) as environment:
        yield environment


@pytest.fixture
def git_project(project: Path) -> Path:
    """The project folder as the person's own git repository, with one commit (README.md saying "project")."""
    git(project, "init", "-q", "-b", "main")
    (project / "README.md").write_text("project\n")
    git(project, "add", "README.md")
    git(project, "commit", "-q", "-m", "start")
    return project


@pytest.fixture
def reaper() -> Iterator[Reaper]:
    """Descendants' orphans become ours, so a test can prove they were killed (Linux only)."""
    with subreaper() as r:
        yield r


# Property tests run on slow, shared CI machines: no per-example deadline, a fixed
# number of examples, no example database written into the checkout, and the same
# examples every run (derandomized), so CI never goes red by chance. To search
# afresh and harder: `pytest --hypothesis-profile=explore tests/core/test_session_properties.py`.
settings.register_profile("chimera", deadline=None, max_examples=60, database=None, print_blob=True, derandomize=True)
settings.register_profile("explore", deadline=None, max_examples=1000, database=None, print_blob=True)
settings.load_profile("chimera")
