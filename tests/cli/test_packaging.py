"""The package installs as the `chimera` namespace from a wheel, with every subpackage and data file."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
_NOT_SOURCE = (".venv", ".git", "build", "*.egg-info", "__pycache__", "__snapshots__", "snapshot_report.html")
FOLDERS = {"core": "chimera.core", "tui": "chimera.tui", "themes": "chimera.themes"}


def _pyproject() -> dict[str, object]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_every_python_folder_is_a_listed_package() -> None:
    """Each folder holding Python files maps to a package in pyproject.toml (none left out)."""
    listed = set(_pyproject()["tool"]["setuptools"]["packages"])  # type: ignore[index]
    found = set()
    for folder, package in FOLDERS.items():
        for init in (ROOT / folder).rglob("*.py"):
            relative = init.parent.relative_to(ROOT / folder)
            if "demo_data" in relative.parts:
                continue  # the demo's sample project is data, not a package
            found.add(".".join([package, *relative.parts]))
    assert found == listed


@pytest.fixture(scope="module")
def wheel_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A new venv with the wheel installed; the dependencies come from this environment."""
    tmp = tmp_path_factory.mktemp("wheel")
    # Built from a copy: a build writes build/ and *.egg-info beside the sources, and two workers of the suite
    # (each with this fixture) building in one tree at once break each other's build.
    source = tmp / "source"
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(*_NOT_SOURCE))
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(tmp),
            str(source),
        ],
        check=True,
        capture_output=True,
    )
    (wheel,) = tmp.glob("*.whl")
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "-q",
            "--no-deps",
            "--no-index",
            str(wheel),
        ],
        check=True,
        capture_output=True,
    )
    # Let the new venv import the dependencies installed here, after its own site-packages.
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    Path(site, "_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    (tmp / "wheel-name").write_text(str(wheel))
    return venv


def test_wheel_holds_every_module_and_data_file(wheel_venv: Path) -> None:
    """The wheel carries each source module, the theme stylesheet and the demo."""
    wheel = Path((wheel_venv.parent / "wheel-name").read_text())
    names = set(zipfile.ZipFile(wheel).namelist())
    for folder, package in FOLDERS.items():
        for source in (ROOT / folder).rglob("*"):
            if source.is_file() and "__pycache__" not in source.parts:
                target = package.replace(".", "/") + "/" + source.relative_to(ROOT / folder).as_posix()
                assert target in names, f"{target} is missing from the wheel"


def test_wheel_install_runs_the_demo(wheel_venv: Path, isolated_env: Path) -> None:
    """The wheel's `chimera` command, from a new venv, imports its own copy and plays the demo."""
    python = wheel_venv / "bin" / "python"
    where = subprocess.run(
        [
            str(python),
            "-c",
            "import chimera.core, chimera.tui.app, chimera.themes; print(chimera.core.__file__)",
        ],
        check=True,
        capture_output=True,
        text=True,
        cwd=isolated_env,
    ).stdout
    assert Path(where.strip()).is_relative_to(wheel_venv)
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    proc = subprocess.run(
        [str(wheel_venv / "bin" / "chimera"), "run", "fix the test", "--json"],
        capture_output=True,
        text=True,
        cwd=isolated_env,
        env=env,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert '"type":"run_finished"' in proc.stdout.splitlines()[-1]
    assert '"success":true' in proc.stdout.splitlines()[-1]
