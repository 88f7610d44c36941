"""Readers of the instruction files other agent hosts keep, behind one small interface.

Each module reads one host's format: `HOST` (its name for `--from`), `matches(rel)`
(which workspace-relative files it owns) and `read(ws, rel)` (the pieces of one file).
Reading goes through `Workspace`, which never follows a link out of the workspace,
reads at most `MAX_FILE_BYTES`, and refuses binary data; a bad file becomes a
`Problem` for that file and the rest of the import goes on. Files are only read.

With `--global` the person's user-level files are read instead: each reader lists them in
`USER_FILES` (globs relative to the home folder, from its host's documentation), read
through a `Workspace` rooted at the home folder that lists only those files; they apply
everywhere, so a user-level file never scopes its memories to its folder.
"""

from __future__ import annotations

import importlib
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engram.core.api import BadFileError, read_plain
from engram.importers.split import Piece, split_markdown

MAX_FILE_BYTES = 512 * 1024
MAX_WALK_ENTRIES = 50_000
READERS = ("agents_md", "claude_md", "cursor", "windsurf", "copilot", "gemini_md", "cline")
_KEEP_HIDDEN = frozenset({".cursor", ".github", ".windsurf", ".claude", ".clinerules"})
_SKIP_DIRS = frozenset(
    {"node_modules", "__pycache__", "venv", "dist", "build", "target", "vendor", "site-packages"}
)


class Problem(Exception):
    """Why one file (or one import in it) was not read; reported, never fatal."""


@dataclass
class Workspace:
    """The project folder, read safely: bounded, text only, never through links out of it."""

    root: Path
    _files: list[str] | None = field(default=None, repr=False)
    user_level: bool = False  # the home folder: only listed files, links are the person's own
    label: str = ""  # how its files are named to the person, e.g. "~/"

    def __post_init__(self) -> None:
        self.root = self.root.resolve()

    def files(self) -> list[str]:
        """Workspace-relative files, without VCS, dependency and tool folders (links not followed)."""
        if self._files is None and self.user_level:
            self._files = []
        if self._files is None:
            out: list[str] = []
            seen = 0
            for top, dirs, names in os.walk(self.root):
                dirs[:] = sorted(
                    d
                    for d in dirs
                    if d not in _SKIP_DIRS
                    and (not d.startswith(".") or d in _KEEP_HIDDEN)
                    and not os.path.islink(os.path.join(top, d))
                )
                rel_top = os.path.relpath(top, self.root)
                for n in sorted(names):
                    out.append(n if rel_top == "." else f"{rel_top}/{n}".replace(os.sep, "/"))
                seen += len(names) + len(dirs)
                if seen > MAX_WALK_ENTRIES:
                    break
            self._files = out
        return self._files

    def real(self, rel: str) -> Path:
        """The file `rel` names, refused when it (or a link on the way) leaves the workspace."""
        path = self.root / rel
        try:
            real = path.resolve(strict=True)
        except (OSError, RuntimeError) as exc:
            raise Problem(f"cannot be opened ({getattr(exc, 'strerror', None) or exc})") from exc
        if not self.user_level and not real.is_relative_to(self.root):
            raise Problem("is a link that leads outside the workspace; it was not followed")
        if not real.is_file():
            raise Problem("is not a regular file")
        return real

    def read(self, rel: str) -> str:
        """The text of `rel`: UTF-8, at most MAX_FILE_BYTES, no binary data."""
        real = self.real(rel)
        try:
            raw = read_plain(real, MAX_FILE_BYTES)  # non-blocking, regular files only
        except BadFileError as exc:
            if exc.code == "file.too_large":
                raise Problem(
                    f"is larger than {MAX_FILE_BYTES // 1024} KiB; split it or import its parts"
                ) from None
            raise Problem("is not a regular file") from None
        except OSError as exc:
            raise Problem(f"cannot be read ({exc.strerror or exc})") from exc
        if b"\x00" in raw:
            raise Problem("is binary (it contains NUL bytes); only text files are imported")
        try:
            return raw.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise Problem(f"is not UTF-8 text (byte {exc.start}); save it as UTF-8") from exc


@dataclass
class FileResult:
    """What one source file gave: its pieces, or why it (or one of its imports) was not read."""

    source: str
    host: str
    pieces: list[Piece] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


_FRONT = re.compile(r"\A---[ \t]*\n(.*?)\n---[ \t]*(?:\n|\Z)", re.S)


def front_matter(text: str) -> tuple[dict[str, str], str, int]:
    """Flat `key: value` front matter (as these hosts write it, not strict YAML).

    Returns (fields, body, line of the body's first line). Cursor's `globs: *.ts` is not
    valid YAML (an alias), so values are read as text, quotes and brackets removed.
    """
    m = _FRONT.match(text)
    if not m:
        return {}, text, 1
    fields: dict[str, str] = {}
    listing = ""  # the key whose value is a YAML block list (`key:` then `  - item` lines)
    for line in m.group(1).splitlines():
        item = re.match(r"^\s*-\s+(.*)$", line)
        if item and listing:
            fields[listing] = (fields[listing] + "\n" + item.group(1)).strip()
            continue
        k, sep, v = line.partition(":")
        listing = ""
        if sep and not line[:1].isspace() and re.fullmatch(r"[A-Za-z_][\w-]*", k.strip()):
            fields[k.strip()] = v.strip()
            listing = k.strip() if not v.strip() else ""
    return fields, text[m.end() :], m.group(0).count("\n") + 1


def glob_list(value: str) -> list[str]:
    """`"a/**, *.ts"`, `[a, b]`, a YAML list or `a` → globs (quotes, brackets, blanks removed)."""
    value = value.strip().strip("[]")
    out = []
    for g in re.split(r"\s*(?:,(?![^{]*\})|\n)\s*", value):  # commas inside {ts,tsx} stay
        g = g.strip().strip("\"'").strip()
        if g and g not in out and not g.startswith("/") and ".." not in g.split("/"):
            out.append(g)
    return out[:32]


def truthy(value: str) -> bool:
    return value.strip().strip("\"'").lower() in ("true", "yes", "on", "1")


def read_rule_file(
    ws: Workspace, rel: str, res: FileResult, always: Callable[[dict[str, str]], bool]
) -> None:
    """A rule file with front matter (`globs`, `description`, an always-on switch), as Cursor
    and Windsurf write them: globs become `paths:`, an always-on file's statements rules."""

    fields, body, at = front_matter(ws.read(rel))
    head, found, _ = f"/{rel}".partition("/.cursor/rules/")
    folder = head.lstrip("/") if found else ""  # a nested Cursor rule applies in its folder
    globs = glob_list(fields.get("globs", ""))
    if folder:
        # `*.mdx` has no folder: it matches at any depth below the rule's folder
        globs = [
            f"{folder}/{g.lstrip('/')}" if "/" in g else f"{folder}/**/{g}" for g in globs
        ] or [f"{folder}/**"]
    pieces = split_markdown(
        body,
        rel,
        first_line=at,
        paths=globs,
        default_title=fields.get("description", "").strip("\"'")[:80],
    )
    if always(fields):
        for p in pieces:
            if p.type == "knowledge":
                p.type = "rule"
    res.pieces += pieces


def reader(name: str) -> Any:
    return importlib.import_module(f"engram.importers.{name}")


def host_names() -> list[str]:
    return [reader(n).HOST for n in READERS]


def discover(ws: Workspace, hosts: list[str] | None = None) -> list[tuple[Any, str]]:
    """(reader, file) for every instruction file in the workspace, each real file once."""
    out: list[tuple[Any, str]] = []
    seen: set[str] = set()
    mods = [reader(n) for n in READERS]
    for rel in ws.files():
        for mod in mods:
            if hosts and mod.HOST not in hosts:
                continue
            if mod.matches(rel):
                try:
                    key = str(ws.real(rel))
                except Problem:
                    key = rel  # reported when read
                if key in seen:
                    break
                seen.add(key)
                out.append((mod, rel))
                break
    return out


def discover_user(ws: Workspace, hosts: list[str] | None = None) -> list[tuple[Any, str]]:
    """(reader, file) for every user-level file the readers list that exists in the home folder."""
    out: list[tuple[Any, str]] = []
    seen: set[str] = set()
    for mod in (reader(n) for n in READERS):
        if hosts and mod.HOST not in hosts:
            continue
        for pattern in user_files(mod):
            for path in sorted(ws.root.glob(pattern)):
                rel = path.relative_to(ws.root).as_posix()
                if rel in seen or not (path.is_file() or path.is_symlink()):
                    continue
                seen.add(rel)
                out.append((mod, rel))
    return out


def user_files(mod: Any) -> list[str]:
    """The reader's user-level files; a function of the environment for hosts that move them."""
    files = getattr(mod, "USER_FILES", ())
    return list(files() if callable(files) else files)


def read_all(ws: Workspace, hosts: list[str] | None = None) -> list[FileResult]:
    """Read every discovered file; a bad file is reported and the others go on."""
    results: list[FileResult] = []
    found = discover_user(ws, hosts) if ws.user_level else discover(ws, hosts)
    for mod, rel in found:
        results.append(read_one(ws, mod, rel))
    return results


def read_one(ws: Workspace, mod: Any, rel: str, *, host: str | None = None) -> FileResult:
    """One file through its reader; its names carry the workspace's label (`~/…`)."""
    res = FileResult(rel, host or mod.HOST)
    try:
        mod.read(ws, rel, res)
    except Problem as exc:
        res.problems.append(f"{rel} {exc}")
    if ws.label:
        res.source = ws.label + res.source
        for p in res.pieces:
            p.source = ws.label + p.source
        res.problems = [ws.label + p for p in res.problems]
    return res


def subtree_globs(ws: Workspace, rel: str) -> list[str]:
    """A nested instruction file applies to its folder: `pkg/api/AGENTS.md` → `pkg/api/**`.

    A user-level file (`~/.codex/AGENTS.md`) applies to every project: no folder scope.
    """
    parent = rel.rpartition("/")[0]
    return [f"{parent}/**"] if parent and not ws.user_level else []
