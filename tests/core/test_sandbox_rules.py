"""Each default rule of the sandbox holds against a command that tries to break it, through the real bash tool
and the kernel's Landlock; what the rules allow (the workspace, $TMPDIR, builds, tests) still works."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from chimera.core.sandbox.policy import SECRETS, SandboxSettings
from chimera.core.tools.shell import start_shell
from tests.git_helpers import git
from tests.processes import Reaper
from tests.sandbox_helpers import SECRET, SERVED, confined, fake_home, loopback_port, needs_landlock, run

pytestmark = needs_landlock


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    """The workspace, with a folder beside it that commands must not write."""
    (tmp_path / "outside").mkdir()
    workspace = tmp_path / "ws"
    workspace.mkdir()
    return workspace


@pytest.mark.parametrize(
    "command",
    [
        "echo x > {target}",
        "{python} -c \"open('{target}', 'w').write('x')\"",
        "printf 'all:\\n\\techo x > {target}\\n' > Makefile && make",
        "ln -s {outside} out && echo x > out/written",
        "cp /dev/null {target}",
    ],
    ids=["redirect", "python", "make", "symlink", "cp"],
)
def test_no_write_outside_the_workspace(ws: Path, command: str) -> None:
    """A command cannot write outside the workspace, however it spells it, and the result says the sandbox refused."""
    outside = ws.parent / "outside"
    target = outside / "written"
    result = run(command.format(target=target, outside=outside, python=sys.executable), ws, confined(ws))
    assert not target.exists()
    assert result.is_error
    assert result.data["sandbox"] == "refused"
    assert f"[the sandbox refused writing {target}, outside the workspace and $TMPDIR" in result.output


def test_writes_inside_and_in_tmpdir_work(ws: Path) -> None:
    """Inside the workspace, in its private $TMPDIR and to /dev/null a command writes as before."""
    sandbox = confined(ws)
    result = run(
        'echo a > in.txt && mkdir -p d/e && mv in.txt d/e/ && t=$(mktemp) && echo b > "$t" '
        '&& cat d/e/in.txt "$t" && echo gone > /dev/null && echo "$TMPDIR"',
        ws,
        sandbox,
    )
    assert not result.is_error, result.output
    assert result.output.split() == ["a", "b", str(sandbox.tmpdir)]
    assert result.data["sandbox"] == "confined"
    assert (ws / "d/e/in.txt").read_text() == "a\n"


def test_tmpdir_is_private_not_all_of_tmp(ws: Path) -> None:
    """The private $TMPDIR lasts from call to call, but the rest of the temporary folder is not writable."""
    sandbox = confined(ws)
    run('echo kept > "$TMPDIR/note"', ws, sandbox)
    assert run('cat "$TMPDIR/note"', ws, sandbox).output == "kept\n"
    result = run(f"echo x > {sandbox.tmpdir.parent}/chimera-sandbox-stray", ws, sandbox)
    assert result.data["sandbox"] == "refused"
    assert not (sandbox.tmpdir.parent / "chimera-sandbox-stray").exists()


@pytest.mark.parametrize("secret", SECRETS)
def test_secrets_are_unreadable(ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, secret: str) -> None:
    """A command cannot read the person's secrets under $HOME, and the result names the hidden path."""
    home = fake_home(tmp_path, monkeypatch)
    target = next(p for p in (home / secret).rglob("*") if p.is_file()) if (home / secret).is_dir() else home / secret
    result = run(f"cat {target}", ws, confined(ws))
    assert SECRET not in result.output
    assert result.data["sandbox"] == "refused"
    assert f"[the sandbox refused reaching {target}, which the sandbox hides" in result.output


def test_the_rest_of_home_is_readable(ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Beside the hidden secrets, the home folder reads as before: a command sees ~/.gitconfig and lists ~."""
    fake_home(tmp_path, monkeypatch)
    result = run("cat ~/.gitconfig && ls -A ~", ws, confined(ws))
    assert not result.is_error, result.output
    assert "name = Someone" in result.output
    assert ".ssh" in result.output  # names are listable; the files are not readable (above)


def test_chimera_home_and_read_deny_rules_are_hidden(ws: Path, isolated_env: Path) -> None:
    """Chimera's own state and a path a `read` deny rule names are hidden from commands too."""
    (isolated_env / "sessions.db").write_text(SECRET)
    (ws / ".env").write_text(SECRET)
    (ws / "ok.txt").write_text("fine")
    sandbox = SandboxSettings(chimera_home=isolated_env).confine(ws, hidden=[ws / ".env"])
    result = run(f"cat ok.txt; cat {isolated_env}/sessions.db; cat .env", ws, sandbox)
    assert "fine" in result.output
    assert SECRET not in result.output
    assert result.data["sandbox"] == "refused"


def test_no_network(ws: Path) -> None:
    """curl and a Python socket cannot reach a server on 127.0.0.1, and the result names the connection."""
    if shutil.which("curl") is None:
        pytest.skip("curl is not installed")
    port = loopback_port()
    sandbox = confined(ws)
    curl = run(f"curl -sS http://127.0.0.1:{port}/", ws, sandbox)
    assert SERVED not in curl.output
    assert f"[the sandbox refused a connection to 127.0.0.1:{port} (commands have no network here" in curl.output
    script = f"import socket; socket.create_connection(('127.0.0.1', {port})).sendall(b'x')"
    python = run(f'{sys.executable} -c "{script}"', ws, sandbox)
    assert "PermissionError" in python.output
    assert python.data["sandbox"] == "refused"
    assert "[the sandbox refused a network connection, it seems" in python.output


def test_no_listening_either(ws: Path) -> None:
    """A command cannot open a TCP port to listen on."""
    result = run(f"{sys.executable} -c \"import socket; socket.socket().bind(('127.0.0.1', 0))\"", ws, confined(ws))
    assert "PermissionError" in result.output
    assert result.is_error


def test_network_when_allowed(ws: Path) -> None:
    """With the network allowed, the same request reaches the server."""
    if shutil.which("curl") is None:
        pytest.skip("curl is not installed")
    result = run(f"curl -sS http://127.0.0.1:{loopback_port()}/", ws, confined(ws, allow_network=True))
    assert result.output == SERVED
    assert result.data["sandbox"] == "confined"


def test_git_outside_the_workspace_is_refused(tmp_path: Path) -> None:
    """`git -C .. commit` cannot commit to a repository above the workspace; a commit in the workspace's own works."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    ws = repo / "ws"
    ws.mkdir()
    (ws / "f.txt").write_text("x")
    git(ws, "init", "-q")
    sandbox = confined(ws)
    outer = run("git -C .. add -A && git -C .. commit -qm escaped", ws, sandbox)
    assert outer.is_error
    assert outer.data["sandbox"] == "refused"
    assert subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True).returncode != 0
    inner = run(
        "git add -A && git -c user.name=a -c user.email=a@b commit -qm inside && git log --oneline", ws, sandbox
    )
    assert not inner.is_error, inner.output
    assert "inside" in inner.output


def test_build_and_tests_run_in_the_workspace(ws: Path) -> None:
    """make builds inside the workspace and pytest runs its tests there, as without the sandbox."""
    (ws / "Makefile").write_text("out/hello.txt:\n\tmkdir -p out && echo built > out/hello.txt\n")
    (ws / "test_one.py").write_text("def test_one(tmp_path):\n    (tmp_path / 'f').write_text('x')\n")
    result = run(f"make && {sys.executable} -m pytest -q -p no:randomly test_one.py", ws, confined(ws))
    assert not result.is_error, result.output
    assert (ws / "out/hello.txt").read_text() == "built\n"
    assert "1 passed" in result.output


def test_virtualenv_and_pip_with_network(ws: Path) -> None:
    """A virtualenv is made in the workspace; with the network allowed, pip installs into it."""
    sandbox = confined(ws, allow_network=True)
    made = run(f"{sys.executable} -m venv venv && venv/bin/python -c 'import sys; print(sys.prefix)'", ws, sandbox)
    assert not made.is_error, made.output
    assert made.output.strip() == str(ws / "venv")
    reach = run("venv/bin/pip download -q --no-deps -d dl iniconfig 2>&1 | tail -3", ws, sandbox, timeout=120)
    if not list((ws / "dl").glob("iniconfig*")):
        pytest.skip(f"the package index is unreachable from here: {reach.output.strip()[-200:]}")
    installed = run(
        "venv/bin/pip install -q --no-index dl/iniconfig* && venv/bin/python -c 'import iniconfig'",
        ws,
        sandbox,
        timeout=120,
    )
    assert not installed.is_error, installed.output


def test_chimera_cannot_be_signalled(ws: Path) -> None:
    """A command cannot signal Chimera (nor anything else outside its sandbox), and the result says that, not a
    network refusal."""
    result = run(f"kill -9 {os.getpid()}", ws, confined(ws))
    assert result.is_error
    assert result.data["sandbox_refused"] == (
        f"signalling process {os.getpid()}, outside the sandbox (a command may signal or trace only what it started)"
    )


def test_chimera_cwd_and_root_are_out_of_reach(ws: Path) -> None:
    """A command cannot follow Chimera's /proc/PID/cwd, /proc/PID/root or its open files, and the result names
    Chimera's /proc entry, never the files Chimera itself would reach through it."""
    pid = os.getpid()
    result = run(f"ls /proc/{pid}/cwd/; ls /proc/{pid}/root/etc; ls -l /proc/{pid}/fd", ws, confined(ws))
    assert result.data["sandbox_refused"].startswith(
        f"reaching /proc/{pid}/cwd, another process's (a command may look into only the processes it started); "
        f"reaching /proc/{pid}/root"
    )
    assert "outside the workspace" not in result.data["sandbox_refused"]


def test_no_device_nodes(ws: Path) -> None:
    """A command cannot make a device node in the workspace (as root, a disk's would read every secret)."""
    result = run("mknod disk b 8 0", ws, confined(ws))
    assert result.is_error
    assert not (ws / "disk").exists()


def test_everything_started_still_ends_with_the_call(ws: Path, reaper: Reaper) -> None:
    """A confined command's detached children are still killed when the call ends: the supervisor, confined with
    them, can still signal them."""
    result = run("setsid -f sleep 300; sleep 300 & echo $!; disown", ws, confined(ws))
    reaper.assert_killed(int(result.output.split()[0]))


def test_a_linked_worktree_commits(tmp_path: Path) -> None:
    """In a linked worktree (its .git a file naming a git directory elsewhere) a commit still works: that
    directory and the repository's common one are writable, the rest of the repository is not."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    git(repo, "-c", "user.name=a", "-c", "user.email=a@b", "commit", "-q", "--allow-empty", "-m", "root")
    ws = tmp_path / "linked"
    git(repo, "worktree", "add", "-q", str(ws))
    (ws / "f.txt").write_text("x")
    sandbox = confined(ws)
    commit = "git add -A && git -c user.name=a -c user.email=a@b commit -qm linked && git log --oneline -1"
    result = run(commit, ws, sandbox)
    assert not result.is_error, result.output
    assert "linked" in result.output
    assert run(f"echo x > {repo}/stray", ws, sandbox).data["sandbox"] == "refused"


def test_a_path_hidden_in_the_workspace_leaves_the_rest_working(ws: Path) -> None:
    """With `.env` hidden inside the workspace, it cannot be read but everything else works: files are made and
    written anywhere, read back in existing folders at once and in the top folder from the next call, and the
    result says why one made at the top cannot be read in the same call."""
    (ws / ".env").write_text(SECRET)
    (ws / "src").mkdir()
    sandbox = SandboxSettings().confine(ws, hidden=[ws / ".env"])
    first = run("cat .env; echo a > src/a.txt && cat src/a.txt && echo b > top.txt && cat top.txt", ws, sandbox)
    assert SECRET not in first.output
    assert "a\n" in first.output
    assert (ws / "top.txt").read_text() == "b\n"
    assert f"; reaching {ws / 'top.txt'}: it was made during this call in a folder" in first.output
    assert run("cat top.txt", ws, sandbox).output == "b\n"
    assert run("echo c > .env && cat src/a.txt", ws, sandbox).output == "a\n"  # a read rule does not stop writes


def test_rules_that_cannot_be_applied_mean_the_command_does_not_run(ws: Path) -> None:
    """When the kernel refuses the sandbox's rules, the command does not run unconfined: it does not run at all,
    and the call says why."""
    shell = start_shell("touch ran", ws, dict(os.environ), "0 0 0")  # a ruleset that handles nothing: refused
    try:
        code = shell.wait()
    finally:
        shell.close()
    assert code == 127
    assert shell.note.startswith("the sandbox could not be set up, so the command did not run")
    assert not (ws / "ran").exists()
