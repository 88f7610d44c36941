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

MAX_PATHS = 50  # touched files considered (a huge diff says little about any one memory)
GIT_TIMEOUT_S = 2.0
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


def path_matches(conn: sqlite3.Connection, paths: list[str]) -> set[int]:
    """Rowids of memories that name a touched file: by a `paths:` glob, or in their body
    (the file's folder and name as a phrase, so `billing/invoice_pdf.py` finds a body
    that says "billing/invoice_pdf.py")."""
    if not paths:
        return set()
    hits: set[int] = set()
    try:
        rows = conn.execute(
            "SELECT rowid, doc FROM memories WHERE instr(doc, '\"paths\":') > 0"
        ).fetchall()
    except sqlite3.OperationalError:
        rows = []
    for rowid, doc in rows:
        globs = declared_paths(doc)
        if globs and any(glob_matches(globs, p) for p in paths):
            hits.add(rowid)
    phrases = []
    for p in paths:
        tail = [w for w in _SPLIT_RE.split("/".join(p.split("/")[-2:])) if w]
        if len(tail) >= 2:  # a bare file name ("README") names too many memories
            phrases.append('"' + " ".join(tail).replace('"', "") + '"')
    if phrases:
        try:
            for (rowid,) in conn.execute(
                "SELECT rowid FROM fts WHERE fts MATCH ? LIMIT 200",
                ("body : (" + " OR ".join(phrases[:MAX_PATHS]) + ")",),
            ):
                hits.add(rowid)
        except sqlite3.OperationalError:
            pass
    return hits


def work_signals(project_dir: Path, cwd: Path | None = None) -> tuple[list[str], str]:
    """(files the work touches, branch) from git: changed and staged files, and the cwd
    when it is a folder inside the project. Empty outside a git work tree or on any error.

    One `git status` call; repository-configured programs (fsmonitor, hooks) are disabled
    because the repository may be hostile, and no lock is taken.
    """
    import subprocess  # only the hooks read git; a load does not pay for the import

    paths: list[str] = []
    if cwd is not None:
        try:
            rel = cwd.resolve().relative_to(project_dir.resolve()).as_posix()
            if rel not in ("", "."):
                paths.append(rel + "/")
        except (OSError, ValueError):
            pass
    env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0", "GIT_TERMINAL_PROMPT": "0"}
    try:
        proc = subprocess.run(
            ["git", "-c", "core.fsmonitor=", "-c", "core.hooksPath=/dev/null",
             "status", "--porcelain=v1", "-b", "--untracked-files=no", "-z"],
            cwd=project_dir, capture_output=True, timeout=GIT_TIMEOUT_S, env=env, check=False,
        )  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return normalise_paths(paths), ""
    if proc.returncode != 0:
        return normalise_paths(paths), ""
    branch = ""
    entries = proc.stdout.decode("utf-8", "replace").split("\x00")
    skip = False
    for entry in entries:
        if skip:  # the original name of a rename
            skip = False
            continue
        if entry.startswith("## "):
            head = entry[3:].split("...", 1)[0].strip()
            branch = "" if head.startswith(("HEAD", "No commits")) else head
        elif len(entry) > 3:
            paths.append(entry[3:])
            skip = entry[0] in "RC"
    return normalise_paths(paths), branch[:200]
