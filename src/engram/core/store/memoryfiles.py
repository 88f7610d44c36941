"""Memory files: read within the limits their root's configuration sets, decoded, parsed.

A cloned repository decides what a memory file holds, so a file is refused before it
costs memory or time: over `limits.memory_file_bytes` it is not read at all, and a file
that is not printable UTF-8 is named with the line where it stops being text.
"""

from __future__ import annotations

import contextlib
import os
import stat
import time
from pathlib import Path
from typing import BinaryIO, NamedTuple

from engram.core.memory import (
    FRONT_MATTER_BYTES,
    MEMORY_FILE_BYTES,
    Memory,
    MemoryParseError,
    parse_memory,
)
from engram.core.store.config import Config
from engram.core.store.files import (
    DIR_TYPES,
    MEMORY_DIRS,
    batch_reads,
    open_file,
    scan_files,
)
from engram.core.store.layout import TYPE_DIRS, WORKING_DIR, Root
from engram.core.store.roots import read_json_object, read_user_config
from engram.core.text import BAD_FILE_CHAR, describe_char, name_problem


class FileLimits(NamedTuple):
    """What one memory file may cost: its size and the size of its front matter, in bytes."""

    file_bytes: int
    front_matter_bytes: int


_LIMITS_TTL_S = 1.0


_limits_cache: dict[str, tuple[float, FileLimits]] = {}


def file_limits(root: Root) -> FileLimits:
    """The limits for files of `root`: its config.json, then the user's, then the defaults.

    Cached for a second: a full index build reads thousands of files, and a long-lived
    server still sees an edited limit almost at once.
    """
    key = str(root.path)
    now = time.monotonic()
    hit = _limits_cache.get(key)
    if hit is not None and now - hit[0] < _LIMITS_TTL_S:
        return hit[1]
    try:
        cfg = Config([read_json_object(root.config_path, root), read_user_config()])
        limits = FileLimits(
            cfg.get("limits.memory_file_bytes"), cfg.get("limits.front_matter_bytes")
        )
    except Exception:  # an unreadable config never lifts the limits
        limits = FileLimits(MEMORY_FILE_BYTES, FRONT_MATTER_BYTES)
    _limits_cache[key] = (now, limits)
    return limits


def too_large(size: int, limit: int) -> MemoryParseError:
    return MemoryParseError(
        f"file is {size:,} bytes, over the {limit:,}-byte limit for a memory file; it was not "
        "read (split it into smaller memories, or raise limits.memory_file_bytes in config.json "
        "and run `engram rebuild-index`)",
        code="memory.too_large",
    )


def read_bounded(fh: BinaryIO, limit: int) -> bytes:
    """The bytes of an open file, refusing (without reading it whole) one over `limit` bytes."""
    size = os.fstat(fh.fileno()).st_size
    if size > limit:
        raise too_large(size, limit)
    raw = fh.read(limit + 1)
    if len(raw) > limit:  # it grew since the stat
        raise too_large(len(raw), limit)
    return raw


def decode_memory_file(raw: bytes) -> str:
    """A memory file's text: UTF-8 without control characters, else a per-file error."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise MemoryParseError(
            f"not UTF-8 text (byte 0x{raw[exc.start]:02X} at offset {exc.start}, line {line}); "
            "memory files must be printable UTF-8",
            code="memory.not_text",
        ) from exc
    m = BAD_FILE_CHAR.search(text)
    if m is not None:
        line = text.count("\n", 0, m.start()) + 1
        col = m.start() - (text.rfind("\n", 0, m.start()) + 1) + 1
        raise MemoryParseError(
            f"contains {describe_char(m.group())} at line {line}, column {col}; memory files must "
            "be printable UTF-8",
            code="memory.not_text",
        )
    return text


def bad_names(root: Root, dirs: tuple[str, ...]) -> list[tuple[str, str]]:
    """(shown path, problem) for `*.md` files whose names are not text: skipped, so named here."""
    out: list[tuple[str, str]] = []
    for sub in dirs:
        try:
            names = os.listdir(os.path.join(root.path, sub))
        except OSError:
            continue
        for name in names:
            problem = name_problem(name) if name.endswith(".md") else None
            if problem:
                decoded = name.encode("utf-8", "surrogateescape").decode(
                    "utf-8", "backslashreplace"
                )
                shown = "".join(
                    c
                    if c.isprintable()
                    else f"\\x{ord(c):02x}"
                    if ord(c) < 256
                    else f"\\u{ord(c):04x}"
                    for c in decoded
                )
                out.append((f"{sub}/{shown}", f"file name {problem}"))
    return out


def read_memory_file(root: Root, rel: str) -> tuple[Memory, bytes]:
    """Parse one memory file; raises MemoryParseError with a readable reason."""
    path = root.path / rel
    limits = file_limits(root)  # a hostile file is refused before it costs memory or time
    with os.fdopen(open_file(root, path, os.O_RDONLY), "rb") as fh:
        raw = read_bounded(fh, limits.file_bytes)
    return memory_from_bytes(root, rel, raw), raw


def memory_from_bytes(root: Root, rel: str, raw: bytes) -> Memory:
    """The memory in `raw`, the bytes of the file at `rel`; raises MemoryParseError."""
    limits = file_limits(root)
    path = root.path / rel
    text = decode_memory_file(raw)
    sub = rel.split("/", 1)[0]
    mem = parse_memory(
        text,
        path,
        default_type=DIR_TYPES.get(sub),
        scope=root.scope,
        max_front_matter=limits.front_matter_bytes,
    )
    mem.scope = root.scope
    if sub == WORKING_DIR:
        mem.tier = "working"
    return mem


def load_memories(
    root: Root, dirs: tuple[str, ...] = MEMORY_DIRS
) -> tuple[list[Memory], list[tuple[str, str]]]:
    """All parseable memories of a root, plus (rel, reason) for files that failed."""
    memories: list[Memory] = []
    errors: list[tuple[str, str]] = []
    with batch_reads():
        for fs in scan_files(root, dirs):
            try:
                mem, _ = read_memory_file(root, fs.rel)
            except (MemoryParseError, OSError) as exc:
                errors.append((fs.rel, str(exc)))
                continue
            memories.append(mem)
    return memories, errors


def memory_path(root: Root, mem: Memory) -> Path:
    sub = WORKING_DIR if mem.is_working else TYPE_DIRS[mem.type]
    return root.path / sub / f"{mem.id}.md"


def find_memory_file(root: Root, mid: str, dirs: tuple[str, ...] = MEMORY_DIRS) -> Path | None:
    for sub in dirs:
        p = root.path / sub / f"{mid}.md"
        with contextlib.suppress(OSError):
            if stat.S_ISREG(os.lstat(p).st_mode) and not os.path.islink(p.parent):
                return p
    return None
