"""Memory files on disk: atomic writes, the root lock, scanning, and the hash manifest."""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

from engram.core.errors import EngramError
from engram.core.memory import Memory, MemoryParseError, parse_memory
from engram.core.roots import ARCHIVE_DIR, IGNORE_FILE, TYPE_DIRS, WORKING_DIR, Root

MEMORY_DIRS = (*TYPE_DIRS.values(), WORKING_DIR)
MANAGED_DIRS = (*TYPE_DIRS.values(), ARCHIVE_DIR)  # what hashes.json covers (committed files)
DIR_TYPES = {v: k for k, v in TYPE_DIRS.items()}
LOCK_TIMEOUT_S = 30.0


def atomic_write(path: Path, data: str | bytes) -> None:
    """Write via a temp file in the same folder, fsync, then rename: readers see old or new."""
    import tempfile  # lazy: reads never pay for it

    raw = data.encode("utf-8") if isinstance(data, str) else data
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

    root.cache_dir.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(root.cache_dir / "write.lock"), timeout=timeout)
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
    for f in (root.path / IGNORE_FILE, project_dir / IGNORE_FILE if project_dir else None):
        if f is None:
            continue
        try:
            for line in f.read_text(encoding="utf-8", errors="replace").splitlines():
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

    @property
    def path(self) -> Path:
        return Path(self.abspath)


def scan_files(root: Root, dirs: tuple[str, ...] = MEMORY_DIRS) -> list[FileStat]:
    """Every `*.md` directly under the memory folders, with stat data (cheap: no reads)."""
    out: list[FileStat] = []
    for sub in dirs:
        try:
            entries = os.scandir(os.path.join(root.path, sub))
        except (FileNotFoundError, NotADirectoryError):
            continue
        with entries:
            for e in entries:
                if not e.name.endswith(".md") or e.name.startswith("."):
                    continue
                try:
                    st = e.stat()
                except OSError:
                    continue
                if not e.is_file():
                    continue
                out.append(FileStat(f"{sub}/{e.name}", e.path, st.st_mtime_ns, st.st_size))
    return out


def read_memory_file(root: Root, rel: str) -> tuple[Memory, bytes]:
    """Parse one memory file; raises MemoryParseError with a readable reason."""
    path = root.path / rel
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise MemoryParseError(f"not UTF-8 text (byte {exc.start})") from exc
    sub = rel.split("/", 1)[0]
    mem = parse_memory(text, path, default_type=DIR_TYPES.get(sub), scope=root.scope)
    mem.scope = root.scope
    if sub == WORKING_DIR:
        mem.tier = "working"
    return mem, raw


def load_memories(
    root: Root, dirs: tuple[str, ...] = MEMORY_DIRS
) -> tuple[list[Memory], list[tuple[str, str]]]:
    """All parseable memories of a root, plus (rel, reason) for files that failed."""
    memories: list[Memory] = []
    errors: list[tuple[str, str]] = []
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
        if p.is_file():
            return p
    return None


# ---------------------------------------------------------------- manifest


def read_manifest(root: Root) -> dict[str, str]:
    try:
        data = json.loads(root.manifest_path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise EngramError(
            f"{root.manifest_path} is not valid JSON ({exc}); fix it or run `engram verify --accept`",
            code="manifest.invalid",
        ) from exc
    files = data.get("files", {}) if isinstance(data, dict) else {}
    return {str(k): str(v) for k, v in files.items()} if isinstance(files, dict) else {}


def write_manifest(root: Root, files: dict[str, str]) -> None:
    payload = {"schema_version": 1, "algorithm": "sha256", "files": dict(sorted(files.items()))}
    atomic_write(root.manifest_path, json.dumps(payload, indent=2) + "\n")


def current_hashes(root: Root) -> dict[str, str]:
    return {fs.rel: file_hash(fs.path.read_bytes()) for fs in scan_files(root, MANAGED_DIRS)}


def update_manifest(root: Root, changed: dict[str, str | None]) -> None:
    """Record new hashes (None removes an entry). Call under root_lock."""
    files = read_manifest(root)
    for rel, digest in changed.items():
        if digest is None:
            files.pop(rel, None)
        else:
            files[rel] = digest
    write_manifest(root, files)
