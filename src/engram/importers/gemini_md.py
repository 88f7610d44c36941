"""GEMINI.md (Gemini CLI context files, geminicli.com docs "Provide context with GEMINI.md").

Plain Markdown, found in the project root and its subfolders (a nested one adds context
for its subtree). Gemini CLI's memory import processor expands `@path.md` imports
relative to the importing file, so they are read as for CLAUDE.md. The user-level file
is `~/.gemini/GEMINI.md` (same page, "Understand the context hierarchy": global context file).
"""

from __future__ import annotations

from engram.importers import FileResult, Workspace, subtree_globs
from engram.importers._imports import read_with_imports

HOST = "gemini"
USER_FILES = (".gemini/GEMINI.md",)


def matches(rel: str) -> bool:
    return rel.rpartition("/")[2] == "GEMINI.md"


def read(ws: Workspace, rel: str, res: FileResult) -> None:
    read_with_imports(ws, rel, res, paths=subtree_globs(ws, rel))
