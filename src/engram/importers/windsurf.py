"""Windsurf rules (docs.windsurf.com "Memories & Rules"): `.windsurfrules`, `.windsurf/rules/*.md`.

A workspace rule file may carry front matter `trigger` (`always_on`, `glob`,
`model_decision`, `manual`), `globs` and `description`; a `glob` rule is scoped by its
globs (carried into `paths:`), an `always_on` rule's statements become rules.
`.windsurfrules` is the legacy single root file.
"""

from __future__ import annotations

from engram.core.importing import split_markdown
from engram.importers import FileResult, Workspace, front_matter, glob_list

HOST = "windsurf"


def matches(rel: str) -> bool:
    return rel == ".windsurfrules" or (rel.startswith(".windsurf/rules/") and rel.endswith(".md"))


def read(ws: Workspace, rel: str, res: FileResult) -> None:
    fields, body, at = front_matter(ws.read(rel))
    pieces = split_markdown(
        body,
        rel,
        first_line=at,
        paths=glob_list(fields.get("globs", "")),
        default_title=fields.get("description", "").strip("\"'")[:80],
    )
    if fields.get("trigger", "").strip("\"'") == "always_on":
        for p in pieces:
            if p.type == "knowledge":
                p.type = "rule"
    res.pieces += pieces
