"""Cline rules (docs.cline.bot "Cline Rules"): a `.clinerules` file or a `.clinerules/` folder.

The folder holds Markdown files (all of them active); a file may carry front matter
`paths:` globs that scope it, carried into `paths:`. Global rules live in the person's
Cline Rules folder: `~/Documents/Cline/Rules`, on some Linux systems `~/Cline/Rules` (same
page, "Global Rules Directory Location").
"""

from __future__ import annotations

from engram.importers import FileResult, Workspace, front_matter, glob_list
from engram.importers.split import split_markdown

HOST = "cline"
USER_FILES = ("Documents/Cline/Rules/*.md", "Cline/Rules/*.md")


def matches(rel: str) -> bool:
    return rel == ".clinerules" or (
        rel.startswith(".clinerules/") and rel.endswith((".md", ".txt"))
    )


def read(ws: Workspace, rel: str, res: FileResult) -> None:
    fields, body, at = front_matter(ws.read(rel))
    res.pieces += split_markdown(body, rel, first_line=at, paths=glob_list(fields.get("paths", "")))
