"""``chimera serve`` given what it cannot serve with: one line naming the cause and the fix, exit 2, nothing served;
and the workbench's options, every one, handed on to each tab's ``chimera``."""

from __future__ import annotations

import argparse
import socket
from pathlib import Path

import pytest

from tests.cli_runner import assert_one_line_error, run_here


@pytest.mark.parametrize("host", ["0.0.0.0", "::"])
def test_an_address_others_reach_needs_public(host: str) -> None:
    """--host for every interface without --public is refused, naming --public and what it allows."""
    assert_one_line_error(run_here("serve", "--host", host, "--port", "0"), f"--host {host}", "add --public")


def test_an_address_not_of_this_machine_is_refused() -> None:
    """--host with an address this machine does not have (a documentation address) says so and names a good one."""
    result = run_here("serve", "--host", "192.0.2.1", "--public", "--port", "0")
    assert_one_line_error(result, "192.0.2.1 is not an address of this machine", "127.0.0.1")
    assert "token=" not in result.stdout


def test_a_port_in_use_is_refused() -> None:
    """A port something else listens on is named, with the way to another one."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert_one_line_error(run_here("serve", "--port", str(port)), f"port {port} on 127.0.0.1 is in use", "--port")


@pytest.mark.parametrize("port", ["http", "70000", "-1"])
def test_a_port_that_is_not_one_is_refused(port: str) -> None:
    """--port that is not a number from 0 to 65535 is one line naming it."""
    assert_one_line_error(run_here("serve", "--port", port), port, "0 to 65535")


def test_an_empty_host_is_refused() -> None:
    """--host '' (which would listen everywhere) is refused as empty."""
    assert_one_line_error(run_here("serve", "--host", "", "--port", "0"), "--host is empty", "127.0.0.1")


def test_a_workdir_that_is_not_a_folder_is_refused(tmp_path: Path) -> None:
    """--workdir naming no folder is refused before anything listens."""
    assert_one_line_error(run_here("serve", "--workdir", str(tmp_path / "none"), "--port", "0"), "not a folder")


def test_every_workbench_option_reaches_the_tabs() -> None:
    """Each option the workbench takes, given to serve, is handed on as words the workbench reads back the same:
    an option added to the workbench later reaches the tabs too (or this fails naming it)."""
    from chimera.tui.cli import build_parser
    from chimera.tui.cli_options import common
    from chimera.tui.serve.options import given_options

    workbench = argparse.ArgumentParser(add_help=False)
    common(workbench)
    words = []
    for action in workbench._actions:
        if not action.option_strings:
            continue
        name = action.option_strings[-1]
        if action.nargs == 0:
            words.append(name)
        elif action.choices:
            words += [name, list(action.choices)[-1]]
        else:
            words += [name, f"value-{action.dest}"]
    serve = build_parser().parse_args(["serve", *words])
    handed = given_options(workbench, serve)
    assert vars(workbench.parse_args(handed)) == vars(workbench.parse_args(words))
    assert handed, "nothing was handed on"
