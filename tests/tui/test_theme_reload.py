"""A person's themes in the workbench: loaded from ``$CHIMERA_HOME/themes`` at start, applied again the
moment one is saved, a broken one said once while the theme in use stays, and ``switch_theme``
(what ``/theme NAME`` runs) putting one on and remembering it for the next start."""

from __future__ import annotations

import asyncio
import os
import stat
from pathlib import Path

import pytest
from textual.pilot import Pilot

from chimera.core.sessions.start import RunOptions
from chimera.themes import CHIMERA_DARK, CHIMERA_HIGH_CONTRAST, CHIMERA_LIGHT
from chimera.themes.choice import CHOICE_NAME, remember_theme, remembered_theme
from chimera.tui.app import ChimeraApp, build_app
from tests.fake_anthropic import DEFAULT_MODEL as MODEL
from tests.tui_helpers import colour_at, screen_text, until

pytestmark = pytest.mark.usefixtures("model_env")

NOTE = "✗ the build failed"  # a notice in the conversation, drawn in the theme's error colour


def ocean(error: str = "#AA2200", *, name: str = "ocean") -> str:
    """A person's theme: a dark blue one whose failures show in ``error``."""
    return f'name = "{name}"\nprimary = "#2266AA"\nbackground = "#001122"\n\n[transcript]\nnotice_error = "{error}"\n'


def themes_folder(home: Path) -> Path:
    folder = home / "themes"
    folder.mkdir(exist_ok=True)
    return folder


def notices(app: ChimeraApp) -> list[str]:
    return [n.message for n in app._notifications]


def workbench(project: Path) -> ChimeraApp:
    return build_app(RunOptions(workdir=project, model=MODEL))


async def shown(pilot: Pilot[int], app: ChimeraApp, colour: str) -> None:
    """The notice on screen in ``colour``."""
    await until(pilot, lambda: colour_at(app, NOTE) == colour.lower(), f"the notice drawn in {colour}")


async def saved(app: ChimeraApp, path: Path, text: str, *, atomic: bool = False) -> None:
    """Save ``text`` to ``path`` while the app watches (in place, or as many editors do: a new file renamed
    over it), and wait until the app has read and applied it."""
    await app.theme_keeper.watching.wait()
    app.theme_keeper.reloaded.clear()
    if atomic:
        temp = path.with_name(f".{path.name}.swx")
        temp.write_text(text)
        os.replace(temp, path)
    else:
        path.write_text(text)
    await asyncio.wait_for(app.theme_keeper.reloaded.wait(), 10)


async def test_a_persons_theme_is_loaded_at_start_and_the_chosen_one_put_on(isolated_env: Path, project: Path) -> None:
    """ocean.toml in CHIMERA_HOME/themes is a theme from the start, on because it was chosen last; a broken file
    beside it is one notice naming it and its line, and takes nothing else down."""
    folder = themes_folder(isolated_env)
    (folder / "ocean.toml").write_text(ocean())
    (folder / "broken.toml").write_text('primary = "#123456"\n\n[transcript]\nuser = "bleu"\n')
    remember_theme(isolated_env, "ocean")
    app = workbench(project)
    async with app.run_test(size=(80, 24)) as pilot:
        assert app.theme == "ocean"
        app.conversation.say(NOTE, "error")
        await shown(pilot, app, "#AA2200")
        await until(pilot, lambda: bool(notices(app)), "the notice")
        assert notices(app) == [
            f"Theme file not loaded: {folder / 'broken.toml'}, line 4: transcript.user: 'bleu' is not a colour: "
            'write #rrggbb, rgb(r, g, b), hsl(h, s%, l%) or a name such as "white"'
        ]
        assert "broken" not in app.available_themes


async def test_saving_the_theme_in_use_recolours_the_screen_at_once(isolated_env: Path, project: Path) -> None:
    """The theme in use, saved with another colour, is applied as soon as the file is written: the transcript
    already drawn is drawn again in it. A new file saved is a theme to choose at once."""
    folder = themes_folder(isolated_env)
    (folder / "ocean.toml").write_text(ocean())
    remember_theme(isolated_env, "ocean")
    app = workbench(project)
    async with app.run_test(size=(80, 24)) as pilot:
        app.conversation.say(NOTE, "error")
        await shown(pilot, app, "#AA2200")
        await saved(app, folder / "ocean.toml", ocean("#FF00AA"))
        await shown(pilot, app, "#FF00AA")
        assert app.theme == "ocean"
        await saved(app, folder / "ocean.toml", ocean("#00AAFF"), atomic=True)
        await shown(pilot, app, "#00AAFF")
        await saved(app, folder / "reef.toml", ocean("#00CC88", name="reef"))
        app.theme_keeper.switch("reef")
        await shown(pilot, app, "#00CC88")
        assert notices(app) == []


@pytest.mark.parametrize(
    ("broken", "line", "words"),
    [
        ('name = "ocean"\nprimary = "#2266AA"\n[transcript\n', 3, "not valid TOML"),
        (ocean("#FF00AA").replace('"#FF00AA"', '"#FF00A"'), 6, "transcript.notice_error: '#FF00A' is not a colour"),
        (ocean() + "shade = 3\n", 7, "unknown key shade in [transcript]"),
        ('name = "ocean"\nprimary = "#2266AA"\ndark = "no"\n', 3, "dark must be true or false"),
    ],
)
async def test_a_broken_save_is_one_notice_and_the_theme_in_use_stays(
    isolated_env: Path, project: Path, broken: str, line: int, words: str
) -> None:
    """Saving the theme in use broken (bad TOML, a bad colour, an unknown key, a wrong type) gives one notice
    naming the file and the line; the theme stays on, in its colours, and a fixed save applies again."""
    folder = themes_folder(isolated_env)
    (folder / "ocean.toml").write_text(ocean())
    remember_theme(isolated_env, "ocean")
    app = workbench(project)
    async with app.run_test(size=(80, 24)) as pilot:
        app.conversation.say(NOTE, "error")
        await shown(pilot, app, "#AA2200")
        await saved(app, folder / "ocean.toml", broken)
        (said,) = notices(app)
        assert said.startswith(f"Theme file not loaded: {folder / 'ocean.toml'}, line {line}: ")
        assert words in said
        assert app.theme == "ocean"
        assert colour_at(app, NOTE) == "#aa2200"
        await saved(app, folder / "ocean.toml", ocean("#FF00AA"))
        await shown(pilot, app, "#FF00AA")
        assert len(notices(app)) == 1


async def test_a_save_nested_thousands_deep_is_one_notice_and_reloading_goes_on(
    isolated_env: Path, project: Path
) -> None:
    """The theme in use saved as arrays nested 3,000 deep (Python's TOML parser overflows its stack), then as a
    dotted key 50,000 parts deep (it takes minutes over it): one notice each, at once; the theme stays on, and
    the next good save still applies."""
    folder = themes_folder(isolated_env)
    (folder / "ocean.toml").write_text(ocean())
    remember_theme(isolated_env, "ocean")
    app = workbench(project)
    async with app.run_test(size=(80, 24)) as pilot:
        app.conversation.say(NOTE, "error")
        await shown(pilot, app, "#AA2200")
        await saved(app, folder / "ocean.toml", ocean() + "deep = " + "[" * 3000 + "]" * 3000 + "\n")
        await saved(app, folder / "ocean.toml", ocean() + ".".join(["deep"] * 50_000) + " = 1\n")
        said = f"Theme file not loaded: {folder / 'ocean.toml'}, line 7: nested more than 32 levels deep"
        assert notices(app) == [f"{said} (a theme has tables of keys, no deeper): fix or remove it"] * 2
        assert app.theme == "ocean"
        await saved(app, folder / "ocean.toml", ocean("#FF00AA"))
        await shown(pilot, app, "#FF00AA")
        assert len(notices(app)) == 2


async def test_the_chosen_theme_is_put_on_and_survives_a_restart(isolated_env: Path, project: Path) -> None:
    """switch_theme("light") puts chimera-light on, recolours the conversation and keeps the choice: the next
    start opens in it."""
    light_error = CHIMERA_LIGHT.variables["transcript-notice-error"]
    app = workbench(project)
    async with app.run_test(size=(80, 24)) as pilot:
        assert app.theme == CHIMERA_DARK.name
        app.conversation.say(NOTE, "error")
        await shown(pilot, app, CHIMERA_DARK.variables["transcript-notice-error"])
        app.theme_keeper.switch("light")
        await shown(pilot, app, light_error)
        assert app.theme == CHIMERA_LIGHT.name
    assert remembered_theme(isolated_env) == CHIMERA_LIGHT.name
    again = workbench(project)
    async with again.run_test(size=(80, 24)) as pilot:
        assert again.theme == CHIMERA_LIGHT.name
        again.conversation.say(NOTE, "error")
        await shown(pilot, again, light_error)


async def test_an_unknown_theme_is_one_line_listing_the_known_ones(isolated_env: Path, project: Path) -> None:
    """switch_theme("sepia") changes nothing and says which themes there are, Chimera's and the person's first."""
    (themes_folder(isolated_env) / "ocean.toml").write_text(ocean())
    app = workbench(project)
    async with app.run_test(size=(80, 24)) as pilot:
        app.theme_keeper.switch("sepia")
        await until(pilot, lambda: bool(notices(app)), "the notice")
        (said,) = notices(app)
        assert said.startswith(
            "No theme is called 'sepia': the known ones are chimera-dark, chimera-high-contrast, chimera-light, ocean, "
        )
        assert "nord" in said
        assert app.theme == CHIMERA_DARK.name
    assert not (isolated_env / CHOICE_NAME).exists()


async def test_a_chosen_theme_that_is_gone_leaves_the_default_on(isolated_env: Path, project: Path) -> None:
    """The theme chosen last, its file since removed, is said once; the default theme is on, the choice kept."""
    remember_theme(isolated_env, "ocean")
    app = workbench(project)
    async with app.run_test(size=(80, 24)) as pilot:
        assert app.theme == CHIMERA_DARK.name
        await until(pilot, lambda: bool(notices(app)), "the notice")
        assert notices(app) == [
            "The theme chosen last, ocean, is gone (its file was removed or broken): chimera-dark is on."
        ]
    assert remembered_theme(isolated_env) == "ocean"


async def test_a_theme_chosen_in_the_command_palette_is_remembered(isolated_env: Path, project: Path) -> None:
    """ctrl+p → /theme chimera-high-contrast: on at once, and on at the next start."""
    app = workbench(project)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("ctrl+p")
        await pilot.press(*"theme chimera-high-contrast", "enter")
        await until(pilot, lambda: app.theme == CHIMERA_HIGH_CONTRAST.name, "the theme chosen")
        await until(pilot, lambda: remembered_theme(isolated_env) == CHIMERA_HIGH_CONTRAST.name, "kept")
    again = workbench(project)
    async with again.run_test(size=(80, 24)):
        assert again.theme == CHIMERA_HIGH_CONTRAST.name


async def test_a_theme_of_terminal_colours_is_put_on_and_drawn(isolated_env: Path, project: Path) -> None:
    """A theme in the terminal's own colours (ansi = true) comes on without breaking the screen; the
    conversation's notice takes its error colour."""
    (themes_folder(isolated_env) / "term.toml").write_text(
        'primary = "ansi_blue"\nerror = "ansi_red"\nbackground = "ansi_default"\nforeground = "ansi_default"\n'
        "ansi = true\n"
    )
    app = workbench(project)
    async with app.run_test(size=(80, 24)) as pilot:
        app.conversation.say(NOTE, "error")
        app.theme_keeper.switch("term")
        await until(pilot, lambda: app.theme == "term", "the theme on")
        await pilot.pause()
        assert app.is_running
        assert NOTE in screen_text(app)


async def test_a_themes_path_that_is_not_a_folder_is_one_notice(isolated_env: Path, project: Path) -> None:
    """$CHIMERA_HOME/themes is a file: one notice says so and how to fix it; the built-in themes and the
    remembered choice still work."""
    (isolated_env / "themes").write_text("not a folder")
    remember_theme(isolated_env, CHIMERA_LIGHT.name)
    app = workbench(project)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: bool(notices(app)), "the notice")
        assert notices(app) == [
            f"Your themes are not loaded: {isolated_env / 'themes'} is not a folder: remove what is there, "
            "or make it one"
        ]
        assert app.theme == CHIMERA_LIGHT.name
        app.theme_keeper.switch("high-contrast")
        await until(pilot, lambda: app.theme == CHIMERA_HIGH_CONTRAST.name, "the theme on")


async def test_a_themes_folder_that_is_a_link_is_used_and_its_target_keeps_its_mode(
    isolated_env: Path, project: Path, tmp_path: Path
) -> None:
    """$CHIMERA_HOME/themes links to the person's dotfiles folder (mode 0755): its themes load and reload on
    save, and the folder's mode is never changed (Chimera makes its own folders private, not the person's)."""
    dotfiles = tmp_path / "dotfiles-themes"
    dotfiles.mkdir()
    dotfiles.chmod(0o755)
    (dotfiles / "ocean.toml").write_text(ocean())
    (isolated_env / "themes").symlink_to(dotfiles, target_is_directory=True)
    remember_theme(isolated_env, "ocean")
    app = workbench(project)
    async with app.run_test(size=(80, 24)) as pilot:
        assert app.theme == "ocean"
        app.conversation.say(NOTE, "error")
        await shown(pilot, app, "#AA2200")
        await saved(app, isolated_env / "themes" / "ocean.toml", ocean("#FF00AA"))
        await shown(pilot, app, "#FF00AA")
    assert (isolated_env / "themes").is_symlink()
    assert stat.S_IMODE(dotfiles.stat().st_mode) == 0o755
