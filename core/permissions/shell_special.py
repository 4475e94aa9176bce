"""Provides how the walker reads commands that run other commands, or change what later words mean.

- ``unwrap``: a wrapper's options read from its spec (``shell_options.py``);
  the words of the command it runs, or None. ``su -c``, ``flock -c``,
  ``script -c`` strings and ``watch``'s words are parsed as command lines,
  ``env -S`` strings split as env does, ``xargs -I R`` makes each word
  holding R unknown.
- ``special``: shells (only ``-c`` with a literal string is followed; a shell
  reading a file or its input hides what runs), ``eval``, ``trap``,
  ``mapfile -C``, ``compgen -C``, ``source``, ``find -exec``, ``parallel``,
  git's global options (``-c alias.*`` and other settings that run commands,
  ``--exec-path=``), and the builtins that change what later words mean:
  ``alias NAME=…``, ``set -x``/``-k``/``-o`` (other than known-safe
  options), ``shopt -s`` (other than known-safe options), ``hash -p``,
  ``enable``.
- ``assignment_problem``: assignments that choose what runs (``PATH``,
  ``LD_*``, ``GIT_*``, pagers and editors: no allow rule covers them) or that
  bash or git evaluate as code (``PS0``–``PS4``, ``PROMPT_COMMAND``,
  ``BASH_ENV``, ``ENV``, ``BASH_CMDS``, ``BASH_ALIASES``, ``BASH_FUNC_*``,
  ``SHELLOPTS``, ``BASHOPTS``, ``HOME``, ``XDG_*``, ``GIT_CONFIG*``: they hide
  what runs).
- ``evaluating_node``: the parse nodes after which bash evaluates strings
  (arithmetic, subscripts, ``[[ ]]``, ``unset``, ``${!v}``, ``${v@P}``,
  substrings, ``a=([i]=v)``).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Protocol

from chimera.core.permissions.shell_options import Spec, env_split, read_options
from chimera.core.permissions.shell_words import Command, Word, text_of

if TYPE_CHECKING:
    from tree_sitter import Node

__all__ = ["Walker", "assignment_problem", "evaluating_node", "special", "unwrap"]

_SHELLS = frozenset(
    {"sh", "bash", "dash", "zsh", "ksh", "ksh93", "mksh", "pdksh", "oksh", "lksh", "ash", "hush", "rbash", "fish"}
    | {"tcsh", "csh", "yash", "posh"}
)
_SHELL_LETTERS = frozenset("abefhiklmnprstuvxBCDEHPT")  # bash's one-letter options (o and O take a value)
_SHELL_LONG = frozenset(
    {"--debugger", "--dump-po-strings", "--dump-strings", "--login", "--noediting", "--noprofile", "--norc"}
    | {"--posix", "--pretty-print", "--restricted", "--verbose"}
)
_SHELL_LONG_VALUE = frozenset({"--rcfile", "--init-file"})
_FIND_EXEC = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
# Programs that run commands later, in a session or at a time; with these first words they only list or remove.
_LATER = {
    "at": frozenset({"-l", "-d", "-r", "-c", "-V"}),
    "batch": frozenset({"-V"}),
    "crontab": frozenset({"-l", "-r"}),
    "tmux": frozenset({"ls", "list-sessions", "list-windows", "list-panes", "kill-session", "kill-server"})
    | frozenset({"has-session", "capture-pane", "-V"}),
    "screen": frozenset({"-ls", "-list", "-v", "-wipe"}),
}
# Builtins after which bash evaluates strings (arithmetic in subscripts, names it assigns).
_EVALUATORS = frozenset(
    {"let", "declare", "typeset", "local", "export", "readonly", "read", "mapfile", "readarray", "unset", "test", "["}
    | {"getopts", "wait", "compgen", "complete"}
)
_SAFE_SET_O = frozenset(
    {"allexport", "braceexpand", "emacs", "errexit", "errtrace", "functrace", "hashall", "histexpand", "history"}
    | {"ignoreeof", "interactive-comments", "monitor", "noclobber", "noexec", "noglob", "nolog", "notify", "nounset"}
    | {"onecmd", "physical", "pipefail", "posix", "privileged", "verbose", "vi"}
)
_SAFE_SHOPT = frozenset(
    {"autocd", "cdable_vars", "cdspell", "checkhash", "checkjobs", "checkwinsize", "cmdhist", "direxpand", "dirspell"}
    | {"dotglob", "execfail", "extquote", "failglob", "force_fignore", "globasciiranges", "globstar", "gnu_errfmt"}
    | {"histappend", "histreedit", "histverify", "hostcomplete", "huponexit", "inherit_errexit", "lastpipe"}
    | {"lithist", "localvar_inherit", "localvar_unset", "mailwarn", "no_empty_cmd_completion", "nocaseglob"}
    | {"nocasematch", "noexpand_translation", "nullglob", "patsub_replacement", "progcomp", "progcomp_alias"}
    | {"promptvars", "shift_verbose", "sourcepath", "varredir_close", "xpg_echo", "assoc_expand_once"}
)
_MAPFILE = Spec("d:n:O:s:tu:C:c:", string=frozenset({"-C"}))
_COMPGEN = Spec("abcdefgjksuvprDEIo:A:G:W:F:C:X:P:S:V:", string=frozenset({"-C"}))
_SAFE_GIT_KEY = re.compile(
    r"user\.\w+|color\..*|advice\..*|i18n\..*|status\..*|init\.defaultbranch|(commit|tag)\.gpgsign"
    r"|core\.(quotepath|autocrlf|safecrlf|filemode|ignorecase|abbrev|longpaths|precomposeunicode|eol)"
    r"|pull\.(rebase|ff)|merge\.ff|push\.(default|autosetupremote)|fetch\.prune|rebase\.(autosquash|autostash)"
    r"|safe\.directory|diff\.(noprefix|renames|algorithm|mnemonicprefix)|gc\.auto|maintenance\.auto|column\.ui"
    r"|log\.(decorate|date|abbrevcommit)|format\.pretty|protocol\.version|checkout\.defaultremote"
)
_PAGER_KEY = re.compile(r"core\.pager|pager\..*")
_GIT_TAKES_VALUE = frozenset({"-C", "--git-dir", "--work-tree", "--namespace", "--super-prefix", "--attr-source"})
_GIT_TAKES_VALUE_TOO = frozenset({"--shallow-file"})
# Assignments that choose which program runs, or what it runs on the side: no allow rule covers them.
_RISKY_NAME = re.compile(r"PATH|LD_\w+|DYLD_\w+|GIT_\w+|\w*PAGER|\w*EDITOR|VISUAL|\w*_COMMAND|\w*ASKPASS|IFS")
# Assignments bash or git evaluate as code, or that point them at other startup files: they hide what runs.
_CODE_NAME = re.compile(
    r"PS[0-4]|PROMPT_COMMAND|BASH_ENV|ENV|BASH_CMDS|BASH_ALIASES|BASH_FUNC_\S*|SHELLOPTS|BASHOPTS|HOME|XDG_\w+"
    r"|GIT_CONFIG\w*|GIT_EXEC_PATH|BASH_LOADABLES_PATH"
)
_HARMLESS_VALUES = frozenset({"", "cat", "0", "1", "true", "false"})
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class Walker(Protocol):
    """What the special readers need of the walker."""

    chained: bool
    evaluates: bool

    def not_known(self, why: str, *, opaque: bool = False) -> None: ...

    def nested(self, why: str, string: str | None) -> None: ...

    def run(self, words: list[Word], *, open: bool) -> None: ...


def assignment_problem(name: str, value: str | None) -> tuple[str, bool] | None:
    """Why setting ``name`` (to ``value``; None: unknown) changes what runs, and whether it hides it, or None."""
    if _CODE_NAME.fullmatch(name):
        return f"setting {name} makes bash or git run what it holds", True
    if _RISKY_NAME.fullmatch(name) and value not in _HARMLESS_VALUES:
        return f"setting {name} before a command changes what runs", False
    return None


def _code_names(walker: Walker, words: list[Word]) -> None:
    """Hide the line when a builtin that assigns (read, printf -v, export, …) names a variable bash runs."""
    for word in words:
        match = _NAME.match(word.value or "")
        if match and _CODE_NAME.fullmatch(match.group()):
            walker.not_known(f"setting {match.group()} makes bash or git run what it holds", opaque=True)


def evaluating_node(node: Node) -> bool:
    """Whether bash evaluates strings at ``node``: arithmetic, subscripts, ``[[ ]]``, declarations, ``${!v}``…"""
    kind = node.type
    if kind in {"arithmetic_expansion", "subscript", "test_command", "c_style_for_statement", "unset_command"}:
        return True
    if kind == "compound_statement":
        return (node.children[0].type if node.children else "") == "(("
    if kind == "expansion":  # ${!v}, ${a[i]}, ${v@P}, ${v:offset} (of any parameter, $@ too)
        text = text_of(node)
        return text.startswith("${!") or "[" in text or "@P" in text or bool(re.search(r":[^-=?+]", text))
    if kind == "array":  # a=([i]=v): indexed subscripts are arithmetic
        return "[" in text_of(node)
    return False


def _literal_word(text: str) -> Word:
    return Word(text, re.sub(r"([*?\[])", r"[\1]", text))


def _joined(words: list[Word]) -> str | None:
    texts = [w.value for w in words]
    return None if any(t is None for t in texts) else " ".join(t for t in texts if t is not None)


def unwrap(walker: Walker, name: str, spec: Spec, words: list[Word]) -> list[Word] | None:
    """The words of the command the wrapper ``name`` runs after its own; None when it runs none (or hides it)."""
    out = read_options(name, spec, words)
    for _ in range(4):
        if out.problem:
            walker.not_known(f"{out.problem}, so what it runs is not certain", opaque=True)
            return None
        split = out.given(spec.split)
        if not split:
            break
        parts = env_split(split[0][1]) if split[0][1] is not None else None
        if parts is None:
            walker.not_known(f"{name} {split[0][0]} splits a string Chimera does not read", opaque=True)
            return None
        out = read_options(name, spec, [*map(_literal_word, parts), *out.command])
    for text in out.assignments:
        problem = assignment_problem(text.partition("=")[0], text.partition("=")[2])
        if problem:
            walker.not_known(problem[0], opaque=problem[1])
    if out.given(spec.none_if):
        return None
    for option, value in out.given(spec.string):
        walker.nested(f"{name} {option} runs a string as a command", value)
        return None
    command = out.command
    if name == "watch" and not out.given(frozenset({"-x", "--exec"})):
        if command:
            walker.nested("watch runs its words as a command", _joined(command))
        return None
    if name in {"su", "runuser", "script"} and not (name == "runuser" and out.given(frozenset({"-u", "--user"}))):
        walker.not_known(f"{name} without -c runs a shell that reads its input", opaque=True)
        return None
    for option, value in out.given(spec.replace):
        if value is None and option == "-I":  # a text only known at run time: any word may hold it
            command = [Word(None) for _ in command]
        mark = value or "{}"
        command = [Word(None) if mark in (w.value or "") else w for w in command]
    if not command:
        if spec.shell or out.given(spec.shell_options):
            walker.not_known(f"{name} with no command runs a shell that reads its input", opaque=True)
        return None
    return command


def special(walker: Walker, command: Command, words: list[Word]) -> None:
    """Read the commands ``command`` (given ``words``) runs from strings or files, or note what it hides."""
    name = command.name
    if name in _SHELLS:
        _shell(walker, name, words)
    elif name == "eval":
        if words and words[0].value == "--":
            words = words[1:]
        elif words and (words[0].value or "").startswith("-") and words[0].value != "-":
            return  # an option eval does not take: it runs nothing
        walker.nested("eval runs its words as a command", _joined(words))
    elif name == "trap":
        _trap(walker, words)
    elif name in {"source", "."}:
        walker.not_known(f"{name} runs the commands in a file", opaque=True)
    elif name == "find":
        _find(walker, words)
    elif name in {"mapfile", "readarray", "compgen", "complete"}:
        spec = _MAPFILE if name in {"mapfile", "readarray"} else _COMPGEN
        out = read_options(name, spec, words)
        if out.problem:
            walker.not_known(f"{out.problem}, so what it runs is not certain", opaque=True)
        for option, value in out.given(spec.string):
            walker.nested(f"{name} {option} runs a string as a command", value)
    elif name == "parallel":
        walker.not_known("parallel builds the commands it runs from its words and input", opaque=True)
    elif name in _LATER and not (words and (words[0].value or "") in _LATER[name]):
        walker.not_known(f"{name} runs commands it reads from its input, a file or a string later", opaque=True)
    elif name == "sg":
        _sg(walker, words)
    elif name == "git":
        _git(walker, words)
    else:
        _redefiner(walker, name, words)
    if name in _EVALUATORS or (name == "printf" and any((w.value or "").startswith("-v") for w in words)):
        walker.evaluates = True
        _code_names(walker, words)


def _shell(walker: Walker, name: str, words: list[Word]) -> None:
    """``bash [options] -c string``: the string is followed; a shell reading a file or its input hides what runs."""
    at, command = 0, False
    while at < len(words):
        text = words[at].value
        if text is None:
            break
        if text in {"--", "-"}:
            at += 1
            break
        if text in {"--help", "--version"}:
            return
        if text[:1] not in "-+" or len(text) < 2:
            break
        if text.startswith("--"):
            if text not in _SHELL_LONG | _SHELL_LONG_VALUE:
                walker.not_known(f"{name}'s option {text} is not one Chimera knows", opaque=True)
                return
            at += 2 if text in _SHELL_LONG_VALUE else 1
            continue
        extra = 0
        for letter in text[1:]:
            if letter in "oO":
                extra += 1
            elif letter == "c":
                command = True
            elif letter not in _SHELL_LETTERS:
                walker.not_known(f"{name}'s option -{letter} is not one Chimera knows", opaque=True)
                return
        at += 1 + extra
    if command:
        walker.nested(f"{name} -c runs a string as a command", words[at].value if at < len(words) else None)
    else:
        walker.not_known(f"{name} runs the commands it reads from a file or its input", opaque=True)


def _trap(walker: Walker, words: list[Word]) -> None:
    """``trap [--] action signal…``: the action is a command line (``-l``, ``-p`` and ``-`` run nothing)."""
    at = 0
    if words and words[0].value == "--":
        at = 1
    elif words and (words[0].value or "").startswith("-") and words[0].value != "-":
        return
    if at < len(words) and words[at].value != "-":
        walker.nested("trap runs its string as a command", words[at].value)


def _find(walker: Walker, words: list[Word]) -> None:
    """``find … -exec cmd {} ;``: the command runs, ``{}`` standing for each file found."""
    for start, word in enumerate(words):
        if word.value in _FIND_EXEC:
            end = next((i for i in range(start + 1, len(words)) if words[i].value in {";", "+"}), len(words))
            if end > start + 1:
                walker.chained = True
                inner = [Word(None) if "{}" in (w.value or "") else w for w in words[start + 1 : end]]
                walker.run(inner, open=False)


def _sg(walker: Walker, words: list[Word]) -> None:
    """``sg [-] group [-c] command``: the command is a string the shell runs."""
    rest = words[1:] if words and words[0].value == "-" else words
    rest = rest[1:]
    if rest and rest[0].value == "-c":
        rest = rest[1:]
    if not rest:
        walker.not_known("sg with no command runs a shell that reads its input", opaque=True)
        return
    walker.nested("sg runs a string as a command", _joined(rest))


def _git(walker: Walker, words: list[Word]) -> None:
    """git's options before its subcommand: settings that run commands or define aliases hide what runs."""
    at = 0
    while at < len(words):
        text = words[at].value
        if text is None or not text.startswith("-"):
            return
        setting: str | None = ""
        if text in {"-c", "--config-env"}:
            setting = words[at + 1].value if at + 1 < len(words) else ""
            at += 1
        elif text.startswith("--config-env="):
            setting = text.partition("=")[2]
        elif text.startswith("-c") and not text.startswith("--"):  # git refuses -cNAME=VALUE today; read it anyway
            setting = text[2:]
        elif text.startswith("--exec-path="):
            walker.not_known("git --exec-path= runs git's commands from another folder", opaque=True)
        elif text in _GIT_TAKES_VALUE | _GIT_TAKES_VALUE_TOO:
            at += 1
        if setting is None:
            walker.not_known("git -c is given a setting only known at run time", opaque=True)
        elif setting:
            key, _, value = setting.partition("=")
            key = key.lower()
            if not (_SAFE_GIT_KEY.fullmatch(key) or (_PAGER_KEY.fullmatch(key) and value in _HARMLESS_VALUES)):
                walker.not_known(f"git -c {key} may run commands or change what a git command means", opaque=True)
        at += 1


def _redefiner(walker: Walker, name: str, words: list[Word]) -> None:
    """Builtins that change what later words mean: alias, set -x/-k/-o, shopt -s, hash -p, enable."""
    texts = [w.value for w in words]
    hidden = ""
    if name == "alias" and any(t is None or "=" in t for t in texts):
        hidden = "alias defines a command word"
    elif name == "enable" and texts:
        hidden = "enable changes which builtins run"
    elif name == "hash" and any(t is None or (t.startswith("-") and "p" in t) for t in texts):
        hidden = "hash -p changes which program a name runs"
    elif name == "set":
        hidden = _set_problem(texts)
    elif name == "shopt":
        setting = any(t is not None and t.startswith("-") and "s" in t for t in texts)
        names = [t for t in texts if t is None or not t.startswith("-")]
        safe = _SAFE_SET_O if any(t is not None and t.startswith("-") and "o" in t for t in texts) else _SAFE_SHOPT
        if setting and any(t not in safe for t in names):
            hidden = "shopt turns on an option that changes how bash reads or runs commands"
    if hidden:
        walker.not_known(hidden, opaque=True)


def _set_problem(texts: list[str | None]) -> str:
    at = 0
    while at < len(texts):
        text = texts[at]
        if text is None:
            return "set is given a word only known at run time"
        if text == "--" or text[:1] not in "-+" or text in {"-", "+"}:
            return ""
        letters = text[1:]
        if text[0] == "-" and ("x" in letters or "k" in letters):
            return "set -x or -k makes bash run or read commands differently"
        if "o" in letters:
            at += 1
            if text[0] == "-" and at < len(texts) and texts[at] not in _SAFE_SET_O:
                return f"set -o {texts[at]} makes bash run or read commands differently"
        at += 1
    return ""
