"""Cursor project rules (cursor.com/docs/context/rules): `.cursor/rules/*.mdc` and `.cursorrules`.

An `.mdc` rule has front matter `description`, `globs` (comma-separated patterns, not
YAML) and `alwaysApply`; `globs` scope it (carried into `paths:`), an `alwaysApply`
rule is always in force, so its statements become rules. `.cursorrules` is the legacy
single root file, plain Markdown or text.
"""

from __future__ import annotations

from engram.core.importing import split_markdown
from engram.importers import FileResult, Workspace, front_matter, glob_list, truthy

HOST = "cursor"


def matches(rel: str) -> bool:
    return rel == ".cursorrules" or (
        rel.startswith(".cursor/rules/") and rel.endswith((".mdc", ".md"))
    )


def read(ws: Workspace, rel: str, res: FileResult) -> None:
    fields, body, at = front_matter(ws.read(rel))
    pieces = split_markdown(
        body,
        rel,
        first_line=at,
        paths=glob_list(fields.get("globs", "")),
        default_title=fields.get("description", "").strip("\"'")[:80],
    )
    if truthy(fields.get("alwaysApply", "")):
        for p in pieces:
            if p.type == "knowledge":
                p.type = "rule"
    res.pieces += pieces
