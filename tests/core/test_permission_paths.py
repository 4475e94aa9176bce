"""Path rules cover every tool that reaches the path, however it is spelled; writes inside .git are asked about."""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chimera.core.events import PermissionDecided, PermissionRequested, StepEvent
from chimera.core.permissions.policy import PermissionPolicy
from chimera.core.tool_group import DEFAULT_TOOLS
from chimera.core.tools.executor import Executor, ToolCall

SECRETS = ["read(.env)", "read(secrets/**)"]


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    """A workspace with a secret `.env`, a `secrets/` folder, an ordinary file and a link to `.env`."""
    root = (tmp_path / "ws").resolve()
    (root / "secrets").mkdir(parents=True)
    (root / "sub").mkdir()
    (root / ".env").write_text("TOKEN=hunter2\n")
    (root / "secrets" / "key.txt").write_text("TOKEN=swordfish\n")
    (root / "notes.txt").write_text("TOKEN=public\n")
    (root / "link-to-env").symlink_to(root / ".env")
    return root


async def run_one(ws: Path, policy: PermissionPolicy, name: str, args: dict[str, object]) -> str:
    executor = Executor(DEFAULT_TOOLS, ws, ws.parent / "spill", policy=policy)
    [outcome] = await executor.run([ToolCall("t1", name, args)], lambda _: None)
    return outcome.result.output


# --- read rules cover grep, glob and (best effort) bash ----------------------------------------------


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("read", {"path": "./.env"}),
        ("grep", {"pattern": "TOKEN", "path": ".env"}),
        ("grep", {"pattern": "TOKEN", "path": "sub/../.env"}),
        ("grep", {"pattern": "TOKEN", "path": "link-to-env"}),
        ("grep", {"pattern": "TOKEN", "glob": ".env"}),
        ("grep", {"pattern": "TOKEN", "path": "secrets"}),
        ("glob", {"pattern": ".env"}),
        ("glob", {"pattern": "*", "path": "./secrets"}),
        ("bash", {"command": "cat .env"}),
        ("bash", {"command": "cat ./sub/../.env"}),
        ("bash", {"command": "grep TOKEN < link-to-env"}),
        ("bash", {"command": "cat .e*"}),
        ("bash", {"command": "tar cf - secrets"}),
        ("bash", {"command": "echo $(< secrets/key.txt)"}),
    ],
)
async def test_a_read_rule_refuses_every_tool_given_the_path(ws: Path, name: str, args: dict[str, object]) -> None:
    """`read(.env)` / `read(secrets/**)` refuse read, grep and glob given the path, and bash words naming it."""
    output = await run_one(ws, PermissionPolicy.build("bypass", deny=SECRETS), name, args)
    assert output.startswith("Error: not permitted: "), output
    assert "hunter2" not in output
    assert "swordfish" not in output


@pytest.mark.parametrize("ripgrep", ["on", "off"])
@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("grep", {"pattern": "TOKEN"}),
        ("grep", {"pattern": "TOKEN", "glob": "**/.env*"}),
        ("grep", {"pattern": "TOKEN", "glob": "*", "ignore_case": True}),
        ("glob", {"pattern": "**/.*"}),
        ("glob", {"pattern": "**/*"}),
    ],
)
async def test_a_search_over_a_folder_leaves_out_what_a_read_rule_covers(
    ws: Path, monkeypatch: pytest.MonkeyPatch, ripgrep: str, name: str, args: dict[str, object]
) -> None:
    """grep and glob over the workspace show other files but never `.env` or `secrets/` (ripgrep or not)."""
    if ripgrep == "off":
        monkeypatch.setenv("CHIMERA_RG", "off")
    output = await run_one(ws, PermissionPolicy.build("bypass", deny=SECRETS), name, args)
    assert ".env" not in output, output
    assert "secrets" not in output, output
    assert "hunter2" not in output
    assert "swordfish" not in output
    if name == "grep" and "glob" not in args:
        assert output == "notes.txt:1:TOKEN=public\n"
    without_rules = await run_one(ws, PermissionPolicy("bypass"), name, args)
    assert ".env" in without_rules or "secrets/" in without_rules  # the rule is what hides them


@pytest.mark.parametrize("command", ["cat notes.txt", "ls sub", "cat .env.example", "grep -r TOKEN notes.txt"])
def test_bash_words_that_name_other_paths_still_run(ws: Path, command: str) -> None:
    """The best-effort bash check refuses only words that resolve to a covered path."""
    policy = PermissionPolicy.build("bypass", deny=SECRETS)
    assert policy.decide("bash", {"command": command}, read_only=False, workspace=ws).verdict == "allow"


def test_a_write_rule_refuses_a_bash_redirection_into_the_path(ws: Path) -> None:
    """`edit(secrets/**)` refuses `echo x > secrets/new` as well as the edit tool itself."""
    policy = PermissionPolicy.build("bypass", deny=["edit(secrets/**)"])
    for command in ("echo x > secrets/new", "echo x >> ./sub/../secrets/key.txt"):
        decision = policy.decide("bash", {"command": command}, read_only=False, workspace=ws)
        assert decision.verdict == "deny", command
    assert policy.decide("bash", {"command": "cat secrets/key.txt"}, read_only=False, workspace=ws).verdict == "allow"


# --- spellings of a path ---------------------------------------------------------------------------


@st.composite
def spelled_path(draw: st.DrawFn, relative: str, ws: Path) -> str:
    """``relative`` spelled another way: ./, sub/.., doubled slashes, absolute."""
    parts = relative.split("/")
    out: list[str] = []
    for part in parts:
        out.extend(draw(st.lists(st.sampled_from([".", "sub/.."]), max_size=2)))
        out.append(part)
    text = "/".join(out)
    if draw(st.booleans()):
        text = text.replace("/", draw(st.sampled_from(["/", "//"])))
    if draw(st.booleans()):
        text = f"{ws}/{text}"
    elif draw(st.booleans()):
        text = "./" + text
    return text


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data(), target=st.sampled_from([".env", "secrets/key.txt"]))
def test_every_spelling_of_a_covered_path_is_refused_by_every_reader(
    ws: Path, data: st.DataObject, target: str
) -> None:
    """read, grep (path or glob) and `cat` get the same refusal however the covered path is spelled."""
    policy = PermissionPolicy.build("ask", deny=SECRETS)
    path = data.draw(spelled_path(target, ws))
    calls = [
        ("read", {"path": path}, True),
        ("grep", {"pattern": "x", "path": path}, True),
        ("bash", {"command": f"cat {shlex.quote(path)}"}, False),
        ("bash", {"command": f"cat < {path}"}, False),
    ]
    for name, args, read_only in calls:
        assert policy.decide(name, args, read_only=read_only, workspace=ws).verdict == "deny", (name, args)


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_every_spelling_of_an_uncovered_path_gets_the_same_verdict(ws: Path, data: st.DataObject) -> None:
    """An ordinary file spelled any of those ways is read without asking, and edited only after asking."""
    policy = PermissionPolicy.build("ask", allow=["edit(sub/*)"], deny=SECRETS)
    for target, edit_verdict in (("notes.txt", "ask"), ("sub/new.txt", "allow")):
        path = data.draw(spelled_path(target, ws))
        assert policy.decide("read", {"path": path}, read_only=True, workspace=ws).verdict == "allow", path
        edit = policy.decide("edit", {"path": path, "old": "a", "new": "b"}, read_only=False, workspace=ws)
        assert edit.verdict == edit_verdict, path


# --- .git -------------------------------------------------------------------------------------------


GIT_PATHS = [".git/config", "./.git/hooks/pre-commit", "sub/../.git/HEAD", ".git", "nested/.git/config", "gitdir/x"]


@pytest.fixture
def repo(ws: Path) -> Path:
    """The workspace with a .git folder, a nested repository's .git, and a link to .git."""
    (ws / ".git" / "hooks").mkdir(parents=True)
    (ws / ".git" / "config").write_text("[core]\n")
    (ws / "nested" / ".git").mkdir(parents=True)
    (ws / "gitdir").symlink_to(ws / ".git")
    return ws


@pytest.mark.parametrize("path", GIT_PATHS)
@pytest.mark.parametrize("tool", ["write", "edit"])
def test_writes_inside_git_are_asked_about_in_accept_edits(repo: Path, tool: str, path: str) -> None:
    """accept-edits lets edits run, but not inside .git: asked with the reason; bypass runs it, plan refuses it."""
    args = {"path": path, "content": "x"} if tool == "write" else {"path": path, "old": "a", "new": "b"}
    for mode, allow, expected in (
        ("accept-edits", [], "ask"),
        ("ask", [tool], "ask"),
        ("accept-edits", [f"{tool}(*)"], "ask"),
        ("bypass", [], "allow"),
        ("plan", [], "deny"),
    ):
        decision = PermissionPolicy.build(mode, allow=allow).decide(tool, args, read_only=False, workspace=repo)
        assert decision.verdict == expected, (mode, allow)
        if expected == "ask":
            assert "belongs to git" in decision.reason
    ordinary = PermissionPolicy("accept-edits").decide(tool, {**args, "path": ".gitignore"}, read_only=False)
    assert ordinary.verdict == "allow"


async def test_headless_accept_edits_refuses_a_git_write_naming_the_flag(repo: Path) -> None:
    """With nobody to ask, a write to .git/hooks is refused, naming flags that really allow it; nothing is written."""
    policy = PermissionPolicy("accept-edits")
    hook = {"path": ".git/hooks/pre-commit", "content": "#!/bin/sh\n"}
    output = await run_one(repo, policy, "write", hook)
    assert output == (
        "Error: not permitted: write needs approval (.git/hooks/pre-commit belongs to git (a .git folder), and a "
        "change there is not an ordinary edit) and nobody can answer in a headless run: pass --permission-mode "
        "bypass, or --allow 'write(.git/hooks/pre-commit)'"
    )
    assert not (repo / ".git" / "hooks" / "pre-commit").exists()
    allowed = PermissionPolicy.build("accept-edits", allow=["write(.git/hooks/pre-commit)"])
    assert await run_one(repo, allowed, "write", hook) == "Created .git/hooks/pre-commit (1 line)."


async def test_always_for_a_git_edit_covers_that_file_only(repo: Path) -> None:
    """Answering "always" for .git/config does not open every file inside .git, nor asks again for that one."""
    executor = Executor(DEFAULT_TOOLS, repo, repo.parent / "spill", policy=PermissionPolicy("accept-edits"))
    executor.can_ask = True
    events: list[StepEvent] = []

    def emit(event: StepEvent) -> None:
        events.append(event)
        if isinstance(event, PermissionRequested):
            assert executor.answer(event.request_id, "always" if len(events) < 3 else "deny")

    calls = [
        ToolCall("t1", "write", {"path": ".git/config", "content": "a\n"}),
        ToolCall("t2", "write", {"path": "./.git/config", "content": "b\n"}),
        ToolCall("t3", "write", {"path": ".git/HEAD", "content": "c\n"}),
    ]
    outcomes = await executor.run(calls, emit)
    assert [e.call_id for e in events if isinstance(e, PermissionRequested)] == ["t1", "t3"]
    assert "belongs to git" in next(e for e in events if isinstance(e, PermissionRequested)).reason
    assert [o.result.is_error for o in outcomes] == [False, False, True]
    assert (repo / ".git" / "config").read_text() == "b\n"
    assert [e.decision for e in events if isinstance(e, PermissionDecided)] == ["always", "deny"]


# --- rule families: read covers edit, write and edit cover each other -----------------------------------


async def test_a_read_rule_refuses_edit_so_its_answers_cannot_tell_the_secret(ws: Path) -> None:
    """`read(.env)` refuses `edit .env` the same way whether or not the guess is right: no oracle for the secret."""
    policy = PermissionPolicy.build("bypass", deny=["read(.env)"])
    right = await run_one(ws, policy, "edit", {"path": ".env", "old": "hunter2", "new": "x"})
    wrong = await run_one(ws, policy, "edit", {"path": ".env", "old": "nope", "new": "x"})
    assert right == wrong == "Error: not permitted: edit is denied by the rule read(.env)"
    assert (ws / ".env").read_text() == "TOKEN=hunter2\n"


@pytest.mark.parametrize("rule", ["edit(secrets/**)", "write(secrets/**)"])
@pytest.mark.parametrize("tool", ["write", "edit"])
async def test_a_write_or_edit_rule_refuses_both_tools(ws: Path, rule: str, tool: str) -> None:
    """`edit(secrets/**)` also refuses `write` there, and `write(…)` also refuses `edit`: nothing is changed."""
    args = (
        {"path": "secrets/key.txt", "content": "x"}
        if tool == "write"
        else {"path": "secrets/key.txt", "old": "TOKEN", "new": "x"}
    )
    output = await run_one(ws, PermissionPolicy.build("bypass", deny=[rule]), tool, args)
    assert output == f"Error: not permitted: {tool} is denied by the rule {rule}"
    assert (ws / "secrets" / "key.txt").read_text() == "TOKEN=swordfish\n"
    reading = PermissionPolicy.build("bypass", deny=[rule]).decide("read", {"path": "secrets/key.txt"}, read_only=True)
    assert reading.verdict == "allow"


@pytest.mark.parametrize(
    ("rule", "command"),
    [
        ("read(.env)", "cat <>.env"),
        ("read(.env)", "cat 3<> .env"),
        ("read(.env)", "cat .{env,}"),
        ("read(.env)", "cat .e{n,x}v"),
        ("read(.env)", "cat ~+/.env"),
        ("read(.env)", "cat ~+/sub/../.env"),
        ("read(.env)", "cat /proc/self/cwd/.env"),
        ("edit(secrets/**)", "exec 3<>secrets/key.txt"),
        ("edit(secrets/**)", "echo x > ~+/secrets/key.txt"),
        ("edit(secrets/**)", "echo x >> secrets/{key,other}.txt"),
    ],
)
def test_bash_path_checks_read_both_ways_redirections_braces_and_tilde_plus(ws: Path, rule: str, command: str) -> None:
    """`<>` reads and writes, `.{env,}` expands to `.env`, `~+` is the working folder: all meet the rule."""
    policy = PermissionPolicy.build("bypass", deny=[rule])
    assert policy.decide("bash", {"command": command}, read_only=False, workspace=ws).verdict == "deny", command


# --- any git directory, whatever its name ----------------------------------------------------------------


@pytest.fixture
def separate(ws: Path) -> Path:
    """A workspace whose repository keeps its git directory in `.gd` (`.git` is a file naming it), and a link."""
    subprocess.run(["git", "init", "-q", "--separate-git-dir=.gd", "."], cwd=ws, check=True)
    (ws / "gd-link").symlink_to(ws / ".gd")
    return ws


@pytest.mark.parametrize("path", [".gd/hooks/pre-commit", ".gd/config", "./.gd/HEAD", "gd-link/hooks/post-checkout"])
@pytest.mark.parametrize("tool", ["write", "edit"])
def test_a_separate_git_directory_is_protected_like_git(separate: Path, tool: str, path: str) -> None:
    """`git init --separate-git-dir=.gd`: writes in `.gd` (or through a link to it) are asked in accept-edits."""
    args = {"path": path, "content": "x"} if tool == "write" else {"path": path, "old": "a", "new": "b"}
    decision = PermissionPolicy("accept-edits").decide(tool, args, read_only=False, workspace=separate)
    assert decision.verdict == "ask", path
    assert "belongs to git (a git directory)" in decision.reason


def test_a_git_directory_cannot_be_built_a_file_at_a_time(ws: Path) -> None:
    """A folder with objects/ and refs/ becomes a git directory with HEAD: that last write is asked, then all."""
    policy = PermissionPolicy("accept-edits")

    def write(path: str) -> str:
        return policy.decide("write", {"path": path, "content": "x"}, read_only=False, workspace=ws).verdict

    assert write("repo/config") == "allow"
    (ws / "repo" / "objects").mkdir(parents=True)
    (ws / "repo" / "refs").mkdir()
    assert write("repo/objects/x") == "allow"
    assert write("repo/HEAD") == "ask"
    (ws / "repo" / "HEAD").write_text("ref: refs/heads/main\n")
    assert write("repo/config") == "ask"
    assert write("repo/hooks/pre-commit") == "ask"
    assert write("notes/HEAD") == "allow"


@pytest.fixture
def git_ws(ws: Path) -> Path:
    """The workspace as a git repository."""
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    return ws


async def test_git_status_with_home_pointing_into_the_workspace_is_not_allowed(git_ws: Path) -> None:
    """accept-edits with `bash(git status*)`: a written `.gitconfig` with an fsmonitor and `HOME=. git status`
    (or XDG_CONFIG_HOME) is refused headless, and the fsmonitor command never runs."""
    ws = git_ws
    policy = PermissionPolicy.build("accept-edits", allow=["bash(git status*)"])
    config = "[core]\n\tfsmonitor = touch ran-fsmonitor; false\n"
    assert (await run_one(ws, policy, "write", {"path": ".gitconfig", "content": config})).startswith("Created")
    (ws / "git").mkdir()
    (ws / "git" / "config").write_text(config)
    for command in ("HOME=. git status", "XDG_CONFIG_HOME=. git status", "env HOME=. git status"):
        output = await run_one(ws, policy, "bash", {"command": command})
        assert output.startswith("Error: not permitted: bash needs approval"), command
    assert not (ws / "ran-fsmonitor").exists()
    assert (await run_one(ws, policy, "bash", {"command": "git status --short"})).startswith("?? ")
