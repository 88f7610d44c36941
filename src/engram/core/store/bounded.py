"""Bounded reads: what Engram opens is a regular file of a known size, and the JSON in it
has a bounded nesting depth.

A repository (or whoever wrote a host's settings) decides what sits at `AGENTS.md`,
`.agents/.engram/config.json` or `cache/pointers.json`: a FIFO would block a plain `open`
forever, a sparse file of a gigabyte would be read whole, and JSON of 100,000 nested
brackets makes Python's parser raise `RecursionError`. Every such file is opened
non-blocking and checked with `fstat` before a byte is read; JSON is parsed with a depth
limit; each failure is a `BadFileError` that names the file and says what is allowed.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

from engram.core.errors import EngramError

MAX_STATE_BYTES = 16 * 1024 * 1024  # config, manifest, pending approvals, journals, host files
MAX_JSON_DEPTH = 64
_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


class BadFileError(EngramError, ValueError):
    """A file that is not a regular file, is too large, or does not hold valid JSON.

    Also a ValueError, so code that treats a broken state file as absent keeps doing so."""

    code = "file.invalid"


def _human(size: int) -> str:
    return f"{size // (1024 * 1024)} MiB" if size >= 1024 * 1024 else f"{size // 1024} KiB"


def check_regular(fd: int, shown: str | Path, limit: int) -> int:
    """The size of the open file; BadFileError for a FIFO, device, folder or a file over
    `limit` bytes."""
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        raise BadFileError(
            f"{shown} is not a regular file (a FIFO, device or folder); Engram reads only "
            "plain files",
            code="file.not_regular",
        )
    if info.st_size > limit:
        raise BadFileError(
            f"{shown} is {_human(info.st_size)}, larger than the {_human(limit)} Engram reads",
            code="file.too_large",
        )
    return info.st_size


def read_fd(fd: int, shown: str | Path, limit: int) -> bytes:
    """At most `limit` bytes of an open regular file (it may not grow past the limit)."""
    check_regular(fd, shown, limit)
    chunks: list[bytes] = []
    size = 0
    while True:
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            return b"".join(chunks)
        size += len(chunk)
        if size > limit:
            raise BadFileError(
                f"{shown} grew past the {_human(limit)} Engram reads", code="file.too_large"
            )
        chunks.append(chunk)


def read_plain(path: str | Path, limit: int = MAX_STATE_BYTES) -> bytes:
    """The bytes of a regular file outside any memory root (a host's settings, an
    instruction file); FileNotFoundError when absent, BadFileError when it cannot be read."""
    fd = os.open(path, _FLAGS)
    try:
        return read_fd(fd, path, limit)
    finally:
        os.close(fd)


def read_plain_text(path: str | Path, limit: int = MAX_STATE_BYTES) -> str:
    """`read_plain` decoded as UTF-8 with line endings kept."""
    raw = read_plain(path, limit)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BadFileError(f"{path} is not UTF-8 text (byte {exc.start})") from exc


def parse_json(raw: bytes | str, shown: str | Path) -> Any:
    """JSON with at most MAX_JSON_DEPTH levels of nesting; BadFileError naming `shown`."""
    try:
        value = json.loads(raw)
    except RecursionError:
        raise BadFileError(
            f"{shown} nests JSON deeper than {MAX_JSON_DEPTH} levels", code="file.invalid_json"
        ) from None
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError
        raise BadFileError(f"{shown} is not valid JSON ({exc})", code="file.invalid_json") from exc
    if json_depth(value) > MAX_JSON_DEPTH:
        raise BadFileError(
            f"{shown} nests JSON deeper than {MAX_JSON_DEPTH} levels", code="file.invalid_json"
        )
    return value


def json_depth(value: Any) -> int:
    """The nesting depth of a parsed value (a scalar is 0), without recursion."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            children: Any = node.values()
        elif isinstance(node, list):
            children = node
        else:
            continue
        depth += 1
        if depth > deepest:
            deepest = depth
            if deepest > MAX_JSON_DEPTH:
                return deepest
        stack.extend((c, depth) for c in children if isinstance(c, dict | list))
    return deepest
