"""The real `chimera` in a real terminal (tmux) keeps what is typed: words typed with pauses while a question
waits, or as it arrives, never answer it, and a bracketed paste holding escape sequences and newlines arrives
whole, folded in the input, one backspace taking all of it, never sending a task by itself."""

from __future__ import annotations

import threading
from pathlib import Path

from tests.fake_anthropic import FakeAnthropic, message, paused, text, tool_use
from tests.terminal_helpers import Terminal, needs_tmux, wait_for

pytestmark = needs_tmux

tmux = Terminal("chimera-typing")
capture = tmux.capture

COLOURED = "look at this:\n\x1b[31mFAILED\x1b[0m test_x\nline three\n"


def started(isolated_env: Path, workdir: Path, api: FakeAnthropic, session: str, *options: str) -> None:
    """`chimera` in a new 80x24 tmux session against ``api``, ready for a task."""
    tmux.start_chimera(session, isolated_env, workdir, api.url, *options)


def typed(session: str, words: str) -> None:
    tmux("send-keys", "-t", session, "-l", words, check=True)


def test_words_typed_with_a_pause_never_answer_a_question(isolated_env: Path, tmp_path: Path) -> None:
    """A question waits while "yellow" is typed with a 1.5 s pause inside it (longer than the old focus pause):
    the words stay in the input, the call is not answered; ctrl+y then n answers it."""
    session = "question"
    release, reached = threading.Event(), threading.Event()
    with FakeAnthropic() as api:
        api.script(message(tool_use("b1", "bash", {"command": "touch made"}), stop_reason="tool_use"))
        api.script(paused(message(text("Understood.")), release, reached))
        started(isolated_env, tmp_path, api, session, "--permission-mode", "ask")
        try:
            typed(session, "make it")
            tmux("send-keys", "-t", session, "Enter", check=True)
            assert wait_for(lambda: "ctrl+y to answer" in capture(session)), capture(session)
            typed(session, "yel")
            assert not wait_for(lambda: "y once" in capture(session), timeout=1.5)  # the pause: nothing moves
            typed(session, "low")
            assert wait_for(lambda: "yellow" in capture(session)), capture(session)
            screen = capture(session)
            assert "ctrl+y to answer" in screen  # still waiting, unfocused
            assert len(api.requests) == 1  # nothing answered it
            assert not (tmp_path / "made").exists()
            tmux("send-keys", "-t", session, "C-y", "n", check=True)
            assert wait_for(reached.is_set), capture(session)
            assert "declined" in str(api.requests[1].messages[-1])
            assert "yellow" in capture(session)  # the input still holds the word
            release.set()
        finally:
            release.set()
            tmux("kill-server")


PHRASES = ["yellow", " please", " nice, go ahead", " yes", " and update the docs"]
PAUSES = [0.2, 1.0, 2.0, 5.0]  # the person's pauses between phrases


def test_words_typed_with_pauses_as_a_question_arrives_never_answer_it(isolated_env: Path, tmp_path: Path) -> None:
    """Words typed with pauses of 0.2, 1, 2 and 5 s while a question arrives among them: no pause moves the
    focus to it, no decision is made, the input holds every word; then ctrl+y, d and a reason sent in one
    burst refuse the call with that reason, the words still in the input."""
    session = "pauses"
    release, reached = threading.Event(), threading.Event()
    with FakeAnthropic() as api:
        api.script(
            paused(message(tool_use("b1", "bash", {"command": "touch made"}), stop_reason="tool_use"), release, reached)
        )
        api.script(message(text("Understood.")))
        started(isolated_env, tmp_path, api, session, "--permission-mode", "ask")
        try:
            typed(session, "make it")
            tmux("send-keys", "-t", session, "Enter", check=True)
            assert wait_for(reached.is_set), capture(session)
            for n, phrase in enumerate(PHRASES):
                typed(session, phrase)
                if n == 1:  # the question arrives between the second phrase and the third
                    release.set()
                    assert wait_for(lambda: "ctrl+y to answer" in capture(session)), capture(session)
                if n < len(PAUSES):  # the pause: the focus never moves to the question
                    assert not wait_for(lambda: "y once" in capture(session), timeout=PAUSES[n]), capture(session)
            words = "".join(PHRASES)
            assert wait_for(lambda: words in capture(session)), capture(session)
            assert "ctrl+y to answer" in capture(session)  # still waiting, unanswered
            assert len(api.requests) == 1
            tmux("send-keys", "-t", session, "C-y", "d", "why not", "Enter", check=True)  # one burst
            assert wait_for(lambda: len(api.requests) == 2), capture(session)
            assert "why not" in str(api.requests[1].messages[-1])
            assert wait_for(lambda: "Understood." in capture(session)), capture(session)
            assert words in capture(session)  # the input still holds the words
        finally:
            release.set()
            tmux("kill-session", "-t", session)
    assert not (tmp_path / "made").exists()


def test_a_paste_with_escape_sequences_arrives_whole(isolated_env: Path, tmp_path: Path) -> None:
    """Coloured test output pasted (tmux's bracketed paste) is one folded piece: nothing is sent by its
    newlines, one backspace removes it all, and pasted again and sent, the model gets every character."""
    session = "paste"
    (tmp_path / "paste.txt").write_text(COLOURED)
    with FakeAnthropic() as api:
        api.script(message(text("Seen.")))
        started(isolated_env, tmp_path, api, session)
        try:
            tmux("load-buffer", "-b", "coloured", str(tmp_path / "paste.txt"), check=True)
            tmux("paste-buffer", "-p", "-b", "coloured", "-t", session, check=True)
            assert wait_for(lambda: "look at this: [+2 lines]" in capture(session)), capture(session)
            assert not api.requests  # its newlines sent nothing
            tmux("send-keys", "-t", session, "BSpace", check=True)
            assert wait_for(lambda: "Tell Chimera" in capture(session)), capture(session)  # all of it gone
            tmux("paste-buffer", "-p", "-b", "coloured", "-t", session, check=True)
            assert wait_for(lambda: "[+2 lines]" in capture(session)), capture(session)
            tmux("send-keys", "-t", session, "Enter", check=True)
            assert wait_for(lambda: "Seen." in capture(session)), capture(session)
            assert "\\x1b[31mFAILED\\x1b[0m test_x" in capture(session)  # shown escaped, never drawn raw
        finally:
            tmux("kill-server")
    sent = api.requests[0].messages[0]["content"]
    assert sent == COLOURED.rstrip("\n")


def test_keys_typed_in_a_burst_right_after_tab_reach_the_timeline(isolated_env: Path, tmp_path: Path) -> None:
    """Tab from the empty input, then the arrows and enter in the same instant (one write to the terminal): the
    timeline takes them and unfolds the call; none lands in the input."""
    session = "burst"
    (tmp_path / "notes.txt").write_text("".join(f"note number {n}\n" for n in range(5)))
    with FakeAnthropic() as api:
        api.script(
            message(tool_use("r1", "read", {"path": "notes.txt"}), stop_reason="tool_use"),
            message(text("The notes count from zero to four.")),
        )
        started(isolated_env, tmp_path, api, session, "--permission-mode", "bypass")
        try:
            typed(session, "what do the notes say?")
            tmux("send-keys", "-t", session, "Enter", check=True)
            assert wait_for(lambda: "count from zero to four" in capture(session)), capture(session)
            tmux("send-keys", "-t", session, "Tab", "Up", "Up", "Up", "Enter", check=True)  # one burst
            assert wait_for(lambda: "note number 3" in capture(session)), capture(session)
            assert "▾ ✓ read  notes.txt" in capture(session)
            assert "Tell Chimera what to do" in capture(session)  # the input still empty
        finally:
            tmux("kill-session", "-t", session)
