"""Provides ``OutputSink``: bounded-memory capture of noisy tool output.

Output is kept whole while it fits the cap. Past the cap, everything is
streamed to a file, and only a head (~30% of the cap) and a tail (~70%) stay in
memory; the model sees head, a marker naming the file, and tail. A 200 MB
output costs the cap in memory, not 200 MB. The file stops growing at
``SAVE_CAP`` bytes, on a whole character (the marker then says only the first part
is saved), so
a command that writes an endless stream (``yes``) cannot fill the disk before
its timeout. Secrets are masked as the text arrives, before it reaches the file
or memory, even one cut across two writes; a ``listener`` is given the text as
it is kept, masked so, for a live view of a running call.

Saving can fail (a full disk): what the model sees does not depend on it. The
head and tail are kept in memory all the same, and the marker says that saving
failed and why (and names the file with the part saved before, if any).

The file is created, never reused: provider tool ids repeat (a local server
numbers them from 1 at each start), so when the name asked for is taken, by
an earlier call of this run or of any run of the session, the file gets that
name with a unique suffix, and ``spill_path`` names the one written.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from chimera.core.redact import Redactor

__all__ = ["SAVE_CAP", "OutputSink"]

SAVE_CAP = 256 * 1024 * 1024  # bytes of one call's output saved to its file, at most


class OutputSink:
    """Collects text in order; ``render()`` returns it whole or middle-truncated."""

    def __init__(
        self,
        cap: int,
        spill_path: Path,
        *,
        head_share: float = 0.3,
        redactor: Redactor | None = None,
        listener: Callable[[str], object] | None = None,
    ) -> None:
        self.cap = cap
        self.head_cap = int(cap * head_share)
        self.tail_cap = cap - self.head_cap
        self.spill_path = spill_path
        self._whole: list[str] = []
        self._whole_len = 0
        self._head = ""
        self._tail: deque[str] = deque()
        self._tail_len = 0
        self._spilled = False  # past the cap: the model sees head and tail
        self._file: IO[bytes] | None = None
        self._created = False  # the file exists (all the output, or the part saved before saving failed)
        self.save_error: str | None = None  # why saving failed, when it did
        self._saved = 0  # bytes written to the file
        self._save_cap = SAVE_CAP
        self._cut_short = False  # the file stopped at the cap
        self.total_chars = 0
        self.total_lines = 0
        self._open_line = False
        self._masker = (redactor or Redactor()).stream()
        self._listener = listener

    @property
    def truncated(self) -> bool:
        return self._spilled

    def write(self, text: str) -> None:
        self._take(self._masker.feed(text))

    def _take(self, text: str) -> None:
        if not text:
            return
        if self._listener is not None:
            self._listener(text)
        self.total_chars += len(text)
        self.total_lines += text.count("\n")
        self._open_line = not text.endswith("\n")  # a last line with no newline still counts
        if not self._spilled:
            self._whole.append(text)
            self._whole_len += len(text)
            if self._whole_len <= self.cap:
                return
            self._spill()
            return
        self._save(text)
        self._push_tail(text)

    def _spill(self) -> None:
        text = "".join(self._whole)
        self._whole.clear()
        self._spilled = True
        self._head = text[: self.head_cap]
        self._push_tail(text[self.head_cap :])
        try:
            self.spill_path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd, self.spill_path = _create_new(self.spill_path)
        except OSError as err:
            self._failed(err)
            return
        self._created = True
        self._file = open(fd, "wb")  # noqa: SIM115
        self._save(text)

    def _save(self, text: str) -> None:
        if self._file is None or self._cut_short:
            return
        data = text.encode("utf-8", "replace")  # a lone surrogate (a name that is not UTF-8) as "?"
        room = self._save_cap - self._saved
        if len(data) > room:
            while room > 0 and data[room] & 0xC0 == 0x80:  # never half a character: back to where one starts
                room -= 1
            data = data[:room]
            self._cut_short = True
        try:
            self._file.write(data)
        except OSError as err:
            self._failed(err)
            return
        self._saved += len(data)

    def _failed(self, err: OSError) -> None:
        """Saving failed (a full disk): the rest is not saved; the model is told why."""
        self.save_error = err.strerror or str(err)
        if self._file is not None:
            file, self._file = self._file, None
            with contextlib.suppress(OSError):  # what was still buffered is lost with the room for it
                file.close()

    def _push_tail(self, text: str) -> None:
        if len(text) >= self.tail_cap:
            self._tail.clear()
            self._tail.append(text[-self.tail_cap :])
            self._tail_len = self.tail_cap
            return
        self._tail.append(text)
        self._tail_len += len(text)
        while self._tail_len - len(self._tail[0]) >= self.tail_cap:
            self._tail_len -= len(self._tail.popleft())

    def where_saved(self) -> dict[str, str]:
        """A result's ``data`` entry naming the file that holds the whole output (or the part saved before
        saving failed), when it was cut."""
        return {"full_output": str(self.spill_path)} if self._spilled and self._created else {}

    def cut_data(self) -> dict[str, Any]:
        """A result's ``data`` entries for an output the model sees cut (none when it sees it whole): ``cut``,
        ``lines`` (the whole output's, as a person counts them) and ``full_output`` where it was saved."""
        if not self._spilled:
            return {}
        return {"cut": True, "lines": self.total_lines + self._open_line, **self.where_saved()}

    def close(self) -> None:
        self._take(self._masker.flush())  # the held-back end: the text is complete
        if self._file is not None and not self._file.closed:
            try:
                self._file.close()
            except OSError as err:  # the last of it did not fit
                self._failed(err)

    def render(self) -> str:
        """The text the model sees: whole, or head + marker + tail."""
        self.close()
        if not self._spilled:
            return "".join(self._whole)
        head = self._head
        tail = "".join(self._tail)
        if len(tail) > self.tail_cap:
            tail = tail[-self.tail_cap :]
        # Cut at line boundaries so neither side starts or ends mid-line.
        if "\n" in head:
            head = head[: head.rfind("\n") + 1]
        if "\n" in tail[:-1]:
            tail = tail[tail.find("\n") + 1 :]
        omitted = self.total_lines - head.count("\n") - tail.count("\n")
        if self.save_error is not None:
            where = f"saving the full output failed ({self.save_error})"
            if self._created:
                where += f"; the first part of it is in {self.spill_path}"
        elif self._cut_short:
            where = f"the first {_size(self._save_cap)} of the output are in {self.spill_path}"
        else:
            where = f"full output: {self.spill_path}"
        marker = f"[... {max(omitted, 0)} lines truncated; {where} ...]"
        return f"{head}{marker}\n{tail}"


def _create_new(wanted: Path) -> tuple[int, Path]:
    """A file made for this call alone: ``wanted``, or, when that name is taken (a link counts), the same name
    with a random suffix (``toolu_1.3f9a0c2e.txt``). Returns its descriptor, open for writing, and its path."""
    path = wanted
    while True:
        try:
            return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600), path
        except FileExistsError:
            path = wanted.with_name(f"{wanted.stem}.{secrets.token_hex(4)}{wanted.suffix}")


def _size(size: int) -> str:
    """A count of bytes as a person reads a file size: ``1 MB``, ``256 MB``, ``800 KB``."""
    if size >= 1_000_000 and size % 1_000_000 == 0:
        return f"{size // 1_000_000} MB"
    if size >= 1 << 20 and size % (1 << 20) == 0:
        return f"{size >> 20} MB"
    return f"{size // 1000:,} KB" if size >= 1000 else f"{size} bytes"
