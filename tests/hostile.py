"""Hostile text for the screens: strings that would be markup, steer the terminal, break a line or run long,
what each must look like on screen (:func:`literally`), and checks over a screen (:func:`shows`,
:func:`no_outside_actions`)."""

from __future__ import annotations

from chimera.core.terminal_text import terminal_safe

__all__ = ["HOSTILE", "LONG", "literally", "no_outside_actions", "shows"]

LONG = "L" * 10_000

HOSTILE: dict[str, str] = {
    "close": "[/]",
    "close-in-words": "a[/]b",
    "click": "[@click=app.quit]click here[/]",
    "export": "[@click=app.export('/tmp/out')]notes.md",
    "hidden": "[$background on $background]; touch PWNED #[/]",
    "link": "[link=file:///etc/passwd]x[/]",
    "style": "[bold red]loud",
    "csi": "\x1b[31mred\x1b[0m",
    "osc": "\x1b]52;c;cHduZWQ=\x07clip",
    "bidi": "abc\u202edcba",
    "cr": "safe\rrm -rf x",
    "vt": "one\x0btwo",
    "ls": "one\u2028two",
    "long": LONG,
}

SHORT = {name: value for name, value in HOSTILE.items() if name != "long"}


def literally(text: str, room: int = 30) -> str:
    """What the screen must show of ``text`` (its first ``room`` characters, every control shown escaped)."""
    return terminal_safe(text, one_line=True)[:room]


def shows(screen: str, text: str, room: int = 30) -> bool:
    """Whether ``screen`` shows ``text`` as its characters (its first ``room`` of them, escaped)."""
    return literally(text, room) in screen


def no_outside_actions(app: object) -> list[str]:
    """The cells on screen that would run an action or open a link when clicked (none is Chimera's own):
    each as the text it is drawn on."""
    found = []
    for strip in app.screen._compositor.render_strips():  # type: ignore[attr-defined]
        for segment in strip:
            style = segment.style
            if style is None:
                continue
            if style.link or (style.meta and "@click" in style.meta):
                found.append(segment.text)
    return found
