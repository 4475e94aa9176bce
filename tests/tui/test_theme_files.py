"""Theme files read into Textual themes: the built-in ones, a person's own, and every way one can be wrong.

A theme is a TOML file (``themes/*.toml``, ``$CHIMERA_HOME/themes/*.toml``): Textual's ``Theme``
arguments at the top, Chimera's colours in ``[transcript]`` and ``[code]``. A file that cannot be
used is refused in one line naming the file, the line and the key.
"""

from __future__ import annotations

import dataclasses
import os
import stat
from pathlib import Path

import pytest
from textual.color import Color
from textual.theme import BUILTIN_THEMES, Theme

from chimera.themes import BUILT_IN, CHIMERA_DARK, CHIMERA_HIGH_CONTRAST, CHIMERA_LIGHT, THEMES
from chimera.themes.choice import CHOICE_NAME, ThemeChoiceError, remember_theme, remembered_theme
from chimera.themes.loading import LARGEST, ThemeFileError, UserThemes, load_theme, parse_theme
from chimera.themes.palette import CODE, TRANSCRIPT, palette

# The themes as they were written in Python before they were files: the files must keep every colour (light's
# accent, warning, error and success since darkened to read at 4.5:1 on its panel, tests/tui/test_contrast.py).
DARK = Theme(
    name="chimera-dark",
    primary="#7AA2F7",
    secondary="#BB9AF7",
    accent="#E0AF68",
    warning="#E0AF68",
    error="#F7768E",
    success="#9ECE6A",
    foreground="#C0CAF5",
    background="#16161E",
    surface="#1A1B26",
    panel="#24283B",
    dark=True,
)
LIGHT = Theme(
    name="chimera-light",
    primary="#2E5BBA",
    secondary="#7847BD",
    accent="#945900",
    warning="#945900",
    error="#BA3047",
    success="#39731C",
    foreground="#24283B",
    background="#F4F4F7",
    surface="#FFFFFF",
    panel="#E6E7ED",
    dark=False,
)
MINE = Path("/home/me/.chimera/themes/mine.toml")


def luminance(colour: Color) -> float:
    """WCAG relative luminance."""

    def channel(value: int) -> float:
        c = value / 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    return 0.2126 * channel(colour.r) + 0.7152 * channel(colour.g) + 0.0722 * channel(colour.b)


def contrast(one: Color, other: Color) -> float:
    """The WCAG contrast ratio of two colours (1 to 21)."""
    light, dark = sorted((luminance(one), luminance(other)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def without_variables(theme: Theme) -> Theme:
    return dataclasses.replace(theme, variables={})


def refused(text: str) -> str:
    """The one line a theme file holding ``text`` is refused with."""
    with pytest.raises(ThemeFileError) as caught:
        parse_theme(text, MINE)
    assert "\n" not in str(caught.value)
    return str(caught.value)


@pytest.mark.parametrize(("built", "before"), [(CHIMERA_DARK, DARK), (CHIMERA_LIGHT, LIGHT)])
def test_the_dark_and_light_files_keep_the_themes_colours(built: Theme, before: Theme) -> None:
    """dark.toml and light.toml load into the themes Chimera had, colour for colour."""
    assert without_variables(built) == before
    textual = {"text-disabled", "border-blurred", "scrollbar", "scrollbar-hover", "block-cursor-blurred-background"}
    assert {name for name in built.variables if not name.startswith("transcript-")} == textual  # read at 4.5:1


def test_the_built_in_themes_are_files_in_the_package() -> None:
    """Dark, light and high contrast are TOML files beside the package, read by the same loader as a person's."""
    assert [path.name for path in BUILT_IN] == ["dark.toml", "light.toml", "high-contrast.toml"]
    assert [load_theme(path) for path in BUILT_IN] == list(THEMES)
    assert [theme.name for theme in THEMES] == ["chimera-dark", "chimera-light", "chimera-high-contrast"]


def test_high_contrast_reads_at_seven_to_one() -> None:
    """High contrast: the text, and every colour of the transcript and the code, at least 7:1 (WCAG AAA) against
    the background and the code blocks' panel."""
    roles = CHIMERA_HIGH_CONTRAST.to_color_system().generate()
    background, panel = Color.parse(roles["background"]), Color.parse(roles["panel"])
    assert contrast(Color.parse(roles["foreground"]), background) >= 7
    colours = palette(CHIMERA_HIGH_CONTRAST)
    assert set(colours) == {f"transcript.{k}" for k in TRANSCRIPT} | {f"code.{k}" for k in CODE}
    for key, colour in colours.items():
        assert colour is not None
        assert contrast(colour, background) >= 7, key
        assert contrast(colour, panel) >= 7, key
    assert {f"transcript-{k.replace('_', '-')}" for k in TRANSCRIPT} <= set(CHIMERA_HIGH_CONTRAST.variables)


def test_a_theme_file_takes_every_argument_of_textuals_theme(tmp_path: Path) -> None:
    """Every field of Textual's Theme can be written in a file (a new one in a Textual upgrade fails here)."""
    written = {
        "name": "full",
        "primary": "#102030",
        "secondary": "#203040",
        "warning": "#405060",
        "error": "#506070",
        "success": "#607080",
        "accent": "#304050",
        "foreground": "#E0E0E0",
        "background": "#101010",
        "surface": "#151515",
        "panel": "#202020",
        "boost": "#FFFFFF10",
        "dark": False,
        "luminosity_spread": 0.2,
        "text_alpha": 0.9,
        "variables": {
            "footer-key-foreground": "#FF0000",
            "ansi-background": "ansi_white",
            "ansi-foreground": "ansi_black",
        },
        "ansi": True,  # (which brings the two ansi- variables Textual's ANSI colours leave out)
    }
    assert list(written) == [field.name for field in dataclasses.fields(Theme)]
    lines = [
        f"{key} = {value!r}".replace("'", '"').replace("False", "false").replace("True", "true")
        for key, value in written.items()
        if key != "variables"
    ]
    path = tmp_path / "full.toml"
    path.write_text("\n".join([*lines, "[variables]", 'footer-key-foreground = "#FF0000"', ""]))
    assert dataclasses.asdict(load_theme(path)) == written


def test_a_theme_with_only_a_primary_colour_colours_everything() -> None:
    """A file with just a primary colour is a theme, named after its file; the transcript and the code take
    its colours (a failed call in its error colour, keywords in its secondary colour, comments faded)."""
    theme = parse_theme('primary = "#3366CC"\n', MINE)
    assert theme.name == "mine"
    roles = theme.to_color_system().generate()
    colours = palette(theme)
    assert colours["transcript.tool_failed"] == Color.parse(roles["error"])
    assert colours["code.keyword"] == Color.parse(roles["secondary"])
    faded = colours["code.comment"]
    assert faded is not None
    assert faded not in (Color.parse(roles["foreground"]), Color.parse(roles["background"]))


def test_a_colour_given_in_a_table_is_the_one_used() -> None:
    """[transcript] and [code] colours travel in the Textual theme and win over the theme's own."""
    theme = parse_theme('primary = "#3366CC"\n[transcript]\nuser = "#ABCDEF"\n[code]\nkeyword = "red"\n', MINE)
    assert theme.variables == {"transcript-user": "#ABCDEF", "code-keyword": "red"}
    assert palette(theme)["transcript.user"] == Color.parse("#ABCDEF")
    assert palette(theme)["code.keyword"] == Color.parse("red")


def test_a_variable_may_name_the_themes_colours() -> None:
    """A [variables] value may name the colours Textual makes of the theme ($primary, "$accent 50%")."""
    text = 'primary = "#3366CC"\n[variables]\nfooter-key-foreground = "$primary"\nscrollbar = "$accent 50%"\n'
    theme = parse_theme(text, MINE)
    assert theme.variables == {"footer-key-foreground": "$primary", "scrollbar": "$accent 50%"}


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        ('name = "x"\nprimary = "#fff"\ndark = tru\n', 3, "not valid TOML"),
        ('primary = "#fff"\n[transcript]\nuser = "#12', 3, "not valid TOML"),
        ('name = "x"\nprimry = "#fff"\n', 2, "unknown key primry: did you mean primary?"),
        ('primary = "#fff"\n\n[transcrpt]\nuser = "red"\n', 3, "unknown table [transcrpt]: did you mean transcript?"),
        ('primary = "#fff"\n[transcript]\n\nuserr = "red"\n', 4, "unknown key userr in [transcript]"),
        ('primary = "#fff"\n[code]\nkeyword = "bleu"\n', 3, "code.keyword: 'bleu' is not a colour"),
        ('primary = "#fff"\nsecondary = "#12345"\n', 2, "secondary: '#12345' is not a colour"),
        ('primary = "#fff"\ntranscript.user = 3\n', 2, "transcript.user must be a colour in quotes"),
        ('primary = "#fff"\ntranscript = { user = 3 }\n', 2, "transcript.user must be a colour in quotes"),
        ('primary = "#fff"\n# dark or light\ndark = "yes"\n', 3, "dark must be true or false"),
        ('primary = "#fff"\ntext_alpha = 2\n', 2, "text_alpha must be a number from 0 to 1"),
        ('primary = "#fff"\ntranscript = "red"\n', 2, "transcript must be a table"),
        ('primary = "#fff"\n[variables]\nfooter-key-foreground = "nope"\n', 3, "variables.footer-key-foreground"),
        ('primary = "#fff"\n[variables]\nblock-cursor-text-style = "shiny"\n', 3, "not a text-style value"),
        ('primary = "#fff"\n[variables]\nfooter-key-foregrond = "red"\n', 3, "did you mean footer-key-foreground?"),
        ('primary = "#fff"\n[variables]\nfooter-key-foreground = "red; } Screen { color: blue"\n', 3, "variables."),
        ('primary = "#fff"\n[variables]\nscrollbar = "red"\nfooter-key-foreground = "$nope"\n', 4, "'$nope' is not a"),
        ('name = "a b"\nprimary = "#fff"\n', 1, "name must be letters, digits, - and _"),
        ('primary = "#fff"\n\n[[transcript]]\nuser = "red"\n', 3, "transcript must be a table"),
        ('primary = "#fff"\n[transcript.user]\nred = 1\n', 2, "transcript.user must be a colour in quotes"),
    ],
)
def test_a_wrong_file_is_refused_naming_the_file_the_line_and_the_key(text: str, line: int, words: str) -> None:
    """Bad TOML, an unknown key or table, a wrong type, a bad colour or CSS value: one line, file and line first."""
    said = refused(text)
    assert said.startswith(f"{MINE}, line {line}: ")
    assert words in said


DEEP = 100_000  # levels: far past what Python's parser or repr can recurse through, and a 200 KB file at most
NESTED = "nested more than 32 levels deep"


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        ("primary = " + "[" * DEEP + "]" * DEEP, 1, NESTED),
        ('primary = "#fff"\nvariables = ' + "{ a = " * 5000 + "1" + " }" * 5000, 2, NESTED),
        ("x = [\n" * 3000 + "]\n" * 3000, 33, NESTED),  # an array's levels on lines of their own
        ("[" + ".".join(["primary"] * DEEP) + "]\nk = 1\n", 1, NESTED),
        ('primary = "#fff"\n\n' + ".".join(["a"] * DEEP) + " = 1\n", 3, NESTED),
        ('primary = "#fff"\ndark = ' + "[" * 20 + "]" * 20, 2, "dark must be true or false, not [[[...]]]"),
        ('primary = "' + "z" * 100_000 + '"\n', 1, "primary: 'zzzz"),
        ('primary = "#fff"\n' + "k" * 100_000 + " = 1\n", 2, "unknown key kkkk"),
    ],
    ids=["arrays", "inline-tables", "array-lines", "table-header", "dotted-key", "a-value", "a-string", "a-key"],
)
def test_a_file_nested_thousands_deep_is_one_short_line(text: str, line: int, words: str) -> None:
    """Arrays, inline tables, [a.b.c...] headers or dotted keys nested thousands deep: one line naming the file,
    the line and the problem, at once (never a RecursionError, never minutes in the TOML parser); a value or
    key it quotes, however deep or long, is cut short."""
    said = refused(text)
    assert said.startswith(f"{MINE}, line {line}: ")
    assert words in said
    assert len(said) < 400


def test_brackets_and_dots_in_strings_and_comments_are_no_nesting() -> None:
    """Only TOML's own nesting counts: comments and strings full of [ { and dots leave a theme a theme."""
    many = "[{." * 40
    text = f'# {many}\nname = "deep"  # {many}\nprimary = "hsl(210.5, 50.5%, 40.5%)"\n'
    theme = parse_theme(text + f'[transcript]\nuser = "red" # {many}\n', MINE)
    assert (theme.name, theme.primary) == ("deep", "hsl(210.5, 50.5%, 40.5%)")
    said = refused(f'primary = "#fff"\nnotes = """\n{many}\n{many}"""\nmore = \'{many}\'\n')
    assert said.startswith(f"{MINE}, line 2: unknown key notes")


def test_a_theme_with_no_primary_colour_is_refused() -> None:
    """A file without primary (or an empty one) says what it needs."""
    assert (
        refused('name = "x"\n')
        == f'{MINE}: primary is missing: a theme needs at least its primary colour, as primary = "#7AA2F7"'
    )
    assert "primary is missing" in refused("")


def test_a_theme_of_terminal_colours_has_every_variable_textuals_css_uses() -> None:
    """ansi = true: Textual's ANSI colours leave out ansi-background and ansi-foreground (its buttons use them);
    the theme gets them as Textual's own ANSI themes have them, unless the file gives them."""
    dark = parse_theme('primary = "ansi_red"\nansi = true\n', MINE)
    assert {k: dark.variables[k] for k in ("ansi-background", "ansi-foreground")} == {
        "ansi-background": "ansi_black",
        "ansi-foreground": "ansi_white",
    }
    given = parse_theme('primary = "ansi_red"\nansi = true\n[variables]\nansi-background = "ansi_blue"\n', MINE)
    assert given.variables["ansi-background"] == "ansi_blue"


def test_a_file_written_with_a_byte_order_mark_loads(tmp_path: Path) -> None:
    """An editor's byte-order mark before the first key is not an error."""
    path = tmp_path / "bom.toml"
    path.write_bytes(b'\xef\xbb\xbfprimary = "#123456"\n')
    assert load_theme(path).primary == "#123456"


def test_a_file_that_is_not_a_theme_file_is_refused_unread(tmp_path: Path) -> None:
    """A FIFO is never opened to wait on; a huge file or one that is not UTF-8 is refused in one line."""
    fifo = tmp_path / "pipe.toml"
    os.mkfifo(fifo)
    with pytest.raises(ThemeFileError, match="is a named pipe"):
        load_theme(fifo)
    big = tmp_path / "big.toml"
    big.write_text('primary = "#fff"\n' + "# filler\n" * (LARGEST // 9 + 1))
    with pytest.raises(ThemeFileError, match="too big for a theme"):
        load_theme(big)
    latin = tmp_path / "latin.toml"
    latin.write_bytes(b'primary = "#fff"\n# caf\xe9\n')
    with pytest.raises(ThemeFileError, match="not UTF-8"):
        load_theme(latin)


def test_a_persons_theme_may_not_take_a_built_in_or_anothers_name(tmp_path: Path) -> None:
    """A built-in theme's name, or a name another file already has, is refused on the line of the name."""
    (tmp_path / "a.toml").write_text('name = "sea"\nprimary = "#fff"\n')
    (tmp_path / "b.toml").write_text('primary = "#000"\nname = "sea"\n')
    (tmp_path / "c.toml").write_text('primary = "#000"\nname = "chimera-dark"\n')
    (tmp_path / "nord.toml").write_text('primary = "#000"\n')
    (tmp_path / "notes.txt").write_text("not a theme")
    user = UserThemes(tmp_path, [theme.name for theme in THEMES] + list(BUILTIN_THEMES))
    done = user.load_all()
    assert [theme.name for theme in done.themes] == ["sea"]
    assert [str(err) for err in done.errors] == [
        f"{tmp_path / 'b.toml'}, line 2: the name sea is taken by a.toml: give this theme another name",
        f"{tmp_path / 'c.toml'}, line 2: the name chimera-dark is a built-in theme's: give this theme another name",
        f'{tmp_path / "nord.toml"}: the name nord is a built-in theme\'s: add a line name = "mine"',
    ]


def test_a_file_changed_renamed_or_removed_is_reported_as_such(tmp_path: Path) -> None:
    """Reading files again: a changed theme comes back, a renamed one names its old name, a removed one is gone,
    and a broken one is an error while what it gave before stands."""
    sea = tmp_path / "sea.toml"
    sea.write_text('primary = "#fff"\n')
    user = UserThemes(tmp_path, [])
    assert [theme.name for theme in user.load_all().themes] == ["sea"]
    sea.write_text('name = "ocean"\nprimary = "#fff"\n')
    done = user.reload([sea])
    assert ([theme.name for theme in done.themes], done.renamed) == (["ocean"], {"sea": "ocean"})
    sea.write_text('name = "ocean"\nprimary = "#ff"\n')
    done = user.reload([sea])
    assert (done.themes, len(done.errors), user.names) == ([], 1, {sea: "ocean"})
    sea.unlink()
    assert user.reload([sea]).removed == ["ocean"]


def test_the_chosen_theme_is_kept_in_a_private_file(isolated_env: Path) -> None:
    """The choice survives in CHIMERA_HOME/workbench.json, readable by its owner only."""
    assert remembered_theme(isolated_env) is None
    remember_theme(isolated_env, "chimera-light")
    assert remembered_theme(isolated_env) == "chimera-light"
    assert stat.S_IMODE((isolated_env / CHOICE_NAME).stat().st_mode) == 0o600


@pytest.mark.parametrize("content", [b"{not json", b'["a list"]', b'{"theme": 3}', b"\xff\xfe"])
def test_a_damaged_choice_file_is_one_line_and_a_new_choice_replaces_it(isolated_env: Path, content: bytes) -> None:
    """A damaged workbench.json is said in one line naming it and the fix; choosing again writes it afresh."""
    (isolated_env / CHOICE_NAME).write_bytes(content)
    with pytest.raises(ThemeChoiceError, match=r"workbench\.json is damaged: remove it, or choose a theme again"):
        remembered_theme(isolated_env)
    remember_theme(isolated_env, "chimera-dark")
    assert remembered_theme(isolated_env) == "chimera-dark"


def test_the_readmes_example_theme_loads() -> None:
    """The example theme file in the README is a theme as written."""
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    example = readme.split("`$CHIMERA_HOME/themes/ocean.toml`:\n\n```toml\n", 1)[1].split("```", 1)[0]
    theme = parse_theme(example, Path("ocean.toml"))
    assert (theme.name, theme.primary, theme.variables["transcript-user"]) == ("ocean", "#4FA3E0", "#FFCB6B")
