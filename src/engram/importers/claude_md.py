"""CLAUDE.md and `.claude/rules/*.md` (Claude Code memory, docs.claude.com "Manage Claude's memory").

CLAUDE.md (root, nested, or `.claude/CLAUDE.md`; `CLAUDE.local.md` for one person) is
plain Markdown that may import other files with `@path` (relative to the importing file,
up to five levels). Files under `.claude/rules/` may carry front matter `paths:` globs
that scope them. A nested CLAUDE.md applies to its subtree.
"""

from __future__ import annotations

from engram.core.importing import split_markdown
from engram.importers import FileResult, Workspace, front_matter, glob_list, subtree_globs
from engram.importers._imports import read_with_imports

HOST = "claude"


def matches(rel: str) -> bool:
    name = rel.rpartition("/")[2]
    if name in ("CLAUDE.md", "CLAUDE.local.md"):
        return True
    return rel.startswith(".claude/rules/") and rel.endswith(".md")


def read(ws: Workspace, rel: str, res: FileResult) -> None:
    if rel.startswith(".claude/rules/"):
        fields, body, at = front_matter(ws.read(rel))
        res.pieces += split_markdown(
            body, rel, first_line=at, paths=glob_list(fields.get("paths", ""))
        )
        return
    folder = rel.removesuffix("/.claude/CLAUDE.md") if rel.endswith(".claude/CLAUDE.md") else rel
    paths = [] if rel == ".claude/CLAUDE.md" else subtree_globs(folder)
    read_with_imports(ws, rel, res, paths=paths)
