"""`chimera replay --rerun-tools` re-runs a command only when its parse proves it stays in the scratch copy.

The commands that went home before (a `cd` in a group, an `if`, before a comment,
behind `builtin`) are recorded for real under a private HOME, then replayed with
their tools re-run: nothing may reach that HOME, or the folder the scratch copy
sits in, again. The judgement itself is checked over many spellings an attacker
would try, and over the ordinary commands that must still run again.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chimera.core.permissions.policy import PermissionPolicy
from chimera.core.sessions.replay import why_not_rerun
from chimera.core.tool_group import DEFAULT_TOOLS
from chimera.core.tools.base import ToolResult
from chimera.core.tools.executor import ToolCall
from tests.cli_runner import run_here
from tests.fake_anthropic import FakeAnthropic, message, text, tool_use

WENT_HOME = {
    "group": "{ cd; touch made-by-group; }",
    "if": "if true; then cd; fi; touch made-by-if",
    "comment": "cd # x\ntouch made-by-comment",
    "builtin": "builtin cd && touch made-by-builtin",
    "step-up": "touch ../made-by-step-up",
}


def test_commands_that_went_home_are_not_rerun_and_touch_nothing_outside(
    api: FakeAnthropic, model_env: dict[str, str], tmp_path: Path
) -> None:
    """Recorded `{ cd; touch X; }`, `if … cd; fi`, `cd # …`, `builtin cd &&`, `../X`: replayed, none runs again."""
    home, temp, workdir = tmp_path / "home", tmp_path / "temp", tmp_path / "ws"
    for folder in (home, temp, workdir):
        folder.mkdir()
    env = {**model_env, "HOME": str(home), "TMPDIR": str(temp)}
    calls = [tool_use(f"t{n}", "bash", {"command": c}) for n, c in enumerate(WENT_HOME.values(), start=1)]
    api.script(
        *(message(call, stop_reason="tool_use") for call in calls),
        message(
            tool_use("t9", "bash", {"command": "echo inside > inside.txt && cat inside.txt"}), stop_reason="tool_use"
        ),
        message(text("Done.")),
    )
    # Recorded outside the sandbox, which would have kept them in (tests/core/test_sandbox_rules.py).
    recording = ("run", "go", "--json", "--workdir", str(workdir), "--permission-mode", "bypass", "--sandbox", "off")
    run = run_here(*recording, env=env)
    assert run.returncode == 0, run.stderr
    made = sorted(p.name for p in home.iterdir())
    assert made == ["made-by-builtin", "made-by-comment", "made-by-group", "made-by-if"]  # they did go home
    for path in home.iterdir():
        path.unlink()
    session_id = json.loads(run.stdout.splitlines()[0])["session_id"]

    proc = run_here("replay", session_id, "--rerun-tools", env=env)
    assert proc.returncode == 0, proc.stderr
    assert list(home.iterdir()) == []
    assert not any(p.name.startswith("made-by") for p in temp.rglob("*"))
    kept = [line for line in proc.stderr.splitlines() if "not re-run" in line]
    assert len(kept) == len(WENT_HOME), proc.stderr
    for n, line in enumerate(kept, start=1):
        assert f"call t{n} " in line
    assert "1 tool results matched, 5 kept as recorded" in proc.stderr


def test_a_link_out_made_by_one_rerun_call_is_gone_before_the_next_follows_it(
    api: FakeAnthropic, model_env: dict[str, str], tmp_path: Path
) -> None:
    """A program (unread by the guard) links `h` to HOME, the next call writes through it: the link is gone first."""
    home, workdir = tmp_path / "home", tmp_path / "ws"
    home.mkdir()
    workdir.mkdir()
    env = {**model_env, "HOME": str(home)}
    link = "python3 -c \"import os; os.symlink(os.path.expanduser(chr(126)), 'h')\""
    api.script(
        message(tool_use("t1", "bash", {"command": link}), stop_reason="tool_use"),
        message(tool_use("t2", "bash", {"command": "touch h/made-through-link"}), stop_reason="tool_use"),
        message(text("Done.")),
    )
    recording = ("run", "go", "--json", "--workdir", str(workdir), "--permission-mode", "bypass", "--sandbox", "off")
    run = run_here(*recording, env=env)
    assert run.returncode == 0, run.stderr
    assert (home / "made-through-link").exists()  # as recorded, it went through the link
    (home / "made-through-link").unlink()
    session_id = json.loads(run.stdout.splitlines()[0])["session_id"]

    proc = run_here("replay", session_id, "--rerun-tools", env=env)
    assert list(home.iterdir()) == []
    assert "the link h leads outside the workspace" in proc.stderr
    assert proc.returncode == 1  # the second call could not write through a link that is gone: a divergence
    assert "replay stopped (diverged)" in proc.stderr


LEAVES = [
    # cd in any position or wrapper
    "{ cd; touch X; }",
    "if true; then cd; fi",
    "while true; do cd; break; done; touch X",
    "cd # x\ntouch X",
    "builtin cd && touch X",
    "command cd; touch X",
    "exec cd",
    "time cd; touch X",
    "nohup cd",
    "env cd",
    "eval cd; touch X",
    "eval 'cd; touch X'",
    "'c'd; touch X",
    "c\\d; touch X",
    "$'cd'; touch X",
    "pushd sub; touch X",
    "popd; touch X",
    "cd -; touch X",
    "cd sub && touch X",
    "CDPATH=.. cd sub",
    "X=$(cd; pwd); touch X",
    "echo `cd; pwd`",
    "bash -c 'cd; touch X'",
    "sh -c 'cd && touch X'",
    "f() { cd; }; f; touch X",
    "trap 'cd' EXIT; touch X",
    "bash <<EOF\ncd\ntouch X\nEOF",
    'eval "$CMD"',
    "source ./steps.sh",
    ". ./steps.sh",
    "shopt -s expand_aliases\nalias go=cd\ngo\ntouch X",
    # places named outside
    "cat /etc/passwd",
    "touch /tmp/X",
    "echo x > /tmp/X",
    "echo x >> /tmp/X",
    "exec > /tmp/X",
    "exec 3<>/tmp/X",
    "cp a --target-directory=/tmp",
    "tar -C/ -xf a.tar",
    "git -C.. status",
    "env -C .. touch X",
    "touch {/tmp,.}/X",
    "touch $'\\x2f'tmp/X",
    "touch ~/X",
    "touch ~root/X",
    "x=~/a; touch X",
    "touch ../X",
    "touch a/../../X",
    "touch ./.*/X",
    "rm -rf .*",
    "ln -s / r && touch r/tmp/X",
    "ln -s .. up && touch up/X",
    "python3 -c \"import os; os.chdir('/')\"",
    "curl file:///etc/passwd",
    "/tmp/evil",
    "~/bin/tool",
    # words only known when it runs
    "touch $HOME/X",
    'echo hi > "$HOME/x"',
    "touch ${OLDPWD}/X",
    "touch $TMPDIR/X",
    "d=..; touch $d/X",
    "for d in ..; do touch $d/X; done",
    "a=(..); touch X",
    "touch $(dirname $(pwd))/X",
    'touch "$UNSET_FOR_SURE/tmp/X"',
    'touch "${UNSET_FOR_SURE}/tmp/X"',
    "touch ${UNSET_FOR_SURE:-/tmp}/X",
    'f() { touch "$1$2/X"; }; f . .',
    'touch "$@/X"',
    "touch $_/X",
    "touch $PWD/../X",
    "for LANG in ..; do touch $LANG/X; done",
    "read LANG < name.txt; touch $LANG/X",
    "export LANG=..; touch $LANG/X",
    "declare -n W=HOME; touch $W/X",
    "ls -a | xargs -I{} touch {}/X",
    "cat <(ls ..)",
]


@pytest.mark.parametrize("command", LEAVES)
def test_a_command_that_may_leave_the_scratch_copy_is_not_rerun(tmp_path: Path, command: str) -> None:
    """Every spelling of going elsewhere, read with the permission rules' parse, keeps its recorded result."""
    assert _why(tmp_path, command) is not None


STAYS = [
    "python3 -m unittest -v 2>&1 | tail -n 20",
    "echo inside > inside.txt && cat inside.txt",
    "make 2>/dev/null | tail -n 3",
    "curl -s https://example.com/a | wc -l",
    "ls sub/*.py && git status --short",
    "grep -rn 'TODO' src; echo $?",
    "sed -i 's/old/new/g' notes.txt",
    "cat <<EOF > notes.txt\nplain words\nEOF",
    "for f in a b; do echo $?; done",
    'echo "$WEATHER" "${LANG}" $?/x',
    "printf '%s\\n' done >&2",
    "command -v cd",
    "echo cd",
]


@pytest.mark.parametrize("command", STAYS)
def test_a_command_that_stays_in_the_scratch_copy_is_rerun(tmp_path: Path, command: str) -> None:
    """Ordinary commands that name nothing outside still run again."""
    assert _why(tmp_path, command) is None


@pytest.mark.parametrize(
    ("value", "leaves"), [("sunny", False), ("", False), ("/tmp", True), ("~", True), ("..", True), ("a b", True)]
)
def test_an_environment_variable_is_judged_by_its_value(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: str, leaves: bool
) -> None:
    """A variable runs again only when it holds a plain word, judged in place: empty, `"$WHERE/X"` is `/X`."""
    monkeypatch.setenv("WHERE", value)
    assert (_why(tmp_path, 'echo "$WHERE" > "$WHERE.txt"') is not None) == leaves
    assert (_why(tmp_path, 'touch "$WHERE/X"') is not None) == (leaves or not value)  # with nothing in it: /X


def _why(tmp_path: Path, command: str) -> str | None:
    original, scratch = tmp_path / "original", tmp_path / "scratch"
    original.mkdir(exist_ok=True)
    scratch.mkdir(exist_ok=True)
    call = ToolCall("c1", "bash", {"command": command})
    return why_not_rerun(call, ToolResult("x"), PermissionPolicy("bypass"), DEFAULT_TOOLS, original, scratch)
