"""`@path` imports in CLAUDE.md and GEMINI.md: expanded inside the workspace only.

Both hosts let a memory file pull in another with `@relative/path` on its own words;
the path is relative to the importing file, imports nest up to five levels, and
text inside code spans and fences is not an import. Here an import that loops, nests too
deep, or leaves the workspace (`~/`, absolute, `..` past the root, a link out) is reported
for its file and skipped; the rest is read.
"""

from __future__ import annotations

import posixpath
import re

from engram.importers import FileResult, Problem, Workspace
from engram.importers.split import FENCE_RE, split_markdown, strip_managed

MAX_DEPTH = 5
_IMPORT = re.compile(  # a path: it has a folder or an extension (`@team` in prose is not one)
    r"(?:^|(?<=\s))@((?:\.{1,2}/|~/|/)[\w.\-/]+|[\w.\-]+/[\w.\-/]+|[\w\-]+\.[A-Za-z0-9]+)"
)
_TEXT_EXTENSIONS = frozenset({".md", ".markdown", ".mdc", ".txt", ""})


def imports_in(text: str) -> list[tuple[int, str]]:
    """(line, path) of the `@path` imports outside code fences and code spans."""
    out: list[tuple[int, str]] = []
    fence: str | None = None
    for n, line in enumerate(text.split("\n"), start=1):
        m = FENCE_RE.match(line)
        if fence is None and m:
            fence = m.group(1)
            continue
        if fence is not None:
            if line.strip().startswith(fence):
                fence = None
            continue
        plain = re.sub(r"`[^`]*`", "", line)
        out += [(n, p.rstrip(".")) for p in _IMPORT.findall(plain)]
    return out


def read_with_imports(
    ws: Workspace,
    rel: str,
    res: FileResult,
    *,
    paths: list[str],
    chain: tuple[str, ...] = (),
) -> None:
    """Split `rel` into `res.pieces`, then its imports (each file once, loops refused)."""
    text = ws.read(rel)
    found = imports_in(strip_managed(text))  # an import inside Engram's own block is not one
    # A line that imports is a reference, not an instruction: what it names is read below.
    lines = text.split("\n")
    for line, _ in found:
        lines[line - 1] = ""
    res.pieces += split_markdown("\n".join(lines), rel, paths=paths)
    chain = (*chain, rel)
    for line, target in found:
        where = f"{rel}:{line} @{target}"
        if posixpath.splitext(target)[1].lower() not in _TEXT_EXTENSIONS:
            res.problems.append(f"{where} is not a Markdown or text file; not imported")
            continue
        if target.startswith(("~", "/")):
            res.problems.append(f"{where} leaves the workspace; imports are read inside it only")
            continue
        joined = posixpath.normpath(posixpath.join(posixpath.dirname(rel), target))
        if joined.startswith("../") or joined == "..":
            res.problems.append(f"{where} leaves the workspace; imports are read inside it only")
            continue
        if joined in chain:
            res.problems.append(f"{where} imports a file that imports it (a loop); skipped")
            continue
        if len(chain) > MAX_DEPTH:
            res.problems.append(f"{where} nests deeper than {MAX_DEPTH} imports; skipped")
            continue
        if any(p.source == joined for p in res.pieces):
            continue  # already read through another import
        try:
            read_with_imports(ws, joined, res, paths=paths, chain=chain)
        except Problem as exc:
            res.problems.append(f"{where}: {joined} {exc}")
