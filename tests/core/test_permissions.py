"""Permissions: rules, the mode × tool decision table, asking the person, headless refusals, the settings file."""

from __future__ import annotations

import shlex
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from chimera.core.env.local import LocalEnvironment
from chimera.core.errors import ConfigError
from chimera.core.events import (
    PermissionDecided,
    PermissionRequested,
    StepEvent,
    ToolCallFinished,
    ToolCallStarted,
)
from chimera.core.permissions.policy import PermissionPolicy
from chimera.core.permissions.rule import Rule
from chimera.core.sessions.start import RunOptions, start_session
from chimera.core.tool_group import DEFAULT_TOOLS
from chimera.core.tools.executor import Executor, ToolCall
from tests.cli_runner import assert_one_line_error, run_here
from tests.helpers_loop import SnapshotReplay, call, finished, make_core, only, say, turn

HEADLESS_REFUSAL = (
    "Error: not permitted: bash needs approval and nobody can answer in a headless run: "
    "pass --permission-mode bypass, or --allow 'bash(touch *)'"
)
DECLINED = "Error: the person declined to run this bash call; ask or try another way"


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = (tmp_path / "ws").resolve()
    root.mkdir()
    return root


@pytest.fixture
def env(ws: Path) -> Iterator[LocalEnvironment]:
    with LocalEnvironment(ws) as environment:
        yield environment


def tools_of(events: list[StepEvent]) -> list[tuple[str, str]]:
    """(type, detail) of each tool and permission event, in order."""
    out = []
    for e in events:
        if isinstance(e, ToolCallStarted | PermissionRequested):
            out.append((e.type, e.call_id))
        elif isinstance(e, PermissionDecided):
            out.append((e.type, e.decision))
        elif isinstance(e, ToolCallFinished):
            out.append((e.type, "error" if e.is_error else "ok"))
    return out


# --- rules ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "rule"),
    [
        ("bash", Rule("bash", None)),
        ("bash(git status*)", Rule("bash", "git status*")),
        ("  edit ( src/** )  ", Rule("edit", "src/**")),
        ("write(*.md)", Rule("write", "*.md")),
        ("my-tool_2(echo (hi))", Rule("my-tool_2", "echo (hi)")),
    ],
)
def test_rules_parse_tool_and_optional_pattern(text: str, rule: Rule) -> None:
    """`tool` and `tool(pattern)` parse to that tool and pattern, spaces around them ignored."""
    assert Rule.parse(text) == rule


def test_a_rule_prints_the_way_it_is_written() -> None:
    """str(rule) gives back `tool` or `tool(pattern)`, so messages quote the rule the person wrote."""
    assert str(Rule.parse("bash(git status*)")) == "bash(git status*)"
    assert str(Rule.parse(" read ")) == "read"


@pytest.mark.parametrize("text", ["", "   ", "bash(", "bash)", "(ls)", "9bash", "bash git status", "bash(x) y"])
def test_a_rule_that_is_not_tool_or_tool_pattern_is_a_config_error(text: str) -> None:
    """A malformed rule is refused with a message quoting it and showing the accepted shape."""
    with pytest.raises(ConfigError) as caught:
        Rule.parse(text)
    assert repr(text) in str(caught.value)
    assert "tool(pattern)" in str(caught.value)


def test_an_unknown_mode_or_a_bad_rule_in_a_policy_is_a_config_error() -> None:
    """PermissionPolicy refuses a mode it does not know (listing the modes) and a bad rule in its lists."""
    with pytest.raises(ConfigError, match=r"'yolo' is unknown: use one of ask, accept-edits, plan, bypass"):
        PermissionPolicy("yolo")
    with pytest.raises(ConfigError, match=r"'bash\(' is not understood"):
        PermissionPolicy.build("ask", allow=["bash("])
    with pytest.raises(ConfigError, match=r"'\(rm\)' is not understood"):
        PermissionPolicy.build("ask", deny=["(rm)"])


# --- the decision table -----------------------------------------------------------------

READ = ("read", {"path": "a.py"}, True)
GREP = ("grep", {"pattern": "TODO"}, True)
WRITE = ("write", {"path": "a.py", "content": "x"}, False)
EDIT = ("edit", {"path": "a.py", "old": "x", "new": "y"}, False)
BASH = ("bash", {"command": "ls"}, False)

TABLE = {
    #               read     grep     write    edit     bash
    "ask": ("allow", "allow", "ask", "ask", "ask"),
    "accept-edits": ("allow", "allow", "allow", "allow", "ask"),
    "plan": ("allow", "allow", "deny", "deny", "deny"),
    "bypass": ("allow", "allow", "allow", "allow", "allow"),
}


@pytest.mark.parametrize("mode", list(TABLE))
def test_each_mode_decides_reads_edits_and_commands_as_documented(mode: str) -> None:
    """ask asks before any change, accept-edits lets file edits through, plan refuses changes, bypass runs all."""
    policy = PermissionPolicy(mode)
    got = tuple(policy.decide(name, args, read_only=ro).verdict for name, args, ro in (READ, GREP, WRITE, EDIT, BASH))
    assert got == TABLE[mode]


def test_plan_mode_refusal_says_why() -> None:
    """A refusal in plan mode names the tool and says plan mode is read-only."""
    decision = PermissionPolicy("plan").decide("write", WRITE[1], read_only=False)
    assert decision.reason == "plan mode is read-only: write may change files, so it does not run"


@pytest.mark.parametrize(
    ("mode", "allow", "tool", "command_or_path", "verdict"),
    [
        ("ask", ["bash(git status*)"], "bash", "git status --short", "allow"),
        ("ask", ["bash(git status*)"], "bash", "git push", "ask"),
        ("ask", ["bash"], "bash", "make test", "allow"),
        ("ask", ["write"], "edit", "a.py", "ask"),
        ("ask", ["edit(src/*)"], "edit", "src/a.py", "allow"),
        ("ask", ["edit(src/*)"], "edit", "docs/a.md", "ask"),
        ("ask", ["edit(./src/*)"], "edit", "src/a.py", "allow"),
        ("ask", ["edit(src/*)"], "edit", "src/../secrets.txt", "ask"),
        ("accept-edits", ["bash(pytest*)"], "bash", "pytest -q", "allow"),
        ("accept-edits", ["bash(pytest*)"], "bash", "rm -rf build", "ask"),
    ],
)
def test_allow_rules_let_matching_calls_run_without_asking(
    mode: str, allow: list[str], tool: str, command_or_path: str, verdict: str
) -> None:
    """An allow rule turns an ask into allow for calls matching its tool and pattern, and nothing else."""
    policy = PermissionPolicy.build(mode, allow=allow)
    args: dict[str, Any] = {"command": command_or_path} if tool == "bash" else {"path": command_or_path}
    assert policy.decide(tool, args, read_only=False).verdict == verdict


@pytest.mark.parametrize("mode", ["ask", "accept-edits", "bypass"])
def test_a_deny_rule_wins_over_the_mode_and_over_allow_rules(mode: str) -> None:
    """`bash(rm *)` in deny refuses `rm -rf build` even in bypass and even when an allow rule matches too."""
    policy = PermissionPolicy.build(mode, allow=["bash", "bash(rm *)"], deny=["bash(rm *)"])
    decision = policy.decide("bash", {"command": "rm -rf build"}, read_only=False)
    assert decision.verdict == "deny"
    assert decision.reason == "bash is denied by the rule bash(rm *)"
    assert policy.decide("bash", {"command": "ls"}, read_only=False).verdict == "allow"


def test_a_deny_rule_refuses_even_a_read() -> None:
    """`read(.env)` in deny keeps the model from reading that file, though reads never ask."""
    policy = PermissionPolicy.build("bypass", deny=["read(.env)"])
    assert policy.decide("read", {"path": ".env"}, read_only=True).verdict == "deny"
    assert policy.decide("read", {"path": "a.py"}, read_only=True).verdict == "allow"


@pytest.mark.parametrize(
    ("tool", "subject"),
    [
        ("read", "./.env"),
        ("read", "sub/../.env"),
        ("read", "{ws}/.env"),
        ("read", "link-to-env"),
        ("edit", "./secrets/key.txt"),
        ("bash", "rm  -rf build"),
        ("bash", "true; rm -rf build"),
        ("bash", "ls && (rm -rf build)"),
        ("bash", "echo $(rm -rf build)"),
        ("bash", "ls\nrm -rf build"),
    ],
)
def test_a_deny_rule_cannot_be_dodged_by_spelling_the_call_differently(tmp_path: Path, tool: str, subject: str) -> None:
    """`./.env`, `sub/../.env`, an absolute path, a link, doubled spaces or a chain still meet the deny rule."""
    (tmp_path / ".env").write_text("KEY=1")
    (tmp_path / "link-to-env").symlink_to(tmp_path / ".env")
    policy = PermissionPolicy.build("bypass", deny=["read(.env)", "edit(secrets/*)", "bash(rm -rf *)"])
    key = "command" if tool == "bash" else "path"
    args = {key: subject.format(ws=tmp_path)}
    assert policy.decide(tool, args, read_only=tool == "read", workspace=tmp_path).verdict == "deny", subject
    assert policy.decide("bash", {"command": "ls -la"}, read_only=False, workspace=tmp_path).verdict == "allow"


@pytest.mark.parametrize("allow", [["bash"], ["write"], ["edit(*)"]])
def test_allow_rules_cannot_loosen_plan_mode(allow: list[str]) -> None:
    """In plan mode an allow rule for bash, write or edit still leaves those calls refused."""
    policy = PermissionPolicy.build("plan", allow=allow)
    for name, args, ro in (WRITE, EDIT, BASH):
        assert policy.decide(name, args, read_only=ro).verdict == "deny"


@pytest.mark.parametrize(
    ("rule", "tool", "subject"),
    [
        ("read(./.env)", "read", ".env"),
        ("read({ws}/.env)", "read", ".env"),
        ("read(**/.env)", "read", "./.env"),
        ("read(**/.env)", "read", "{ws}/.env"),
        ("edit(./secrets/*)", "edit", "secrets/key.txt"),
        ("bash(rm  -rf *)", "bash", "rm -rf build"),
    ],
)
def test_a_deny_rule_however_it_is_written_meets_the_call(tmp_path: Path, rule: str, tool: str, subject: str) -> None:
    """A rule written with `./`, an absolute path, `**/` or doubled spaces still refuses the call it names."""
    (tmp_path / ".env").write_text("KEY=1")
    policy = PermissionPolicy.build("bypass", deny=[rule.format(ws=tmp_path)])
    args = {"command" if tool == "bash" else "path": subject.format(ws=tmp_path)}
    assert policy.decide(tool, args, read_only=tool == "read", workspace=tmp_path).verdict == "deny", rule


def test_an_allow_rule_for_a_command_does_not_cover_commands_chained_after_it() -> None:
    """`--allow 'bash(git status*)'` does not let `git status; rm -rf src` (or &&, |, $(...)) run without asking."""
    policy = PermissionPolicy.build("ask", allow=["bash(git status*)"])
    chains = ("git status; rm -rf src", "git status && rm -rf src", "git status | sh", "git status $(rm x)")
    for command in (*chains, "git status\nrm -rf src"):
        assert policy.decide("bash", {"command": command}, read_only=False).verdict == "ask", command


# --- asking the person ------------------------------------------------------------------


def answering(executor: Executor, verdicts: list[str], events: list[StepEvent]) -> Any:
    """An emit callback that records events and answers each permission request with the next verdict."""
    pending = list(verdicts)

    def emit(event: StepEvent) -> None:
        events.append(event)
        if isinstance(event, PermissionRequested):
            assert executor.answer(event.request_id, pending.pop(0))

    return emit


async def test_answering_allow_runs_the_asked_call(ws: Path, tmp_path: Path) -> None:
    """In ask mode a bash call waits for the person; "allow" runs it and the decision is an event."""
    executor = Executor(DEFAULT_TOOLS, ws, tmp_path / "spill", policy=PermissionPolicy("ask"), can_ask=True)
    events: list[StepEvent] = []
    [outcome] = await executor.run(
        [ToolCall("t1", "bash", {"command": "touch made-it"})], answering(executor, ["allow"], events)
    )
    assert tools_of(events) == [
        ("tool_call_started", "t1"),
        ("permission_requested", "t1"),
        ("permission_decided", "allow"),
        ("tool_call_finished", "ok"),
    ]
    asked = only(events, PermissionRequested)[0]
    assert (asked.name, asked.args) == ("bash", {"command": "touch made-it"})
    assert only(events, PermissionDecided)[0].reason == "answered by the person"
    assert outcome.result.is_error is False
    assert (ws / "made-it").exists()


async def test_an_answer_goes_to_an_open_request_once(ws: Path, tmp_path: Path) -> None:
    """An unknown or already answered request id is refused; a decision that is not one of the three is an error."""
    executor = Executor(DEFAULT_TOOLS, ws, tmp_path / "spill", policy=PermissionPolicy("ask"), can_ask=True)
    asked: list[PermissionRequested] = []

    def emit(event: StepEvent) -> None:
        if isinstance(event, PermissionRequested):
            asked.append(event)
            with pytest.raises(ValueError, match="allow, always, deny"):
                executor.answer(event.request_id, "yes")
            assert not executor.answer("t1:nope", "allow")
            assert executor.answer(event.request_id, "deny")
            assert not executor.answer(event.request_id, "allow")  # answered already: the first answer stands

    [outcome] = await executor.run([ToolCall("t1", "bash", {"command": "touch made-it"})], emit)
    assert outcome.result.is_error
    assert not (ws / "made-it").exists()
    assert not executor.answer(asked[0].request_id, "allow")  # the call is over


async def test_a_run_stopped_while_asking_says_the_request_is_moot(env: LocalEnvironment) -> None:
    """Interrupted with a question open, the run publishes that it no longer waits (a front end closes its prompt)."""
    provider = SnapshotReplay([turn(call("t1", "bash", command="touch made-it")), turn(say("never sent"))])
    core = make_core(provider, env, policy=PermissionPolicy("ask"), can_ask=True)
    events: list[StepEvent] = []
    async for event in core.run("make a file"):
        events.append(event)
        if isinstance(event, PermissionRequested):
            core.interrupt()
    (asked,) = only(events, PermissionRequested)
    (decided,) = only(events, PermissionDecided)
    assert (decided.decision, decided.request_id) == ("cancelled", asked.request_id)
    assert events[-1].reason == "interrupted"  # type: ignore[attr-defined]
    assert not (env.workdir / "made-it").exists()
    assert not core.answer(asked.request_id, "allow")


async def test_answering_always_stops_asking_for_that_command_only(ws: Path, tmp_path: Path) -> None:
    """Answering "always" runs the call; the same command then runs unasked, while another one is still asked."""
    executor = Executor(DEFAULT_TOOLS, ws, tmp_path / "spill", policy=PermissionPolicy("ask"), can_ask=True)
    events: list[StepEvent] = []
    emit = answering(executor, ["always", "deny"], events)
    calls = [
        ToolCall("t1", "bash", {"command": "echo x >> log"}),
        ToolCall("t2", "bash", {"command": "echo x >> log"}),
        ToolCall("t3", "bash", {"command": "echo y >> log"}),
    ]
    outcomes = await executor.run(calls, emit)
    assert [e.call_id for e in only(events, PermissionRequested)] == ["t1", "t3"]
    assert [o.result.is_error for o in outcomes] == [False, False, True]
    assert (ws / "log").read_text() == "x\nx\n"


async def test_answering_deny_gives_the_model_an_error_it_reads(env: LocalEnvironment) -> None:
    """A denied call does not run; the model's next request carries an error tool_result saying it was declined."""
    provider = SnapshotReplay([turn(call("t1", "bash", command="touch made-it")), turn(say("Understood."))])
    core = make_core(provider, env, policy=PermissionPolicy("ask"), can_ask=True)
    events: list[StepEvent] = []
    async for event in core.run("make a file"):
        events.append(event)
        if isinstance(event, PermissionRequested):
            assert core.answer(event.request_id, "deny")
    assert tools_of(events) == [
        ("tool_call_started", "t1"),
        ("permission_requested", "t1"),
        ("permission_decided", "deny"),
        ("tool_call_finished", "error"),
    ]
    assert only(events, ToolCallFinished)[0].output == DECLINED
    assert provider.sent[1].messages[-1] == {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": "t1", "content": DECLINED, "is_error": True}],
    }
    assert finished(events).success is True
    assert not (env.workdir / "made-it").exists()


async def test_plan_mode_and_deny_rules_refuse_without_asking(ws: Path, tmp_path: Path) -> None:
    """Even with someone to ask, plan mode and deny rules refuse at once: no question is put to the person."""
    for policy in (PermissionPolicy("plan"), PermissionPolicy.build("bypass", deny=["bash(touch *)"])):
        executor = Executor(DEFAULT_TOOLS, ws, tmp_path / "spill", policy=policy, can_ask=True)
        events: list[StepEvent] = []
        [outcome] = await executor.run([ToolCall("t1", "bash", {"command": "touch made-it"})], events.append)
        assert tools_of(events) == [
            ("tool_call_started", "t1"),
            ("permission_decided", "deny"),
            ("tool_call_finished", "error"),
        ]
        assert outcome.result.output.startswith("Error: not permitted: ")
        assert not (ws / "made-it").exists()


async def test_headless_asks_are_refused_at_once_naming_the_flags(ws: Path, tmp_path: Path) -> None:
    """With nobody to ask, a bash call in ask mode is refused without waiting, naming --permission-mode and --allow."""
    executor = Executor(DEFAULT_TOOLS, ws, tmp_path / "spill", policy=PermissionPolicy("ask"), can_ask=False)
    events: list[StepEvent] = []
    [outcome] = await executor.run([ToolCall("t1", "bash", {"command": "touch made-it"})], events.append)
    assert tools_of(events) == [
        ("tool_call_started", "t1"),
        ("permission_decided", "deny"),
        ("tool_call_finished", "error"),
    ]
    assert outcome.result.output == HEADLESS_REFUSAL
    assert "--permission-mode" in only(events, PermissionDecided)[0].reason
    assert "--allow" in only(events, PermissionDecided)[0].reason
    assert not (ws / "made-it").exists()


async def test_headless_accept_edits_writes_without_asking_but_refuses_commands(ws: Path, tmp_path: Path) -> None:
    """accept-edits with nobody to ask: the write lands, the bash call is refused, nothing is asked."""
    executor = Executor(DEFAULT_TOOLS, ws, tmp_path / "spill", policy=PermissionPolicy("accept-edits"))
    events: list[StepEvent] = []
    outcomes = await executor.run(
        [ToolCall("t1", "write", {"path": "a.txt", "content": "hi\n"}), ToolCall("t2", "bash", {"command": "touch b"})],
        events.append,
    )
    assert [o.result.is_error for o in outcomes] == [False, True]
    assert outcomes[1].result.output == HEADLESS_REFUSAL
    assert not only(events, PermissionRequested)
    assert sorted(p.name for p in ws.iterdir()) == ["a.txt"]


# --- the settings file ------------------------------------------------------------------


def write_config(home: Path, text: str) -> Path:
    path = home / "config.toml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def model_server(monkeypatch: pytest.MonkeyPatch) -> None:
    """A configured model (nothing listens there; prepare never contacts it), so the demo is not used."""
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")


@pytest.mark.usefixtures("model_server")
async def test_prepare_takes_mode_and_rules_from_the_settings_file(isolated_env: Path, ws: Path) -> None:
    """CHIMERA_HOME/config.toml sets the mode and rules of a run; flags override the mode and add rules."""
    write_config(
        isolated_env,
        '[permissions]\nmode = "accept-edits"\nallow = ["bash(git status*)"]\ndeny = ["bash(rm *)"]\n',
    )
    session = start_session(RunOptions(workdir=ws))
    try:
        assert session.demo is False
        assert session.policy == PermissionPolicy.build(
            "accept-edits", allow=["bash(git status*)"], deny=["bash(rm *)"]
        )
        assert session.agent.policy == session.policy
        assert session.policy.decide("bash", {"command": "git status -s"}, read_only=False).verdict == "allow"
        assert session.policy.decide("bash", {"command": "rm -rf x"}, read_only=False).verdict == "deny"
    finally:
        await session.close()
    session = start_session(RunOptions(workdir=ws, permission_mode="plan", allow=("bash(ls*)",), deny=("read(.env)",)))
    try:
        assert session.policy == PermissionPolicy.build(
            "plan", allow=["bash(git status*)", "bash(ls*)"], deny=["bash(rm *)", "read(.env)"]
        )
    finally:
        await session.close()


@pytest.mark.usefixtures("model_server")
async def test_without_a_settings_file_the_mode_is_ask(ws: Path) -> None:
    """No config.toml and no flag: the run asks before changes."""
    session = start_session(RunOptions(workdir=ws))
    try:
        assert session.policy == PermissionPolicy("ask")
    finally:
        await session.close()


@pytest.mark.usefixtures("model_server")
@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("[permissions\nmode = 'ask'\n", "is not valid TOML"),
        ("[permissions]\nallow = 'bash'\n", "permissions.allow must be a list of strings"),
        ("[permissions]\ndeny = [1]\n", "permissions.deny must be a list of strings"),
        ("[permissions]\nmode = 3\n", "permissions.mode must be a string"),
        ("permissions = 1\n", "[permissions] must be a table"),
    ],
)
def test_a_broken_settings_file_is_a_config_error_naming_it(
    isolated_env: Path, ws: Path, text: str, needle: str
) -> None:
    """Invalid TOML or wrongly typed permissions give a ConfigError naming the file and the fault."""
    path = write_config(isolated_env, text)
    with pytest.raises(ConfigError) as caught:
        start_session(RunOptions(workdir=ws))
    assert str(path) in str(caught.value)
    assert needle in str(caught.value)


@pytest.mark.usefixtures("model_server")
@pytest.mark.parametrize("text", ['[permissions]\nmode = "yolo"\n', '[permissions]\nallow = ["bash("]\n'])
def test_an_unknown_mode_or_bad_rule_in_the_settings_file_names_the_file(
    isolated_env: Path, ws: Path, text: str
) -> None:
    """mode = "yolo" or a malformed rule in config.toml is an error that names the file to fix."""
    path = write_config(isolated_env, text)
    with pytest.raises(ConfigError) as caught:
        start_session(RunOptions(workdir=ws))
    assert str(path) in str(caught.value)


def test_cli_with_a_broken_settings_file_prints_one_line_and_exits_2(isolated_env: Path, ws: Path) -> None:
    """`chimera run` with an invalid config.toml prints one line naming the file and exits 2, no traceback."""
    path = write_config(isolated_env, "[permissions]\nmode = ask\n")
    proc = run_here(
        "run",
        "x",
        "--workdir",
        str(ws),
        env={"CHIMERA_HOME": str(isolated_env), "ANTHROPIC_BASE_URL": "http://127.0.0.1:9"},
    )
    assert_one_line_error(proc, str(path), "not valid TOML")


@pytest.mark.usefixtures("model_server")
@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ('[permission]\nmode = "plan"\n', "unknown table [permission]: did you mean [permissions]?"),
        ('[permissions]\ndenny = ["bash(rm *)"]\n', "unknown key permissions.denny in [permissions]: did you mean"),
        ('[permissions]\nallows = ["bash"]\n', "did you mean permissions.allow?"),
        ('mode = "plan"\n', "unknown key mode: did you mean permissions.mode?"),
        ('[permissions]\ndeny = ["bahs(rm *)"]\n', "permissions.deny: the permission rule 'bahs(rm *)' names no tool"),
        ('[permissions]\nallow = ["raed(src/**)"]\n', "did you mean 'read'?"),
    ],
)
def test_a_misspelled_setting_is_an_error_naming_the_nearest_known_one(
    isolated_env: Path, ws: Path, text: str, needle: str
) -> None:
    """A misspelled table, key or tool name would leave a rule off unseen: it is a ConfigError with the fix."""
    path = write_config(isolated_env, text)
    with pytest.raises(ConfigError) as caught:
        start_session(RunOptions(workdir=ws))
    assert str(caught.value).startswith(f"{path}: ")
    assert needle in str(caught.value)
    assert "\n" not in str(caught.value)


def test_cli_with_a_misspelled_table_prints_one_line_and_exits_2(isolated_env: Path, ws: Path) -> None:
    """`[permission]` with `denny = […]` stops `chimera run` with one line naming the key and the nearest one."""
    path = write_config(isolated_env, '[permission]\ndenny = ["bash(rm *)"]\n')
    proc = run_here("run", "x", "--workdir", str(ws), env={"CHIMERA_HOME": str(isolated_env)})
    assert_one_line_error(proc, str(path), "[permission]", "did you mean [permissions]?")


def test_cli_with_a_misspelled_tool_in_a_flag_rule_prints_one_line_and_exits_2(isolated_env: Path, ws: Path) -> None:
    """`--allow 'bahs(ls)'` is refused (even for the offline demo) naming the flag and the tool meant."""
    proc = run_here("run", "x", "--workdir", str(ws), "--deny", "bahs(ls)", env={"CHIMERA_HOME": str(isolated_env)})
    assert_one_line_error(proc, "--deny", "'bahs(ls)'", "did you mean 'bash'?")


def test_a_rule_for_a_tool_that_does_not_exist_is_refused_when_tools_are_known() -> None:
    """Given the tools, `bahs(ls)` is a ConfigError naming `bash`; `*` is accepted for every tool."""
    with pytest.raises(ConfigError, match=r"'bahs\(ls\)' names no tool Chimera has: did you mean 'bash'\?"):
        PermissionPolicy.build("ask", allow=["bahs(ls)"], tools=DEFAULT_TOOLS.names)
    policy = PermissionPolicy.build("bypass", deny=["*(.env)"], tools=DEFAULT_TOOLS.names)
    assert policy.decide("read", {"path": ".env"}, read_only=True).verdict == "deny"


def flags_that_allow(fix: str) -> list[tuple[str, list[str]]]:
    """The (mode, allow rules) alternatives a refusal's "pass …" text names."""
    out = []
    for part in fix.split(", or "):
        words = shlex.split(part)
        if words[:1] == ["--permission-mode"]:
            out.append((words[1], []))
        elif words[:1] == ["--allow"]:
            out.append(("ask", [words[1]]))
    return out


@pytest.mark.parametrize(
    ("mode", "name", "args"),
    [
        ("ask", "bash", {"command": "touch made-it"}),
        ("accept-edits", "bash", {"command": "LANG=C timeout 5 pytest -q tests/test_x.py"}),
        ("ask", "bash", {"command": "./run.sh --fast"}),
        ("ask", "bash", {"command": "sudo apt install x"}),
        ("ask", "bash", {"command": "make && make test"}),
        ("ask", "bash", {"command": "git status > out"}),
        ("ask", "bash", {"command": "eval make"}),
        ("ask", "write", {"path": "a.txt", "content": "x"}),
        ("ask", "edit", {"path": "src/a.py", "old": "a", "new": "b"}),
        ("ask", "edit", {"path": "docs/[draft] it's.md", "old": "a", "new": "b"}),
        ("ask", "bash", {"command": "'./my tool' --go"}),
        ("accept-edits", "write", {"path": ".git/info/exclude", "content": "x"}),
    ],
)
def test_the_flags_a_headless_refusal_names_really_allow_the_call(
    ws: Path, mode: str, name: str, args: dict[str, Any]
) -> None:
    """Each flag the refusal suggests, passed alone, lets that very call run; none that would not is named."""
    decision = PermissionPolicy(mode).decide(name, args, read_only=False, workspace=ws)
    assert decision.verdict == "ask"
    alternatives = flags_that_allow(decision.fix)
    assert alternatives, decision.fix
    for new_mode, allow in alternatives:
        policy = PermissionPolicy.build(new_mode if allow == [] else mode, allow=allow, tools=DEFAULT_TOOLS.names)
        assert policy.decide(name, args, read_only=False, workspace=ws).verdict == "allow", (new_mode, allow)
    if name == "bash" and ("&&" in args["command"] or ">" in args["command"] or "eval" in args["command"]):
        assert "--allow" not in decision.fix
