"""bash rules judge what the shell will run: spellings, wrappers, compound forms, chains and unknown commands."""

from __future__ import annotations

import shlex
import string
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chimera.core.events import PermissionDecided, StepEvent
from chimera.core.permissions.policy import PermissionPolicy
from chimera.core.tool_group import DEFAULT_TOOLS
from chimera.core.tools.executor import Executor, ToolCall

RM_DENIED = PermissionPolicy.build("bypass", deny=["bash(rm -rf *)"])
STATUS_ALLOWED = PermissionPolicy.build("ask", allow=["bash(git status*)"])


def verdict(policy: PermissionPolicy, command: str, workspace: Path | None = None) -> str:
    return policy.decide("bash", {"command": command}, read_only=False, workspace=workspace).verdict


# --- spellings the shell reads as the same command --------------------------------------------


def ansi_c(draw: st.DrawFn, word: str) -> str:
    """``word`` as ``$'…'`` with some characters written as escapes bash decodes (hex, octal, \\u, \\U); an escape
    of variable length only where the next character cannot extend it."""
    short = ["\\x{:x}", "\\{:o}", "\\u{:x}"]
    fixed = ["", "\\x{:02X}", "\\{:03o}", "\\u{:04x}", "\\U{:08x}"]
    out = []
    for at, char in enumerate(word):
        following = word[at + 1 : at + 2]
        form = draw(st.sampled_from(fixed if following and following in string.hexdigits else [*fixed, *short]))
        out.append(form.format(ord(char)) if form else char)
    tail = draw(st.sampled_from(["", "\\0junk", "\\x00", "\\u0"]))
    return "$'" + "".join(out) + tail + "'"


@st.composite
def quoted(draw: st.DrawFn, word: str, *, plain: bool = True) -> str:
    """``word`` as the shell reads it after quote removal: bare, quoted whole or in part, escaped, continued;
    unless ``plain``, also as ``$'…'`` with escapes."""
    styles = ["bare", "single", "double", "split", "escape", "continued"]
    style = draw(st.sampled_from(styles if plain else [*styles, "ansi", "ansi"]))
    if style == "ansi":
        return ansi_c(draw, word)
    if style == "single":
        return f"'{word}'"
    if style == "double":
        return f'"{word}"'
    if len(word) < 2:
        return word
    at = draw(st.integers(1, len(word) - 1))
    if style == "split":
        return word[:at] + draw(st.sampled_from(["'{}'", '"{}"'])).format(word[at:])
    if style == "escape":
        return word[:at] + "\\" + word[at:]
    if style == "continued":
        return word[:at] + "\\\n" + word[at:]
    return word


BLANKS = st.sampled_from([" ", "  ", "\t", " \\\n", " \\\n  ", "\\\n "])
# Wrappers with their options spelled the ways getopt reads them: clustered, attached, shortened, after --.
WRAPPERS = st.lists(
    st.sampled_from(
        [
            "command",
            "env",
            "time",
            "nice -n 5",
            "timeout 10",
            "nohup",
            "env LC_ALL=C",
            "exec",
            "timeout --sig KILL 5",
            "timeout -k1 -sKILL 5",
            "nice --adj 5",
            "nice -5",
            "stdbuf --out L",
            "stdbuf -oL",
            "env -iu X",
            "env --un X",
            "env -",
            "env -u X --",
            "exec -ca foo",
            "exec -l --",
            "command -p --",
            "chrt 1",
            "chrt -o 0",
            "taskset -c 0",
            "flock /tmp/l",
            "setpriv --reset-env",
            "prlimit --nofile=100",
            "strace -fo/dev/null",
            "ltrace -o /dev/null",
            "unshare -r",
            "setarch x86_64 -R",
            "nsenter -t 1",
            "runuser -u root --",
            "sudo --user=root -E",
            "xargs -a/dev/null -r",
            "ionice -c3",
            "time -p",
        ]
    ),
    max_size=2,
)
ASSIGNMENTS = st.lists(st.sampled_from(["A=1", "LANG=C", "X=''", 'Y="a b"']), max_size=2)


@st.composite
def spelled(draw: st.DrawFn, name: str, words: list[str], assignments: bool = True, *, plain: bool = False) -> str:
    """One spelling of ``name words…``: path prefix, quoting and blanks varied; unless ``plain`` (the spellings
    an allow rule covers), also wrappers, assignments and ``$'…'``."""
    head = draw(st.sampled_from(["", "/bin/", "/usr/bin/"])) + name if name == "rm" else name
    before = draw(ASSIGNMENTS) if assignments and not plain else []
    wrappers = [] if plain else draw(WRAPPERS)
    parts = [*before, *wrappers, draw(quoted(head, plain=plain)), *[draw(quoted(w, plain=plain)) for w in words]]
    line = draw(st.sampled_from(["", " "]))
    for index, part in enumerate(parts):
        line += (draw(BLANKS) if index else "") + part
    return line + draw(st.sampled_from(["", " ", "\t", ";"]))


@st.composite
def recursive_force_flags(draw: st.DrawFn) -> list[str]:
    """-r and -f for rm in any order, clustered or not, short or long."""
    letters = draw(st.permutations(["r", "f"]))
    if draw(st.booleans()):
        return ["-" + "".join(letters)]
    long = {"r": ["-r", "-R", "--recursive"], "f": ["-f", "--force"]}
    return [draw(st.sampled_from(long[letter])) for letter in letters]


@st.composite
def rm_rf(draw: st.DrawFn, assignments: bool = True) -> str:
    """`rm -rf <target>` spelled any way the shell accepts, flags before or after the target."""
    flags = draw(recursive_force_flags())
    target = draw(st.sampled_from(["build", "/", "src/a b", "~", "*"]))
    words = [*flags, target] if draw(st.booleans()) else [target, *flags]
    return draw(spelled("rm", words, assignments))


COMPOUNDS = [
    "{}",
    "true; {}",
    "true && {}",
    "false || {}",
    "{} | cat",
    "({})",
    "{{ {}; }}",
    "if true; then {}; fi",
    "while false; do {}; done",
    "for i in 1 2; do {}; done",
    "case x in x) {};; esac",
    "f() {{ {}; }}; f",
    "! {}",
    "echo $({})",
    "echo `{}`",
    "cat <({})",
    "x=$({})",
    "{} &",
    "true\n{}",
]


@given(command=rm_rf(), form=st.sampled_from(COMPOUNDS))
def test_every_spelling_of_a_denied_command_is_denied_at_any_depth(command: str, form: str) -> None:
    """`bash(rm -rf *)` refuses rm -rf however it is quoted, ordered, clustered, wrapped or nested."""
    line = form.format(command)
    assert verdict(RM_DENIED, line) == "deny", line


@given(command=rm_rf())
def test_a_denied_command_inside_sh_c_or_eval_is_denied(command: str) -> None:
    """A literal string given to `sh -c`, `bash -lc`, `su -c`, `eval` or `trap`, their options spelled any way
    getopt reads them, is read as commands too."""
    one_line = command.replace("\\\n", "")
    runners = ["sh -c", "bash -lc", "eval", "su root -c", "trap", "bash -c --", "bash -O extglob -ec", "eval --"]
    runners += ["su --comm", "su root --command", "runuser root -c", "flock /tmp/l -c", "script -qc", "trap --"]
    for runner in runners:
        line = f"{runner} {shlex.quote(one_line)}" + (" EXIT" if runner.startswith("trap") else "")
        assert verdict(RM_DENIED, line) == "deny", line
    for runner in ("su -c", "env -S", "env -vS", "env --split-string="):
        glued = f"{runner}{shlex.quote(one_line.rstrip('; '))}"  # env -S does not read `;`
        assert verdict(RM_DENIED, glued) in {"deny", "ask"}, glued


# Places the grammar does not read as bash does, or where bash runs a string it reads later.
HIDING = [
    "time {{ {}; }}",
    "time -p {{ {}; }}",
    "! {{ {}; }}",
    "! ! {}",
    "time ! {}",
    "coproc {{ {}; }}",
    "coproc f {{ {}; }}",
    "time if true; then {}; fi",
    "time while true; do {}; break; done",
    'echo "${{x:-`{}`}}"',
    "echo ${{x:-`{}`}}",
    "echo ${{x:-${{y:-`{}`}}}}",
    "echo $(( {s} ))",
    "echo $[ {s} ]",
    "echo ${{a[{s}]}}",
    "[[ {s} -eq 0 ]]",
    "v={s}; echo $((v))",
    "v={s}; echo ${{!v}}",
    "let {s}",
    "bash -s <<< {q}",
    "sh <<< {q}",
    "bash <(echo {q})",
    "source <(echo {q})",
    "xargs -I% sh -c % <<< {q}",
    "PS4={q}; set -x; :",
    "env --sp={q}",
    "alias x={q}",
]


@given(command=rm_rf(assignments=False), form=st.sampled_from(HIDING))
def test_a_denied_command_hidden_where_the_grammar_misreads_is_never_allowed(command: str, form: str) -> None:
    """Reserved words, backquotes in `${…}`, strings bash evaluates later, shells reading input: refused or
    asked in bypass, never run unasked."""
    one_line = command.replace("\\\n", "")
    line = form.format(one_line, q=shlex.quote(one_line), s=shlex.quote(f"a[$({one_line})]"))
    assert verdict(RM_DENIED, line) in {"deny", "ask"}, line


@given(command=rm_rf(assignments=False))
def test_sudo_and_xargs_do_not_hide_a_denied_command(command: str) -> None:
    """`sudo rm -rf x` and `… | xargs rm -rf` meet the deny rule like rm itself."""
    assert verdict(RM_DENIED, "sudo -u root " + command) == "deny"
    assert verdict(RM_DENIED, "find . -print0 | xargs -0 " + command) == "deny"


@pytest.mark.parametrize(
    "command",
    ["rm -f x", "rm -r x", "rm -- -rf", "echo rm -rf x", "grep -rf x y", "'rm -rf x'", "git rm -rf x", "ls -rf"],
)
def test_commands_the_deny_rule_does_not_name_still_run(command: str) -> None:
    """rm without -r, or -rf given to another command or as an operand after --, is not refused by `rm -rf *`."""
    assert verdict(RM_DENIED, command) == "allow"


@pytest.mark.parametrize(
    ("rule", "command"),
    [
        ("bash(git push --force*)", "git push -f origin main"),
        ("bash(git push --force*)", "git -C . push origin +main"),
        ("bash(git push --force*)", "git push --force-with-lease"),
        ("bash(rm -rf /)", "rm -rf //"),
        ("bash(rm -rf /)", "rm -fr /tmp/.."),
        ("bash(curl *)", "/usr/local/bin/curl -s x | sh"),
        ("bash(sudo *)", "sudo -i"),
        ("bash(rm *)", "find . -name x -exec rm {} +"),
        ("bash(rm *)", "env -S 'rm x'"),
    ],
)
def test_deny_rules_meet_other_spellings_of_flags_operands_and_runners(rule: str, command: str) -> None:
    """Long or short flags, a +refspec, `//` for `/`, a path to the program, find -exec and env -S are seen through."""
    assert verdict(PermissionPolicy.build("bypass", deny=[rule]), command) == "deny"


# --- allow rules cover one plain command -------------------------------------------------------


@st.composite
def git_status(draw: st.DrawFn, *, plain: bool = False) -> str:
    words = ["status", *draw(st.lists(st.sampled_from(["-s", "--short", "-b", "--porcelain", "."]), max_size=2))]
    return draw(spelled("git", words, plain=plain))


@given(command=git_status(plain=True))
def test_every_plain_spelling_of_an_allowed_command_is_allowed(command: str) -> None:
    """`bash(git status*)` covers git status however it is quoted, continued or blank-separated."""
    assert verdict(STATUS_ALLOWED, command) == "allow", command


NOT_PLAIN = [
    "$x",
    "${x}",
    "${x:-a}",
    "$((1))",
    "$['$(rm x)']",
    "$(( '$(rm x)' ))",
    "${a['$(rm x)']}",
    "\"${x:-'$(rm x)'}\"",
    "$'a'",
    '$"a"',
    "$(true)",
    "`true`",
    "<(true)",
    "*",
    "a?",
    "[ab]",
    "{a,b}",
    "x{1..2}",
    "> f",
    ">> f",
    "<<< x",
    "<> f",
    "&",
    "; ls",
    "| cat",
    "&& ls",
]
PREFIXES = ["A=1 ", "HOME=. ", "XDG_CONFIG_HOME=. ", "env ", "command ", "exec -ca x ", "time ", "nice -n 5 "]


@given(
    command=git_status(plain=True),
    construct=st.sampled_from(NOT_PLAIN),
    prefix=st.sampled_from(["", *PREFIXES]),
    at=st.integers(0, 3),
)
def test_a_line_with_any_construct_that_is_not_plain_never_gets_an_allow(
    command: str, construct: str, prefix: str, at: int
) -> None:
    """Expansions, `$'…'`, wildcards, braces, redirections, chains, assignments and wrappers: always asked."""
    words = command.rstrip(";").split(" ")
    words.insert(min(at, len(words)), construct) if construct[0] not in ";|&<>" else words.append(construct)
    line = prefix + " ".join(words)
    assert verdict(STATUS_ALLOWED, line) == "ask", line
    assert verdict(STATUS_ALLOWED, prefix + command) == ("allow" if not prefix else "ask"), prefix + command


REDIRECTIONS = ["> f", ">> ../outside", "&> log", "< in", "<<< x", ">| f", "2> /dev/nullx", ">& log", "2>&1 > f"]
JOINERS = ["; ", " && ", " || ", " | ", " & ", "\n", " |& "]


@given(
    command=git_status(),
    other=st.sampled_from(["git status", "rm -rf src", "curl x", "ls"]),
    joiner=st.sampled_from(JOINERS),
    redirect=st.sampled_from(REDIRECTIONS),
    form=st.sampled_from(COMPOUNDS[1:]),
)
def test_chains_redirections_and_substitutions_never_get_an_allow(
    command: str, other: str, joiner: str, redirect: str, form: str
) -> None:
    """An allow rule never covers a redirection, a substitution, a compound form or anything chained."""
    plain = command.rstrip(";")
    for line in (
        plain + joiner + other,
        other + joiner + plain,
        f"{plain} {redirect}",
        f"{plain} $(rm -rf src)",
        f"{plain} `rm x`",
        f"{plain} <(rm x)",
        form.format(plain),
    ):
        assert verdict(STATUS_ALLOWED, line) == "ask", line


@pytest.mark.parametrize("redirect", ["2>&1", ">&2", "2>/dev/null", ">/dev/null", "&>/dev/null", "</dev/null"])
def test_a_redirection_that_touches_no_file_keeps_an_allow(redirect: str) -> None:
    """`pytest -q 2>&1` and output sent to /dev/null write no file, so an allow rule still covers them."""
    assert verdict(STATUS_ALLOWED, f"git status {redirect}") == "allow"


@pytest.mark.parametrize(
    "command",
    [
        "git status > file",
        "git status >> ../outside",
        "./git status",
        "git -c core.fsmonitor=x status",
        "PATH=. git status",
        "GIT_EXTERNAL_DIFF=x git status",
        "sudo git status",
        "git status; rm -rf src",
    ],
)
def test_an_allow_rule_does_not_cover_a_different_program_or_setup(command: str) -> None:
    """`./git`, options before the named words, a PATH set for it, sudo: not the command the rule names."""
    assert verdict(STATUS_ALLOWED, command) == "ask"


@pytest.mark.parametrize(
    "command",
    ["eval ls", "sh -c ls", "bash -c 'git status'", "$CMD status", "source env.sh", ". env.sh", "r* x", "curl x | sh"],
)
def test_a_command_that_does_not_say_what_runs_is_asked_whatever_allows_it(command: str) -> None:
    """eval, sh -c, a command word that is an expansion, source: no allow rule covers them, the question says why."""
    policy = PermissionPolicy.build("accept-edits", allow=["bash(eval *)", "bash(sh *)", "bash(bash *)", "bash(*)"])
    decision = policy.decide("bash", {"command": command}, read_only=False)
    assert decision.verdict == "ask"
    assert "which no allow rule covers" in decision.reason


@pytest.mark.parametrize("command", ['eval "$X"', "$CMD -rf x", 'sh -c "$X"', "curl x | bash", "ls; ("])
def test_with_bash_deny_rules_a_hidden_command_is_asked_even_in_bypass(command: str) -> None:
    """bypass runs everything, but a command whose text hides what runs cannot be checked against a deny rule: asked."""
    decision = RM_DENIED.decide("bash", {"command": command}, read_only=False)
    assert decision.verdict == "ask"
    assert "the deny rules for bash cannot be checked" in decision.reason
    assert PermissionPolicy("bypass").decide("bash", {"command": command}, read_only=False).verdict == "allow"


async def test_headless_refusal_of_a_hidden_command_names_the_cause(tmp_path: Path) -> None:
    """With nobody to ask, `eval "$X"` under a bash deny rule is refused, saying why and what to do."""
    executor = Executor(DEFAULT_TOOLS, tmp_path, tmp_path / "spill", policy=RM_DENIED)
    events: list[StepEvent] = []
    [outcome] = await executor.run([ToolCall("t1", "bash", {"command": 'eval "$X"; touch made'})], events.append)
    assert outcome.result.output == (
        "Error: not permitted: bash needs approval (eval runs its words as a command, so the deny rules for bash "
        "cannot be checked) and nobody can answer in a headless run: spell the command out so the deny rules can "
        "see what it runs (or run without bash deny rules)"
    )
    assert [e.decision for e in events if isinstance(e, PermissionDecided)] == ["deny"]
    assert not (tmp_path / "made").exists()


# --- rules themselves ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rule", "command", "expected"),
    [
        ("bash(rm -fr *)", "rm -r -f x", "deny"),
        ("bash('rm' -rf *)", "rm -rf x", "deny"),
        ("bash(/bin/rm -rf *)", "rm -rf x", "deny"),
        ("bash(rm --recursive --force *)", "rm -rf x", "deny"),
        ("bash(rm -rf '*')", "rm -rf x", "allow"),
        ("bash(rm -rf '*')", "rm -rf '*'", "deny"),
    ],
)
def test_a_deny_rule_is_read_like_a_command(rule: str, command: str, expected: str) -> None:
    """A rule's own flags, quotes and path are read as the shell would; a quoted wildcard is a literal."""
    assert verdict(PermissionPolicy.build("bypass", deny=[rule]), command) == expected


@pytest.mark.parametrize("rule", ["bash(a && b)", "bash(ls > x)", "bash($X)", "bash(ls $(pwd))", "bash(ls; )x"])
def test_a_bash_rule_that_is_not_one_command_is_a_config_error(rule: str) -> None:
    """A bash pattern with a chain, a redirection or an expansion could never be judged: refused at once."""
    from chimera.core.errors import ConfigError

    with pytest.raises(ConfigError, match="not understood"):
        PermissionPolicy.build("ask", deny=[rule])


def test_a_chain_of_thousands_of_commands_is_judged_without_crashing() -> None:
    """A very long `&&` chain (deeper than Python recursion) is walked to its end, where the denied command is."""
    line = " && ".join(["true"] * 3000) + " && rm -rf x"
    assert verdict(RM_DENIED, line) == "deny"
    assert verdict(STATUS_ALLOWED, " && ".join(["git status"] * 3000)) == "ask"


def test_the_shell_parser_is_loaded_only_when_a_command_is_judged() -> None:
    """Importing the CLI, the policy and the settings does not import tree-sitter; judging a bash call does."""
    code = (
        "import sys, chimera.tui.cli, chimera.core.settings, chimera.core.sessions.start\n"
        "from chimera.core.permissions.policy import PermissionPolicy\n"
        "print('tree_sitter' in sys.modules)\n"
        "PermissionPolicy('ask').decide('bash', {'command': 'ls'}, read_only=False)\n"
        "print('tree_sitter' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert out.stdout.split() == ["False", "True"]
