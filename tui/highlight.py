"""Provides syntax colours that follow the workbench's theme: code blocks, diffs and ``read`` results.

``syntax_theme`` turns a theme's code colours (its ``[code]`` table, or the
colours of its palette: primary, secondary, accent, success, warning, error,
the foreground faded) into a Rich ``SyntaxTheme``, so a theme switch
recolours code like everything else (``tui.code_markdown`` draws Markdown's
code blocks in it); ``highlight_read`` colours the code of a ``read``
result by its file name, leaving the line numbers dim.

Highlighting costs time, so it is capped: text beyond ``MAX_CHARS`` and lines
beyond ``LONG_LINE`` characters stay plain, the lexer comes from the file name
alone (never guessed from the content), and a code block still streaming is
drawn plain until it is finished.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cache, lru_cache
from pathlib import PurePath

from pygments.lexer import Lexer
from pygments.lexers import get_lexer_for_filename
from pygments.lexers.special import TextLexer
from pygments.token import Token, _TokenType
from pygments.util import ClassNotFound
from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderResult
from rich.segment import Segment
from rich.style import Style
from rich.syntax import SyntaxTheme
from rich.text import Span, Text
from textual.color import Color
from textual.theme import Theme

from chimera.themes.palette import palette

__all__ = [
    "LONG_LINE",
    "MAX_CHARS",
    "NumberedCode",
    "ThemeSyntax",
    "highlight_read",
    "syntax_theme",
]

MAX_CHARS = 200_000  # more text than this stays plain (about 2,000 lines of 100 characters)
LONG_LINE = 1_000  # a longer line (minified code, data) stays plain; the lines around it are coloured

LINE_NUMBERS = Style(dim=True)
_NUMBERED = re.compile(r" *\d+\t")  # a read's line: its number, right-aligned, then a tab (core/tools/read.py)

# Which colour of the theme's palette (``chimera.themes.palette``) each kind of token takes, and its
# attributes; a token not named here takes its parent's.
_TOKENS: dict[_TokenType, tuple[str, str]] = {
    Token.Keyword: ("code.keyword", ""),
    Token.Keyword.Constant: ("code.keyword_constant", ""),
    Token.Keyword.Type: ("code.keyword_type", ""),
    Token.Operator.Word: ("code.operator_word", ""),
    Token.Name.Builtin: ("code.name_builtin", ""),
    Token.Name.Builtin.Pseudo: ("", "italic"),
    Token.Name.Function: ("code.name_function", ""),
    Token.Name.Class: ("code.name_class", "bold"),
    Token.Name.Decorator: ("code.name_decorator", ""),
    Token.Name.Exception: ("code.name_exception", ""),
    Token.Name.Tag: ("code.name_tag", ""),
    Token.Name.Attribute: ("code.name_attribute", ""),
    Token.Name.Constant: ("code.name_constant", ""),
    Token.Name.Label: ("code.name_label", ""),
    Token.Literal.String: ("code.string", ""),
    Token.Literal.String.Doc: ("code.string_doc", "italic"),
    Token.Literal.String.Escape: ("code.string_escape", ""),
    Token.Literal.String.Interpol: ("code.string_interpol", ""),
    Token.Literal.String.Affix: ("code.string_affix", ""),
    Token.Literal.Number: ("code.number", ""),
    Token.Literal.Date: ("code.literal_date", ""),
    Token.Comment: ("code.comment", "italic"),
    Token.Comment.Preproc: ("code.comment_preproc", ""),
    Token.Comment.PreprocFile: ("code.comment_preprocfile", ""),
    Token.Generic.Inserted: ("transcript.diff_added", ""),
    Token.Generic.Deleted: ("transcript.diff_removed", ""),
    Token.Generic.Heading: ("code.generic_heading", "bold"),
    Token.Generic.Subheading: ("code.generic_subheading", ""),
    Token.Generic.Error: ("code.generic_error", ""),
    Token.Generic.Traceback: ("code.generic_traceback", ""),
    Token.Generic.Emph: ("", "italic"),
    Token.Generic.Strong: ("", "bold"),
    Token.Generic.Prompt: ("code.generic_prompt", "bold"),
    Token.Generic.Output: ("code.generic_output", ""),
    Token.Error: ("code.error", ""),
}


class ThemeSyntax(SyntaxTheme):
    """Pygments token styles in one theme's colours. ``blocks`` is the same on the theme's panel
    colour, for Markdown code blocks (a read or a diff sits on the view's own background)."""

    def __init__(self, name: str, styles: Mapping[_TokenType, Style], background: Style | None = None) -> None:
        self.name = name
        self.styles = dict(styles)
        self.background = background or Style.null()
        self.blocks = self
        self._cache: dict[_TokenType, Style] = {}

    def get_style_for_token(self, token_type: _TokenType) -> Style:
        style = self._cache.get(token_type)
        if style is None:
            kind: _TokenType | None = token_type
            while kind is not None and kind not in self.styles:
                kind = kind.parent
            style = self.styles[kind] if kind is not None else Style.null()
            self._cache[token_type] = style
        return style

    def get_background_style(self) -> Style:
        return self.background


def syntax_theme(theme: Theme) -> ThemeSyntax:
    """The syntax colours of ``theme``: its ``[code]`` colours (a diff's lines its transcript's diff colours),
    each kind it leaves out in the theme colour ``chimera.themes.palette.CODE`` gives it (keywords in
    its secondary colour, strings in its success colour, comments muted…)."""
    colours = palette(theme)
    styles: dict[_TokenType, Style] = {}
    for token, (key, attributes) in _TOKENS.items():
        style = Style.parse(attributes) if attributes else Style.null()
        if key:
            colour = colours[key]
            style = (Style(dim=True) if colour is None else Style(color=colour.rich_color)) + style
        styles[token] = style
    syntax = ThemeSyntax(theme.name, styles)
    panel = Color.parse(theme.to_color_system().generate()["panel"])
    if panel.a > 0 and panel.ansi is None:
        syntax.blocks = ThemeSyntax(theme.name, styles, Style(bgcolor=panel.rich_color))
    return syntax


# --- a read's lines ------------------------------------------------------------------------

_Stretch = tuple[int, int, _TokenType]  # a coloured stretch of a line: start, end, kind of token
_Line = tuple[str, str, list[_Stretch]]  # a read's line: its number and tab, its code, the code's stretches


def highlight_read(output: str, path: str, syntax: ThemeSyntax) -> NumberedCode | None:
    """A ``read`` result's numbered lines, the numbers dim, the code coloured by ``path``'s file name
    (plain when no lexer knows the name, or beyond ``MAX_CHARS``); None when ``output`` has no numbered
    lines. Lines after the numbered ones (a note that more follow) stay plain. What the lexer found is
    kept for the last few reads, so a theme switch or a resize only draws them again."""
    parsed = _numbered(output, PurePath(path).name)
    return None if parsed is None else NumberedCode(parsed[0], parsed[1], syntax)


@lru_cache(maxsize=32)
def _numbered(output: str, name: str) -> tuple[list[_Line], str] | None:
    lines = output.split("\n")
    numbers: list[str] = []
    for line in lines:
        numbered = _NUMBERED.match(line)
        if numbered is None:
            break
        numbers.append(numbered.group())
    if not numbers:
        return None
    codes = [line[len(number) :] for line, number in zip(lines, numbers, strict=False)]
    lexer = lexer_for(name) if len(output) <= MAX_CHARS else None
    if lexer is None:
        stretches: list[list[_Stretch]] = [[] for _ in codes]
    else:
        stretches = _colour_lines(lexer, [code if len(code) <= LONG_LINE else "" for code in codes])
    return list(zip(numbers, codes, stretches, strict=True)), "\n".join(lines[len(numbers) :])


class NumberedCode:
    """Numbered lines of code, coloured or not, drawn a line at a time: a line that fits the width becomes
    its segments directly (tabs expanded), only a longer one is wrapped as Rich text is (what costs)."""

    def __init__(self, lines: list[_Line], rest: str, syntax: ThemeSyntax) -> None:
        self.lines = lines
        self.rest = rest  # plain lines after the numbered ones
        self.syntax = syntax

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        width = options.max_width
        style_of = self.syntax.get_style_for_token
        for number, code, stretches in self.lines:
            segments = [Segment(number.expandtabs(_TAB), LINE_NUMBERS)]
            column = segments[0].cell_length
            at = 0
            for start, end, kind in [*stretches, (len(code), len(code), Token.Text)]:
                for piece, style in ((code[at:start], None), (code[start:end], style_of(kind))):
                    if piece:
                        piece, column = _expand_tabs(piece, column)
                        segments.append(Segment(piece, style or None))
                at = end
            if column <= width:
                yield from segments
                yield Segment.line()
            else:  # wraps: as Rich text, at word boundaries like the rest of the view
                shift = len(number)
                spans = [Span(shift + start, shift + end, style_of(kind)) for start, end, kind in stretches]
                yield Text(number + code, spans=[Span(0, shift, LINE_NUMBERS), *spans])
        if self.rest:
            yield Text(self.rest)


_TAB = 8


def _expand_tabs(piece: str, column: int) -> tuple[str, int]:
    """``piece`` with its tabs as spaces to the next stop, when it starts at cell ``column``; and the
    cell it ends at."""
    if "\t" not in piece:
        return piece, column + cell_len(piece)
    parts = []
    for index, part in enumerate(piece.split("\t")):
        if index:
            pad = _TAB - column % _TAB
            parts.append(" " * pad)
            column += pad
        parts.append(part)
        column += cell_len(part)
    return "".join(parts), column


def _colour_lines(lexer: Lexer, codes: list[str]) -> list[list[_Stretch]]:
    """Each line's stretches that a theme colours (start, end, kind of token), lexing the lines as one
    text (a string or a comment may run over several)."""
    lines: list[list[_Stretch]] = [[] for _ in codes]
    row = column = 0
    for kind, value in lexer.get_tokens("\n".join(codes)):
        coloured = _coloured(kind)
        for index, piece in enumerate(value.split("\n")):
            if index:
                row += 1
                column = 0
                if row >= len(lines):
                    return lines
            if piece:
                end = column + len(piece)
                if coloured and end <= len(codes[row]):
                    spans = lines[row]
                    if spans and spans[-1][1] == column and spans[-1][2] is kind:  # one stretch, not three
                        spans[-1] = (spans[-1][0], end, kind)
                    else:
                        spans.append((column, end, kind))
                column = end
    return lines


@cache
def _coloured(kind: _TokenType) -> bool:
    """Whether a theme colours tokens of ``kind`` (it or a kind it belongs to has a colour role)."""
    return any(kind in role for role in _TOKENS)


@lru_cache(maxsize=256)
def lexer_for(name: str) -> Lexer | None:
    """The lexer for a file called ``name`` (by its name alone), or None for one plain text would show."""
    try:
        lexer = get_lexer_for_filename(name, stripnl=False, ensurenl=True)
    except ClassNotFound:
        return None
    return None if isinstance(lexer, TextLexer) else lexer
