"""Cursor project rules (cursor.com/docs/context/rules): `.cursor/rules/*.mdc` and `.cursorrules`.

An `.mdc` rule has front matter `description`, `globs` (comma-separated patterns, not
YAML) and `alwaysApply`; `globs` scope it (carried into `paths:`), an `alwaysApply`
rule is always in force, so its statements become rules. `.cursorrules` is the legacy
single root file, plain Markdown or text. Cursor's user rules are kept in its settings,
not in a file, so there is nothing user-level to read.
"""

from __future__ import annotations

from engram.importers import FileResult, Workspace, read_rule_file, truthy

HOST = "cursor"


def matches(rel: str) -> bool:
    """`.cursorrules`, and rule files of `.cursor/rules/` at the root or in any folder
    (Cursor's nested rules: `docs/.cursor/rules/x.mdc` applies inside `docs/`)."""
    return rel == ".cursorrules" or (
        f"/{rel}".count("/.cursor/rules/") == 1 and rel.endswith((".mdc", ".md"))
    )


def read(ws: Workspace, rel: str, res: FileResult) -> None:
    read_rule_file(ws, rel, res, lambda fields: truthy(fields.get("alwaysApply", "")))
