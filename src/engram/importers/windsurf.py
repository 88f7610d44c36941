"""Windsurf rules (docs.windsurf.com "Memories & Rules"): `.windsurfrules`, `.windsurf/rules/*.md`.

A workspace rule file may carry front matter `trigger` (`always_on`, `glob`,
`model_decision`, `manual`), `globs` and `description`; a `glob` rule is scoped by its
globs (carried into `paths:`), an `always_on` rule's statements become rules.
`.windsurfrules` is the legacy single root file.
"""

from __future__ import annotations

from engram.importers import FileResult, Workspace, read_rule_file

HOST = "windsurf"


def matches(rel: str) -> bool:
    return rel == ".windsurfrules" or (rel.startswith(".windsurf/rules/") and rel.endswith(".md"))


def read(ws: Workspace, rel: str, res: FileResult) -> None:
    read_rule_file(
        ws, rel, res, lambda fields: fields.get("trigger", "").strip("\"'") == "always_on"
    )
