"""Memory files on disk: contained reads and writes, the root lock, scanning, the hash manifest.

Nothing Engram reads or writes inside a memory root follows a symbolic link. A cloned
repository controls everything under `.agents/.engram/`, so a committed link there
(`cache/hook.log -> ~/.bashrc`, `rules -> /etc`) must never turn an Engram write into a
write elsewhere, or an Engram read into a read of a file the repository does not own.
Every path below the root is reached one folder at a time from an open descriptor of the
root, each step opened with `O_NOFOLLOW` (so a link is refused, not raced); where the
platform lacks descriptor-relative calls, each step is checked with `lstat` instead.
A refusal is a `ContainmentError` naming the path, which is also an `OSError`.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from _thread import get_ident  # the thread id, without importing `threading` on every hook
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

from engram.core.errors import ContainmentError, EngramError
from engram.core.store.bounded import MAX_STATE_BYTES, parse_json, read_fd
from engram.core.store.layout import (
    ARCHIVE_DIR,
    CACHE_DIR,
    CONFIG_FILE,
    IGNORE_FILE,
    MANIFEST_FILE,
    PENDING_FILE,
    TYPE_DIRS,
    WORKING_DIR,
    WORKSPACE_SUBDIR,
    Root,
)

MEMORY_DIRS = (*TYPE_DIRS.values(), WORKING_DIR)
MANAGED_DIRS = (*TYPE_DIRS.values(), ARCHIVE_DIR)  # what hashes.json covers (committed files)
LAYOUT_DIRS = (*TYPE_DIRS.values(), ARCHIVE_DIR, WORKING_DIR)
DIR_TYPES = {v: k for k, v in TYPE_DIRS.items()}
LOCK_TIMEOUT_S = 30.0
LOCK_FILE = "write.lock"

# ---------------------------------------------------------------- contained file access

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)  # a FIFO shipped as a memory file must not hang a read
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _CLOEXEC
_USE_FDS = bool(_NOFOLLOW) and {os.open, os.mkdir, os.stat, os.unlink, os.rename} <= (
    os.supports_dir_fd
)

RootLike = Root | Path | str


def _base(root: RootLike) -> Path:
    """The root's folder, whether given as a Root or as a path (the user folder, a project)."""
    return Path(root.path if isinstance(root, Root) else root)


def _root_steps(root: RootLike) -> tuple[Path, tuple[str, ...]]:
    """Where to start following links, and the root's own components that must be real.

    A workspace root sits in a project the user did not necessarily write, so its
    `.agents` and `.engram` folders are walked like any other component; the project
    folder and a global root (the user's own choice, possibly a link) are opened as given.
    """
    base = _base(root)
    workspace = not isinstance(root, Root) or root.scope == "workspace"
    if workspace and base.parts[-2:] == WORKSPACE_SUBDIR.parts:
        return base.parent.parent, WORKSPACE_SUBDIR.parts
    return base, ()


def _parts(root: RootLike, path: Path | str) -> tuple[str, ...]:
    """The components of `path` below the root (lexically); refused when it leaves the root."""
    base = os.path.abspath(root.path if isinstance(root, Root) else root)  # strings: it is hot
    full = os.path.abspath(path)
    if full == base:
        return ()
    if not full.startswith(base.rstrip(os.sep) + os.sep):
        raise ContainmentError(
            f"{path} is outside the memory root {_base(root)}; Engram reads and writes only inside it",
            code="path.outside",
        )
    return tuple(full[len(base) :].lstrip(os.sep).split(os.sep))


def link_error(
    path: Path | str, *, folder: bool = False, code: str | None = None
) -> ContainmentError:
    """The one-line refusal for a symbolic link met inside a memory root."""
    try:
        target = f" (to {os.readlink(path)})"
    except OSError:
        target = ""
    kind = "folder" if folder else "file"
    return ContainmentError(
        f"{path} is a symbolic link{target}; Engram never follows links inside a memory root "
        f"(remove the link, or replace it with a real {kind})",
        code=code or f"{kind}.symlink",
    )


def _refusal(
    exc: OSError, dfd: int | None, name: str, shown: Path, *, folder: bool, code: str | None
) -> OSError:
    """Turn a failed no-follow open into the clear refusal when a link was the cause."""
    try:
        st = (
            os.stat(name, dir_fd=dfd, follow_symlinks=False) if dfd is not None else os.lstat(shown)
        )
    except OSError:
        return exc
    if stat.S_ISLNK(st.st_mode):
        return link_error(shown, folder=folder, code=code)
    return exc


def _step(dfd: int, name: str, shown: Path, *, create: bool, code: str | None = None) -> int:
    """Open folder `name` under `dfd` without following a link (creating it if asked); closes `dfd`."""
    try:
        try:
            return os.open(name, _DIR_FLAGS | _NOFOLLOW, dir_fd=dfd)
        except FileNotFoundError:
            if not create:
                raise
            with contextlib.suppress(FileExistsError):
                os.mkdir(name, 0o755, dir_fd=dfd)
            return os.open(name, _DIR_FLAGS | _NOFOLLOW, dir_fd=dfd)
        except OSError as exc:
            raise _refusal(exc, dfd, name, shown, folder=True, code=code) from None
    finally:
        os.close(dfd)


def _open_parent(root: RootLike, path: Path | str, *, create: bool) -> tuple[int, str]:
    """An open descriptor of `path`'s folder, reached from the root without links, and its name."""
    parts = _parts(root, path)
    if not parts:
        raise ContainmentError(
            f"{path} is the memory root itself, not a file in it", code="path.outside"
        )
    start, own = _root_steps(root)
    dfd = os.open(start, _DIR_FLAGS)
    shown = start
    for name in own:
        shown = shown / name
        dfd = _step(dfd, name, shown, create=create, code="root.symlink")
    for name in parts[:-1]:
        shown = shown / name
        dfd = _step(dfd, name, shown, create=create)
    return dfd, parts[-1]


def _checked(root: RootLike, path: Path | str, *, create: bool, final_link: bool = False) -> Path:
    """Without descriptor-relative calls: `lstat` every component below the start instead."""
    parts = _parts(root, path)
    if not parts:
        raise ContainmentError(
            f"{path} is the memory root itself, not a file in it", code="path.outside"
        )
    start, own = _root_steps(root)
    shown = start
    steps = [*own, *parts]
    for i, name in enumerate(steps):
        shown = shown / name
        try:
            st = os.lstat(shown)
        except FileNotFoundError:
            if create and i < len(steps) - 1:
                shown.mkdir(exist_ok=True)
                continue
            if i < len(steps) - 1:
                raise
            break
        last = i == len(steps) - 1
        if stat.S_ISLNK(st.st_mode) and not (last and final_link):
            code = "root.symlink" if i < len(own) else None
            raise link_error(shown, folder=not last, code=code)
    return Path(path)


def _no_link(dfd: int, name: str, shown: Path) -> os.stat_result | None:
    """The entry's own stat (None when absent); a link there is refused."""
    try:
        st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(st.st_mode):
        raise link_error(shown)
    return st


def _plain_file(fd: int, shown: Path | str) -> None:
    """Refuse (and close) anything but a regular file: a FIFO or device is never read."""
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise ContainmentError(
            f"{shown} is not a regular file; Engram reads only plain files", code="file.not_regular"
        )


def open_file(root: RootLike, path: Path | str, flags: int, mode: int = 0o644) -> int:
    """A descriptor of a plain file inside the root, opened without following any link."""
    if not _USE_FDS:
        checked = _checked(root, path, create=bool(flags & os.O_CREAT))
        fd = os.open(checked, flags | _CLOEXEC | _NONBLOCK, mode)
        _plain_file(fd, path)
        return fd
    batch = _BATCHES.get(get_ident()) if _BATCHES else None
    held = _held_folder(batch, root, path) if batch is not None and not flags & os.O_CREAT else None
    if held is not None:
        dfd, name = held
    else:
        dfd, name = _open_parent(root, path, create=bool(flags & os.O_CREAT))
    try:
        try:
            fd = os.open(name, flags | _NOFOLLOW | _CLOEXEC | _NONBLOCK, mode, dir_fd=dfd)
        except OSError as exc:
            if isinstance(exc, FileNotFoundError):
                raise
            raise _refusal(exc, dfd, name, Path(path), folder=False, code=None) from None
    finally:
        if held is None:
            os.close(dfd)
    _plain_file(fd, path)
    return fd


# Folder descriptors kept open while many files of the same folders are read (an index build):
# one walk per folder instead of one per file. Per thread, only inside `batch_reads`.
FolderFds = dict[tuple[str, tuple[str, ...]], int]
_BATCHES: dict[int, FolderFds] = {}


@contextlib.contextmanager
def batch_reads() -> Iterator[None]:
    """Reuse each folder's descriptor for the reads inside the block (reads only)."""
    me = get_ident()
    if me in _BATCHES or not _USE_FDS:
        yield
        return
    held: FolderFds = {}
    _BATCHES[me] = held
    try:
        yield
    finally:
        del _BATCHES[me]
        for fd in held.values():
            with contextlib.suppress(OSError):
                os.close(fd)


def _held_folder(batch: FolderFds, root: RootLike, path: Path | str) -> tuple[int, str] | None:
    """The kept descriptor of `path`'s folder (opened without links on first use) and the name."""
    parts = _parts(root, path)
    if not parts:
        return None  # the root itself: the ordinary path refuses it
    scope = root.scope if isinstance(root, Root) else ""
    key = (f"{scope}:{os.fspath(root.path if isinstance(root, Root) else root)}", parts[:-1])
    dfd = batch.get(key)
    if dfd is None:
        dfd, _ = _open_parent(root, path, create=False)
        batch[key] = dfd
    return dfd, parts[-1]


def read_bytes(root: RootLike, path: Path | str, limit: int = MAX_STATE_BYTES) -> bytes:
    """The bytes of a plain file inside the root (FileNotFoundError when absent; BadFileError
    when larger than `limit`)."""
    fd = open_file(root, path, os.O_RDONLY)
    try:
        return read_fd(fd, path, limit)
    finally:
        os.close(fd)


def read_json(root: RootLike, path: Path | str, limit: int = MAX_STATE_BYTES) -> object:
    """A JSON state file inside the root, bounded in size and depth (BadFileError names it)."""
    return parse_json(read_bytes(root, path, limit), path)


def append_text(root: RootLike, path: Path | str, text: str) -> None:
    """Append to a plain file inside the root, creating it (and its folders) when absent."""
    fd = open_file(root, path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    with os.fdopen(fd, "ab") as fh:
        fh.write(text.encode("utf-8"))


def file_stat(root: RootLike, path: Path | str) -> os.stat_result:
    """The stat of a plain file inside the root; a link is refused, absence is FileNotFoundError."""
    if not _USE_FDS:
        st = os.lstat(_checked(root, path, create=False))
    else:
        dfd, name = _open_parent(root, path, create=False)
        try:
            st = _no_link(dfd, name, Path(path))
        finally:
            os.close(dfd)
        if st is None:
            raise FileNotFoundError(errno.ENOENT, "no such file", str(path))
    if stat.S_ISLNK(st.st_mode):
        raise link_error(path)
    return st


def remove_file(root: RootLike, path: Path | str) -> bool:
    """Remove a file (or a link: never what it points to) inside the root; False when absent."""
    try:
        if not _USE_FDS:
            os.unlink(_checked(root, path, create=False, final_link=True))
            return True
        dfd, name = _open_parent(root, path, create=False)
        try:
            os.unlink(name, dir_fd=dfd)
        finally:
            os.close(dfd)
    except FileNotFoundError:
        return False
    return True


def contained_path(root: RootLike, path: Path | str, *, siblings: tuple[str, ...] = ()) -> Path:
    """`path`, after checking that its folders (created if needed) and the file are no links.

    For libraries that open files by name (SQLite, the lock): `siblings` are suffixes of
    companion files they open too (`-wal`, `-shm`).
    """
    if not _USE_FDS:
        for suffix in ("", *siblings):
            _checked(root, f"{path}{suffix}", create=True)
        return Path(path)
    dfd, name = _open_parent(root, path, create=True)
    try:
        for suffix in ("", *siblings):
            _no_link(dfd, name + suffix, Path(f"{path}{suffix}"))
    finally:
        os.close(dfd)
    return Path(path)


def make_folders(root: RootLike, subs: tuple[str, ...]) -> list[str]:
    """Create `subs` in the root (and a workspace root's own folders) without following links."""
    made: list[str] = []
    for sub in subs:
        folder = _base(root) / sub
        existed = os.path.lexists(folder)
        probe = folder / ".probe"  # the folder is reached as the parent of a name in it
        if _USE_FDS:
            os.close(_open_parent(root, probe, create=True)[0])
        else:
            _checked(root, probe, create=True)
        if not existed:
            made.append(sub + "/")
    return made


def atomic_write(path: Path, data: str | bytes, *, root: RootLike | None = None) -> None:
    """Write via a temp file in the same folder, fsync, then rename: readers see old or new.

    With `root`, the folders are reached without following links and a link at `path` is
    refused, so neither the temp file nor the rename can be redirected out of the root.
    """
    raw = data.encode("utf-8") if isinstance(data, str) else data
    if root is None or not _USE_FDS:
        if root is not None:
            _checked(root, path, create=True)
        _atomic_write_plain(Path(path), raw)
        return
    dfd, name = _open_parent(root, path, create=True)
    try:
        st = _no_link(dfd, name, Path(path))
        if st is not None and stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError(errno.EISDIR, "is a folder, not a file", str(path))
        # what secrets.token_hex does, without importing secrets, hmac, hashlib and random
        # (3 ms of every hook that records its state)
        tmp = f".{name}.{os.urandom(6).hex()}.tmp"
        fd = os.open(
            tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC, 0o644, dir_fd=dfd
        )
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(raw)
                fh.flush()
                with contextlib.suppress(OSError):
                    os.fchmod(fh.fileno(), 0o644)
                os.fsync(fh.fileno())
            os.replace(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=dfd)
            raise
        with contextlib.suppress(OSError):
            os.fsync(dfd)
    finally:
        os.close(dfd)


def _atomic_write_plain(path: Path, raw: bytes) -> None:
    """Files outside any memory root (host settings, the user configuration)."""
    import tempfile

    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(raw)
            fh.flush()
            os.fsync(fh.fileno())
        with contextlib.suppress(OSError):
            os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    with contextlib.suppress(OSError):
        dfd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)


@contextlib.contextmanager
def root_lock(root: Root, timeout: float = LOCK_TIMEOUT_S) -> Iterator[None]:
    """An exclusive, cross-process lock around every write to one root."""
    from filelock import FileLock, Timeout

    path = root.cache_dir / LOCK_FILE
    os.close(open_file(root, path, os.O_RDWR | os.O_CREAT))  # made here, never through a link
    lock = FileLock(str(path), timeout=timeout)
    try:
        with lock:
            yield
    except Timeout as exc:
        raise EngramError(
            f"another Engram process holds the lock on {root.path}; try again", code="root.locked"
        ) from exc


def file_hash(data: bytes) -> str:
    import hashlib

    return "sha256:" + hashlib.sha256(data).hexdigest()


# ---------------------------------------------------------------- ignore rules


class IgnoreRules(NamedTuple):
    patterns: tuple[str, ...]

    def ignores(self, rel: str) -> bool:
        import fnmatch

        name = rel.rsplit("/", 1)[-1]
        stem = name[:-3] if name.endswith(".md") else name
        for pat in self.patterns:
            p = pat.rstrip("/")
            if fnmatch.fnmatch(rel, p) or fnmatch.fnmatch(name, p) or fnmatch.fnmatch(stem, p):
                return True
            if rel.startswith(p + "/"):
                return True
        return False


def load_ignore_rules(root: Root, project_dir: Path | None = None) -> IgnoreRules:
    """`.engramignore` in the root (and the project folder): gitignore-like globs."""
    pats: list[str] = []
    for base in (root.path, project_dir):
        if base is None:
            continue
        try:
            raw = read_bytes(root if base == root.path else base, Path(base) / IGNORE_FILE)
            for line in raw.decode("utf-8", errors="replace").splitlines():
                line = line.strip()
                if line and not line.startswith("#"):
                    pats.append(line.lstrip("/"))
        except OSError:
            continue
    return IgnoreRules(tuple(pats))


# ---------------------------------------------------------------- scanning


class FileStat(NamedTuple):
    rel: str  # path relative to the root, with "/"
    abspath: str  # a plain string: building 10,000 Path objects costs more than the stats
    mtime_ns: int
    size: int
    ctime_ns: int = 0  # changes with any write, and no program can set it back

    @property
    def path(self) -> Path:
        return Path(self.abspath)


def scan_files(root: Root, dirs: tuple[str, ...] = MEMORY_DIRS) -> list[FileStat]:
    """Every plain `*.md` directly under the memory folders, with stat data (cheap: no reads).

    Links are left out (a linked folder or file is never loaded); `link_findings` names them.
    """
    out: list[FileStat] = []
    for sub in dirs:
        folder = os.path.join(root.path, sub)
        try:
            if stat.S_ISLNK(os.lstat(folder).st_mode):
                continue
            entries = os.scandir(folder)
        except (FileNotFoundError, NotADirectoryError):
            continue
        with entries:
            for e in entries:
                if not e.name.endswith(".md") or e.name.startswith("."):
                    continue
                # A name that is not text (undecodable bytes, controls) is never indexed;
                # verify names it.
                if not e.name.isprintable():
                    continue
                try:
                    st = e.stat(follow_symlinks=False)
                except OSError:
                    continue
                if not stat.S_ISREG(st.st_mode):
                    continue
                out.append(
                    FileStat(f"{sub}/{e.name}", e.path, st.st_mtime_ns, st.st_size, st.st_ctime_ns)
                )
    return out


# ---------------------------------------------------------------- manifest


# ---------------------------------------------------------------- links in a root (verify, doctor)

STATE_FILES = (MANIFEST_FILE, CONFIG_FILE, PENDING_FILE, IGNORE_FILE, ".gitignore")


class LinkFinding(NamedTuple):
    code: str  # folder.symlink | file.symlink
    rel: str  # the path relative to the root
    message: str


def _special(entry: os.DirEntry[str]) -> bool:
    """Whether a folder entry is a pipe, a socket or a device (never a memory file)."""
    try:
        mode = entry.stat(follow_symlinks=False).st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def link_findings(root: Root) -> list[LinkFinding]:
    """Every symbolic link where Engram keeps memory or state: each is refused, so name it.

    Covers the layout folders and `cache/`, the state files, everything in `cache/` and
    every `*.md` in the memory folders (those are never loaded or indexed).
    """
    out: list[LinkFinding] = []

    def is_link(path: str) -> bool:
        try:
            return stat.S_ISLNK(os.lstat(path).st_mode)
        except OSError:
            return False

    for sub in (*LAYOUT_DIRS, CACHE_DIR):
        folder = os.path.join(root.path, sub)
        if is_link(folder):
            out.append(
                LinkFinding("folder.symlink", sub + "/", link_error(folder, folder=True).message)
            )
            continue
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            continue
        for e in entries:
            wanted = sub == CACHE_DIR or (e.name.endswith(".md") and not e.name.startswith("."))
            if wanted and e.is_symlink():
                out.append(
                    LinkFinding("file.symlink", f"{sub}/{e.name}", link_error(e.path).message)
                )
            elif e.is_symlink() and os.path.isdir(e.path):  # a linked folder inside rules/ …
                message = link_error(e.path, folder=True).message
                out.append(LinkFinding("folder.symlink", f"{sub}/{e.name}/", message))
            elif wanted and sub != CACHE_DIR and not e.is_symlink() and _special(e):
                out.append(
                    LinkFinding(
                        "file.not_regular",
                        f"{sub}/{e.name}",
                        f"{sub}/{e.name} is not a regular file (a pipe, socket or device): "
                        "it is never read or loaded; remove it",
                    )
                )
    for name in STATE_FILES:
        path = os.path.join(root.path, name)
        if is_link(path):
            out.append(LinkFinding("file.symlink", name, link_error(path).message))
    return out


@contextlib.contextmanager
def locked(roots: list[Root]) -> Iterator[None]:
    """Hold the write lock of every root, always in the same order (no deadlock)."""
    order = {"workspace": 0, "global": 1}
    unique: dict[str, Root] = {}
    for r in sorted(roots, key=lambda r: (order.get(r.scope, 2), str(r.path))):
        unique.setdefault(str(r.path.resolve()), r)
    with contextlib.ExitStack() as stack:
        for r in unique.values():
            stack.enter_context(root_lock(r))
        yield
