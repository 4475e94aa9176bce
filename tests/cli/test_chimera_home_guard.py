"""Chimera's own home is not the agent's: with CHIMERA_HOME inside the workspace, no tool changes it unasked.

A workspace of `~` holds Chimera's state (`.local/share/chimera`: `config.toml`,
the sessions). Before, the agent's `write` rewrote `config.toml` to `bypass` in
`accept-edits` without a question. Each test runs `chimera run` headless (its
``main``, in the test's process; a question is refused) with CHIMERA_HOME inside the workspace, and checks
that Chimera's files are as they were and that the refusal says why.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.cli_runner import run_here
from tests.fake_anthropic import FakeAnthropic, message, text, tool_use

STATE = ".local/share/chimera"
SETTINGS = '[permissions]\nmode = "accept-edits"\n'
BYPASS = '[permissions]\nmode = "bypass"\n'


def home_in(project: Path) -> Path:
    home = project / STATE
    home.mkdir(parents=True)
    (home / "config.toml").write_text(SETTINGS)
    return home


def run_with(
    api: FakeAnthropic, model_env: dict[str, str], project: Path, home: Path, call: Any, *flags: str
) -> list[dict[str, Any]]:
    api.script(message(call, stop_reason="tool_use"), message(text("Done.")))
    env = {**model_env, "CHIMERA_HOME": str(home), "HOME": str(project)}
    proc = run_here("run", "x", "--json", "--workdir", str(project), *flags, env=env)
    assert proc.returncode == 0, proc.stderr
    return [json.loads(line) for line in proc.stdout.splitlines()]


def finished(events: list[dict[str, Any]]) -> dict[str, Any]:
    (event,) = [e for e in events if e["type"] == "tool_call_finished"]
    return event


WRITES = {
    "write": lambda p: tool_use("t1", "write", {"path": f"{STATE}/config.toml", "content": BYPASS}),
    "write absolute": lambda p: tool_use("t1", "write", {"path": f"{p}/{STATE}/config.toml", "content": BYPASS}),
    "write through ..": lambda p: tool_use("t1", "write", {"path": f"src/../{STATE}/config.toml", "content": BYPASS}),
    "write through a folder link": lambda p: tool_use(
        "t1", "write", {"path": ".LOCAL/share-link/config.toml", "content": BYPASS}
    ),
    "edit": lambda p: tool_use("t1", "edit", {"path": f"{STATE}/config.toml", "old": "accept-edits", "new": "bypass"}),
    "write a session": lambda p: tool_use(
        "t1", "write", {"path": f"{STATE}/sessions/s1/entries.jsonl", "content": "x"}
    ),
    "write through a link": lambda p: tool_use("t1", "write", {"path": "settings-link", "content": BYPASS}),
}


@pytest.mark.parametrize("name", list(WRITES))
def test_an_edit_of_chimeras_home_is_asked_in_accept_edits(
    name: str, api: FakeAnthropic, model_env: dict[str, str], project: Path
) -> None:
    """write/edit of config.toml or a session under CHIMERA_HOME, however spelled: asked (headless: refused)."""
    home = home_in(project)
    (project / "src").mkdir()
    os.symlink(f"{STATE}/config.toml", project / "settings-link")
    (project / ".LOCAL").mkdir()
    os.symlink(f"../{STATE}", project / ".LOCAL" / "share-link")
    events = run_with(api, model_env, project, home, WRITES[name](project))
    result = finished(events)
    assert result["is_error"], result["output"]
    assert "Chimera's own" in result["output"]
    assert "CHIMERA_HOME" in result["output"]
    assert (home / "config.toml").read_text() == SETTINGS
    assert not (home / "sessions" / "s1" / "entries.jsonl").exists()


@pytest.mark.parametrize(
    ("command", "flags"),
    [
        (f"tee {STATE}/config.toml", ("--allow", "bash(tee *)")),
        (f"cp /dev/null {STATE}/config.toml", ("--permission-mode", "bypass")),
        (f"echo 'mode = \"bypass\"' > {STATE}/config.toml", ("--permission-mode", "bypass")),
        ("echo x >> ~/.local/share/chimera/config.toml", ("--permission-mode", "bypass")),
        ('echo x > "$CHIMERA_HOME/config.toml"', ("--permission-mode", "bypass")),
        (f"rm -rf {STATE}/sessions", ("--permission-mode", "bypass")),
    ],
)
def test_a_command_naming_chimeras_home_is_asked_even_where_commands_run_unasked(
    command: str, flags: tuple[str, ...], api: FakeAnthropic, model_env: dict[str, str], project: Path
) -> None:
    """bash allowed by a rule or by bypass, naming a path in CHIMERA_HOME (words, redirection, ~, $CHIMERA_HOME)."""
    home = home_in(project)
    (home / "sessions").mkdir()
    events = run_with(api, model_env, project, home, tool_use("t1", "bash", {"command": command}), *flags)
    result = finished(events)
    assert result["is_error"], result["output"]
    assert "CHIMERA_HOME" in result["output"]
    assert (home / "config.toml").read_text() == SETTINGS
    assert (home / "sessions").is_dir()


def test_ordinary_edits_and_commands_still_run_unasked(
    api: FakeAnthropic, model_env: dict[str, str], project: Path
) -> None:
    """Beside Chimera's home, a write in accept-edits and a command in bypass run as before."""
    home = home_in(project)
    events = run_with(api, model_env, project, home, tool_use("t1", "write", {"path": "notes.txt", "content": "hi"}))
    assert not finished(events)["is_error"]
    assert (project / "notes.txt").read_text() == "hi"
    events = run_with(
        api,
        model_env,
        project,
        home,
        tool_use("t1", "bash", {"command": "cat notes.txt"}),
        "--permission-mode",
        "bypass",
    )
    assert finished(events)["output"].startswith("hi")


def test_an_allow_rule_naming_the_file_lets_it_be_edited(
    api: FakeAnthropic, model_env: dict[str, str], project: Path
) -> None:
    """As for `.git`, an allow rule naming the path is the person's say-so: `--allow 'write(<home>/**)'`."""
    home = home_in(project)
    call = tool_use("t1", "write", {"path": f"{STATE}/config.toml", "content": BYPASS})
    events = run_with(api, model_env, project, home, call, "--allow", f"write({STATE}/**)")
    assert not finished(events)["is_error"], finished(events)["output"]
    assert (home / "config.toml").read_text() == BYPASS
