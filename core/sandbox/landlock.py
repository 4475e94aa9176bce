"""Provides the kernel layer of the sandbox: Landlock's three system calls, through ``_ctypes``.

``abi()`` says which Landlock ABI this kernel offers (0: none). ``restrict(spec)``
confines the calling thread, and every process it starts from then on, to the
rules ``spec`` lists (see :func:`chimera.core.sandbox.policy.Confinement.spec`):

    HANDLED_FS HANDLED_NET SCOPED
    RIGHTS PATH
    RIGHTS PATH
    …

It sets ``PR_SET_NO_NEW_PRIVS`` first (Landlock needs it without CAP_SYS_ADMIN), so
a setuid program cannot lift the confinement. A path that cannot be opened (gone
since the spec was made) or a rule the kernel refuses is left out: that only takes
access away. A ruleset that cannot be made or applied is an error, and the caller
must not run the command.

The per-call supervisor (``tools/supervisor.py``) imports this file by its own name
as well as Chimera does as ``chimera.core.sandbox.landlock``, so it imports only
modules loaded at startup or written in C, as the supervisor does.
"""

import _ctypes  # ctypes' C half: `ctypes` itself costs milliseconds to import
import posix
import sys

__all__ = [
    "ACCESS_NET",
    "DEV_RIGHTS",
    "FILE_RIGHTS",
    "READ",
    "WRITE",
    "abi",
    "restrict",
]

# System call numbers: the same on every architecture (the unified table).
_CREATE_RULESET, _ADD_RULE, _RESTRICT_SELF = 444, 445, 446
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH, _RULE_NET_PORT = 1, 2
_PR_SET_NO_NEW_PRIVS = 38

# File system rights (include/uapi/linux/landlock.h), and the ABI that brought each.
EXECUTE = 1 << 0
WRITE_FILE = 1 << 1
READ_FILE = 1 << 2
READ_DIR = 1 << 3
REMOVE_DIR = 1 << 4
REMOVE_FILE = 1 << 5
MAKE_CHAR = 1 << 6
MAKE_DIR = 1 << 7
MAKE_REG = 1 << 8
MAKE_SOCK = 1 << 9
MAKE_FIFO = 1 << 10
MAKE_BLOCK = 1 << 11
MAKE_SYM = 1 << 12
REFER = 1 << 13  # ABI 2
TRUNCATE = 1 << 14  # ABI 3
IOCTL_DEV = 1 << 15  # ABI 5
ACCESS_NET = 0b11  # BIND_TCP | CONNECT_TCP, ABI 4
SCOPE_ABSTRACT_UNIX = 1 << 0  # ABI 6
SCOPE_SIGNAL = 1 << 1  # ABI 6

READ = EXECUTE | READ_FILE | READ_DIR
# Writing, making, removing and moving files, never device nodes: a block device made in the workspace would
# read the raw disk past every rule.
WRITE = (
    WRITE_FILE | REMOVE_DIR | REMOVE_FILE | MAKE_DIR | MAKE_REG | MAKE_SOCK | MAKE_FIFO | MAKE_SYM | REFER | TRUNCATE
)
FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV  # what a rule on a file (not a folder) may hold
DEV_RIGHTS = READ_FILE | WRITE_FILE | TRUNCATE  # /dev/null and its kind
_BY_ABI = {1: (1 << 13) - 1, 2: (1 << 14) - 1, 3: (1 << 15) - 1}  # every fs right an ABI knows, below 5


def _libc(name: str) -> int:
    """The address of ``name`` in this program and its libc."""
    return _ctypes.dlsym(_ctypes.dlopen(None), name)  # type: ignore[arg-type]  # None: this program itself


def _syscall(*args: object) -> int:
    result: int = _ctypes.call_function(_libc("syscall"), args)
    return result


def _u64(value: int) -> bytes:
    return value.to_bytes(8, sys.byteorder)


def abi() -> int:
    """The Landlock ABI version this kernel offers; 0 when it has none (too old, or Landlock is not enabled)."""
    try:
        version = _syscall(_CREATE_RULESET, None, 0, _CREATE_RULESET_VERSION)
    except (OSError, AttributeError):
        return 0
    return max(version, 0)


def fs_rights(version: int) -> int:
    """Every file system right ABI ``version`` handles (IOCTL_DEV left out: device ioctls stay allowed)."""
    return _BY_ABI.get(version, (1 << 15) - 1) if version > 0 else 0


def restrict(spec: str) -> str:
    """Confine this thread and its future children to ``spec``; an empty string when done, else what failed."""
    lines = spec.split("\n")
    handled = [int(word) for word in lines[0].split()]
    fs, net, scoped = [*handled, 0, 0, 0][:3]
    size = 24 if scoped else 16 if net else 8
    attr = (_u64(fs) + _u64(net) + _u64(scoped))[:size]
    ruleset = _syscall(_CREATE_RULESET, attr, size, 0)
    if ruleset < 0:
        return "the kernel refused to make a Landlock ruleset"
    try:
        for line in lines[1:]:
            rights, _, path = line.partition(" ")
            if not path:
                continue
            try:
                fd = posix.open(path, posix.O_PATH | posix.O_CLOEXEC | posix.O_NOFOLLOW)
            except OSError:
                continue  # gone since the rules were made: less access, never more
            try:
                rule = _u64(int(rights)) + fd.to_bytes(4, sys.byteorder, signed=True)
                _syscall(_ADD_RULE, ruleset, _RULE_PATH_BENEATH, rule, 0)  # refused: left out, as above
            finally:
                posix.close(fd)
        if _ctypes.call_function(_libc("prctl"), (_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) != 0:
            return "the kernel refused PR_SET_NO_NEW_PRIVS"
        if _syscall(_RESTRICT_SELF, ruleset, 0) != 0:
            return "the kernel refused to apply the Landlock ruleset"
    finally:
        posix.close(ruleset)
    return ""
