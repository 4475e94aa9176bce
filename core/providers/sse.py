"""Provides ``EventReader``: the server-sent events of a ``text/event-stream`` body, read from its bytes.

The Messages API streams each event as an ``event: NAME`` line, a ``data: JSON`` line and a blank line.
The SDK reads a stream through several async generators stacked per event; while a reply streams that
cost a fifth of the workbench's CPU. This reader is plain code over the bytes as they arrive: one network
chunk in, every event it completes out, so reading an event costs one ``await`` at most.

The format (WHATWG HTML, "Server-sent events"): lines end in LF, CR or CRLF (a CRLF split between two
chunks is one end); a line starting with ``:`` is a comment; ``field: value`` loses one space after the
colon; ``data`` lines join with LF; a blank line ends the event. An event never ended by a blank line is
dropped with the stream's end. ``id`` and ``retry`` mean nothing to a single request, and are skipped.
A line or an event past ``LIMIT`` is refused (``EventTooLarge``): a server that never ends one cannot
fill the memory, and a long line arriving in many chunks is kept as it comes, not split again each time.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["LIMIT", "EventReader", "EventTooLarge", "ServerSentEvent"]

LIMIT = 16 * 2**20  # bytes a line or an event may hold; the API's are a few hundred


@dataclass(frozen=True, slots=True)
class ServerSentEvent:
    """One event: its name (None when it had no ``event`` line) and its data."""

    event: str | None
    data: str


class EventTooLarge(ValueError):
    """A line, or an event, past ``LIMIT`` bytes: no Messages API event is near that size."""


class EventReader:
    """Feed it the body's chunks in order; each ``feed`` returns the events that chunk completed."""

    __slots__ = ("_data", "_event", "_rest", "_size")

    def __init__(self) -> None:
        self._rest = bytearray()  # the start of a line whose end has not come yet
        self._event: str | None = None
        self._data: list[str] = []
        self._size = 0  # the characters of the event's data so far

    def feed(self, chunk: bytes) -> list[ServerSentEvent]:
        """The events ``chunk`` completes. Raises UnicodeDecodeError (a ValueError) for a line not in UTF-8,
        EventTooLarge for a line or an event past ``LIMIT``."""
        if b"\n" not in chunk and b"\r" not in chunk:  # the line goes on: kept, not split again
            self._rest += chunk
            if len(self._rest) > LIMIT:
                raise EventTooLarge(f"a line of more than {LIMIT // 2**20} MiB with no end")
            return []
        lines = (bytes(self._rest) + chunk).splitlines(keepends=True)
        # The last line waits for its end; a CR at the very end may be the first half of a CRLF.
        self._rest = bytearray(lines.pop() if lines and not lines[-1].endswith(b"\n") else b"")
        return self._read(lines)

    def close(self) -> list[ServerSentEvent]:
        """The body has ended: the event a last line ended by CR completes, if any."""
        rest, self._rest = bytes(self._rest), bytearray()
        return self._read([rest]) if rest.endswith(b"\r") else []

    def _read(self, lines: list[bytes]) -> list[ServerSentEvent]:
        events: list[ServerSentEvent] = []
        for raw in lines:
            line = raw.rstrip(b"\r\n").decode()
            if not line:
                if self._data or self._event is not None:
                    events.append(ServerSentEvent(self._event, "\n".join(self._data)))
                self._event, self._data, self._size = None, [], 0
                continue
            name, colon, value = line.partition(":")
            if not name and colon:  # a comment
                continue
            if value.startswith(" "):
                value = value[1:]
            if name == "event":
                self._event = value
            elif name == "data":
                self._data.append(value)
                self._size += len(value)
                if self._size > LIMIT:
                    raise EventTooLarge(f"an event of more than {LIMIT // 2**20} MiB")
        return events
