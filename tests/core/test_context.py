"""What the model is told about the workspace: the git snapshot, project instructions, and event-driven reminders."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from chimera.core.env.local import LocalEnvironment
from chimera.core.events import ReminderInjected, StepEvent, ToolCallFinished
from chimera.core.loops.guards import STUCK_REMINDER
from chimera.core.loops.reminders import REMINDERS
from tests.helpers_loop import (
    SnapshotReplay,
    bash_turn,
    call,
    collect,
    finished,
    make_core,
    only,
    say,
    turn,
    user_texts,
)

TEST_REMINDER = next(r.text for r in REMINDERS if r.key == "test")
GIT_REMINDER = next(r.text for r in REMINDERS if r.key == "git")
GIT_HEADER = "This is the repository as the session started:"


@pytest.fixture(autouse=True)
def clean_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """git sees no system or user config from the machine, and never finds a repository above tmp_path."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    for name in ("XDG_CONFIG_HOME", "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_CONFIG_GLOBAL"):
        monkeypatch.delenv(name, raising=False)


def git(repo: Path, *args: str) -> str:
    proc = subprocess.run(
        [
            "git",
            "-c",
            "user.name=Chimera Test",
            "-c",
            "user.email=test@example.invalid",
            "-c",
            "commit.gpgsign=false",
            *args,
        ],
        cwd=repo,
        capture_output=True,
        text=True,
        check=True,
    )
    return proc.stdout


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = (tmp_path / "ws").resolve()
    root.mkdir()
    return root


@pytest.fixture
def env(ws: Path) -> Iterator[LocalEnvironment]:
    with LocalEnvironment(ws) as environment:
        yield environment


async def system_of(env: LocalEnvironment) -> str:
    """The system prompt the model receives on the first request of a run in ``env``."""
    provider = SnapshotReplay([turn(say("Hello."))])
    core = make_core(provider, env)
    events = await collect(core, "hi")
    assert finished(events).success is True
    assert provider.sent[0].system == core.system
    return provider.sent[0].system


def section(system: str, start: str, end: str) -> list[str]:
    """The lines of ``system`` between the line ``start`` and the line ``end``."""
    lines = system.splitlines()
    first = lines.index(start) + 1
    return lines[first : lines.index(end, first)]


# --- git snapshot -----------------------------------------------------------------------


async def test_the_system_prompt_shows_branch_status_and_recent_commits(ws: Path, env: LocalEnvironment) -> None:
    """In a repo on a feature branch with a modified and a new file, the prompt has branch, default, status, commits."""
    git(ws, "init", "-q", "-b", "main")
    (ws / "app.py").write_text("print('hi')\n")
    git(ws, "add", "app.py")
    git(ws, "commit", "-q", "-m", "Add the app")
    (ws / "app.py").write_text("print('hello')\n")
    git(ws, "commit", "-q", "-am", "Fix the greeting")
    git(ws, "checkout", "-q", "-b", "feature/login")
    (ws / "app.py").write_text("print('hello, you')\n")
    (ws / "notes.txt").write_text("todo\n")
    log = git(ws, "log", "--format=%h %s").strip()

    system = await system_of(env)
    assert f"{GIT_HEADER}\nGit branch: feature/login\nDefault branch: main\nStatus:\n" in system
    status = section(system, "Status:", "Recent commits:")
    assert [line.strip() for line in status] == ["M app.py", "?? notes.txt"]
    assert system.endswith(f"Recent commits:\n{log}")
    assert log.splitlines()[0].endswith(" Fix the greeting")


async def test_the_status_keeps_staged_and_unstaged_apart(ws: Path, env: LocalEnvironment) -> None:
    """An unstaged change shows as " M a.py" and a staged one as "M  b.py", exactly as `git status --short`."""
    git(ws, "init", "-q", "-b", "main")
    for name in ("a.py", "b.py"):
        (ws / name).write_text("x = 1\n")
    git(ws, "add", ".")
    git(ws, "commit", "-q", "-m", "First")
    (ws / "a.py").write_text("x = 2\n")
    (ws / "b.py").write_text("x = 3\n")
    git(ws, "add", "b.py")
    system = await system_of(env)
    assert section(system, "Status:", "Recent commits:") == [" M a.py", "M  b.py"]


async def test_a_repo_without_commits_says_so(ws: Path, env: LocalEnvironment) -> None:
    """A fresh repository shows its branch, its untracked files and "(no commits yet)"."""
    git(ws, "init", "-q", "-b", "trunk")
    (ws / "a.txt").write_text("a\n")
    system = await system_of(env)
    assert f"{GIT_HEADER}\nGit branch: trunk\nStatus:\n?? a.txt\nRecent commits:\n(no commits yet)" in system


async def test_a_clean_repo_says_clean(ws: Path, env: LocalEnvironment) -> None:
    """A repository with nothing changed shows "(clean)" as its status."""
    git(ws, "init", "-q", "-b", "main")
    (ws / "a.txt").write_text("a\n")
    git(ws, "add", "a.txt")
    git(ws, "commit", "-q", "-m", "First")
    system = await system_of(env)
    assert "Status:\n(clean)\nRecent commits:\n" in system


async def test_outside_a_repo_there_is_no_git_section_and_the_run_works(env: LocalEnvironment) -> None:
    """In a plain folder the prompt has no git snapshot, and the run completes."""
    (env.workdir / "a.txt").write_text("a\n")
    system = await system_of(env)
    assert GIT_HEADER not in system
    assert "Git branch:" not in system
    assert f"Workspace: {env.workdir}" in system


async def test_without_git_installed_there_is_no_git_section_and_the_run_works(
    ws: Path, env: LocalEnvironment, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A repository on a machine with no git on PATH: no git snapshot, no failure."""
    git(ws, "init", "-q", "-b", "main")
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    system = await system_of(env)
    assert GIT_HEADER not in system


async def test_a_long_status_is_capped_and_counts_what_it_left_out(ws: Path, env: LocalEnvironment) -> None:
    """400 untracked files: the status shows the first ones within ~2,000 characters, then "... and N more"."""
    git(ws, "init", "-q", "-b", "main")
    names = [f"untracked-file-number-{i:04d}.txt" for i in range(400)]
    for name in names:
        (ws / name).write_text("x\n")
    system = await system_of(env)
    status = section(system, "Status:", "Recent commits:")
    shown, marker = status[:-1], status[-1]
    found = re.fullmatch(r"\.\.\. and (\d+) more changed paths", marker)
    assert found, marker
    assert shown == [f"?? {name}" for name in names[: len(shown)]]
    assert len(shown) + int(found.group(1)) == 400
    assert 1_900 <= len("\n".join(shown)) <= 2_000


async def test_only_the_last_five_commits_are_listed(ws: Path, env: LocalEnvironment) -> None:
    """A repo with 7 commits: "Recent commits:" lists commits 7 to 3, newest first; the 2 oldest are absent."""
    git(ws, "init", "-q", "-b", "main")
    for n in range(1, 8):
        (ws / "a.txt").write_text(f"{n}\n")
        git(ws, "add", "a.txt")
        git(ws, "commit", "-q", "-m", f"Commit number {n}")
    hashes = git(ws, "log", "--format=%h").split()
    system = await system_of(env)
    recent = system.split("Recent commits:\n", 1)[1].splitlines()
    assert recent == [f"{h} Commit number {n}" for h, n in zip(hashes[:5], range(7, 2, -1), strict=True)]
    assert "Commit number 2" not in system
    assert "Commit number 1" not in system


async def test_the_default_branch_comes_from_origin_head(ws: Path, env: LocalEnvironment, tmp_path: Path) -> None:
    """A clone of a repo whose default branch is trunk says "Default branch: trunk", though a local main exists."""
    origin = tmp_path / "origin"
    origin.mkdir()
    git(origin, "init", "-q", "-b", "trunk")
    (origin / "a.txt").write_text("a\n")
    git(origin, "add", "a.txt")
    git(origin, "commit", "-q", "-m", "First")
    git(ws, "clone", "-q", str(origin), ".")
    git(ws, "branch", "main")  # the local fallback would name this one
    git(ws, "checkout", "-q", "-b", "feature")
    assert git(ws, "symbolic-ref", "--short", "refs/remotes/origin/HEAD").strip() == "origin/trunk"
    system = await system_of(env)
    assert f"{GIT_HEADER}\nGit branch: feature\nDefault branch: trunk\nStatus:\n" in system


# --- project instructions ---------------------------------------------------------------


async def test_agents_md_and_claude_md_go_into_the_system_prompt(env: LocalEnvironment) -> None:
    """AGENTS.md and CLAUDE.md at the workspace root appear, each wrapped in its name, after the instructions header."""
    (env.workdir / "AGENTS.md").write_text("Use tabs, not spaces.\n")
    (env.workdir / "CLAUDE.md").write_text("\nRun `make check` before you finish.\n\n")
    system = await system_of(env)
    assert system.endswith(
        "The project's instructions (follow them):\n"
        "<AGENTS.md>\nUse tabs, not spaces.\n</AGENTS.md>\n\n"
        "<CLAUDE.md>\nRun `make check` before you finish.\n</CLAUDE.md>"
    )


async def test_only_the_instruction_files_present_appear(env: LocalEnvironment) -> None:
    """With AGENTS.md alone (and an empty CLAUDE.md) only AGENTS.md is quoted; with neither there is no header."""
    (env.workdir / "AGENTS.md").write_text("Be brief.\n")
    (env.workdir / "CLAUDE.md").write_text("  \n")
    system = await system_of(env)
    assert system.endswith("The project's instructions (follow them):\n<AGENTS.md>\nBe brief.\n</AGENTS.md>")
    assert "<CLAUDE.md>" not in system
    (env.workdir / "AGENTS.md").unlink()
    assert "The project's instructions" not in await system_of(env)


# --- reminders --------------------------------------------------------------------------


def reminder_trace(events: list[StepEvent]) -> list[str]:
    """Tool results and reminders in order: "t1", "test", "t2", ..."""
    out = []
    for e in events:
        if isinstance(e, ToolCallFinished):
            out.append(e.call_id)
        elif isinstance(e, ReminderInjected):
            out.append({TEST_REMINDER: "test", GIT_REMINDER: "git"}.get(e.text, e.text))
    return out


async def test_a_change_earns_the_test_reminder_once_until_a_command_runs(env: LocalEnvironment) -> None:
    """write → reminder; edit → none; bash; edit → reminder again: each time in the next user message."""
    provider = SnapshotReplay(
        [
            turn(call("t1", "write", path="a.txt", content="one\n")),
            turn(call("t2", "edit", path="a.txt", old="one", new="two")),
            bash_turn("t3", "cat a.txt"),
            turn(call("t4", "edit", path="a.txt", old="two", new="three")),
            turn(say("Done.")),
        ]
    )
    events = await collect(make_core(provider, env), "change a.txt")
    assert reminder_trace(events) == ["t1", "test", "t2", "t3", "t4", "test"]
    expected = f"<system-reminder>{TEST_REMINDER}</system-reminder>"
    assert [user_texts(r.messages[-1]) for r in provider.sent[1:]] == [[expected], [], [], [expected]]
    # The reminder follows the tool results in that message.
    assert [b["type"] for b in provider.sent[1].messages[-1]["content"]] == ["tool_result", "text"]
    assert (env.workdir / "a.txt").read_text() == "three\n"
    assert finished(events).success is True


async def test_a_failed_edit_earns_no_test_reminder(env: LocalEnvironment) -> None:
    """An edit that does not apply changed nothing, so no reminder to run the tests."""
    (env.workdir / "a.txt").write_text("one\n")
    provider = SnapshotReplay([turn(call("t1", "edit", path="a.txt", old="zzz", new="y")), turn(say("Oops."))])
    events = await collect(make_core(provider, env), "edit")
    assert only(events, ToolCallFinished)[0].is_error is True
    assert only(events, ReminderInjected) == []
    assert user_texts(provider.sent[1].messages[-1]) == []


async def test_a_git_command_earns_the_git_reminder_once_a_run(env: LocalEnvironment) -> None:
    """`git status` then `git log`: the never-commit reminder follows the first one only."""
    provider = SnapshotReplay([bash_turn("t1", "git status"), bash_turn("t2", "git log -1"), turn(say("Looked."))])
    events = await collect(make_core(provider, env), "look")
    assert reminder_trace(events) == ["t1", "git", "t2"]
    assert user_texts(provider.sent[1].messages[-1]) == [f"<system-reminder>{GIT_REMINDER}</system-reminder>"]
    assert user_texts(provider.sent[2].messages[-1]) == []


async def test_a_command_that_only_mentions_git_earns_no_reminder(env: LocalEnvironment) -> None:
    """`echo digit` or `ls .github` is not a git command: no reminder."""
    provider = SnapshotReplay([bash_turn("t1", "echo digit; ls -d .github 2>/dev/null; true"), turn(say("ok"))])
    events = await collect(make_core(provider, env), "look")
    assert only(events, ReminderInjected) == []


async def test_the_git_reminder_comes_again_in_a_follow_up_run(env: LocalEnvironment) -> None:
    """A second run on the same conversation that runs `git status` gets the git reminder again."""
    provider = SnapshotReplay(
        [bash_turn("t1", "git status"), turn(say("ok")), bash_turn("t2", "git status"), turn(say("ok"))]
    )
    core = make_core(provider, env)
    first = await collect(core, "look")
    second = await collect(core, "look again")
    assert [e.text for e in only(first, ReminderInjected)] == [GIT_REMINDER]
    assert [e.text for e in only(second, ReminderInjected)] == [GIT_REMINDER]


async def test_the_system_prompt_states_the_reminders_in_the_same_words(env: LocalEnvironment) -> None:
    """Each reminder text is a rule in the system prompt, word for word."""
    system = await system_of(env)
    rules = section(system, "Rules:", "")
    assert rules == [f"- {r.text}" for r in REMINDERS]
    assert {r.key for r in REMINDERS} == {"test", "git"}


def tokens_at_most(text: str) -> int:
    """A generous token count: every word and every punctuation mark one token, or a token per 3 characters."""
    return max(len(re.findall(r"\w+|[^\w\s]", text)), -(-len(text) // 3))


@pytest.mark.parametrize(
    "text", [*(r.text for r in REMINDERS), STUCK_REMINDER.format(repeats=3)], ids=[*(r.key for r in REMINDERS), "stuck"]
)
def test_every_reminder_is_under_50_tokens(text: str) -> None:
    """Each reminder the loop can inject (test, git, stuck) stays under 50 tokens, counted generously."""
    assert tokens_at_most(text) < 50, text
