"""The security review's bypasses of bash rules, and variants of each class: none is allowed any more.

Allow rules: a line is covered only when it is one plain command. Deny rules: a command is refused
however it is hidden (reserved words, `$'…'`, brace expansion, wrappers' options, strings bash
evaluates later), or, when the text hides it, asked about even in bypass. Some verdicts are checked
against what bash really does in a throwaway folder.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from chimera.core.permissions.policy import PermissionPolicy

RM_DENIED = PermissionPolicy.build("bypass", deny=["bash(rm -rf *)"])
PUSH_DENIED = PermissionPolicy.build("bypass", deny=["bash(git push*)"])
STATUS_ALLOWED = PermissionPolicy.build("ask", allow=["bash(git status*)"])
LS_ALLOWED = PermissionPolicy.build("ask", allow=["bash(ls*)", "bash(pytest*)"])


def verdict(policy: PermissionPolicy, command: str) -> str:
    return policy.decide("bash", {"command": command}, read_only=False).verdict


def deletes_x(command: str, folder: Path) -> bool:
    """Whether bash, running ``command`` in ``folder`` (holding a folder ``x`` with a file), deletes ``x``."""
    (folder / "x" / "y").mkdir(parents=True)
    (folder / "x" / "y" / "f").write_text("1")
    subprocess.run(["bash", "-c", command], cwd=folder, capture_output=True, timeout=20, stdin=subprocess.DEVNULL)
    return not (folder / "x").exists()


# --- allow rules: only a plain command ---------------------------------------------------------------


ALLOW_BYPASSES = [
    # bash expands $(…) inside single quotes in arithmetic and subscripts
    "git status $(( '$(rm -rf x)' ))",
    "git status $['$(rm -rf x)']",
    "git status \"$(( '$(rm -rf x)' ))\"",
    "git status \"${x:-'$(rm -rf x)'}\"",
    "git status ${a['$(rm -rf x)']}",
    "git status ${x:0:'$(rm -rf x)'}",
    "git status $(( a[\\$(rm -rf x)] ))",
    "git status ${a[`rm -rf x`]}",
    'git status ${#a["\\$(rm -rf x)"]}',
    # wrappers with clustered or shortened options: no wrapper is unwrapped for an allow rule
    "exec -ca git rm -rf x",
    "env --un git rm -rf x",
    "env -iu git rm -rf x",
    "xargs -a/etc/hostname -rI git rm -rf x",
    "time -ao git rm -rf x",
    "nice -n 5 git status",
    "timeout 5 git status",
    "command git status",
    # assignments: HOME and XDG_CONFIG_HOME point git at another config (core.fsmonitor runs a command)
    "HOME=. git status",
    "XDG_CONFIG_HOME=. git status",
    "A=1 git status",
    # expansions and special quoting of any kind
    "git status $x",
    "git status ${x}",
    "git status $'\\x2e'",
    'git status $"x"',
    "git status $(pwd)",
    "git status `pwd`",
    "git status <(ls)",
    # wildcards and brace expansion
    "git status *",
    "git status src/?.py",
    "git status {a,b}",
    "git status x{1..3}",
    # files read or written
    "git status <<< x",
    "git status <<EOF\nx\nEOF",
    "git status > out",
    "git status 2> err",
    "git status <> f",
]


@pytest.mark.parametrize("command", ALLOW_BYPASSES)
def test_an_allow_rule_covers_no_line_that_is_not_one_plain_command(command: str) -> None:
    """`bash(git status*)` does not cover expansions, wrappers, assignments, wildcards or file redirections."""
    assert verdict(STATUS_ALLOWED, command) == "ask", command


@pytest.mark.parametrize(
    "command",
    [
        "git status",
        "git status --short",
        "'git' \"status\" -s",
        "/usr/bin/git status",
        "git status 2>&1",
        "git status >/dev/null",
        "git status 'a*b' \"{x,y}\"",
        "git status stash@{0}",
        "git status # the tree",
        "git status;",
    ],
)
def test_an_allow_rule_still_covers_plain_spellings_of_its_command(command: str) -> None:
    """Quotes, a system path, harmless redirections, quoted wildcards and a literal `@{0}` keep the allow."""
    assert verdict(STATUS_ALLOWED, command) == "allow", command


@pytest.mark.parametrize(
    "command",
    [
        "ls $['$(rm -rf x)']",
        "ls \"$(( '$(rm -rf x)' ))\"",
        "ls \"${x:-'$(rm -rf x)'}\"",
        "ls ${a['$(rm -rf x)']}",
        "exec -ca ls rm -rf x",
        "env --un ls rm -rf x",
        "env -iu ls rm -rf x",
        "xargs -a/etc/hostname -rI ls rm -rf x",
    ],
)
def test_the_reviewed_allow_bypasses_really_delete_and_are_now_asked(command: str, tmp_path: Path) -> None:
    """Each of these runs `rm -rf x` in bash, and `bash(ls*)` no longer lets it run unasked."""
    assert deletes_x(command, tmp_path), command
    assert verdict(LS_ALLOWED, command) == "ask"


# --- deny rules: every hiding place --------------------------------------------------------------------


DENIED = [
    # $'…' decoded as bash does (1-4 hex digits after \u, 1-8 after \U, 1-2 after \x, 1-3 octal, a NUL ends it)
    "$'r\\u6d' -rf x",
    "$'\\u72\\u6d' -rf x",
    "$'\\U00000072m' -rf x",
    "$'rm\\0junk' -rf x",
    "$'rm\\x00' -rf x",
    "$'\\x72\\x6d' -rf x",
    "$'r\\155' -rf x",
    "rm $'-r\\x66' x",
    "rm $'\\x2drf' x",
    # brace expansion, done as bash does
    "rm -{r,f} x",
    "rm {-rf,x}",
    "rm -r{f,} x",
    "rm x -{r,f}",
    "rm -rf{,} x",
    "r{m,} -rf x",
    "rm -{r,{f,v}} x",
    # wrappers' options read getopt-style: clusters, attached values, shortened long options, --
    "timeout --sig KILL 5 rm -rf x",
    "timeout --kill 1 5 rm -rf x",
    "timeout -k1 -sKILL 5 rm -rf x",
    "nice --adj 5 rm -rf x",
    "nice -5 rm -rf x",
    "stdbuf --out L rm -rf x",
    "stdbuf -oL -eL rm -rf x",
    "xargs --max-a 1 rm -rf x",
    "exec -ca foo rm -rf x",
    "env -iu ls rm -rf x",
    "env --un ls rm -rf x",
    "env - rm -rf x",
    "sudo --user=root -E rm -rf x",
    "command -p -- rm -rf x",
    # wrappers that were missing
    "chrt 1 rm -rf x",
    "chrt -o 0 rm -rf x",
    "taskset 1 rm -rf x",
    "taskset -c 0 rm -rf x",
    "flock /tmp/l rm -rf x",
    "flock /tmp/l -c 'rm -rf x'",
    "setpriv --reset-env rm -rf x",
    "prlimit --nofile=100 rm -rf x",
    "prlimit -n100 rm -rf x",
    "strace -o /dev/null rm -rf x",
    "strace -fo/dev/null rm -rf x",
    "ltrace rm -rf x",
    "unshare -r rm -rf x",
    "setarch x86_64 -R rm -rf x",
    "setarch -R rm -rf x",
    "x86_64 rm -rf x",
    "nsenter -t 1 rm -rf x",
    "runuser -u root -- rm -rf x",
    "runuser root -c 'rm -rf x'",
    "script -qc 'rm -rf x' /dev/null",
    "script /dev/null -qc 'rm -rf x'",
    "watch -n1 -e -- rm -rf x",
    "watch -x rm -rf x",
    "chroot / rm -rf x",
    "fakeroot rm -rf x",
    "valgrind -q --tool=none rm -rf x",
    "systemd-run rm -rf x",
    "gtimeout 5 rm -rf x",
    "uv run --frozen rm -rf x",
    "bundle exec rm -rf x",
    "npx -c 'rm -rf x'",
    "nix-shell --run 'rm -rf x'",
    # string runners read as getopt does
    "trap -- 'rm -rf x' EXIT",
    "eval -- 'rm -rf x'",
    "builtin eval -- 'rm -rf x'",
    "su -c'rm -rf x'",
    "su --command='rm -rf x'",
    "su root --comm 'rm -rf x'",
    "env -vS'rm -rf x'",
    "env -iS'rm -rf x'",
    "env --sp='rm -rf x'",
    "env --split 'rm -rf x'",
    "env -S 'rm -rf' x",
    "mapfile -C 'rm -rf x' -c 1 a <<< a",
    "compgen -C 'rm -rf x' y",
    "bash -c -- 'rm -rf x'",
    "bash -O extglob -c 'rm -rf x'",
    "busybox sh -c 'rm -rf x'",
    # a wildcard may expand to a file named like a flag
    "touch ./-rf; rm *",
    # a brace word before a redirection is not a descriptor variable
    "rm {-rf,x}>/dev/null",
]


@pytest.mark.parametrize("command", DENIED)
def test_a_denied_command_is_refused_however_it_is_spelled_or_wrapped(command: str) -> None:
    """`bash(rm -rf *)` sees rm -rf through $'…', braces, wrappers' options, new wrappers and string runners."""
    assert verdict(RM_DENIED, command) == "deny", command


HIDDEN = [
    # reserved words the grammar does not read as bash does
    "! { rm -rf x; }",
    "time { rm -rf x; }",
    "time -p { rm -rf x; }",
    "time if true; then rm -rf x; fi",
    "time for i in 1; do rm -rf x; done",
    "time ! rm -rf x",
    "! ! rm -rf x",
    "coproc { rm -rf x; }",
    "coproc f { rm -rf x; }",
    "coproc f while rm -rf x; do break; done",
    "{rm,-rf,x}",
    # substitutions the grammar reads as plain text
    'echo "${x:-`rm -rf x`}"',
    "echo ${x:-`rm -rf x`}",
    "echo `echo \\`rm -rf x\\``",
    "echo ${ rm -rf x; }",
    "echo $(( '$(rm -rf x)' ))",
    "echo $['$(rm -rf x)']",
    "echo \"${x:-'$(rm -rf x)'}\"",
    # strings bash evaluates later
    "[[ 'a[$(rm -rf x)]' -eq 0 ]]",
    "v='a[$(rm -rf x)]'; echo $((v))",
    "v='a[$(rm -rf x)]'; [[ $v -eq 0 ]]",
    "declare -a a; let 'a[$(rm -rf x)]=1'",
    "a=1; (( a[$'\\x24(rm -rf x)'] ))",
    "unset 'a[$(rm -rf x)]'",
    "declare -a a; read 'a[$(rm -rf x)]' <<< 1",
    "declare -a a; printf -v 'a[$(rm -rf x)]' 1",
    "typeset -n r='a[$(rm -rf x)]'; r=1",
    "declare -n r='a[$(rm -rf x)]'; echo $r",
    "v='a[$(rm -rf x)]'; echo ${!v}",
    "v='$(rm -rf x)'; echo \"${v@P}\"",
    "a='$'; b='(rm -rf x)'; let \"i[$a$b]\"",
    "[ -v 'a[$(rm -rf x)]' ]",
    "a=(['a[$(rm -rf x)]']=1)",
    "a=([$'\\x24(rm -rf x)']=1)",
    "set -- a b; echo ${@:'a[$(rm -rf x)]'}",
    "exec {a['$(rm -rf x)']}>/dev/null",
    "PS4='$(rm -rf x)'; set -x; :",
    "export PS4='$(rm -rf x)'; set -x; :",
    "PS4='$(rm -rf x)' bash -xc :",
    "set -o xtrace; :",
    "PROMPT_COMMAND='rm -rf x' bash -i </dev/null",
    "BASH_ENV=./s bash -c :",
    "env 'BASH_FUNC_ls%%=() { rm -rf x; }' bash -c ls",
    # the command word changed at run time
    "shopt -s expand_aliases; alias ls='rm -rf'; ls x",
    "hash -p /bin/rm ls; ls -rf x",
    "BASH_CMDS[ls]=/bin/rm; ls -rf x",
    "enable -n echo; echo",
    # shells reading a script
    "bash -s <<< 'rm -rf x'",
    "bash /dev/stdin <<< 'rm -rf x'",
    "bash <(echo rm -rf x)",
    "bash s",
    ". ./s",
    "source /dev/stdin <<< 'rm -rf x'",
    "/proc/self/exe -c 'rm -rf x'",
    'rbash -c "$CMD"',
    "zsh -Z -c 'rm -rf x'",
    "xargs -I% sh -c % <<< 'rm -rf x'",
    'xargs -I "$R" sh -c "$R" <<< \'rm -rf x\'',
    "find . -exec sh -c {} \\;",
    "su root <<< 'rm -rf x'",
    "script -q /dev/null",
    "unshare -r",
    "parallel rm -rf ::: x",
    "at now <<< 'rm -rf x'",
    "crontab s",
    "tmux new -d 'rm -rf x'",
    "screen -dm rm -rf x",
    "uv run --bogus rm -rf x",
    # options no spec knows
    "timeout --bogus 5 rm -rf x",
    "env -Z rm -rf x",
    "ionice --cl 3 rm -rf x",
]


@pytest.mark.parametrize("command", HIDDEN)
def test_a_command_the_text_hides_is_asked_even_in_bypass(command: str) -> None:
    """With a bash deny rule, a line whose commands the parse cannot show is asked about, saying why."""
    decision = RM_DENIED.decide("bash", {"command": command}, read_only=False)
    assert decision.verdict == "ask", command
    assert "the deny rules for bash cannot be checked" in decision.reason


@pytest.mark.parametrize(
    "command",
    [
        "! { rm -rf x; }",
        "time { rm -rf x; }",
        "time if true; then rm -rf x; fi",
        "coproc f { rm -rf x; }",
        "$'r\\u6d' -rf x",
        "$'rm\\0junk' -rf x",
        "rm -{r,f} x",
        "rm {-rf,x}",
        'echo "${x:-`rm -rf x`}"',
        "echo `echo \\`rm -rf x\\``",
        "[[ 'a[$(rm -rf x)]' -eq 0 ]]",
        "v='a[$(rm -rf x)]'; echo ${!v}",
        "PS4='$(rm -rf x)'; set -x; :",
        "trap -- 'rm -rf x' EXIT",
        "timeout --sig KILL 5 rm -rf x",
        "env --sp='rm -rf x'",
        "bash -s <<< 'rm -rf x'",
        "shopt -s expand_aliases\nalias r=rm\nr -rf x",
        "hash -p /bin/rm ls; ls -rf x",
        "touch ./-rf; rm *",
        "a=(['a[$(rm -rf x)]']=1)",
        "exec {a['$(rm -rf x)']}>/dev/null",
        "rm {-rf,x}>/dev/null",
    ],
)
def test_the_reviewed_deny_bypasses_really_delete_and_are_now_refused_or_asked(command: str, tmp_path: Path) -> None:
    """Each of these deletes x when bash runs it, and `bash(rm -rf *)` in bypass no longer lets it run."""
    assert deletes_x(command, tmp_path), command
    assert verdict(RM_DENIED, command) in {"deny", "ask"}


@pytest.mark.parametrize(
    "command",
    [
        "echo {a..c} && ls",
        "mkdir -p src/{a,b}",
        "for i in {1..3}; do echo $i; done",
        'while IFS= read -r line; do echo "$line"; done < notes.txt',
        "set -euo pipefail; ls",
        "shopt -s globstar nullglob; ls **/*.py",
        "n=$(wc -l < f); echo $((n + 1))",
        "git -c user.name=a -c user.email=b commit -m x",
        "printf '%s\\n' 'cost: $5'",
        "echo '$(not run)'",
        "cat <<'EOF'\n$(not run)\nEOF",
        "rm -f build/*.o",
        "rm -f -- *.tmp",
        "bash -c 'ls'",
        "env -u HOME_X ls",
        "sudo -v",
        "command -v rm",
        "hash -r",
        "alias",
        "exec {fd}>/dev/null; echo hi >&$fd",
        "a=(1 2 3); echo '$(not run)'",
    ],
)
def test_ordinary_lines_are_not_hidden_by_the_new_checks(command: str) -> None:
    """Brace lists, loops, `set -euo pipefail`, safe git settings and quoted `$(` stay runnable in bypass."""
    assert verdict(RM_DENIED, command) == "allow", command


# --- git -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "git --config-env x.y=HOME push",
        "git --config-env=x.y=HOME push",
        "git -c x.y=z push",
        "git -C . --git-dir .git --work-tree . push",
        "git --namespace x --super-prefix y/ --attr-source HEAD push",
        "/usr/lib/git-core/git-push",
        "git-push origin main",
        "git --exec-path /usr/lib/git-core push",
    ],
)
def test_git_options_before_the_subcommand_do_not_hide_it(command: str) -> None:
    """git's global options with separate values are skipped, and `git-push` is `git push`."""
    assert verdict(PUSH_DENIED, command) == "deny", command


@pytest.mark.parametrize(
    "command",
    [
        "git -c alias.p=push p",
        "git -c ALIAS.p=push p",
        "git --config-env=alias.p=X p",
        "git -c include.path=x.cfg p",
        "git -c core.pager='git push' log",
        "git --exec-path=. p",
        "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.p GIT_CONFIG_VALUE_0=push git p",
    ],
)
def test_git_settings_that_define_aliases_or_run_commands_are_asked(command: str) -> None:
    """`git -c alias.p=push p` may be a push: with a bash deny rule it is asked even in bypass."""
    assert verdict(PUSH_DENIED, command) == "ask", command


def test_a_git_alias_given_with_c_really_pushes_and_is_now_asked(tmp_path: Path) -> None:
    """`git -c alias.p=push p` runs `git push`; the deny rule for `git push` no longer lets it run."""
    remote, clone = tmp_path / "remote.git", tmp_path / "clone"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    subprocess.run(["git", "clone", "-q", str(remote), str(clone)], check=True, capture_output=True)
    ident = ["-c", "user.name=a", "-c", "user.email=a@a"]
    subprocess.run(["git", *ident, "commit", "-q", "--allow-empty", "-m", "x"], cwd=clone, check=True)
    command = "git -c alias.p=push p -q origin HEAD:main"
    subprocess.run(["bash", "-c", command], cwd=clone, check=True, capture_output=True)
    pushed = subprocess.run(["git", "rev-parse", "main"], cwd=remote, capture_output=True, text=True)
    assert pushed.returncode == 0
    assert verdict(PUSH_DENIED, command) == "ask"


# --- rules themselves ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "expected"), [("rm -rf x", "deny"), ("rm -fr x", "deny"), ("rm -rfv x", "deny"), ("rm -r x", "allow")]
)
def test_a_flag_cluster_ending_in_a_wildcard_means_those_flags_then_anything(command: str, expected: str) -> None:
    """`bash(rm -rf*)` means `bash(rm -rf *)`: it refuses rm -rf with anything after, not rm -r."""
    assert verdict(PermissionPolicy.build("bypass", deny=["bash(rm -rf*)"]), command) == expected


@pytest.mark.parametrize("rule", ["bash(rm -r*f x)", "bash(rm -rf* x)", "bash(rm -r? x)"])
def test_a_wildcard_inside_a_flag_cluster_is_a_config_error(rule: str) -> None:
    """A pattern like `rm -r*f` could never match as meant: refused at once, naming the way to write it."""
    from chimera.core.errors import ConfigError

    with pytest.raises(ConfigError, match=r"would never match as meant.*bash\(rm -rf \*\)"):
        PermissionPolicy.build("bypass", deny=[rule])


@pytest.mark.parametrize(
    ("rule", "command", "expected"),
    [
        ("bash(rm -rf build)", "rm -rf bui*", "deny"),
        ("bash(rm -rf build)", "rm -rf src/*", "allow"),
        ("bash(rm -rf build)", "rm -rf ./b?ild", "deny"),
    ],
)
def test_a_wildcard_operand_meets_the_names_it_may_expand_to(rule: str, command: str, expected: str) -> None:
    """`rm -rf bui*` may delete build, so `bash(rm -rf build)` refuses it; `src/*` cannot be build."""
    assert verdict(PermissionPolicy.build("bypass", deny=[rule]), command) == expected


def test_a_wildcard_that_may_expand_to_a_flag_is_refused_saying_how_to_write_it() -> None:
    """`rm -f *.pyc` may be `rm -f -rf.pyc …`: refused by `bash(rm -rf *)`, naming `./*.pyc` and `--`."""
    decision = RM_DENIED.decide("bash", {"command": "rm -f *.pyc"}, read_only=False)
    assert decision.verdict == "deny"
    assert decision.reason == (
        "bash is denied by the rule bash(rm -rf *): *.pyc may expand to a file named like a flag "
        "(write ./*.pyc, or -- before it)"
    )
    assert verdict(RM_DENIED, "rm -f ./*.pyc") == verdict(RM_DENIED, "rm -f -- *.pyc") == "allow"
