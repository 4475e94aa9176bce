"""Provides ``WRAPPERS`` and ``read_options``: how programs that run another program read their own words.

Each wrapper has a ``Spec`` written like getopt's: short options (``"a"`` a
flag, ``"a:"`` takes a value, in the same word or the next, ``"a::"`` an
optional value in the same word only), long options (``"name"``, ``"name="``
takes a value after ``=`` or in the next word, ``"name?"`` an optional value
after ``=`` only) that may be shortened to any unambiguous start, clusters
(``-ca NAME``), ``--``, and the operands that come before the command
(``timeout``'s duration). ``read_options`` reads a wrapper's words with its
spec; a word it cannot read for certain (an option not in the spec, an
expansion where an option may be) is reported, and the caller treats the
call as hidden. The specs follow the GNU coreutils, util-linux, sudo and
strace manuals; reading options anywhere before the command (as GNU getopt
without ``+`` does) only ever finds more commands, never fewer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property

from chimera.core.permissions.shell_words import Word

__all__ = ["WRAPPERS", "Options", "Spec", "env_split", "read_options"]


@dataclass(frozen=True)
class Spec:
    """How one wrapper reads its words (see the module docstring)."""

    short: str = ""
    long: tuple[str, ...] = ()
    operands: int = 0  # words between the options and the command (timeout's duration)
    operand: str = ""  # a pattern an operand must match, else the command starts there (chrt's priority)
    leading: bool = False  # the operand may only be the first word (setarch's architecture)
    permute: bool = False  # options may follow the operands and the command's words (su, script)
    lone_dash: str = ""  # the option a lone `-` stands for (env's -i)
    numeric: bool = False  # -N is an option (nice -5)
    assignments: bool = False  # NAME=VALUE words before the command (env, sudo)
    none_if: frozenset[str] = frozenset()  # options with which it runs no command (command -v)
    string: frozenset[str] = frozenset()  # options whose value is a command line (su -c)
    split: frozenset[str] = frozenset()  # options whose value is split into more words (env -S)
    replace: frozenset[str] = frozenset()  # options naming a text replaced by its input (xargs -I)
    shell: bool = False  # with no command it runs a shell that reads its input (unshare)
    shell_options: frozenset[str] = frozenset()  # options that make it run such a shell (sudo -s)
    options: bool = True  # False: every word is the command's (coproc)
    any_long: bool = False  # every --name[=value] is its own word (valgrind): read without a spec
    more_input: bool = False  # the command gets more words from the input (xargs)

    @cached_property
    def shorts(self) -> dict[str, str]:
        """Each short option letter and what follows it: "", ":" or "::"."""
        out: dict[str, str] = {}
        for match in re.finditer(r"([^:+])(:{0,2})", self.short):
            out[match.group(1)] = match.group(2)
        return out

    @cached_property
    def longs(self) -> dict[str, str]:
        """Each long option name and what follows it: "", "=" or "?"."""
        return {name.rstrip("=?"): name[len(name.rstrip("=?")) :] for name in self.long}


def _set(*names: str) -> frozenset[str]:
    return frozenset(names)


@dataclass
class Options:
    """A wrapper's words read: its options (``-a``, ``--name``) with their values, and what is left."""

    options: list[tuple[str, str | None]] = field(default_factory=list)
    operands: list[Word] = field(default_factory=list)
    assignments: list[str] = field(default_factory=list)
    command: list[Word] = field(default_factory=list)
    problem: str = ""

    def given(self, names: frozenset[str]) -> list[tuple[str, str | None]]:
        return [(name, value) for name, value in self.options if name in names]


def _long(spec: Spec, text: str) -> tuple[str, str, bool] | str:
    """The long option ``text`` names, its kind and whether it holds ``=value``; a problem text if none."""
    name, eq, _ = text[2:].partition("=")
    if name in spec.longs:
        return name, spec.longs[name], bool(eq)
    starts = [n for n in spec.longs if n.startswith(name)]
    if len(starts) == 1:
        return starts[0], spec.longs[starts[0]], bool(eq)
    return f"{text.partition('=')[0]} is {'ambiguous' if starts else 'not an option Chimera knows'}"


def read_options(name: str, spec: Spec, words: list[Word]) -> Options:
    """``words`` (after the wrapper's own name) read with ``spec``."""
    out = Options()
    if not spec.options:
        out.command = words
        return out
    operands = spec.operands
    at = 0
    rest: list[Word] = []
    while at < len(words):
        text = words[at].value
        if text is None:
            if operands:  # a value only known at run time: the duration, the priority
                out.operands.append(words[at])
                operands -= 1
                at += 1
                continue
            if not spec.permute:
                out.command = words[at:]
                return out
            out.problem = f"{name} is given a word only known at run time where an option may be"
            return out
        if text == "--":
            rest.extend(words[at + 1 :])
            break
        if text == "-" and spec.lone_dash:
            out.options.append((spec.lone_dash, None))
        elif text.startswith("--") and spec.any_long:
            out.options.append((text.partition("=")[0], text.partition("=")[2] or None))
        elif text.startswith("--") and len(text) > 2 and not (spec.numeric and re.fullmatch(r"--?\d+", text)):
            found = _long(spec, text)
            if isinstance(found, str):
                out.problem = f"{name}'s option {found}"
                return out
            option, kind, has_value = found
            value: str | None = None
            if has_value:
                if not kind:
                    out.problem = f"{name}'s option --{option} takes no value"
                    return out
                value = text.partition("=")[2]
            elif kind == "=":
                if at + 1 >= len(words):
                    return out  # the option lacks its value: nothing runs
                at += 1
                value = words[at].value
                if value is None and f"--{option}" in spec.string | spec.split:
                    out.options.append((f"--{option}", None))
                    at += 1
                    continue
            out.options.append((f"--{option}", value))
        elif text.startswith("-") and len(text) > 1:
            if spec.numeric and re.fullmatch(r"-[-+]?\d+", text):
                out.options.append(("-n", text.lstrip("-")))
                at += 1
                continue
            letters = text[1:]
            index = 0
            while index < len(letters):
                letter = letters[index]
                short = spec.shorts.get(letter)
                if short is None:
                    out.problem = f"{name}'s option -{letter} is not an option Chimera knows"
                    return out
                attached = letters[index + 1 :]
                if short == ":":
                    if attached:
                        out.options.append((f"-{letter}", attached))
                    elif at + 1 < len(words):
                        at += 1
                        out.options.append((f"-{letter}", words[at].value))
                    else:
                        return out
                    break
                if short == "::":
                    out.options.append((f"-{letter}", attached or None))
                    break
                out.options.append((f"-{letter}", None))
                index += 1
        elif spec.assignments and "=" in text[1:] and not rest and not operands:
            out.assignments.append(text)
        elif operands and (not spec.operand or re.fullmatch(spec.operand, text)) and (at == 0 or not spec.leading):
            out.operands.append(words[at])
            operands -= 1
        elif spec.permute:
            rest.append(words[at])
        else:
            rest.extend(words[at:])
            break
        at += 1
    out.command = rest
    return out


def env_split(text: str) -> list[str] | None:
    """The words ``env -S`` makes of ``text``: split at blanks, with '…' and "…" quoting; None for escapes,
    ``$``-expansions and comments, which are not modelled."""
    if any(char in text for char in "\\$#"):
        return None
    words: list[str] = []
    current: list[str] = []
    started = False
    quote = ""
    for char in text:
        if quote:
            if char == quote:
                quote = ""
            else:
                current.append(char)
        elif char in "'\"":
            quote, started = char, True
        elif char in " \t\n\v\f\r":
            if started:
                words.append("".join(current))
                current, started = [], False
        else:
            current.append(char)
            started = True
    if quote:
        return None
    if started:
        words.append("".join(current))
    return words


_GNU = ("help", "version")
_NAMESPACES = ("mount?", "uts?", "ipc?", "net?", "pid?", "user?", "cgroup?", "time?")
_SU = ("command=", "session-command=", "fast", "group=", "supp-group=", "login", "preserve-environment", "pty")
_SU_MORE = ("shell=", "whitelist-environment=", *_GNU)
_SETARCH = ("32bit", "fdpic-funcptrs", "short-inode", "addr-compat-layout", "addr-no-randomize", "whole-seconds")
_SETARCH_MORE = ("sticky-timeouts", "read-implies-exec", "mmap-page-zero", "3gb", "4gb", "uname-2.6", "verbose")
_SETARCH_SPEC = Spec("+hVv3BFILRSTXZ", (*_SETARCH, *_SETARCH_MORE, "list", *_GNU), none_if=_set("--list"), shell=True)
_PRLIMIT = ("core?", "data?", "nice?", "fsize?", "sigpending?", "memlock?", "rss?", "nofile?", "msgqueue?")
_PRLIMIT_MORE = ("rtprio?", "stack?", "cpu?", "nproc?", "as?", "locks?", "rttime?", "pid=", "output=", "noheadings")
_STRACE = ("attach=", "user=", "detach-on=", "daemonize?", "follow-forks", "output-separately", "interruptible=")
_STRACE_MORE = ("trace=", "signal=", "status=", "trace-path=", "successful-only", "failed-only", "columns=", "env=")
_STRACE_ALSO = ("abbrev=", "verbose=", "raw=", "read=", "write=", "quiet?", "decode-fds?", "decode-pids=", "output=")
_STRACE_LAST = ("instruction-pointer", "stack-traces", "syscall-number", "output-append-mode", "summary-only")
_STRACE_END = ("relative-timestamps?", "string-limit=", "absolute-timestamps?", "syscall-times?", "no-abbrev")
_STRACE_TAIL = ("strings-in-hex?", "const-print-style=", "summary", "summary-columns=", "summary-sort-by=", "debug")
_SUDO = ("askpass", "background", "bell", "close-from=", "chdir=", "preserve-env?", "edit", "group=", "set-home")
_SUDO_MORE = ("host=", "login", "remove-timestamp", "reset-timestamp", "list", "non-interactive", "preserve-groups")
_SUDO_ALSO = ("prompt=", "chroot=", "role=", "stdin", "shell", "type=", "command-timeout=", "other-user=", "user=")
_XARGS = ("null", "arg-file=", "delimiter=", "eof?", "replace?", "max-lines=", "max-args=", "open-tty", "max-procs=")
_XARGS_MORE = ("interactive", "process-slot-var=", "no-run-if-empty", "max-chars=", "show-limits", "verbose", "exit")
_SETPRIV = ("dump", "nnp", "no-new-privs", "ambient-caps=", "inh-caps=", "bounding-set=", "ruid=", "euid=", "rgid=")
_SETPRIV_MORE = ("egid=", "reuid=", "regid=", "clear-groups", "keep-groups", "init-groups", "groups=", "securebits=")
_SETPRIV_ALSO = ("pdeathsig=", "selinux-label=", "apparmor-profile=", "landlock-access=", "landlock-rule=", "reset-env")
_UNSHARE = ("fork", "map-user=", "map-group=", "map-root-user", "map-current-user", "map-auto", "map-users=")
_UNSHARE_MORE = ("map-groups=", "kill-child?", "mount-proc?", "mount-binfmt?", "propagation=", "setgroups=")
_UNSHARE_ALSO = ("keep-caps", "root=", "wd=", "setuid=", "setgid=", "monotonic=", "boottime=", "load-interp=")
_NSENTER = ("all", "target=", "setuid=", "setgid=", "preserve-credentials", "root?", "wd?", "wdns=", "no-fork")
_SCRIPT = ("append", "command=", "return", "flush", "force", "log-in=", "log-out=", "log-io=", "log-timing=")
_SCRIPT_MORE = ("timing?", "logging-format=", "echo=", "output-limit=", "quiet", *_GNU)
_WATCH = ("beep", "color", "no-color", "differences?", "errexit", "chgexit", "equexit=", "interval=", "precise")
_WATCH_MORE = ("no-rerun", "no-title", "no-wrap", "exec", *_GNU)
_TIME = ("append", "format=", "output=", "portability", "quiet", "verbose", *_GNU)
_CHRT = ("batch", "deadline", "fifo", "idle", "other", "rr", "reset-on-fork", "sched-runtime=", "sched-period=")
_CHRT_MORE = ("sched-deadline=", "all-tasks", "max", "pid", "verbose", *_GNU)
_FLOCK = ("shared", "exclusive", "unlock", "nonblock", "nb", "timeout=", "wait=", "conflict-exit-code=", "close")
_ENV = ("ignore-environment", "null", "unset=", "chdir=", "split-string=", "block-signal?", "default-signal?")
_XVFB = ("auto-servernum", "error-file=", "auth-file=", "server-num=", "listen-tcp", "xauth-protocol=", "wait=")
_UV = ("frozen", "locked", "no-sync", "isolated", "all-extras", "no-dev", "no-project", "offline", "quiet", "verbose")
_UV_MORE = ("with=", "python=", "extra=", "group=", "package=", "project=", "directory=", "env-file=", "module")
_ENV_MORE = ("ignore-signal?", "list-signal-handling", "debug", "argv0=", *_GNU)

# Programs that run the command given in their words, and how they read them.
WRAPPERS: dict[str, Spec] = {
    "command": Spec("pvV", none_if=_set("-v", "-V")),
    "builtin": Spec(),
    "exec": Spec("cla:"),
    "time": Spec("+af:o:pqvV", _TIME),  # bash's keyword takes -p; GNU time the rest
    "nice": Spec("+n:", ("adjustment=", *_GNU), numeric=True),
    "nohup": Spec("+", _GNU),
    "setsid": Spec("+cfwhV", ("ctty", "fork", "wait", *_GNU)),
    "env": Spec(
        "+iu:C:S:v0a:",
        (*_ENV, *_ENV_MORE),
        lone_dash="-i",
        assignments=True,
        split=_set("-S", "--split-string"),
    ),
    "timeout": Spec("+k:s:vfp", ("kill-after=", "signal=", "verbose", "foreground", "preserve-status", *_GNU), 1),
    "stdbuf": Spec("+i:o:e:", ("input=", "output=", "error=", *_GNU)),
    "ionice": Spec("+c:n:p:P:tu:hV", ("class=", "classdata=", "pid=", "pgid=", "ignore", "uid=", *_GNU)),
    "xargs": Spec(
        "+0a:d:E:e::I:i::L:l::n:oP:prs:tx",
        (*_XARGS, *_XARGS_MORE, *_GNU),
        replace=_set("-I", "-i", "--replace"),
        more_input=True,
    ),
    "sudo": Spec(
        "+Aa:BbC:c:D:Eeg:Hh::iKkLlnPp:R:r:SsT:t:U:u:Vv",
        (*_SUDO, *_SUDO_MORE, *_SUDO_ALSO, "login-class=", "validate", *_GNU),
        assignments=True,
        none_if=_set("-e", "--edit", "-l", "--list", "-v", "--validate", "-K", "--remove-timestamp", "-V", "--version"),
        shell_options=_set("-s", "--shell", "-i", "--login"),
    ),
    "doas": Spec("+a:C:Lnsu:", none_if=_set("-C", "-L"), shell_options=_set("-s")),
    "coproc": Spec(options=False),
    "busybox": Spec("", ("list", "list-full", "install", "help"), none_if=_set("--list", "--list-full", "--install")),
    "toybox": Spec("", ("help", "version")),
    "chrt": Spec("+bdfiorRT:P:D:ampvhV", (*_CHRT, *_CHRT_MORE), 1, r"\d+", none_if=_set("-m", "--max")),
    "taskset": Spec("+apchV", ("all-tasks", "pid", "cpu-list", *_GNU), 1),
    "flock": Spec(
        "+sxeunw:E:oFhVc:", (*_FLOCK, "no-fork", "verbose", "command=", *_GNU), 1, string=_set("-c", "--command")
    ),
    "setpriv": Spec("+dhV", (*_SETPRIV, *_SETPRIV_MORE, *_SETPRIV_ALSO, *_GNU), none_if=_set("-d", "--dump")),
    "prlimit": Spec("+c::d::e::f::i::l::m::n::o:p:q::r::s::t::u::v::x::y::hV", (*_PRLIMIT, *_PRLIMIT_MORE, "raw")),
    "unshare": Spec("+fhVmuinpCUTrcR:w:S:G:", (*_NAMESPACES, *_UNSHARE, *_UNSHARE_MORE, *_UNSHARE_ALSO), shell=True),
    "nsenter": Spec(
        "+ahVt:m::u::i::n::p::C::U::T::S:G:r::w::W:FZ",
        (*_NAMESPACES, *_NSENTER, "follow-context", "env", "keep-caps", "join-cgroup", *_GNU),
        shell=True,
    ),
    "setarch": Spec(
        _SETARCH_SPEC.short, _SETARCH_SPEC.long, 1, r"[^-].*", leading=True, none_if=_SETARCH_SPEC.none_if, shell=True
    ),
    "linux32": _SETARCH_SPEC,
    "linux64": _SETARCH_SPEC,
    "i386": _SETARCH_SPEC,
    "x86_64": _SETARCH_SPEC,
    "uname26": _SETARCH_SPEC,
    "chroot": Spec("+", ("groups=", "userspec=", "skip-chdir", *_GNU), 1, shell=True),
    "strace": Spec(
        "+a:Ab:cCdDe:E:fFhiI:knNo:O:p:P:qrs:S:tTu:U:vVwxX:yYzZ",
        (*_STRACE, *_STRACE_MORE, *_STRACE_ALSO, *_STRACE_LAST, *_STRACE_END, *_STRACE_TAIL, *_GNU),
    ),
    "ltrace": Spec("+a:A:bcCD:e:F:hiLl:n:o:p:rs:StTu:Vw:x:", ("align=", "demangle", "library=", "output=", *_GNU)),
    "pkexec": Spec("+", ("user=", "disable-internal-agent", "keep-cwd", *_GNU), shell=True),
    "unbuffer": Spec("+p"),
    "watch": Spec("+bcCd::eghn:pq:rtvwx", (*_WATCH, *_WATCH_MORE)),
    "fakeroot": Spec("+l:s:i:ub:hv", ("lib=", "faked=", "unknown-is-real", *_GNU)),
    "valgrind": Spec("+hvqd", any_long=True),
    "systemd-run": Spec("+", shell=True),
    "run0": Spec("+", shell=True),
    "eatmydata": Spec("+"),
    "nocache": Spec("+"),
    "catchsegv": Spec("+"),
    "chronic": Spec("+ev"),
    "ifne": Spec("+n"),
    "dbus-run-session": Spec("+", ("config-file=", "dbus-daemon=", *_GNU)),
    "tini": Spec("+hsvwgle:p:"),
    "dumb-init": Spec("+cr:vVh", ("single-child", "rewrite=", "verbose", *_GNU)),
    "gosu": Spec("+", (), 1),
    "su-exec": Spec("+", (), 1),
    "setuidgid": Spec("+", (), 1),
    "envdir": Spec("+", (), 1),
    "faketime": Spec("+fm", ("exclude-monotonic", "date-prog=", *_GNU), 1),
    "xvfb-run": Spec("+ae:f:hln:p:s:w:", (*_XVFB, *_GNU)),
    "nix-shell": Spec("+", ("run=", "command="), string=_set("--run", "--command")),
    # project runners: `uv run CMD`, `poetry run CMD`, … (the subcommand is part of the name)
    "uv run": Spec("+qvmsp:", (*_UV, *_UV_MORE)),
    "poetry run": Spec("+"),
    "pipenv run": Spec("+"),
    "pdm run": Spec("+"),
    "hatch run": Spec("+"),
    "bundle exec": Spec("+"),
    "conda run": Spec("+"),
    "direnv exec": Spec("+", (), 1),
    "npm exec": Spec("+c:", ("call=",), string=_set("-c", "--call")),
    "npx": Spec("+c:", ("call=",), string=_set("-c", "--call")),
    "su": Spec(
        "+c:fg:G:lmpPs:hVw:", (*_SU, *_SU_MORE), permute=True, string=_set("-c", "--command", "--session-command")
    ),
    "runuser": Spec(
        "+c:fg:G:lmpPs:u:hVw:",
        (*_SU, *_SU_MORE, "user="),
        permute=True,
        string=_set("-c", "--command", "--session-command"),
    ),
    "script": Spec(
        "+ac:eE:fhI:B:O:o:qm:T:t::V", (*_SCRIPT, *_SCRIPT_MORE), permute=True, string=_set("-c", "--command")
    ),
}
for _gnu in ("timeout", "nice", "env", "stdbuf", "xargs", "chroot", "nohup"):
    WRAPPERS["g" + _gnu] = WRAPPERS[_gnu]  # GNU coreutils as installed on macOS
