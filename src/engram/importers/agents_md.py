"""AGENTS.md (agents.md; OpenAI Codex, Windsurf, Cursor and others read it).

Plain Markdown, no front matter. The nearest AGENTS.md to a file wins: one in a
subfolder applies to that subtree, so its memories get `paths: [<folder>/**]`.
"""

from __future__ import annotations

from engram.core.importing import split_markdown
from engram.importers import FileResult, Workspace, subtree_globs

HOST = "agents"


def matches(rel: str) -> bool:
    return rel.rpartition("/")[2] in ("AGENTS.md", "AGENTS.override.md")


def read(ws: Workspace, rel: str, res: FileResult) -> None:
    res.pieces += split_markdown(ws.read(rel), rel, paths=subtree_globs(rel))
