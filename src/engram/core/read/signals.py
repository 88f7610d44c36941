"""Task signals besides the prompt: the files the work touches and the branch it is on.

Memories may name the files they are about with a `paths:` front-matter key (globs, as
host rule files use: `src/billing/**`, `*.sql`) or simply mention a path in their body.
The router treats a touched file that such a memory names as strong evidence, and the
words of the touched paths and of the branch name as weak extra words of the task.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
from functools import lru_cache
from pathlib import Path, PurePosixPath

from engram.core.read.worktree import changed_files
from engram.core.store.layout import WORKSPACE_SUBDIR
from engram.core.words import match_phrase

MAX_PATHS = 50  # touched files considered (a huge diff says little about any one memory)
_SPLIT_RE = re.compile(r"[^A-Za-z0-9]+|(?<=[a-z])(?=[A-Z])")


def normalise_paths(paths: list[str], project_dir: Path | None = None) -> list[str]:
    """Project-relative POSIX paths, without "./", duplicates or paths outside the project."""
    out: list[str] = []
    for raw in paths[: MAX_PATHS * 2]:
        if not isinstance(raw, str) or not raw.strip() or "\x00" in raw:
            continue
        text = raw.strip().replace("\\", "/")
        if text.startswith("/") and project_dir is not None:
            try:
                text = PurePosixPath(text).relative_to(project_dir.as_posix()).as_posix()
            except ValueError:
                continue
        parts = [p for p in text.split("/") if p not in ("", ".")]
        if not parts or ".." in parts:
            continue
        norm = "/".join(parts)
        if norm not in out:
            out.append(norm)
    return out[:MAX_PATHS]


MAX_PATH_ARGS = MAX_PATHS  # paths a caller may name in one load
MAX_PATH_CHARS = 1000
MAX_BRANCH_CHARS = 200


def checked_signals(
    paths: object, branch: object, project_dir: Path | None, base: Path | None = None
) -> tuple[list[str], str]:
    """Task signals a person or an agent named (`engram load --path/--branch`, the
    `paths`/`branch` arguments of `engram_load`) as project-relative paths and a branch,
    or a UsageError that says what was wrong and what is allowed.

    A relative path starts from `base` (the folder the command runs in; default: the
    project). A path need not exist (the work may create it) but must stay inside the
    project: it names a file of the work, and nothing is ever read from it."""
    from engram.core.errors import UsageError

    if paths is None:
        paths = []
    if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
        raise UsageError("paths must be a list of file paths (strings)")
    if len(paths) > MAX_PATH_ARGS:
        raise UsageError(f"{len(paths)} paths is too many: at most {MAX_PATH_ARGS} per load")
    if branch is None:
        branch = ""
    if not isinstance(branch, str):
        raise UsageError("branch must be a string: the name of the branch the work is on")
    if len(branch.strip()) > MAX_BRANCH_CHARS:
        raise UsageError(f"branch is longer than {MAX_BRANCH_CHARS} characters")
    if paths and project_dir is None:
        raise UsageError(
            "paths name files of a project, and no project memory root was found "
            "(run `engram init` in the project)"
        )
    out: list[str] = []
    if paths:
        project = os.path.realpath(project_dir)  # type: ignore[arg-type]
        start = os.path.realpath(base) if base is not None else project
        for raw in paths:
            text = raw.strip()
            if not text or len(text) > MAX_PATH_CHARS or "\x00" in text:
                raise UsageError(
                    f"path {raw[:80]!r} is not a file path: give 1 to {MAX_PATH_CHARS} "
                    "characters, relative to the current folder or absolute"
                )
            full = os.path.normpath(os.path.join(start, os.path.expanduser(text)))
            rel = os.path.relpath(full, project)
            if rel == os.curdir:
                continue  # the project itself says nothing about any one memory
            if rel == os.pardir or rel.startswith(os.pardir + os.sep):
                raise UsageError(
                    f"path {raw[:200]!r} is outside the project {project}: paths name files "
                    "the work touches, inside the project"
                )
            out.append(rel.replace(os.sep, "/"))
    return normalise_paths(out), branch.strip()


def signal_words(paths: list[str], branch: str = "") -> list[str]:
    """Words of the touched paths (the folder and file names nearest the file) and the branch.

    `src/billing/invoice_pdf.py` gives billing, invoice, pdf; `fix/waitlist-reminders`
    gives fix, waitlist, reminders. Extensions and one- or two-letter pieces are dropped.
    """
    words: list[str] = []
    for path in paths:
        parts = path.split("/")
        *dirs, name = parts
        stem = name.split(".", 1)[0] if not name.startswith(".") else name[1:]
        for piece in [*dirs[-2:], stem]:
            words += _SPLIT_RE.split(piece)
    if branch:
        words += _SPLIT_RE.split(branch)
    out: list[str] = []
    for w in words:
        w = w.lower()
        if len(w) >= 3 and not w.isdigit() and w not in out:
            out.append(w)
    return out


@lru_cache(maxsize=1024)
def _glob_re(pattern: str) -> re.Pattern[str] | None:
    """A host-style glob as a regex: `**` spans folders, `*` and `?` stay within one.

    A pattern without a slash matches the file name in any folder (as `.gitignore` does).
    """
    pat = pattern.strip().replace("\\", "/").lstrip("./") if pattern.strip() else ""
    if not pat or len(pat) > 300:
        return None
    if "/" not in pat.rstrip("/"):
        pat = "**/" + pat
    if pat.endswith("/"):
        pat += "**"
    out, i = [], 0
    while i < len(pat):
        c = pat[i]
        if pat.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pat.startswith("**", i):
            out.append(".*")
            i += 2
        elif c == "*":
            out.append("[^/]*")
            i += 1
        elif c == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(c))
            i += 1
    try:
        return re.compile("".join(out) + r"\Z")
    except re.error:
        return None


def glob_matches(patterns: list[str], path: str) -> bool:
    """True when `path` (project-relative) matches one of the globs."""
    for p in patterns:
        rx = _glob_re(p) if isinstance(p, str) else None
        if rx is not None and rx.match(path):
            return True
    return False


def declared_paths(doc: str) -> list[str]:
    """The `paths:` globs a stored memory declares (a string or a list of strings)."""
    try:
        value = json.loads(doc).get("extra", {}).get("paths")
    except (ValueError, AttributeError):
        return []
    if isinstance(value, str):
        value = [v.strip() for v in value.split(",")]
    if not isinstance(value, list):
        return []
    return [v for v in value if isinstance(v, str) and v.strip()][:100]


# The `paths:` globs of each indexed file version, kept beside the index so that a call
# reads only the versions it has not seen (scanning every stored memory costs ~40 ms at
# 10,000 memories; the join costs a few). Keyed by file and content hash, so an edited
# file is read again and a removed one drops out of the join.
_PATHS_TABLE = """CREATE TABLE IF NOT EXISTS signal_paths(
  scope TEXT NOT NULL, rel TEXT NOT NULL, hash TEXT, globs TEXT NOT NULL,
  PRIMARY KEY(scope, rel))"""


def _fingerprint(conn: sqlite3.Connection) -> str:
    """A second check besides the triggers that clear the recorded state on every change
    to a memory row: the row count, the highest rowid and its hash."""
    count, top = conn.execute("SELECT count(*), max(rowid) FROM memories").fetchone()
    row = conn.execute("SELECT hash FROM memories WHERE rowid = ?", (top,)).fetchone()
    return f"{count}:{top}:{row[0] if row else ''}"


# Any change to a memory row that can change its `paths:` clears the recorded state. A
# flag the read path stores beside a row on its first display is no such change (an
# earlier trigger on every UPDATE made the next call re-read every glob, ~10 ms at 10,000).
_TRIGGERS = {
    "signal_paths_insert": "AFTER INSERT ON memories",
    "signal_paths_delete": "AFTER DELETE ON memories",
    "signal_paths_change": "AFTER UPDATE OF scope, rel, hash, doc ON memories",
}


def _ensure_tables(conn: sqlite3.Connection) -> None:
    """The globs table, its state and the triggers, created (or brought up to date) once."""
    have = {
        row[0]
        for row in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'signal_paths%'"
        )
    }
    if have == set(_TRIGGERS):
        return
    with conn:
        conn.execute(_PATHS_TABLE)
        conn.execute("CREATE TABLE IF NOT EXISTS signal_state(key TEXT PRIMARY KEY, value TEXT)")
        for name in sorted(have - set(_TRIGGERS)):
            quoted = name.replace('"', '""')  # the index is derived data in the repository
            conn.execute(f'DROP TRIGGER IF EXISTS "{quoted}"')
        for name in sorted(set(_TRIGGERS) - have):
            conn.execute(
                f"CREATE TRIGGER {name} {_TRIGGERS[name]}"
                " BEGIN DELETE FROM signal_state WHERE key = 'paths'; END"
            )
        conn.execute("DELETE FROM signal_state WHERE key = 'paths'")


def _declared_globs(conn: sqlite3.Connection) -> list[tuple[int, list[str]]]:
    """(rowid, globs) of every indexed memory that declares `paths:`."""
    try:
        _ensure_tables(conn)
        stamp = _fingerprint(conn)
        seen = conn.execute("SELECT value FROM signal_state WHERE key = 'paths'").fetchone()
        if not seen or seen[0] != stamp:
            _record_globs(conn, stamp)
        rows = conn.execute(
            "SELECT m.rowid, p.globs FROM signal_paths p JOIN memories m ON m.scope = p.scope"
            " AND m.rel = p.rel AND m.hash IS p.hash WHERE p.globs != '[]'"
        ).fetchall()
        return [(rowid, json.loads(globs)) for rowid, globs in rows]
    except (sqlite3.Error, ValueError):  # a read-only or locked index: read the documents
        rows = conn.execute(
            "SELECT rowid, doc FROM memories WHERE instr(doc, '\"paths\":') > 0"
        ).fetchall()
        return [(rowid, declared_paths(doc)) for rowid, doc in rows]


def _record_globs(conn: sqlite3.Connection, stamp: str) -> None:
    """Read the globs of the file versions not recorded yet (the small `files` table says
    which; scanning `memories` would read every stored document)."""
    unseen = conn.execute(
        "SELECT f.scope, f.rel, f.hash FROM files f LEFT JOIN signal_paths p"
        " ON p.scope = f.scope AND p.rel = f.rel AND p.hash IS f.hash WHERE p.rel IS NULL"
    ).fetchall()
    fresh = []
    for scope, rel, digest in unseen:
        row = conn.execute(
            "SELECT CASE WHEN instr(doc, '\"paths\":') > 0 THEN doc END"
            " FROM memories WHERE scope = ? AND rel = ?",
            (scope, rel),
        ).fetchone()
        doc = row[0] if row else None
        fresh.append((scope, rel, digest, json.dumps(declared_paths(doc)) if doc else "[]"))
    with conn:
        conn.executemany(
            "INSERT OR REPLACE INTO signal_paths(scope, rel, hash, globs) VALUES (?,?,?,?)", fresh
        )
        conn.execute(
            "INSERT OR REPLACE INTO signal_state(key, value) VALUES ('paths', ?)", (stamp,)
        )


def path_matches(conn: sqlite3.Connection, paths: list[str]) -> tuple[set[int], set[int]]:
    """Rowids of memories that name a touched file: (by a `paths:` glob, in their body).

    A body names a file by its folder and name as a phrase, so `billing/invoice_pdf.py`
    finds a body that says "billing/invoice_pdf.py"."""
    if not paths:
        return set(), set()
    declared: set[int] = set()
    hits: set[int] = set()
    for rowid, globs in _declared_globs(conn):
        if globs and any(glob_matches(globs, p) for p in paths):
            declared.add(rowid)
    phrases = []
    for p in paths:
        tail = [w for w in _SPLIT_RE.split("/".join(p.split("/")[-2:])) if w]
        if len(tail) >= 2:  # a bare file name ("README") names too many memories
            phrases.append(match_phrase(" ".join(tail)))
    if phrases:
        try:
            for (rowid,) in conn.execute(
                "SELECT rowid FROM fts WHERE fts MATCH ? LIMIT 200",
                ("body : (" + " OR ".join(phrases[:MAX_PATHS]) + ")",),
            ):
                hits.add(rowid)
        except sqlite3.OperationalError:
            pass
    return declared, hits - declared


def work_signals(project_dir: Path, cwd: Path | None = None) -> tuple[list[str], str]:
    """(files the work touches, branch) from git: changed and staged files, and the cwd
    when it is a folder inside the project. Empty outside a git work tree or on any error.

    One `git status` over the project's files (not the memory root) through a private git
    directory, so that nothing the repository's config names can run (`core.read.worktree`).
    """
    paths: list[str] = []
    if cwd is not None:
        try:
            rel = cwd.resolve().relative_to(project_dir.resolve()).as_posix()
            if rel not in ("", "."):
                paths.append(rel + "/")
        except (OSError, ValueError):
            pass
    seen = changed_files(str(project_dir), WORKSPACE_SUBDIR.as_posix())
    if seen is None:
        return normalise_paths(paths), ""
    changed, branch = seen
    return normalise_paths([*paths, *changed]), branch[:200]
