"""Change notification for long-lived processes (Linux inotify through ctypes, no dependency).

A process that answers many reads (the MCP server) should not stat every memory file on
every call: at 10,000 files that costs more than the read itself. Where the kernel offers
inotify, the index asks it which files changed since the last call and re-reads only
those. Elsewhere (or when the kernel queue overflows) the caller falls back to comparing
every file's mtime and size.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
import struct
import sys

IN_MODIFY = 0x002
IN_ATTRIB = 0x004
IN_CLOSE_WRITE = 0x008
IN_MOVED_FROM = 0x040
IN_MOVED_TO = 0x080
IN_CREATE = 0x100
IN_DELETE = 0x200
IN_DELETE_SELF = 0x400
IN_MOVE_SELF = 0x800
IN_Q_OVERFLOW = 0x4000
IN_IGNORED = 0x8000
IN_NONBLOCK = 0o4000
IN_CLOEXEC = 0o2000000
WATCH_MASK = (
    IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE | IN_DELETE
    | IN_DELETE_SELF | IN_MOVE_SELF
)  # fmt: skip
LOST = IN_Q_OVERFLOW | IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF
_EVENT = struct.Struct("iIII")


def _libc() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        libc.inotify_init1  # noqa: B018 - raises AttributeError when missing
        return libc
    except (OSError, AttributeError):
        return None


class FolderWatch:
    """Names of files changed in a fixed set of folders since the last `changes()` call."""

    def __init__(self, fd: int, folders: dict[int, str]) -> None:
        self._fd = fd
        self._folders = folders  # watch descriptor -> folder key

    @classmethod
    def start(cls, folders: dict[str, str]) -> FolderWatch | None:
        """Watch {key: path}; None when inotify is unavailable or a folder is missing."""
        libc = _libc()
        if libc is None:
            return None
        fd = libc.inotify_init1(IN_NONBLOCK | IN_CLOEXEC)
        if fd < 0:
            return None
        by_wd: dict[int, str] = {}
        for key, path in folders.items():
            wd = libc.inotify_add_watch(fd, os.fsencode(path), WATCH_MASK)
            if wd < 0:
                os.close(fd)
                return None
            by_wd[wd] = key
        return cls(fd, by_wd)

    def changes(self) -> set[tuple[str, str]] | None:
        """{(folder key, file name)} changed since the last call; None when events were lost."""
        out: set[tuple[str, str]] = set()
        while True:
            try:
                buf = os.read(self._fd, 64 * 1024)
            except BlockingIOError:
                return out
            except OSError:
                return None
            if not buf:
                return out
            pos = 0
            while pos + _EVENT.size <= len(buf):
                wd, mask, _cookie, length = _EVENT.unpack_from(buf, pos)
                name = buf[pos + _EVENT.size : pos + _EVENT.size + length].rstrip(b"\0")
                pos += _EVENT.size + length
                if mask & LOST:
                    return None
                key = self._folders.get(wd)
                if key is not None and name:
                    out.add((key, os.fsdecode(name)))

    def close(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self._fd)
