"""The API key stays in Chimera: no process it runs can read it, and whatever would carry it out is masked.

The end-to-end tests run the real `chimera` command (the console script, which
moves the key out of its environment) against the loopback Messages API, with a
model that asks bash to go looking for the key.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chimera.core.redact import MASK, Redactor
from chimera.core.tools.output import OutputSink
from tests.cli_runner import chimera_command, run_chimera
from tests.fake_anthropic import FakeAnthropic, message, status, text, tool_use

KEY = "sk-ant-api03-e2e0123456789abcdefKEY-do-not-leak"
TOKEN = "sk-ant-oat01-e2e0123456789abcdefTOKEN-do-not-leak"


@pytest.fixture
def secrets_env(model_env: dict[str, str]) -> dict[str, str]:
    """The model environment for a child, with KEY as the API key and TOKEN as the auth token to hunt for."""
    return {**model_env, "ANTHROPIC_API_KEY": KEY, "ANTHROPIC_AUTH_TOKEN": TOKEN}


def everything_written(proc: subprocess.CompletedProcess[str], home: Path) -> dict[str, bytes]:
    """stdout, stderr and every file under CHIMERA_HOME (entries.jsonl, events.jsonl, saved output...)."""
    found = {"stdout": proc.stdout.encode(), "stderr": proc.stderr.encode()}
    for path in home.rglob("*"):
        if path.is_file() and "checkpoints.git" not in path.parts:
            found[str(path.relative_to(home))] = path.read_bytes()
    return found


def assert_nowhere(secret: str, written: dict[str, bytes]) -> None:
    for where, data in written.items():
        assert secret.encode() not in data, f"the secret reached {where}"


def tool_outputs(proc: subprocess.CompletedProcess[str]) -> list[str]:
    events = [json.loads(line) for line in proc.stdout.splitlines()]
    return [e["output"] for e in events if e["type"] == "tool_call_finished"]


# Every process from the command's shell up to init (its supervisor, Chimera, ...), and every
# child of Chimera: each one's environment, or the word "unreadable" when the kernel says no.
# Only the lines that could matter are printed (a CI machine's environment is long enough to be
# cut by the tool's output limit): anything named ANTHROPIC or CHIMERA, and any value holding a key.
SNOOP = r"""
show() { echo "== $1 $(tr '\0' ' ' < /proc/$1/cmdline 2>/dev/null | cut -c1-200)"
         if env_text=$(tr '\0' '\n' < /proc/$1/environ 2>/dev/null); then
           printf '%s\n' "$env_text" | grep -a -e ANTHROPIC -e CHIMERA -e sk-ant -e do-not-leak
         else echo unreadable; fi; }
p=$$
while [ "$p" -gt 1 ]; do show "$p"; p=$(awk '/^PPid:/{print $2}' /proc/$p/status); done
chimera=$(awk '/^PPid:/{print $2}' /proc/$PPID/status)
for d in /proc/[0-9]*; do
  [ "$(awk '/^PPid:/{print $2}' $d/status 2>/dev/null)" = "$chimera" ] && show "${d#/proc/}"
done
echo "chimera is $chimera"
"""


def test_no_process_of_chimera_shows_the_key_in_its_environment(
    api: FakeAnthropic, secrets_env: dict[str, str], tmp_path: Path, isolated_env: Path
) -> None:
    """bash reads the environment of its supervisor, Chimera, Chimera's children and every ancestor: no key or token."""
    api.script(
        message(tool_use("t1", "bash", {"command": SNOOP}), stop_reason="tool_use"),
        message(text("Looked everywhere.")),
    )
    proc = run_chimera(
        "run",
        "look for the key",
        "--json",
        "--workdir",
        str(tmp_path),
        "--permission-mode",
        "bypass",
        env=secrets_env,
    )
    assert proc.returncode == 0, proc.stderr
    (output,) = tool_outputs(proc)
    chimera = int(output.rsplit("chimera is ", 1)[1])
    assert f"== {chimera} " in output  # Chimera itself was looked at ...
    assert output.count("== ") >= 4  # ... and the command's supervisor, the shell and the ancestors
    assert "-I -S " in output  # the supervisor is one of them
    if os.geteuid() == 0:  # root reads any environment: Chimera's must simply not hold the key
        chimera_env = output.split(f"== {chimera} ", 1)[1].split("\n== ", 1)[0]
        assert "ANTHROPIC_BASE_URL=" in chimera_env
    assert MASK not in output  # nothing needed masking: no environment held the key
    written = everything_written(proc, isolated_env)
    assert_nowhere(KEY, written)
    assert_nowhere(TOKEN, written)
    assert api.requests[0].headers.get("authorization") == f"Bearer {KEY}"  # the key still reached the model server


def _without_ptrace() -> list[str]:
    """A prefix that runs a command as a same-user process without CAP_SYS_PTRACE (root drops it)."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv: cannot run Chimera as an unprivileged process")
    return [setpriv, "--bounding-set", "-sys_ptrace", "--inh-caps", "-sys_ptrace"]


PROBE = "sk-ant-memprobe-"
_SCAN = """
import os, re
supervisor = os.getppid()  # the command's supervisor; Chimera is its parent
pid = int(next(line.split()[1] for line in open(f"/proc/{supervisor}/status") if line.startswith("PPid:")))
try:
    mem = open(f"/proc/{pid}/mem", "rb", 0)
except OSError as err:
    print("cannot open memory:", err.strerror)
    raise SystemExit
found = set()
for line in open(f"/proc/{pid}/maps"):
    span, perms = line.split()[:2]
    if "r" not in perms:
        continue
    start, end = (int(x, 16) for x in span.split("-"))
    try:
        mem.seek(start)
        data = mem.read(end - start)
    except (OSError, OverflowError, ValueError):
        continue
    found.update(m.hex() for m in re.findall(rb"PROBE[0-9a-f]{32}", data))
print("scanned; found", sorted(found))
""".replace("PROBE", PROBE)
MEMORY_SCAN = f"{shlex.quote(sys.executable)} -c {shlex.quote(_SCAN)}"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/<pid>/mem")
def test_a_tool_cannot_read_the_key_from_chimeras_memory(
    api: FakeAnthropic, secrets_env: dict[str, str], tmp_path: Path
) -> None:
    """A command of the same user scans Chimera's memory for the key: the kernel refuses, so it finds nothing."""
    key = PROBE + "0123456789abcdef0123456789abcdef"
    api.script(
        message(tool_use("t1", "bash", {"command": MEMORY_SCAN}), stop_reason="tool_use"),
        message(text("Done.")),
    )
    env = {**os.environ, **secrets_env, "ANTHROPIC_API_KEY": key}
    proc = subprocess.run(
        [
            *_without_ptrace(),
            *chimera_command(),
            "run",
            "scan",
            "--json",
            "--workdir",
            str(tmp_path),
            "--permission-mode",
            "bypass",
        ],
        capture_output=True,
        text=True,
        env=env,
        stdin=subprocess.DEVNULL,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    (output,) = tool_outputs(proc)
    assert key.encode().hex() not in output
    assert "cannot open memory" in output


def test_a_key_printed_30000_times_and_echoed_by_the_model_is_masked_everywhere(
    api: FakeAnthropic, secrets_env: dict[str, str], tmp_path: Path, isolated_env: Path
) -> None:
    """The key from a workspace file, printed 30,000 times, in AGENTS.md and in the answer: no sink keeps it."""
    (tmp_path / ".env").write_text(f"ANTHROPIC_API_KEY={KEY}\n")
    (tmp_path / "AGENTS.md").write_text(f"Deploy with {KEY} please.\n")
    api.script(
        message(tool_use("t1", "bash", {"command": 'yes "$(cat .env)" | head -n 30000'}), stop_reason="tool_use"),
        message(text(f"The key is {KEY}, I found it.", pieces=7)),  # cut across the streamed deltas
    )
    proc = run_chimera(
        "run",
        "print the env file",
        "--json",
        "--workdir",
        str(tmp_path),
        "--permission-mode",
        "bypass",
        env=secrets_env,
    )
    assert proc.returncode == 0, proc.stderr
    events = [json.loads(line) for line in proc.stdout.splitlines()]
    (finished,) = [e for e in events if e["type"] == "tool_call_finished"]
    spill = Path(finished["data"]["full_output"])
    saved = spill.read_text()
    assert saved.count(f"ANTHROPIC_API_KEY={MASK}\n") == 30_000  # every line, across every chunk boundary
    streamed = "".join(e["text"] for e in events if e["type"] == "text_delta")
    assert streamed == f"The key is {MASK}, I found it."
    assert events[-1]["answer"] == f"The key is {MASK}, I found it."
    assert_nowhere(KEY, everything_written(proc, isolated_env))
    for request in api.requests:  # the model never saw it: not in the system prompt, not in the results
        assert KEY not in json.dumps(request.body)
    assert MASK in json.dumps(api.requests[0].body["system"])


def test_a_server_error_quoting_the_key_is_masked_in_stderr_events_and_session(
    api: FakeAnthropic, secrets_env: dict[str, str], tmp_path: Path, isolated_env: Path
) -> None:
    """A 500 then a 403 whose messages quote the key: the retry event, run_finished and stderr show it masked."""
    api.script(
        status(500, "api_error", f"internal error for key {KEY}", headers={"retry-after": "0"}),
        status(403, "permission_error", f"key {KEY} may not use this model"),
    )
    proc = run_chimera("run", "x", "--json", "--workdir", str(tmp_path), env=secrets_env)
    assert proc.returncode == 2, proc.stderr
    events = [json.loads(line) for line in proc.stdout.splitlines()]
    (retry,) = [e for e in events if e["type"] == "retry"]
    assert f"internal error for key {MASK}" in retry["detail"]
    assert f"key {MASK} may not use this model" in events[-1]["error"]
    assert f"key {MASK} may not use this model" in proc.stderr
    assert_nowhere(KEY, everything_written(proc, isolated_env))


def test_a_bogus_hand_over_variable_is_ignored_without_waiting(tmp_path: Path) -> None:
    """CHIMERA_CREDENTIALS_FD naming stdin, junk, a closed number or a pipe nobody closes: `--help` still answers."""
    read, write = os.pipe()  # an inherited pipe whose writer stays open: reading it to the end would never return
    try:
        for value in ("0", "junk", "99", str(read)):
            proc = subprocess.run(
                [*chimera_command(), "--help"],
                stdin=read,
                capture_output=True,
                env={**os.environ, "CHIMERA_CREDENTIALS_FD": value},
                pass_fds=(read,),
                timeout=30,
            )
            assert proc.returncode == 0, proc.stderr
            assert b"usage: chimera" in proc.stdout
    finally:
        os.close(read)
        os.close(write)


def test_the_watcher_never_inherits_the_key(tmp_path: Path) -> None:
    """Chimera used as a library, with the key in its environment: the watcher it starts does not hold it."""
    script = (
        "import os, sys\n"
        f"os.environ['ANTHROPIC_API_KEY'] = {KEY!r}\n"
        "from chimera.core.tools import watchdog\n"
        "watchdog.start()\n"
        # Popen returns once exec has begun; the kernel sets the new environment a moment later
        # (until then environ reads empty), so read until it is there.
        "import time\n"
        "deadline = time.monotonic() + 10\n"
        "while not (text := open(f'/proc/{watchdog._watcher.pid}/environ', 'rb').read()):\n"
        "    assert time.monotonic() < deadline, 'the watcher never finished starting'\n"
        "print(text.decode(errors='replace'))\n"
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=30, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "PATH=" in proc.stdout
    assert KEY not in proc.stdout


async def test_ripgrep_never_gets_the_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """grep through ripgrep, with the key in Chimera's environment: rg's environment does not hold it."""
    from chimera.core.tools.base import ToolContext
    from chimera.core.tools.grep import Grep
    from chimera.core.tools.ripgrep import find_rg

    real = find_rg()
    if real is None:
        pytest.skip("no rg")
    log = tmp_path / "rg-environment"
    wrapper = tmp_path / "rg"
    wrapper.write_text(f'#!/bin/sh\nenv >> {log}\nexec {real} "$@"\n')
    wrapper.chmod(0o755)
    monkeypatch.setenv("CHIMERA_RG", str(wrapper))
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("needle\n")
    result = await Grep().run({"pattern": "needle"}, ToolContext(ws, tmp_path / "spill"))
    assert "a.txt" in result.output
    assert "PATH=" in log.read_text()
    assert KEY not in log.read_text()


def test_a_setup_error_that_quotes_the_key_is_masked(tmp_path: Path) -> None:
    """A one-line setup error naming something that holds the key (here a folder's name) shows it masked."""
    missing = tmp_path / KEY
    proc = run_chimera("run", "x", "--workdir", str(missing), env={"ANTHROPIC_API_KEY": KEY})
    assert proc.returncode == 2
    assert f"{tmp_path}/{MASK} does not exist" in proc.stderr
    assert KEY not in proc.stderr


def test_main_called_in_process_leaves_the_environment_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only the console script moves the key out; `main(argv)` in a running program never re-executes it."""
    from chimera.tui.cli import main

    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    with pytest.raises(SystemExit) as exit_:
        main(["--help"])
    assert exit_.value.code == 0
    assert os.environ["ANTHROPIC_API_KEY"] == KEY


# --- masking, the second line -------------------------------------------------------


def test_a_redactor_never_shows_its_secrets() -> None:
    """repr and str of a Redactor name how many secrets it holds, never one of them."""
    redactor = Redactor([KEY, TOKEN, "short"])
    assert KEY not in repr(redactor)
    assert KEY not in str(redactor)
    assert repr(redactor) == "Redactor(2 secrets)"  # under 8 characters is no secret: it would mask ordinary text


@given(
    before=st.text(max_size=40),
    after=st.text(max_size=40),
    cuts=st.lists(st.integers(min_value=0, max_value=200), max_size=6),
    copies=st.integers(min_value=1, max_value=3),
)
def test_a_secret_cut_anywhere_across_pieces_is_masked(before: str, after: str, cuts: list[int], copies: int) -> None:
    """However a text holding the key is cut into pieces, the masked stream equals the whole text masked."""
    redactor = Redactor([KEY])
    whole = before + (KEY + after) * copies
    masker = redactor.stream()
    pieces, last = [], 0
    for cut in sorted(cuts):
        pieces.append(whole[last : max(cut, last)])
        last = max(cut, last)
    pieces.append(whole[last:])
    streamed = "".join(masker.feed(p) for p in pieces) + masker.flush()
    assert streamed == redactor.mask(whole)
    assert KEY not in streamed


def test_the_saved_full_output_is_masked_as_it_is_written(tmp_path: Path) -> None:
    """Output past the cap goes to a file: the key never lands in it, even cut across two writes."""
    sink = OutputSink(200, tmp_path / "out.txt", redactor=Redactor([KEY]))
    line = f"token={KEY}\n"
    for i in range(0, len(line) * 500, 17):  # odd-sized writes: the key straddles most of them
        sink.write((line * 500)[i : i + 17])
    shown = sink.render()
    saved = (tmp_path / "out.txt").read_text()
    assert KEY not in saved
    assert saved == f"token={MASK}\n" * 500
    assert KEY not in shown
    assert sink.truncated
