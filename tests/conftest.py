"""Shared fixtures: a private CHIMERA_HOME and an environment with no model configured."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

from tests.processes import Reaper, subreaper


@pytest.fixture(autouse=True)
def isolated_env(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Every test gets its own CHIMERA_HOME and no API key, base URL or model from the machine."""
    home = tmp_path_factory.mktemp("chimera-home")
    monkeypatch.setenv("CHIMERA_HOME", str(home))
    for name in (
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "ANTHROPIC_BASE_URL",
        "CHIMERA_MODEL",
        "CHIMERA_THINKING",
        "CHIMERA_MAX_TOOL_OUTPUT",
        "ANTHROPIC_PROFILE",
        "ANTHROPIC_CONFIG_DIR",
    ):
        monkeypatch.delenv(name, raising=False)
    return home


@pytest.fixture
def reaper() -> Iterator[Reaper]:
    """Descendants' orphans become ours, so a test can prove they were killed (Linux only)."""
    with subreaper() as r:
        yield r


# Property tests run on slow, shared CI machines: no per-example deadline, a fixed
# number of examples, no example database written into the checkout, and the same
# examples every run (derandomized), so CI never goes red by chance. To search
# afresh and harder: `pytest --hypothesis-profile=explore tests/test_session_properties.py`.
settings.register_profile("chimera", deadline=None, max_examples=60, database=None, print_blob=True, derandomize=True)
settings.register_profile("explore", deadline=None, max_examples=1000, database=None, print_blob=True)
settings.load_profile("chimera")
