"""AGENTS.md (agents.md; OpenAI Codex, Windsurf, Cursor and others read it).

Plain Markdown, no front matter. The nearest AGENTS.md to a file wins: one in a
subfolder applies to that subtree, so its memories get `paths: [<folder>/**]`.

User level: Codex reads `AGENTS.override.md`, else `AGENTS.md`, in its home folder
(`~/.codex`, or `$CODEX_HOME`) before the project's (developers.openai.com/codex/guides/agents-md,
"How Codex discovers guidance"); Cline also reads the cross-tool `~/.agents/AGENTS.md`
(docs.cline.bot "Rules", "Where rules live").
"""

from __future__ import annotations

import os
from pathlib import Path

from engram.importers import FileResult, Workspace, subtree_globs
from engram.importers.split import split_markdown

HOST = "agents"


def USER_FILES() -> list[str]:
    """Codex's home folder (`$CODEX_HOME` when it is inside the home folder) and `~/.agents`."""
    home = Path.home()
    codex = Path(os.environ.get("CODEX_HOME") or home / ".codex").expanduser()
    out = []
    if codex.is_relative_to(home):
        base = codex.relative_to(home).as_posix()
        out += [f"{base}/AGENTS.override.md", f"{base}/AGENTS.md"]
    return [*out, ".agents/AGENTS.md"]


def matches(rel: str) -> bool:
    return rel.rpartition("/")[2] in ("AGENTS.md", "AGENTS.override.md")


def read(ws: Workspace, rel: str, res: FileResult) -> None:
    res.pieces += split_markdown(ws.read(rel), rel, paths=subtree_globs(ws, rel))
