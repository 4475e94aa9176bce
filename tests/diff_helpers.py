"""Reading unified diffs back in tests: ``patched`` applies one to the text it was made from, as patch(1) does."""

from __future__ import annotations

import re

from chimera.core.difflines import NO_NEWLINE

__all__ = ["patched"]


def patched(old: str, diff: str) -> str:
    """``old`` with the unified ``diff`` applied as patch(1) reads one: its lines end at ``\\n`` only. Each hunk's
    lines must be where its header says, in the old text and in the new."""
    source = re.findall(r"[^\n]*\n|[^\n]+\Z", old)
    out: list[str] = []
    at = 0
    last = ""
    counts = [0, 0]  # the old and new lines the hunk's header says are left to come
    for line in re.findall(r"[^\n]*\n", diff)[2:]:  # past the --- and +++ lines
        body = line[1:]
        if line.startswith("@@"):
            assert counts == [0, 0], f"the hunk before {line!r} does not hold what its header counts"
            head = re.match(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@$", line.rstrip("\n"))
            assert head is not None, line
            start, count, new_start, new_count = head.groups()
            first = int(start) if count == "0" else int(start) - 1  # an empty range names the line before it
            out += source[at:first]
            at = first
            assert len(out) == (int(new_start) if new_count == "0" else int(new_start) - 1), line
            counts = [int(count or 1), int(new_count or 1)]
        elif line == f"{NO_NEWLINE}\n":
            if last in " +":
                out[-1] = out[-1].removesuffix("\n")
        else:
            assert line[0] in " -+", line
            if line[0] in " -":
                assert source[at].removesuffix("\n") == body.removesuffix("\n"), (source[at], line)
                at += 1
                counts[0] -= 1
            if line[0] in " +":
                out.append(body)
                counts[1] -= 1
        last = line[0]
    assert counts == [0, 0], "the last hunk does not hold what its header counts"
    return "".join(out + source[at:])
