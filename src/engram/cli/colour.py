"""Colour for people at a terminal only: never in pipes, files or JSON; NO_COLOR turns it off,
FORCE_COLOR turns it on (https://no-color.org, https://force-color.org)."""

from __future__ import annotations

import os
from typing import TextIO

_CODES = {"error": "31;1", "warning": "33", "ok": "32", "dim": "2"}


def use_colour(stream: TextIO) -> bool:
    """Colour on `stream`? FORCE_COLOR wins, then NO_COLOR, then a real terminal (not `dumb`)."""
    force = os.environ.get("FORCE_COLOR")
    if force is not None and force.strip() not in ("", "0", "false"):
        return True
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("TERM") == "dumb":
        return False
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def paint(text: str, style: str, stream: TextIO) -> str:
    """`text` in `style` (error, warning, ok, dim) when `stream` takes colour, else unchanged."""
    code = _CODES.get(style)
    return f"\x1b[{code}m{text}\x1b[0m" if code and use_colour(stream) else text


def is_terminal(stream: TextIO) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def table(headers: list[str], rows: list[list[str]], stream: TextIO) -> str:
    """Rows in aligned columns (the last column runs free), the header dimmed when in colour."""
    cells = [headers, *rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers) - 1)]
    lines = []
    for n, row in enumerate(cells):
        line = "  ".join([c.ljust(w) for c, w in zip(row, widths, strict=False)] + [row[-1]])
        lines.append(paint(line.rstrip(), "dim", stream) if n == 0 else line.rstrip())
    return "\n".join(lines)
