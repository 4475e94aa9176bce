"""Provides ``PasteKeepingWebDriver``: Textual's driver for a browser tab (``chimera serve``), reading the tab's
keys with :class:`~chimera.tui.terminal_input.PasteParser`, so a paste arrives whole there as in a terminal.

The tab's keys reach the workbench as Textual's web protocol: packets on stdin, ``D`` for what a terminal
would have sent (xterm.js wraps a paste in ``ESC [200~`` … ``ESC [201~`` as a terminal does), ``M`` for the
tab's own news (its size, focus, quit). Textual's web driver reads the ``D`` packets with its own parser, which
cuts a paste at its first ESC and takes its first newline as enter; this one reads them with ``PasteParser``
and hands the ``M`` packets to the web driver as it would. Loaded only in a tab, never by the terminal's app.
"""

from __future__ import annotations

from codecs import getincrementaldecoder

from textual.drivers._byte_stream import ByteStream
from textual.drivers.web_driver import WebDriver, _ExitInput

from chimera.tui.terminal_input import PasteParser

__all__ = ["PasteKeepingWebDriver"]


class PasteKeepingWebDriver(WebDriver):
    """The web driver, its keys read by ``PasteParser``."""

    def run_input_thread(self) -> None:
        """Read the tab's packets until the app stops, turning its keys into Textual's events."""
        parser = PasteParser(self._debug)
        decode = getincrementaldecoder("utf-8")(errors="replace").decode
        packets = ByteStream()
        reader = self._input_reader
        try:
            for data in reader:  # ends (StopIteration) when the app stops or stdin closes
                for kind, payload in packets.feed(data) if data else ():
                    if kind == "D":
                        for event in parser.feed(decode(payload)):
                            self.process_message(event)
                    else:
                        self._on_meta(kind, payload)
                for event in parser.tick():
                    self.process_message(event)
        except _ExitInput:  # the tab said it is gone
            pass
        except Exception as err:
            from textual import log

            log(f"the tab's input ended: {err!r}")
        finally:
            reader.close()
