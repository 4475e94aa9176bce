"""The transcript at 80×24 in the light and the high-contrast themes (pytest-textual-snapshot).

The same fixed session as ``test_snapshots.py`` (thinking, a read, a failed test run, an edit's
diff, the answer), resumed with the theme chosen last: every colour on screen is the theme's.
After a deliberate change of look: ``pytest tests/tui/test_theme_snapshots.py -n 0 --snapshot-update``,
then look at the new pictures.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from textual.pilot import Pilot

from chimera.core.sessions.start import RunOptions
from chimera.themes import CHIMERA_HIGH_CONTRAST, CHIMERA_LIGHT
from chimera.themes.choice import remember_theme
from chimera.tui.app import build_app
from tests.fake_anthropic import DEFAULT_MODEL as MODEL
from tests.fake_anthropic import FakeAnthropic
from tests.session_helpers import record_fixed_session

SIZE = (80, 24)
Snap = Callable[..., bool]


@pytest.mark.usefixtures("model_env")
@pytest.mark.parametrize("theme", [CHIMERA_LIGHT.name, CHIMERA_HIGH_CONTRAST.name])
def test_a_resumed_session_in_a_theme(
    snap_compare: Snap, api: FakeAnthropic, isolated_env: Path, tmp_path: Path, theme: str
) -> None:
    """The resumed session, folded as it opens, drawn in the theme chosen last."""
    session = record_fixed_session(isolated_env, tmp_path)
    remember_theme(isolated_env, theme)
    app = build_app(RunOptions(resume=session, model=MODEL))

    async def shown(pilot: Pilot[int]) -> None:
        await app.history_shown.wait()
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=shown)
