"""The core stays headless: importing it never loads the UI toolkit or, eagerly, the SDK."""

from __future__ import annotations

import json
import pkgutil
import subprocess
import sys

import chimera.core


def _core_modules() -> list[str]:
    names = ["chimera.core"]
    for info in pkgutil.walk_packages(chimera.core.__path__, "chimera.core."):
        names.append(info.name)
    return names


def test_core_has_modules_to_check() -> None:
    """The walk finds the engine's modules (so the import test below cannot pass vacuously)."""
    names = _core_modules()
    assert "chimera.core.agent_loop" in names
    assert "chimera.core.providers.anthropic" in names
    assert len(names) > 20


def test_importing_every_core_module_leaves_textual_and_rich_out() -> None:
    """After importing all of chimera.core, neither textual nor rich is loaded."""
    script = (
        "import importlib, json, sys\n"
        f"for name in {_core_modules()!r}:\n"
        "    importlib.import_module(name)\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in {'textual', 'rich'})))\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == []


def test_building_a_provider_does_not_import_the_sdk() -> None:
    """create_provider is cheap: the anthropic SDK loads only with the first request."""
    script = (
        "import os, sys\n"
        "os.environ['ANTHROPIC_API_KEY'] = 'k'\n"
        "from chimera.core.providers.factory import create_provider\n"
        "create_provider('claude-sonnet-4-5')\n"
        "import chimera.core.sessions.start, chimera.core.headless\n"
        "print('anthropic' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_cli_help_imports_neither_textual_nor_the_sdk() -> None:
    """`chimera --help` answers without loading Textual or anthropic."""
    script = (
        "import sys\n"
        "from chimera.tui.cli import main\n"
        "try:\n"
        "    main(['--help'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "sys.stderr.write(repr(sorted(m for m in ('textual', 'anthropic') if m in sys.modules)))\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert "usage: chimera" in out.stdout
    assert out.stderr == "[]"
