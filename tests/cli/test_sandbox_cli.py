"""The sandbox from the command line: on by default for `chimera run` and `chimera compare` (bypass mode too),
`--sandbox off`, `--allow-network`, `[sandbox]` in config.toml, the one line when the machine cannot hold it,
the refused call's words and event, and `chimera doctor`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from chimera.core.sandbox.probe import FORCE_OFF
from chimera.core.tools.executor import SANDBOX_AUTO
from tests.cli_runner import assert_one_line_error, run_chimera, run_here
from tests.compare_helpers import named_session
from tests.fake_anthropic import FakeAnthropic, by_model, message, text, tool_use
from tests.sandbox_helpers import SERVED, loopback_port, needs_landlock
from tests.switch_helpers import folder_digest


@pytest.fixture(autouse=True)
def strict(monkeypatch: pytest.MonkeyPatch) -> None:
    """Commands get no more than the sandbox gives (the suite lets them write the test's folder: conftest)."""
    monkeypatch.delenv("CHIMERA_SANDBOX_WRITABLE", raising=False)


def _one_command(api: FakeAnthropic, command: str) -> None:
    api.script(
        message(tool_use("t1", "bash", {"command": command}), stop_reason="tool_use"),
        message(text("Done.")),
    )


def _finished(stdout: str) -> dict[str, Any]:
    """The one tool_call_finished event of a `--json` run."""
    (event,) = [e for e in map(json.loads, stdout.splitlines()) if e["type"] == "tool_call_finished"]
    return event


def _run(workdir: Path, *flags: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    args = ("run", "go", "--json", "--workdir", str(workdir), "--permission-mode", "bypass", *flags)
    proc = run_here(*args, env=env)
    return proc.returncode, proc.stdout, proc.stderr


@needs_landlock
def test_run_in_bypass_cannot_write_outside_and_says_why(
    api: FakeAnthropic, model_env: dict[str, str], project: Path, tmp_path: Path
) -> None:
    """`chimera run` in bypass mode: a command writing outside is refused by the kernel, the result tells the
    model so in one line, and the finished event says `sandbox: refused`."""
    target = tmp_path / "outside.txt"
    _one_command(api, f"echo pwned > {target}")
    code, out, err = _run(project)
    assert code == 0, err
    assert not target.exists()
    event = _finished(out)
    assert event["sandbox"] == "refused"
    assert event["data"]["sandbox_refused"].startswith(f"writing {target}, outside the workspace")
    assert event["output"].splitlines()[-2] == f"[the sandbox refused {event['data']['sandbox_refused']}]"
    assert "sandbox" not in err  # nothing to say at start where the sandbox holds


@needs_landlock
def test_run_says_on_the_calls_line_what_the_sandbox_refused(
    api: FakeAnthropic, model_env: dict[str, str], project: Path, tmp_path: Path
) -> None:
    """Plain `chimera run` prints the refused call's end as refused by the sandbox, naming what, not as a
    failure like any other."""
    target = tmp_path / "outside.txt"
    _one_command(api, f"echo pwned > {target}")
    proc = run_here("run", "go", "--workdir", str(project), "--permission-mode", "bypass")
    assert proc.returncode == 0, proc.stderr
    [ended] = [line for line in proc.stderr.splitlines() if line.startswith("  ✗")]
    assert f"refused by the sandbox: writing {target}, outside the workspace" in ended


@needs_landlock
@pytest.mark.parametrize("how", ["flag", "shorthand"])
def test_sandbox_off_runs_as_before(
    api: FakeAnthropic, model_env: dict[str, str], project: Path, tmp_path: Path, isolated_env: Path, how: str
) -> None:
    """`--sandbox off`, or `sandbox = "off"` at the top of config.toml: the same command writes outside, as the
    permission rules alone allow in bypass."""
    target = tmp_path / "outside.txt"
    _one_command(api, f"echo written > {target}")
    if how == "shorthand":
        (isolated_env / "config.toml").write_text('sandbox = "off"\n')
    code, out, err = _run(project, *(("--sandbox", "off") if how == "flag" else ()))
    assert code == 0, err
    assert target.read_text() == "written\n"
    assert _finished(out)["sandbox"] == ""


def test_fallback_says_so_once_and_runs_under_the_rules(
    api: FakeAnthropic, model_env: dict[str, str], project: Path, tmp_path: Path
) -> None:
    """With Landlock unavailable (forced off), one line at start says commands are not sandboxed, and they run
    as before."""
    target = tmp_path / "outside.txt"
    _one_command(api, f"echo written > {target}")
    args = ("run", "go", "--json", "--workdir", str(project), "--permission-mode", "bypass")
    proc = run_chimera(*args, env={**model_env, FORCE_OFF: "1"})
    assert proc.returncode == 0, proc.stderr
    notes = [line for line in proc.stderr.splitlines() if "sandbox" in line]
    assert notes == [
        f"chimera: commands are not sandboxed: Landlock is switched off by {FORCE_OFF}; the permission rules "
        "alone guard them (--sandbox off says you know)"
    ]
    assert target.read_text() == "written\n"
    assert _finished(proc.stdout)["sandbox"] == ""


@needs_landlock
def test_allow_network_reaches_the_server(api: FakeAnthropic, model_env: dict[str, str], project: Path) -> None:
    """Without `--allow-network` curl cannot reach a server on 127.0.0.1; with it, it can."""
    if shutil.which("curl") is None:
        pytest.skip("curl is not installed")
    command = f"curl -sS http://127.0.0.1:{loopback_port()}/"
    _one_command(api, command)
    code, out, err = _run(project)
    assert code == 0, err
    assert SERVED not in _finished(out)["output"]
    assert _finished(out)["data"]["sandbox_refused"].startswith(f"a connection to 127.0.0.1:{loopback_port()}")
    _one_command(api, command)
    code, out, err = _run(project, "--allow-network")
    assert code == 0, err
    assert _finished(out)["output"] == SERVED


@needs_landlock
def test_config_adds_writable_and_hidden_paths(
    api: FakeAnthropic, model_env: dict[str, str], project: Path, tmp_path: Path, isolated_env: Path
) -> None:
    """`[sandbox] writable` lets commands write a folder outside; `hidden` keeps one inside from being read."""
    cache = tmp_path / "cache"
    cache.mkdir()
    (project / "private.txt").write_text("classified")
    (isolated_env / "config.toml").write_text(
        f'[sandbox]\nwritable = ["{cache}"]\nhidden = ["{project / "private.txt"}"]\n'
    )
    _one_command(api, f"echo cached > {cache}/f && cat private.txt")
    code, out, err = _run(project)
    assert code == 0, err
    assert (cache / "f").read_text() == "cached\n"
    event = _finished(out)
    assert "classified" not in event["output"]
    assert event["data"]["sandbox_refused"].startswith(f"reaching {project / 'private.txt'}, which the sandbox hides")


@pytest.mark.parametrize(
    ("config", "fault"),
    [
        ('[sandbox]\nmode = "of"\n', "sandbox.mode 'of' is unknown: use one of workspace, off"),
        ("[sandbox]\nnetwork = 1\n", "sandbox.network must be true or false"),
        ('[sandbox]\nauto = "yes"\n', "sandbox.auto must be true or false"),
        ("[sandbox]\nnetwrok = true\n", "unknown key sandbox.netwrok in [sandbox]: did you mean sandbox.network?"),
        ('[sandbox]\nwritable = ["cache"]\n', "sandbox.writable: 'cache' is relative: write it from / or ~"),
        ('sandbox = "of"\n', "sandbox 'of' is unknown: use one of workspace, off"),
        ("sandbox = true\n", 'sandbox must be "workspace" or "off", or a [sandbox] table: True is neither'),
        *(
            (
                both,
                'sandbox = "…" and a [sandbox] table are both given: keep one (in the table, the shorthand is its '
                'mode = "…")',
            )
            for both in ('sandbox = "off"\n[sandbox]\nnetwork = true\n', 'sandbox = "off"\nsandbox.auto = true\n')
        ),
    ],
)
def test_config_typos_are_one_line(
    model_env: dict[str, str], project: Path, isolated_env: Path, config: str, fault: str
) -> None:
    """A mistake in `[sandbox]` stops the run before it starts, in one line naming the file and the fault."""
    (isolated_env / "config.toml").write_text(config)
    proc = run_here("run", "go", "--workdir", str(project))
    assert_one_line_error(proc, f"{isolated_env / 'config.toml'}: {fault}")


def test_a_bad_sandbox_flag_is_one_line(project: Path) -> None:
    """`--sandbox` takes workspace or off; anything else is refused by the parser, naming the choices."""
    proc = run_here("run", "go", "--workdir", str(project), "--sandbox", "strict")
    assert proc.returncode == 2
    assert "argument --sandbox: invalid choice: 'strict' (choose from 'workspace', 'off')" in proc.stderr


@needs_landlock
def test_a_compare_variant_in_bypass_cannot_touch_the_workspace_or_another_copy(
    api: FakeAnthropic, model_env: dict[str, str], project: Path, isolated_env: Path
) -> None:
    """In bypass mode a variant's command writing the workspace (by its path) and the other variant's copy is
    refused; the workspace is untouched and the other variant's files do not hold the intruder."""
    session_id = named_session(api, model_env, project, isolated_env)
    before = folder_digest(project)
    attack = f"echo pwned > {project}/pwned.txt; echo pwned > ../../2/files/pwned.txt; echo tried"
    api.responder = by_model(
        {
            "attacker": [
                message(tool_use("t1", "bash", {"command": attack}), stop_reason="tool_use", model="attacker"),
                message(text("Tried."), model="attacker"),
            ],
            "quiet": [message(text("Nothing to do."), model="quiet")],
        }
    )
    proc = run_chimera(
        "compare", session_id, "--from", "before-v2", "--try", "model=attacker", "--try", "model=quiet",
        "--permission-mode", "bypass", "--json", env=model_env,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert folder_digest(project) == before
    events = [json.loads(line) for line in proc.stdout.splitlines()]
    (finished,) = [e for e in events if e["type"] == "tool_call_finished"]
    assert finished["sandbox"] == "refused"
    assert "[the sandbox refused writing " in finished["output"]
    rows = {row["label"]: row for row in events[-1]["rows"]}
    assert all(change["path"] != "pwned.txt" for row in rows.values() for change in row["files"])


def test_doctor_says_which_sandbox_and_what_it_cannot_hold(monkeypatch: pytest.MonkeyPatch) -> None:
    """`chimera doctor` names the mechanism and what it does not enforce; forced off, it says commands run
    unconfined."""
    proc = run_chimera("doctor")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    if "landlock" in lines[0]:
        assert lines[0].startswith("sandbox: landlock (ABI ")
        assert any(line.startswith("  not enforced: UDP") for line in lines)
        assert any(line.startswith("  git: the hooks and config") for line in lines)
    forced = run_chimera("doctor", env={FORCE_OFF: "1"})
    assert forced.stdout.splitlines() == [
        f"sandbox: none: Landlock is switched off by {FORCE_OFF}",
        "  commands run unconfined, guarded by the permission rules alone",
    ]


@needs_landlock
def test_a_read_deny_rule_holds_against_a_program(api: FakeAnthropic, model_env: dict[str, str], project: Path) -> None:
    """`--deny 'read(.env)'` reads a command line; a program that spells the name its own way is held by the
    sandbox, which hides the file from every process the call starts."""
    (project / ".env").write_text("TOKEN=classified")
    _one_command(api, "python3 -c \"print(open('.e' + 'nv').read())\"")
    code, out, err = _run(project, "--deny", "read(.env)")
    assert code == 0, err
    event = _finished(out)
    assert "classified" not in event["output"]
    assert event["data"]["sandbox_refused"].startswith(f"reaching {project / '.env'}, which the sandbox hides")


def _events(stdout: str, kind: str) -> list[dict[str, Any]]:
    return [e for e in map(json.loads, stdout.splitlines()) if e["type"] == kind]


@needs_landlock
def test_sandbox_auto_runs_what_the_mode_would_ask_confined(
    api: FakeAnthropic, model_env: dict[str, str], project: Path, tmp_path: Path
) -> None:
    """In ask mode with nobody to ask, a command is refused; with `--sandbox-auto` it runs unasked, confined
    (its write outside still refused), and the permission event says why it ran."""
    target = tmp_path / "outside.txt"
    command = f"touch made.txt; echo x > {target}"
    args = ("run", "go", "--json", "--workdir", str(project), "--permission-mode", "ask")
    _one_command(api, command)
    asked = run_here(*args)
    assert asked.returncode == 0, asked.stderr
    assert _finished(asked.stdout)["status"] == "refused"
    assert not (project / "made.txt").exists()
    _one_command(api, command)
    auto = run_here(*args, "--sandbox-auto")
    assert auto.returncode == 0, auto.stderr
    (decided,) = _events(auto.stdout, "permission_decided")
    assert (decided["decision"], decided["reason"]) == ("allow", SANDBOX_AUTO)
    assert (project / "made.txt").exists()
    assert not target.exists()
    assert _finished(auto.stdout)["sandbox"] == "refused"


@needs_landlock
@pytest.mark.parametrize(
    ("flags", "why"),
    [
        (("--deny", "bash(touch*)"), "a deny rule still wins"),
        (("--allow-network",), "with the network on, the sandbox does not answer for the command"),
        (("--permission-mode", "plan"), "plan mode refuses every command"),
    ],
)
def test_sandbox_auto_does_not_answer_for_more(
    api: FakeAnthropic, model_env: dict[str, str], project: Path, flags: tuple[str, ...], why: str
) -> None:
    """`--sandbox-auto` never lets through what a deny rule or plan mode refuses, nor a command with the network."""
    _one_command(api, "touch made.txt")
    args = ("run", "go", "--json", "--workdir", str(project), "--permission-mode", "ask", "--sandbox-auto")
    proc = run_here(*args, *flags)
    assert proc.returncode == 0, proc.stderr
    assert _finished(proc.stdout)["status"] == "refused", why
    assert not (project / "made.txt").exists(), why


@needs_landlock
def test_a_rerun_the_guard_cannot_read_is_confined_to_the_scratch_copy(
    api: FakeAnthropic, model_env: dict[str, str], project: Path, tmp_path: Path
) -> None:
    """`replay --rerun-tools` runs again a program whose code the guard cannot read (`python -c` building `~`):
    recorded outside the sandbox it wrote HOME; re-run, the sandbox keeps it in the scratch copy."""
    home = tmp_path / "home"
    home.mkdir()
    env = {**model_env, "HOME": str(home)}
    script = "import os; open(os.path.join(os.path.expanduser(chr(126)), 'made'), 'w').write('x')"
    _one_command(api, f'python3 -c "{script}"')
    args = ("run", "go", "--json", "--workdir", str(project), "--permission-mode", "bypass")
    recorded = run_here(*args, "--sandbox", "off", env=env)
    assert recorded.returncode == 0, recorded.stderr
    assert (home / "made").exists()  # as recorded, it went home
    (home / "made").unlink()
    session_id = json.loads(recorded.stdout.splitlines()[0])["session_id"]
    replay = run_here("replay", session_id, "--rerun-tools", env=env)
    assert "not re-run" not in replay.stderr  # the guard let it run again ...
    assert list(home.iterdir()) == []  # ... and the sandbox held it


@needs_landlock
def test_the_api_key_is_not_readable_from_a_command(
    api: FakeAnthropic, model_env: dict[str, str], project: Path
) -> None:
    """A command cannot find the API key Chimera was started with in any process's /proc/PID/environ (Chimera's
    own included: it holds the key in memory only), nor in its own environment."""
    key = "sk-ant-never-readable-4f1c"
    _one_command(api, f"grep -a -l -s {key[:-1]}[c] /proc/[0-9]*/environ; env | grep -c ANTHROPIC_API; echo looked")
    args = ("run", "go", "--json", "--workdir", str(project), "--permission-mode", "bypass")
    proc = run_chimera(*args, env={**model_env, "ANTHROPIC_API_KEY": key})
    assert proc.returncode == 0, proc.stderr
    assert _finished(proc.stdout)["output"].split() == ["0", "looked"]
