"""The offline demo's sessions are kept for `chimera tree` and `chimera replay`, but never listed as the person's:
not by `chimera sessions`, not by the session picker (the catalog it reads)."""

from __future__ import annotations

import json
from pathlib import Path

from chimera.core.sessions.listing import catalog_sessions
from tests.cli_runner import run_here
from tests.fake_anthropic import FakeAnthropic, message, text


def test_the_demos_session_is_kept_but_never_listed(api: FakeAnthropic, isolated_env: Path, project: Path) -> None:
    """A demo run (no model), then a run with a model: `chimera sessions`, its JSON and the picker's catalog list
    only the second; the demo's session still opens in `chimera tree`."""
    demo = run_here("run", "anything")
    assert demo.returncode == 0, demo.stderr
    demo_id = demo.stderr.splitlines()[-1].split()[2]  # "chimera: session ID (the demo's): ..."
    assert "(the demo's)" in demo.stderr.splitlines()[-1]
    assert run_here("sessions").stdout.startswith("No sessions yet")
    assert catalog_sessions(isolated_env) == []
    api.script(message(text("Hi.")))
    env = {"ANTHROPIC_BASE_URL": api.url, "ANTHROPIC_API_KEY": "k"}
    mine = run_here("run", "say hi", "--json", "--workdir", str(project), env=env)
    assert mine.returncode == 0, mine.stderr
    mine_id = json.loads(mine.stdout.splitlines()[0])["session_id"]
    listed = json.loads(run_here("sessions", "--json").stdout)
    assert [s["id"] for s in listed] == [mine_id]
    assert demo_id not in run_here("sessions").stdout
    assert [entry.id for entry in catalog_sessions(isolated_env)] == [mine_id]
    assert [entry.id for entry in catalog_sessions(isolated_env)] == [mine_id]  # read again from the catalog alone
    tree = run_here("tree", demo_id)
    assert tree.returncode == 0, tree.stderr
    assert "Find the failing test" in tree.stdout
