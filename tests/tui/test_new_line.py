"""A new line typed into the input (ctrl+j; shift+enter where the terminal tells it from enter): shown as ⏎ and
sent as a new line; a ⏎ pasted or typed as a character stays that character."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual import events

from chimera.core.sessions.start import RunOptions
from chimera.tui.app import build_app
from chimera.tui.widgets.prompt_input import PromptInput
from tests.fake_anthropic import DEFAULT_MODEL as MODEL
from tests.fake_anthropic import FakeAnthropic, message, text
from tests.tui_helpers import said, until


def first_message(api: FakeAnthropic) -> str:
    sent = api.requests[0].messages[0]["content"]
    return sent if isinstance(sent, str) else "".join(b.get("text", "") for b in sent)


@pytest.mark.parametrize("key", ["ctrl+j", "shift+enter"])
@pytest.mark.usefixtures("model_env")
async def test_a_new_line_key_starts_a_line_of_the_same_message(api: FakeAnthropic, project: Path, key: str) -> None:
    """first, the key, second, enter: the input showed first⏎second; the model got one message of two lines."""
    api.script(message(text("On it.")))
    app = build_app(RunOptions(workdir=project, model=MODEL))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.click("#prompt")
        await pilot.press(*"first", key, *"second")
        prompt = app.query_one(PromptInput)
        assert prompt.value == "first⏎second"
        await pilot.press("enter")
        await app.run_shown.wait()
    assert first_message(api) == "first\nsecond"
    assert said(app) == ["first\nsecond"]


@pytest.mark.usefixtures("model_env")
async def test_a_pasted_or_typed_return_sign_is_kept_as_written(api: FakeAnthropic, project: Path) -> None:
    """A one-line paste holding ⏎ and a ⏎ typed as a character are sent as ⏎, while a ctrl+j beside them is a
    new line: the person's words are never read as something else."""
    api.script(message(text("On it.")))
    app = build_app(RunOptions(workdir=project, model=MODEL))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.click("#prompt")
        prompt = app.query_one(PromptInput)
        prompt.post_message(events.Paste("press ⏎ to send"))
        await until(pilot, lambda: "[pasted]" in prompt.value, "the paste kept")
        await pilot.press("ctrl+j")
        prompt.post_message(events.Key("⏎", "⏎"))
        await until(pilot, lambda: "[typed]" in prompt.value, "the character kept")
        await pilot.press("enter")
        await app.run_shown.wait()
    assert first_message(api) == "press ⏎ to send\n⏎"


@pytest.mark.usefixtures("model_env")
async def test_a_new_line_in_a_burst_of_keys_lands_where_it_was_typed(api: FakeAnthropic, project: Path) -> None:
    """Keys arriving together, as a fast typist's or a terminal's do: the new line sits between the words it was
    typed between (in a real terminal it once landed after them)."""
    app = build_app(RunOptions(workdir=project, model=MODEL))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.click("#prompt")
        prompt = app.query_one(PromptInput)
        burst = [events.Key(c, c) for c in "first"] + [events.Key("ctrl+j", None)] + [events.Key(c, c) for c in "two"]
        for key in burst:
            prompt.post_message(key)
        await until(pilot, lambda: prompt.value == "first⏎two", "the burst typed in order")
