"""Provides ``code_markdown``: Rich Markdown whose code blocks take a theme's syntax colours, parsed by one parser.

Imported when the first answer is drawn, not before the first frame: markdown-it (with its link and HTML
patterns) takes longer to import than the rest of the transcript's drawing. Code blocks are coloured by
``tui.highlight``'s ``ThemeSyntax``; a block longer than ``MAX_CHARS`` stays plain, and so does one whose answer
is still streaming (``highlight=False``).
"""

from __future__ import annotations

from markdown_it import MarkdownIt
from markdown_it.token import Token as MarkdownToken
from rich.console import Console, ConsoleOptions, RenderResult
from rich.markdown import CodeBlock, Markdown
from rich.syntax import Syntax

from chimera.tui.highlight import MAX_CHARS, ThemeSyntax

__all__ = ["code_markdown"]

# The parser Rich's Markdown makes for every text it is given (compiling its link patterns each time: most of
# what drawing a streamed answer's tail cost a frame), made once. Parsing keeps no state between texts.
_PARSER = MarkdownIt().enable("strikethrough").enable("table")


class _ThemedMarkdown(Markdown):
    """Rich's Markdown with the theme's code colours, parsed by the one parser."""

    syntax: ThemeSyntax
    highlight: bool

    def __init__(self, markup: str) -> None:  # Rich's, with its defaults, but the parser made once
        self.markup = markup
        self.parsed = _PARSER.parse(markup)
        self.code_theme = "monokai"
        self.justify = None
        self.style = "none"
        self.hyperlinks = True
        self.inline_code_lexer = None
        self.inline_code_theme = self.code_theme


class _CodeBlock(CodeBlock):
    """A fenced code block in the theme's colours (plain while its answer is still streaming)."""

    syntax: ThemeSyntax

    @classmethod
    def create(cls, markdown: Markdown, token: MarkdownToken) -> CodeBlock:
        block = super().create(markdown, token)
        assert isinstance(block, _CodeBlock)
        assert isinstance(markdown, _ThemedMarkdown)
        block.syntax = markdown.syntax.blocks
        if not markdown.highlight:
            block.lexer_name = "text"
        return block

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        code = str(self.text).rstrip()
        lexer = self.lexer_name if len(code) <= MAX_CHARS else "text"
        yield Syntax(code, lexer, theme=self.syntax, word_wrap=True, padding=1)


_ThemedMarkdown.elements = {**Markdown.elements, "fence": _CodeBlock, "code_block": _CodeBlock}


def code_markdown(text: str, syntax: ThemeSyntax, *, highlight: bool = True) -> Markdown:
    """Markdown whose code blocks take ``syntax``'s colours; with ``highlight`` false they are plain."""
    markdown = _ThemedMarkdown(text)
    markdown.syntax = syntax
    markdown.highlight = highlight
    return markdown
