"""The derived search index: SQLite FTS5 over every visible memory file, kept fresh cheaply.

Markdown is the source of truth. The index lives in the primary root's `cache/` folder and
can be deleted at any time. Freshness: a new process compares every file's (mtime, size)
with what was indexed; a long-lived process (the MCP server) checks folder mtimes on each
call, re-stats the files it is about to return, and does the full comparison at most once
per `FULL_SCAN_INTERVAL_S` (every call for workspaces under `ALWAYS_SCAN_BELOW` files); in
between it re-scans only the folders whose mtime moved (a file added, removed or replaced). Changed files are re-parsed; nothing else is rebuilt.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import sqlite3
import stat
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engram.core.errors import ContainmentError
from engram.core.memory import Memory, MemoryParseError
from engram.core.store.files import (
    MEMORY_DIRS,
    FileStat,
    batch_reads,
    contained_path,
    file_hash,
    remove_file,
)
from engram.core.store.layout import Root, Roots
from engram.core.store.memoryfiles import read_memory_file
from engram.core.store.userkey import user_signing_key
from engram.core.words import index_terms, match_phrase

if TYPE_CHECKING:
    from engram.core.store.watch import FolderWatch

SCHEMA_VERSION = "7"  # 7: the text columns hold words.stem stems (one stemmer for both sides)
FULL_SCAN_INTERVAL_S = 1.0
WATCHED_FULL_SCAN_S = 60.0  # with kernel change notification, a safety-net full comparison
# Under this many files a full stat comparison costs a few ms, so it runs on every call.
ALWAYS_SCAN_BELOW = 300

# Every column but the stored document: what ranking and visibility need.
ROW_COLUMNS = (
    "rowid, scope, rel, id, type, tier, title, tags, triggers, roles, depends_on,"
    " valid_until, objective, updated, hash, flag"
)

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS files(
  scope TEXT NOT NULL, rel TEXT NOT NULL, mtime_ns INTEGER, size INTEGER, hash TEXT, error TEXT,
  PRIMARY KEY(scope, rel));
CREATE TABLE IF NOT EXISTS memories(
  rowid INTEGER PRIMARY KEY, scope TEXT NOT NULL, rel TEXT NOT NULL, id TEXT NOT NULL,
  type TEXT, tier TEXT, title TEXT, tags TEXT, triggers TEXT, roles TEXT, depends_on TEXT,
  valid_until TEXT, objective TEXT, updated TEXT, hash TEXT, doc TEXT, flag TEXT,
  UNIQUE(scope, rel));
CREATE INDEX IF NOT EXISTS memories_id ON memories(id);
CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(
  title, tags, triggers, body, tokenize = 'unicode61 remove_diacritics 2');
CREATE TABLE IF NOT EXISTS usage(
  scope TEXT NOT NULL, id TEXT NOT NULL, count INTEGER NOT NULL DEFAULT 0, last_used TEXT,
  PRIMARY KEY(scope, id));
CREATE TABLE IF NOT EXISTS manifest(scope TEXT NOT NULL, rel TEXT NOT NULL, hash TEXT,
  PRIMARY KEY(scope, rel));
CREATE TABLE IF NOT EXISTS redacted(hash TEXT PRIMARY KEY, doc TEXT NOT NULL);
"""


def memory_to_doc(mem: Memory) -> str:
    return json.dumps(vars(mem), ensure_ascii=False, separators=(",", ":"))


def doc_to_memory(doc: str) -> Memory:
    return Memory(**json.loads(doc))


LIST_SEP = "\x1f"  # lists are stored as unit-separated strings: splitting beats JSON decoding


def join_list(items: list[str]) -> str:
    return LIST_SEP.join(items)


def split_list(value: str | None) -> list[str]:
    return value.split(LIST_SEP) if value else []


def unsafe_reason(mem: Memory) -> str:
    """What the read path must do with a memory (withhold, redact), as the stored flag ('' clean)."""
    from engram.core.safety.screen import memory_findings

    return memory_findings(mem).encode()


def fts_body(mem: Memory) -> str:
    parts = [
        mem.content,
        " ".join(mem.variants.values()),
        mem.origin,
        mem.extra_sections,
        mem.id.replace("-", " "),
    ]
    return "\n".join(p for p in parts if p)


STATS_KEY = "file_stats"
GENERATION_KEY = "generation"  # bumped by every refresh that changed the memories
DERIVED_PREFIX = "derived:"
TERM_MEMO_SIZE = 4096  # per-term answers kept per process (each a few hundred rowids at most)


def _stats_fingerprint(roots: Roots, found: list[tuple[Root, str, str, int, int]]) -> str:
    """One digest of every memory file's root, name, mtime and size, in the order seen."""
    import marshal  # built in; serialising tuples in C is the cheap part of the digest

    where = [(r.scope, str(r.path)) for r in roots.all]
    entries = [(root.scope, sub, name, mtime, size) for root, sub, name, mtime, size in found]
    return sha256(marshal.dumps((where, entries))).hexdigest()


def sha256(data: bytes) -> Any:
    """A SHA-256 hash object from CPython's own implementation where it is built: `hashlib`
    loads OpenSSL first, about 2 ms of every cold start."""
    try:
        from _sha2 import sha256 as new  # type: ignore[import-not-found]  # Python 3.12+
    except ImportError:
        try:
            from _sha256 import sha256 as new  # type: ignore[import-not-found]  # Python 3.11
        except ImportError:  # a build without them
            from hashlib import sha256 as new
    return new(data)


# Listing a folder by its descriptor (POSIX): opened once without following a link, its
# entries are stat-ed relative to it. Elsewhere the folder is listed by path after an lstat.
_FOLDER_BY_FD = os.scandir in os.supports_fd and hasattr(os, "O_DIRECTORY")
_FOLDER_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0)


def _memory_entries(root: Root, dirs: tuple[str, ...]) -> Iterator[tuple[str, str, int, int]]:
    """(folder, name, mtime_ns, size) of every plain `*.md` directly under these folders:
    the files `store.scan_files` lists, by the same rules (no links, no linked folder, no
    hidden or non-text names), without building a record for each unchanged file.

    Each folder is opened once without following a link and its entries are stat-ed
    relative to it, which spares the kernel a walk of the whole path per file."""
    for sub in dirs:
        folder = os.path.join(root.path, sub)
        fd = -1
        try:
            if _FOLDER_BY_FD:
                fd = os.open(folder, _FOLDER_FLAGS)
            elif stat.S_ISLNK(os.lstat(folder).st_mode):
                continue  # a linked folder is never loaded
        except (FileNotFoundError, NotADirectoryError):
            continue
        except OSError as exc:
            if exc.errno == errno.ELOOP:  # a linked folder is never loaded
                continue
            raise
        try:
            try:
                entries = os.scandir(fd if fd >= 0 else folder)
            except (FileNotFoundError, NotADirectoryError):
                continue
            with entries:
                for e in entries:
                    name = e.name
                    if not name.endswith(".md") or name.startswith("."):
                        continue
                    if not name.isprintable():
                        continue  # a name that is not printable text is never indexed
                    try:
                        st = e.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    if stat.S_ISREG(st.st_mode):
                        yield sub, name, st.st_mtime_ns, st.st_size
        finally:
            if fd >= 0:
                os.close(fd)


class Index:
    """One SQLite connection plus the freshness bookkeeping for a set of roots."""

    def __init__(self, roots: Roots, conn: sqlite3.Connection, path: Path | None) -> None:
        self.roots = roots
        self.conn = conn
        self.path = path
        self.diagnostics: list[tuple[str, str, str]] = []  # (level, code, message)
        self.parse_errors: dict[tuple[str, str], str] = {}
        self._last_full_scan = 0.0
        self._dir_mtimes: dict[str, int] = {}
        self._file_count = 0
        self._refreshes = 0
        self._watch_tried = False
        self._watch: FolderWatch | None = None
        self._term_memo: dict[tuple[Any, ...], Any] = {}
        self._memo_generation: str | None = None

    # ------------------------------------------------------------ freshness

    def _dirs_signature(self) -> dict[tuple[str, str], int]:
        """(scope, folder) -> mtime: adding, removing or renaming a file changes its folder's."""
        sig: dict[tuple[str, str], int] = {}
        for root in self.roots.all:
            for sub in MEMORY_DIRS:
                try:
                    sig[(root.scope, sub)] = os.stat(os.path.join(root.path, sub)).st_mtime_ns
                except OSError:
                    sig[(root.scope, sub)] = -1
        return sig

    def refresh(self, *, force_full: bool = False) -> int:
        """Bring the index in line with the files; returns how many files were re-read."""
        now = time.monotonic()
        self._refreshes += 1
        if not self._watch_tried and self._refreshes >= 2 and self._file_count > ALWAYS_SCAN_BELOW:
            self._watch_tried = True
            self._start_watch()  # a long-lived process: let the kernel say what changes
        if (
            self._watch is not None
            and not force_full
            and now - self._last_full_scan < WATCHED_FULL_SCAN_S
        ):
            changed_names = self._watch.changes()
            if changed_names is not None:
                return self._sync_names(changed_names)
            self._watch.close()
            self._watch = None
            self._start_watch()
        sig = self._dirs_signature()
        full = (
            force_full
            or self._watch is not None
            or self._file_count <= ALWAYS_SCAN_BELOW
            or now - self._last_full_scan >= FULL_SCAN_INTERVAL_S
        )
        if full:
            changed = self._sync(None)
            self._last_full_scan = now
        else:
            moved = {key for key, mtime in sig.items() if self._dir_mtimes.get(key) != mtime}
            changed = self._sync(moved)
        self._dir_mtimes = sig
        return changed

    def _start_watch(self) -> None:
        from engram.core.store.watch import FolderWatch

        folders = {
            f"{r.scope}/{sub}": os.path.join(r.path, sub)
            for r in self.roots.all
            for sub in MEMORY_DIRS
        }
        self._watch = FolderWatch.start(folders)
        self._last_full_scan = 0.0  # the next step is a full comparison, after the watch began

    def _sync_names(self, names: set[tuple[str, str]]) -> int:
        """Re-check only the files the kernel reported (and the manifest)."""
        todo: list[tuple[Root, FileStat]] = []
        gone: list[tuple[str, str]] = []
        for key, name in names:
            if not name.endswith(".md") or name.startswith("."):
                continue
            if not name.isprintable():  # as scan_files: never indexed
                continue
            scope, sub = key.split("/", 1)
            root = self.roots.by_scope(scope)
            if root is None:
                continue
            rel = f"{sub}/{name}"
            old = self.conn.execute(
                "SELECT mtime_ns, size FROM files WHERE scope=? AND rel=?", (scope, rel)
            ).fetchone()
            abspath = os.path.join(root.path, sub, name)
            try:
                st = os.lstat(abspath)
                if not stat.S_ISREG(st.st_mode) or os.path.islink(os.path.dirname(abspath)):
                    raise FileNotFoundError(
                        abspath
                    )  # a link (or in a linked folder): never indexed
            except OSError:
                if old is not None:
                    gone.append((scope, rel))
                continue
            if old is None or (old[0], old[1]) != (st.st_mtime_ns, st.st_size):
                todo.append((root, FileStat(rel, abspath, st.st_mtime_ns, st.st_size)))
        return self._apply(todo, gone)

    def _apply(
        self,
        todo: list[tuple[Root, FileStat]],
        gone: list[tuple[str, str]],
        stats: str | None = None,
    ) -> int:
        """Re-read changed files, drop vanished ones, reload a changed manifest; one transaction.

        `stats` is the fingerprint of every file's stat that a full comparison saw: kept with
        the files it describes, in the same transaction. Any other change forgets it."""
        manifest_changed = self._manifest_stale()
        if not todo and not gone and not manifest_changed:
            return 0
        with self.conn:
            for scope, rel in gone:
                self._delete(scope, rel)
                self.parse_errors.pop((scope, rel), None)
            with batch_reads():  # one walk per folder, not per file
                for root, fs in todo:
                    self._index_file(root, fs)
            if manifest_changed:
                self._load_manifests()
            if todo or gone:
                self._keep_stats(stats)
                self.conn.execute(
                    "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)",
                    (GENERATION_KEY, os.urandom(8).hex()),
                )
        return len(todo) + len(gone)

    # ---------------------------------------------------------- values derived from the rows

    def derived(self, key: str) -> str | None:
        """A value computed from the memories as they are now (None when the memories
        changed since it was kept, or it never was): the coverage map a handshake reads."""
        row = self.conn.execute(
            "SELECT value FROM meta WHERE key = ?", (DERIVED_PREFIX + key,)
        ).fetchone()
        if row is None:
            return None
        generation, _, value = str(row[0]).partition("\n")
        return value if generation == self.generation() else None

    def keep_derived(self, key: str, value: str, generation: str) -> None:
        """Keep `value`, computed from the memories at `generation` (read before computing:
        a refresh by another process meanwhile leaves it stale, never wrong)."""
        with contextlib.suppress(sqlite3.Error), self.conn:
            self.conn.execute(
                "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)",
                (DERIVED_PREFIX + key, f"{generation}\n{value}"),
            )

    def generation(self) -> str:
        """A token that changes whenever the memories change, in any process (a random one,
        so a rebuilt index never repeats one an older index had): values derived from the
        rows name the generation they saw."""
        row = self.conn.execute(
            "SELECT value FROM meta WHERE key = ?", (GENERATION_KEY,)
        ).fetchone()
        return str(row[0]) if row is not None else ""

    def memo(self, key: tuple[Any, ...], compute: Callable[[], Any]) -> Any:
        """Per-term answers (document counts, postings) kept for this generation of the
        index: a task and the model's searches share their terms, and a warm server sees
        the same terms again; any change to the memories, by any process, clears them."""
        generation = self.generation()
        if generation != self._memo_generation:
            self._term_memo.clear()
            self._memo_generation = generation
        memo = self._term_memo
        if key in memo:
            return memo[key]
        value = compute()
        if len(memo) >= TERM_MEMO_SIZE:
            memo.pop(next(iter(memo)))
        memo[key] = value
        return value

    def _keep_stats(self, stats: str | None) -> None:
        if stats is None:
            self.conn.execute("DELETE FROM meta WHERE key = ?", (STATS_KEY,))
        else:
            self.conn.execute(
                "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (STATS_KEY, stats)
            )

    def _sync(self, only: set[tuple[str, str]] | None) -> int:
        """Compare files with what was indexed: every folder (None) or only these folders.

        Every new process pays this for every file (an edit in place moves no folder's
        mtime, so only a stat of each file can tell), hence one tight loop. A full
        comparison first fingerprints every (file, mtime, size) it sees: when that equals
        the fingerprint kept by the last full comparison that changed the index, nothing
        changed since and the indexed stats are not even read (~10 ms at 10,000 files)."""
        if only is None:
            found = [
                (root, *entry)
                for root in self.roots.all
                for entry in _memory_entries(root, MEMORY_DIRS)
            ]
            stats = _stats_fingerprint(self.roots, found)
            self._file_count = len(found)
            kept = self.conn.execute("SELECT value FROM meta WHERE key = ?", (STATS_KEY,))
            row = kept.fetchone()
            if row is not None and row[0] == stats:
                for s, r, e in self.conn.execute(
                    "SELECT scope, rel, error FROM files WHERE error IS NOT NULL"
                ):
                    self.parse_errors[(s, r)] = e
                return self._apply([], [])
        known: dict[tuple[str, str], tuple[int, int]] = {}
        errors: dict[tuple[str, str], str] = {}
        if only is None or only:
            rows = self.conn.execute("SELECT scope, rel, mtime_ns, size, error FROM files")
            for s, r, m, z, e in rows:
                if only is None or (s, r.split("/", 1)[0]) in only:
                    known[(s, r)] = (m, z)
                    if e:
                        errors[(s, r)] = e
        if only is not None:
            found = [
                (root, *entry)
                for root in self.roots.all
                for entry in _memory_entries(
                    root, tuple(sub for scope, sub in only if scope == root.scope)
                )
            ]
        seen: set[tuple[str, str]] = set()
        todo: list[tuple[Root, FileStat]] = []
        for root, sub, name, mtime, size in found:
            key = (root.scope, f"{sub}/{name}")
            seen.add(key)
            if known.get(key) != (mtime, size):
                path = os.path.join(root.path, sub, name)
                todo.append((root, FileStat(key[1], path, mtime, size)))
            elif key in errors:
                self.parse_errors[key] = errors[key]
        gone = [k for k in known if k not in seen]
        if only is not None:
            added = sum(1 for root, fs in todo if (root.scope, fs.rel) not in known)
            self._file_count += added - len(gone)
            return self._apply(todo, gone)
        changed = self._apply(todo, gone, stats)
        if not changed:  # in line already (an index built before fingerprints were kept)
            try:
                with self.conn:
                    self._keep_stats(stats)
            except sqlite3.Error:
                pass  # a read-only index compares in full next time
        return changed

    def _delete(self, scope: str, rel: str) -> None:
        row = self.conn.execute(
            "SELECT rowid FROM memories WHERE scope=? AND rel=?", (scope, rel)
        ).fetchone()
        if row:
            self.conn.execute("DELETE FROM fts WHERE rowid=?", (row[0],))
            self.conn.execute("DELETE FROM memories WHERE rowid=?", (row[0],))
        self.conn.execute("DELETE FROM files WHERE scope=? AND rel=?", (scope, rel))

    def _index_file(self, root: Root, fs: FileStat) -> None:
        self._delete(root.scope, fs.rel)
        try:
            mem, raw = read_memory_file(root, fs.rel)
        except (MemoryParseError, OSError) as exc:
            err = str(exc) or exc.__class__.__name__
            self.parse_errors[(root.scope, fs.rel)] = err
            self.conn.execute(
                "INSERT INTO files(scope, rel, mtime_ns, size, hash, error) VALUES (?,?,?,?,?,?)",
                (root.scope, fs.rel, fs.mtime_ns, fs.size, None, err),
            )
            return
        self.parse_errors.pop((root.scope, fs.rel), None)
        digest = file_hash(raw)
        self.conn.execute(
            "INSERT INTO files(scope, rel, mtime_ns, size, hash, error) VALUES (?,?,?,?,?,NULL)",
            (root.scope, fs.rel, fs.mtime_ns, fs.size, digest),
        )
        cur = self.conn.execute(
            "INSERT INTO memories(scope, rel, id, type, tier, title, tags, triggers, roles, depends_on,"
            " valid_until, objective, updated, hash, doc, flag) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (
                root.scope, fs.rel, mem.id, mem.type, mem.tier, mem.title, join_list(mem.tags),
                join_list(mem.triggers), join_list(mem.role), join_list(mem.depends_on),
                mem.valid_until, mem.objective, mem.updated or mem.created, digest, memory_to_doc(mem),
                None,
            ),
        )  # fmt: skip
        self.conn.execute(
            "INSERT INTO fts(rowid, title, tags, triggers, body) VALUES (?,?,?,?,?)",
            (
                cur.lastrowid,
                index_terms(mem.title),
                index_terms(" ".join(mem.tags)),
                " | ".join(index_terms(t) for t in mem.triggers),
                index_terms(fts_body(mem)),
            ),
        )

    @staticmethod
    def _manifest_stamp(root: Root) -> str:
        try:
            st = root.manifest_path.stat()
        except OSError:
            return "none"
        return f"{st.st_mtime_ns}:{st.st_size}"

    def _manifest_stale(self) -> bool:
        for root in self.roots.all:
            stamp = self._manifest_stamp(root)
            row = self.conn.execute(
                "SELECT value FROM meta WHERE key=?", (f"manifest:{root.scope}:{root.path}",)
            ).fetchone()
            if not row or row[0] != stamp:
                return True
        return False

    def _load_manifests(self) -> None:
        from engram.core.store.manifest import read_manifest

        self.conn.execute("DELETE FROM manifest")
        for root in self.roots.all:
            stamp = self._manifest_stamp(root)
            try:
                files = read_manifest(root)
            except Exception:
                files = {}
            self.conn.executemany(
                "INSERT OR REPLACE INTO manifest(scope, rel, hash) VALUES (?,?,?)",
                [(root.scope, rel, h) for rel, h in files.items()],
            )
            self.conn.execute(
                "INSERT OR REPLACE INTO meta(key, value) VALUES (?,?)",
                (f"manifest:{root.scope}:{root.path}", stamp),
            )

    def still_fresh(self, rows: list[tuple[str, str]]) -> bool:
        """Re-stat the files about to be returned; False when any changed since indexing."""
        for scope, rel in rows:
            root = self.roots.by_scope(scope)
            rec = self.conn.execute(
                "SELECT mtime_ns, size FROM files WHERE scope=? AND rel=?", (scope, rel)
            ).fetchone()
            if root is None or rec is None:
                return False
            try:
                st = (root.path / rel).stat()
            except OSError:
                return False
            if (st.st_mtime_ns, st.st_size) != (rec[0], rec[1]):
                return False
        return True

    # ------------------------------------------------------------ queries

    def all_rows(self) -> list[sqlite3.Row]:
        return self.conn.execute(
            f"SELECT {ROW_COLUMNS} FROM memories ORDER BY scope DESC, id"
        ).fetchall()

    def unsafe(self, rowid: int, mem: Memory | None = None) -> str:
        """Why this memory reads like an instruction to the agent ('' when it does not).

        Computed on first use and stored: scanning every file at index time would triple the
        cost of a full build, and only the few bodies a load renders need it.
        """
        row = self.conn.execute("SELECT flag FROM memories WHERE rowid=?", (rowid,)).fetchone()
        if row is None:
            return ""
        if row[0] is not None:
            return row[0]
        reason = unsafe_reason(mem or self.memory(rowid))
        try:
            with self.conn:
                self.conn.execute("UPDATE memories SET flag=? WHERE rowid=?", (reason, rowid))
        except sqlite3.Error:
            pass  # a read-only index still answers; it only recomputes next time
        return reason

    def redacted_memory(self, hash_: str, mem: Memory) -> Memory:
        """`mem` with its secrets redacted, computed once per file version and kept: a load
        that shows a memory holding secrets must not scan its whole text again each time."""
        if hash_:
            row = self.conn.execute("SELECT doc FROM redacted WHERE hash=?", (hash_,)).fetchone()
            if row is not None:
                return doc_to_memory(row[0])
        from engram.core.safety.screen import redacted_memory

        clean = redacted_memory(mem)
        if hash_:
            try:
                with self.conn:
                    self.conn.execute(
                        "INSERT OR REPLACE INTO redacted(hash, doc) VALUES (?, ?)",
                        (hash_, memory_to_doc(clean)),
                    )
                    self.conn.execute(  # versions no file has any more go
                        "DELETE FROM redacted WHERE hash NOT IN (SELECT hash FROM memories "
                        "WHERE hash IS NOT NULL)"
                    )
            except sqlite3.Error:
                pass  # a read-only index still answers; it only recomputes next time
        return clean

    def memory(self, rowid: int) -> Memory:
        """The full Memory of one indexed row (parsed from the stored document)."""
        return doc_to_memory(
            self.conn.execute("SELECT doc FROM memories WHERE rowid=?", (rowid,)).fetchone()[0]
        )

    def workspace_ids(self, ids: list[str]) -> set[str]:
        """Which of these ids also exist in the workspace root (so a global copy is hidden)."""
        out: set[str] = set()
        for i in range(0, len(ids), 500):
            chunk = ids[i : i + 500]
            marks = ",".join("?" * len(chunk))
            sql = f"SELECT id FROM memories WHERE scope='workspace' AND id IN ({marks})"
            out.update(r[0] for r in self.conn.execute(sql, chunk))
        return out

    def term_df(self, term: str) -> int:
        """How many memories contain the term (a cheap count: no scoring)."""

        def count() -> int:
            try:
                return self.conn.execute(
                    "SELECT count(*) FROM fts WHERE fts MATCH ?", (match_phrase(term),)
                ).fetchone()[0]
            except sqlite3.OperationalError:
                return 0

        return self.memo(("df", term), count)

    def term_scores(
        self, term: str, weights: tuple[float, float, float, float], limit: int
    ) -> list[tuple[int, float]]:
        """The `limit` best (rowid, bm25 contribution) for one term (FTS5's bm25 is negated)."""

        def scores() -> list[tuple[int, float]]:
            try:
                return self.conn.execute(
                    "SELECT rowid, -bm25(fts, ?, ?, ?, ?) AS s FROM fts WHERE fts MATCH ? "
                    "ORDER BY s DESC LIMIT ?",
                    (*weights, match_phrase(term), limit),
                ).fetchall()
            except sqlite3.OperationalError:
                return []

        return self.memo(("scores", term, weights, limit), scores)

    def term_rowid_set(self, term: str) -> frozenset[int]:
        """`term_rowids` as a set, kept with the other memoised reads."""
        return self.memo(("rowid-set", term), lambda: frozenset(self.term_rowids(term)))

    def term_rowids(self, term: str) -> list[int]:
        """Every memory containing a common term, unscored (scoring thousands costs more than it tells)."""

        def rowids() -> list[int]:
            try:
                sql = "SELECT rowid FROM fts WHERE fts MATCH ?"
                return [r[0] for r in self.conn.execute(sql, (match_phrase(term),))]
            except sqlite3.OperationalError:
                return []

        return self.memo(("rowids", term), rowids)

    def doc_count(self) -> int:
        sql = "SELECT count(*) FROM memories"
        return self.memo(("count",), lambda: self.conn.execute(sql).fetchone()[0])

    def rows_by_rowid(self, rowids: list[int]) -> dict[int, sqlite3.Row]:
        out: dict[int, sqlite3.Row] = {}
        for i in range(0, len(rowids), 500):
            chunk = rowids[i : i + 500]
            marks = ",".join("?" * len(chunk))
            sql = f"SELECT {ROW_COLUMNS} FROM memories WHERE rowid IN ({marks})"
            for r in self.conn.execute(sql, chunk):
                out[r["rowid"]] = r
        return out

    def rows_by_id(self, mid: str) -> list[sqlite3.Row]:
        sql = f"SELECT {ROW_COLUMNS} FROM memories WHERE id=? ORDER BY scope DESC"
        return self.conn.execute(sql, (mid,)).fetchall()

    def usage(self) -> dict[tuple[str, str], int]:
        return {(s, i): c for s, i, c in self.conn.execute("SELECT scope, id, count FROM usage")}

    def count_usage(self, keys: list[tuple[str, str]]) -> None:
        if not keys:
            return
        today = time.strftime("%Y-%m-%d")
        try:
            with self.conn:
                self.conn.executemany(
                    "INSERT INTO usage(scope, id, count, last_used) VALUES (?,?,1,?) "
                    "ON CONFLICT(scope, id) DO UPDATE SET count = count + 1, last_used = excluded.last_used",
                    [(s, i, today) for s, i in keys],
                )
        except sqlite3.Error:
            pass  # usage is best effort: a read never fails because counting could not be written

    def manifest_hash(self, scope: str, rel: str) -> str | None:
        row = self.conn.execute(
            "SELECT hash FROM manifest WHERE scope=? AND rel=?", (scope, rel)
        ).fetchone()
        return row[0] if row else None

    def has_manifest(self, scope: str) -> bool:
        return (
            self.conn.execute("SELECT 1 FROM manifest WHERE scope=? LIMIT 1", (scope,)).fetchone()
            is not None
        )


# ---------------------------------------------------------------- opening

_OPEN: dict[str, Index] = {}


def index_path(roots: Roots) -> Path:
    return roots.primary.cache_dir / "index.sqlite"


def _connect(path: Path | None) -> sqlite3.Connection:
    conn = sqlite3.connect(str(path) if path else ":memory:", timeout=10)
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA busy_timeout = 10000")
    if path is not None:
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute(
            "PRAGMA synchronous = OFF"
        )  # derived data: a crash costs a rebuild, not memory
    conn.executescript(SCHEMA)
    row = conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
    if row is None:
        conn.execute(
            "INSERT OR REPLACE INTO meta(key, value) VALUES ('schema_version', ?)",
            (SCHEMA_VERSION,),
        )
        conn.commit()
    elif row[0] != SCHEMA_VERSION:
        raise sqlite3.DatabaseError(f"index schema {row[0]} is not {SCHEMA_VERSION}")
    return conn


SQLITE_SIDE_FILES = ("-wal", "-shm", "-journal")


def _contained(roots: Roots, path: Path) -> Path:
    """The index path once its folder and files are known to be no links (SQLite opens by name)."""
    return contained_path(roots.primary, path, siblings=SQLITE_SIDE_FILES)


def _remove_index_files(roots: Roots, path: Path) -> None:
    for suffix in ("", *SQLITE_SIDE_FILES):
        remove_file(roots.primary, f"{path}{suffix}")  # a link is removed, never its target


def _owner_token(path: Path) -> str | None:
    """What marks an index as built by this user at this place: a keyed hash of its real
    path with the user's own key. None when the user has no key (a read-only home)."""
    key = user_signing_key()
    if key is None:
        return None
    where = os.path.realpath(path).encode("utf-8", "surrogateescape")
    return sha256(key + b"\0index-owner\0" + where).hexdigest()


def _owned(conn: sqlite3.Connection, token: str) -> bool:
    """Whether this index is the user's own, claiming a new (empty) one. The index holds
    what the read path trusts without reading the files again (bodies, screen verdicts): an
    index a repository or an archive ships, or another user built, is never that."""
    row = conn.execute("SELECT value FROM meta WHERE key='owner'").fetchone()
    if row is not None:
        return bool(row[0] == token)
    if conn.execute("SELECT 1 FROM memories LIMIT 1").fetchone() is not None:
        return False  # rows nobody claimed: not built here by this user
    with conn:
        conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('owner', ?)", (token,))
    return True


def open_index(roots: Roots, *, refresh: bool = True) -> Index:
    """The (cached per process) index for these roots, refreshed unless told otherwise."""
    path = index_path(roots)
    key = f"{path}|{[str(r.path) for r in roots.all]}"
    idx = _OPEN.get(key)
    if idx is None:
        diagnostics: list[tuple[str, str, str]] = []
        conn: sqlite3.Connection | None = None
        why_in_memory = f"cannot write the index under {path.parent}"
        try:
            conn = _connect(_contained(roots, path))
            token = _owner_token(path)
            if token is None:
                conn.close()
                conn = None
                why_in_memory = "no per-user key in your Engram folder marks the index as yours"
            elif not _owned(conn, token):
                conn.close()
                _remove_index_files(roots, path)
                conn = _connect(path)
                _owned(conn, token)
                diagnostics.append(
                    (
                        "info",
                        "index.foreign",
                        f"the search index at {path} was not built by you here (copied, "
                        "unpacked or shipped with the repository); it was rebuilt from the "
                        "Markdown files",
                    )
                )
        except sqlite3.DatabaseError as exc:
            if isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc):
                raise
            _remove_index_files(roots, path)
            try:
                conn = _connect(path)
                token = _owner_token(path)
                if token is None or not _owned(conn, token):
                    conn.close()
                    raise sqlite3.DatabaseError("no per-user key to mark the index")
                diagnostics.append(
                    (
                        "warning",
                        "index.rebuilt",
                        f"the search index at {path} was unreadable ({exc}); it was rebuilt from the Markdown files",
                    )
                )
            except (sqlite3.Error, OSError):
                conn = None
        except ContainmentError as exc:  # a linked cache/ or index file: refused, not followed
            conn = None
            diagnostics.append(("warning", exc.code, f"{exc.message}; using an in-memory index"))
        except OSError:
            conn = None
        if conn is None:
            conn = _connect(None)
            diagnostics.append(
                ("info", "index.in_memory", f"{why_in_memory}; using a temporary in-memory index")
            )
            path_used = None
        else:
            path_used = path
        idx = Index(roots, conn, path_used)
        idx.diagnostics.extend(diagnostics)
        _OPEN[key] = idx
    if refresh:
        try:
            idx.refresh()
        except sqlite3.DatabaseError as exc:
            _OPEN.pop(key, None)
            idx.conn.close()
            if idx.path is None:
                raise
            _remove_index_files(roots, idx.path)
            fresh = open_index(roots, refresh=True)
            fresh.diagnostics.append(
                (
                    "warning",
                    "index.rebuilt",
                    f"the search index was corrupt ({exc}); it was rebuilt from the Markdown files",
                )
            )
            return fresh
    return idx


def rebuild_index(roots: Roots) -> Index:
    """Delete and rebuild the derived index from the Markdown files (usage counts are kept)."""
    path = index_path(roots)
    for key in [k for k in _OPEN if k.startswith(f"{path}|")]:
        old = _OPEN.pop(key)
        old.conn.close()
        if old._watch is not None:
            old._watch.close()
    usage: list[Any] = []
    try:
        conn = _connect(_contained(roots, path))
        usage = conn.execute("SELECT scope, id, count, last_used FROM usage").fetchall()
        conn.close()
    except (sqlite3.Error, OSError):
        pass
    _remove_index_files(roots, path)
    idx = open_index(roots, refresh=False)
    with idx.conn:
        idx.conn.executemany(
            "INSERT OR REPLACE INTO usage(scope, id, count, last_used) VALUES (?,?,?,?)",
            [tuple(u) for u in usage],
        )
    idx.refresh(force_full=True)
    return idx


def forget_open_indexes() -> None:
    """Close cached connections (tests and long-lived processes after a root changes)."""
    for idx in _OPEN.values():
        idx.conn.close()
        if idx._watch is not None:
            idx._watch.close()
    _OPEN.clear()
